/**
 * The figures of README.md and docs/*.md that would drift if written by hand: how many topics and properties
 * there are and where each topic lives, the expectations per topic, what `check` makes of every shipped bundle
 * today, the measured cold build the lab's estimate uses, and the fault record's table. `npm run readme`
 * (scripts/readme-table.ts) writes them between their markers; scripts/readme-table.test.ts fails when a page
 * and these disagree.
 */

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { COLD_BUILD, formatDuration } from "../cli/lab-run.ts";
import { readMeta, readRecords } from "../helpers/bundle/read.ts";
import { checkBundle } from "../helpers/check.ts";
import { countStatuses, isFailure, type Status } from "../helpers/properties/status.ts";
import { expectationMarkdown } from "../helpers/properties/table.ts";
import { runConfiguration } from "../helpers/records/catalogue.ts";
import type { Judged, RunRecords } from "../helpers/report/runs-table.ts";
import { BUNDLES_ROOT, SHIPPED_BUNDLES } from "../suites/environment.ts";
import { PROPERTIES, RECORDS, TOPICS } from "../suites/topics.ts";
import { faultTable } from "./faults/main.ts";

const SUITES = join(import.meta.dirname, "..", "suites");

/** Each topic's folder under suites/ (`NN-name`, the one holding its `<name>.topic.ts`), in the registry's order. */
export function topicFolders(): { name: string; folder: string; title: string; properties: number }[] {
  const folders = readdirSync(SUITES).filter((d) => /^\d\d-/.test(d));
  return TOPICS.map((t) => {
    const folder = folders.find((d) => existsSync(join(SUITES, d, `${t.name}.topic.ts`)));
    if (!folder) throw new Error(`topic ${t.name}: no suites/NN-*/${t.name}.topic.ts`);
    return { name: t.name, folder, title: t.title, properties: t.properties.length };
  });
}

/** The topics only some runs record (the upgrade run's), with the run they need. */
function occasional(): { folder: string; runsIn: string }[] {
  const folders = topicFolders();
  return TOPICS.filter((t) => t.runsIn !== undefined).map((t) => ({
    folder: folders.find((f) => f.name === t.name)?.folder ?? t.name,
    runsIn: t.runsIn as string,
  }));
}

/** The Cilium versions the shipped bundles ran, oldest first. */
function shippedCilium(): string[] {
  const versions = new Set(SHIPPED_BUNDLES.map((d) => readMeta(d).cilium.split(" ")[0] as string));
  const key = (v: string) => v.split(/[.-]/).map((p) => p.padStart(4, "0"));
  return [...versions].sort((a, b) => key(a).join(".").localeCompare(key(b).join(".")));
}

const list = (xs: string[]) =>
  xs.length <= 1 ? xs.join("") : `${xs.slice(0, -1).join(", ")} and ${xs.at(-1) as string}`;

/** README.md's one generated line: the size of the suite and of what ships with it. */
export function countsLine(): string {
  return `${TOPICS.length} topics declare ${PROPERTIES.length} properties; ${SHIPPED_BUNDLES.length} evidence bundles recorded on real clusters (Cilium ${list(shippedCilium())}) ship in \`suites/bundles/\`, and \`npm test\` judges them again.\n`;
}

/** docs/expectations.md: the topics (folder, what each shows, how many properties), then each topic's table. */
export function expectationsByTopic(): string {
  const folders = topicFolders();
  const rare = occasional();
  const out = [
    `${TOPICS.length} topics declare ${PROPERTIES.length} properties. A run without an upgrade leg runs ${TOPICS.length - rare.length} of them; ${list(rare.map((r) => `\`${r.folder}\``))} run only in ${list([...new Set(rare.map((r) => r.runsIn))])}.`,
    "",
    "| folder | what it shows | properties |",
    "|---|---|---|",
    ...folders.map((f) => `| \`${f.folder}\` | ${f.title.replace(/\|/g, "\\|")} | ${f.properties} |`),
    "",
    "Per-minor differences are in parentheses; `(known issue)` marks a version's known bug (see [verdicts](verdicts.md)). `(IPv6 twin of …)` marks a property that asks an IPv4 property's question of the IPv6 family, and the IPv4 one names it (`(IPv6 twin: …)`); their expectations agree in each mode unless the row says where and why they part ([contributing](contributing.md#an-ipv6-twin)).",
    "",
  ];
  for (const f of folders) {
    const props = PROPERTIES.filter((p) => p.topic === f.name);
    out.push(
      `### ${f.folder}`,
      "",
      `${f.title}.`,
      "",
      expectationMarkdown(props, { title: false, among: PROPERTIES }),
    );
  }
  return out.join("\n");
}

/** What `check` makes of each shipped bundle today, for the runs table (judged once per bundle). */
/** What the runs table reads of a bundle's records: the upgrade's legs and the datapath configuration. */
export function runRecords(dir: string): RunRecords {
  const r = readRecords(dir, RECORDS);
  return { legs: r.upgrade?.record.legs ?? [], config: runConfiguration(r, RECORDS) };
}

export async function judgeShipped(): Promise<Map<string, Judged>> {
  const out = new Map<string, Judged>();
  for (const dir of SHIPPED_BUNDLES) {
    const r = await checkBundle(dir, TOPICS);
    const counted = countStatuses(r.verdicts);
    const n = (s: Status) => counted[s];
    out.set(dir, {
      pass: n("pass"),
      fail: n("fail"),
      knownIssue: n("known-issue"),
      skip: n("skip"),
      changed: n("changed"),
      differences: r.stored.format === "none" ? null : r.stored.differences.length,
      failing: r.verdicts.filter((v) => isFailure(v.status)).map((v) => v.id),
    });
  }
  return out;
}

/**
 * docs/status.md's "what the recorded runs found" opens on this: which shipped bundles fail a property today and
 * which, from the same `check` as the runs table beside it (it had said "no property failed" beside a table
 * with failures).
 */
export function foundLine(judged: Map<string, Judged>): string {
  const name = (dir: string) => relative(BUNDLES_ROOT, dir);
  const fresh = SHIPPED_BUNDLES.filter((d) => /^\d+\.\d+(\.\d+)?\/(kpr|kube-proxy)$/.test(name(d)));
  const failing = SHIPPED_BUNDLES.filter((d) => (judged.get(d)?.failing?.length ?? 0) > 0);
  const freshFailing = fresh.filter((d) => failing.includes(d));
  const listed = failing.map(
    (d) => `\`${name(d)}\` (${(judged.get(d)?.failing ?? []).map((id) => `\`${id}\``).join(", ")})`,
  );
  return [
    `Today's \`check\` of the ${SHIPPED_BUNDLES.length} shipped bundles (the table above): ${freshFailing.length === 0 ? `in the ${fresh.length} fresh installs of a declared version in either mode (${fresh.map((d) => `\`${name(d)}\``).join(", ")}) no property failed: each held as declared, or showed the bug its version is known for, declared with its upstream reference (a known issue)` : `${freshFailing.length} of the ${fresh.length} fresh installs of a declared version fail a property`}. ${failing.length === 0 ? "No bundle fails a property." : `${failing.length} bundle${failing.length === 1 ? "" : "s"} fail${failing.length === 1 ? "s" : ""} a property (\`check BUNDLE\` names each with expected, observed and its raw lines): ${listed.join("; ")}.`}`,
  ].join("\n");
}

/** The runs table's caption: where its counts come from (one count per bundle: today's `check`). */
export function runsCaption(): string {
  return [
    `\`check\` re-judges each of the ${SHIPPED_BUNDLES.length} shipped bundles with today's declarations (\`npx datapath-conformance check suites/bundles\``,
    "ends with the same counts). Every property is judged, so a bundle's skips are the other mode's properties, the",
    "opt-in drop profile's and those of topics or an upgrade leg it did not record, each with its reason. \"stored",
    'verdicts" says whether the verdicts the run stored when it recorded the bundle are reproduced exactly, or how',
    "many differ (`check` prints each difference with its reason: a newer judge or expectation, a property declared",
    "later).",
  ].join("\n");
}

/** docs/lab.md: the measured cold build the lab's estimate uses. */
export function coldBuildLine(): string {
  return `A cold build of the offline lab's images for one Cilium version took **${formatDuration(COLD_BUILD.seconds)}**: ${COLD_BUILD.how}. On fresh machines with less beside it the same build took ${COLD_BUILD.quieter.map((q) => `**${formatDuration(q.seconds)}** (${q.when})`).join(" and ")}; \`lab run --dry-run\` estimates from the busy figure.\n`;
}

/** docs/running.md: the fault record's table (`npm run faults -- table suites/bundles/faults/faults.jsonl`). */
export function faultsTable(): string {
  return faultTable(readFileSync(join(BUNDLES_ROOT, "faults", "faults.jsonl"), "utf8"));
}
