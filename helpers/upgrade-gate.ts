// One file over 450 lines: the gate's one word: its rules, its evidence and its renderings of one result, read together
/**
 * "Is this upgrade safe?" from one upgrade bundle: what the workflow's upgrade job answers and a person runs as
 * `datapath-conformance upgrade BUNDLE`. Pure over re-judged bundles (check), so a test feeds it the shipped ones.
 * One word (issue 42), the same in the CLI, the step summary, the report's banner and JUnit:
 *
 * - BROKEN: something broke and the bundle proves it: an agent not on the target, a connection answered by
 *   another backend, a drop of an unexpected reason, a property failing on the upgraded or rolled-back cluster,
 *   or a failed request, a broken connection or an outage with datapath evidence at its time (a packet that left
 *   one node and never reached the next, one held there, an RST no backend sent, a drop the monitor saw);
 * - REGRESSED: nothing broke, but the target shows a known issue (declared, with its upstream reference) that the
 *   source did not: what `compare` calls a new known issue, exit 1 the same; `--allow-known` accepts them;
 * - INCONCLUSIVE: a failure without such evidence (named: what is missing), the load's own client stalled, or a
 *   property a fresh install of the version judges was skipped after a leg: never HELD over what was not seen;
 * - HELD: every leg held and every property the fresh install judges was judged after each leg.
 *
 * Beside it, what the upgraded cluster does differently from a fresh install of the same version (compare
 * against the fresh bundle), as information. Several runs of one path answer together (judgePath): a disruption
 * seen in some runs is said as a rate over the runs.
 */

import { isAbsolute, relative } from "node:path";
import type { CheckResult } from "./check.ts";
import { countLine } from "./check-format.ts";
import { type Comparison, compareResults } from "./compare.ts";
import {
  code,
  type MarkdownText,
  markdown,
  markdownLines,
  markdownRow,
  type TerminalText,
  terminal,
  terminalLines,
} from "./output.ts";
import type { Verdict } from "./properties/judge.ts";
import { isFailure, isKnownIssue } from "./properties/status.ts";
import type { EvidenceItem } from "./records/evidence.ts";
import type { UpgradeLeg } from "./records/types.ts";
import { connectionSurvived, isUpgradeVerdict, legOutageMs, upgradeRun } from "./records/upgrade.ts";
import type { TopicDeclaration } from "./topic.ts";

export interface LegBundle {
  /** `upgrade` or `rollback`. */
  leg: string;
  result: CheckResult;
  /** The fresh install of the version this leg ended on, when one was given: what the leg left behind. */
  fresh?: { result: CheckResult; comparison: Comparison };
}

export interface GateInput {
  upgrade: CheckResult;
  legs: LegBundle[];
  /** Where the source version's verdicts come from (known issues it already had): the bundle's own topics
   * before the upgrade, else a fresh bundle of the source version, else none. */
  before: CheckResult | null;
  /** Accept known issues new on the target (HELD with them listed, exit 0): `--allow-known`. */
  allowKnown?: boolean;
  /**
   * Whether the declarations name the same known issue (by its upstream reference) for the source version in this
   * mode: such an issue is the source's too, not new on the target, whatever the source's bundle ran.
   */
  sourceDeclares?: (id: string, upstream: string | undefined) => boolean;
}

/** The gate's one word (see the module comment). */
export type GateWord = "HELD" | "BROKEN" | "REGRESSED" | "INCONCLUSIVE";

export interface Broken {
  what: string;
  id: string;
  expected: string;
  observed: string;
  line: string;
}

export interface GateResult {
  word: GateWord;
  held: boolean;
  broken: Broken[];
  /**
   * What makes the answer inconclusive (issue 35): the load's own client stalled (a leg's client-kept-time property
   * fails), so the failures it explains are neither Cilium's nor proof of safety; never HELD then.
   */
  inconclusive: Broken[];
  /**
   * Properties a fresh install of the version judges that were skipped after a leg (issue 42): each makes the
   * answer INCONCLUSIVE, named with the skip's reason.
   */
  unjudged: Broken[];
  /**
   * Pinned maps the upgrade leg added that are still there after the rollback, per node (issue 35: what a rollback
   * leaves; named, not a failure).
   */
  leftovers: { node: string; maps: string[] }[];
  /** Known issues after the upgrade leg that the source version did not show (id, the issue's words). */
  newKnownIssues: { id: string; detail: string }[];
  /**
   * Known issues after the upgrade leg whose property the source version's bundle did not judge (its run had not
   * that topic): neither new nor old as far as the bundles tell; listed, never a regression.
   */
  knownUnjudgedBefore: { id: string; detail: string }[];
  /** Known issues after the upgrade leg that the declarations name for the source version too: not new. */
  knownOfBoth: { id: string; detail: string }[];
  /** Known issues of the source version that the upgraded cluster no longer shows (the fix landed). */
  goneKnownIssues: string[];
  exitCode: 0 | 1;
  /** The verdict in one line of plain text (`Upgrade Cilium 1.19.7 → 1.20.2 …, kpr: HELD…`): the annotation's. */
  headline: string;
  /** The whole answer as markdown (a step summary: `upgrade --markdown`). */
  summary: MarkdownText;
  /** The same answer as terminal text (`upgrade` on a terminal): no table, no markdown escape. */
  text: TerminalText;
}

/**
 * The verdict's first evidence: what it says (the first item, often a derived count) and the first raw line at its
 * place, when that is another item (what the reader checks first).
 */
function firstLine(v: Verdict): string {
  const show = (e: EvidenceItem) =>
    ("quote" in e ? `${e.at.file}:${e.at.line}  ${e.quote.trim()}` : e.derived).slice(0, 300);
  const first = v.evidence[0];
  if (!first) return (v.message.split("\n")[0] ?? v.id).slice(0, 300);
  const quote = v.evidence.find((x) => "quote" in x);
  return `${v.id}: ${show(first)}${quote && quote !== first ? ` — ${show(quote)}` : ""}`;
}

function knownIssues(r: CheckResult): Verdict[] {
  return r.verdicts.filter((v) => isKnownIssue(v.status));
}

export function judgeUpgrade(input: GateInput): GateResult {
  const { upgrade, legs } = input;
  const broken: Broken[] = [];
  const inconclusive: Broken[] = [];
  // the legs: the restart on the source version (issue 35), the upgrade, the rollback
  const legVerdicts = upgrade.verdicts.filter((v) => v.leg !== undefined);
  const ups = legVerdicts.filter(isUpgradeVerdict);
  for (const v of legVerdicts) {
    if (!isFailure(v.status)) continue;
    const what = v.leg as UpgradeLeg["kind"];
    const item = { what, id: v.id, expected: v.expected, observed: v.observed, line: firstLine(v) };
    if (v.id.endsWith(".client-kept-time")) {
      inconclusive.push(item);
      continue;
    }
    const proof = needsProof(v.id) ? datapathProof(v.id, legOf(upgrade, what)) : null;
    if (proof === null || proof.lines.length > 0)
      broken.push(proof ? { ...item, line: `${v.id}: ${proof.lines[0]}` } : item);
    else
      inconclusive.push({
        ...item,
        line: `${v.id}: no datapath evidence at the failure's time: ${proof.missing}`,
      });
  }
  if (!ups.some((v) => v.status === "pass"))
    broken.push({
      what: "upgrade",
      id: "(no upgrade leg)",
      expected: "an upgrade leg",
      observed: "none recorded",
      line: `${upgrade.bundle} records no upgrade leg: it is not an upgrade bundle (UPGRADE_TO)`,
    });
  for (const l of legs)
    for (const v of l.result.verdicts)
      if (isFailure(v.status))
        broken.push({
          what: `after the ${l.leg}`,
          id: v.id,
          expected: v.expected,
          observed: v.observed,
          line: firstLine(v),
        });
  // the legs whose topics were run again after them: their nested bundles must be there
  const expectedLegs = ups
    .filter((v) => v.id.endsWith(".conformance-after") && v.status !== "skip")
    .map((v) => v.leg as UpgradeLeg["kind"]);
  for (const leg of expectedLegs)
    if (!legs.some((l) => l.leg === leg))
      broken.push({
        what: `after the ${leg}`,
        id: `after-${leg}`,
        expected: "the nested bundle",
        observed: "absent",
        line: `the bundle's after-${leg}/ is missing: every topic after the ${leg} cannot be re-judged`,
      });
  const had = new Set(input.before ? knownIssues(input.before).map((v) => v.id) : []);
  const afterUp = legs.find((l) => l.leg === "upgrade");
  // a known issue is new on the target only where the source's bundle judged its property: one it skipped (a
  // topic its run did not have) says nothing of the source, so it is listed apart, not counted as a regression
  const judgedBefore = new Set(
    input.before ? input.before.verdicts.filter((v) => v.status !== "skip").map((v) => v.id) : [],
  );
  const detailOf = (v: Verdict) => ({
    id: v.id,
    detail: v.deviation ? `${v.deviation.claim} (${v.deviation.upstream ?? v.deviation.why})` : firstLine(v),
  });
  const ofSource = (v: Verdict) => input.sourceDeclares?.(v.id, v.deviation?.upstream) === true;
  const afterKnown = afterUp ? knownIssues(afterUp.result).filter((v) => !had.has(v.id) && !ofSource(v)) : [];
  const knownOfBoth = afterUp
    ? knownIssues(afterUp.result)
        .filter((v) => !had.has(v.id) && ofSource(v))
        .map(detailOf)
    : [];
  const newKnownIssues = afterKnown.filter((v) => !input.before || judgedBefore.has(v.id)).map(detailOf);
  const knownUnjudgedBefore = afterKnown.filter((v) => input.before && !judgedBefore.has(v.id)).map(detailOf);
  const goneKnownIssues =
    afterUp && input.before
      ? [...had].filter((id) => afterUp.result.verdicts.some((v) => v.id === id && v.status === "pass"))
      : [];
  const unjudged = legs.flatMap((l) => (l.fresh ? unjudgedAfter(l.leg, l.fresh.result, l.result) : []));
  const word: GateWord =
    broken.length > 0
      ? "BROKEN"
      : newKnownIssues.length > 0 && !input.allowKnown
        ? "REGRESSED"
        : inconclusive.length + unjudged.length > 0
          ? "INCONCLUSIVE"
          : "HELD";
  const held = word === "HELD";
  const exitCode: 0 | 1 = held ? 0 : 1;
  const upLegs = upgradeRun(upgrade.legRuns)?.legs ?? [];
  const added = upLegs.find((l) => l.kind === "upgrade")?.maps ?? [];
  const back = upLegs.find((l) => l.kind === "rollback")?.maps ?? [];
  const leftovers = back
    .map((b) => ({
      node: b.node,
      maps: (added.find((a) => a.node === b.node)?.added ?? []).filter((m) => b.after.includes(m)),
    }))
    .filter((x) => x.maps.length > 0);
  const judged = {
    word,
    held,
    broken,
    inconclusive,
    unjudged,
    leftovers,
    newKnownIssues,
    knownUnjudgedBefore,
    knownOfBoth,
    goneKnownIssues,
    exitCode,
  };
  const headline = headlineOf(input, judged);
  return {
    ...judged,
    headline,
    summary: formatGate(input, { ...judged, headline }),
    text: formatGateText(input, { ...judged, headline }),
  };
}

/** A path as the user would type it: relative to the working folder when inside it. */
const shown = (p: string) => {
  const r = relative(process.cwd(), p);
  return r && !r.startsWith("..") && !isAbsolute(r) ? r : p;
};

/** The verdict line, as plain text (the annotation's message; the summary's heading shows it as markdown). */
function headlineOf(input: GateInput, g: Omit<GateResult, "summary" | "headline" | "text">): string {
  const u = input.upgrade;
  const up = upgradeRun(u.legRuns);
  const path = up
    ? `Cilium ${up.from} → ${up.to}${up.legs.length > 1 ? ` → ${up.from} (rollback)` : ""}`
    : "?";
  const known = g.newKnownIssues.length;
  const unseen = g.inconclusive.length + g.unjudged.length;
  const head =
    g.word === "BROKEN"
      ? `BROKEN: ${g.broken.length} thing(s) broke, with the evidence${unseen > 0 ? `; and ${unseen} not conclusive` : ""}`
      : g.word === "REGRESSED"
        ? `REGRESSED: ${known} known issue(s) new on the target (--allow-known accepts them)${unseen > 0 ? `; and ${unseen} not conclusive` : ""}`
        : g.word === "INCONCLUSIVE"
          ? `INCONCLUSIVE: ${[
              g.inconclusive.length > 0
                ? `${g.inconclusive.length} failure(s) without datapath evidence or in the load's own stall`
                : "",
              g.unjudged.length > 0
                ? `${g.unjudged.length} propert(ies) the fresh install judges skipped after a leg`
                : "",
            ]
              .filter(Boolean)
              .join(", ")}: nothing proven broken, nothing proven held`
          : known > 0
            ? `HELD, with ${known} known issue(s) new on the target accepted (--allow-known)`
            : "HELD: every connection survived, no request failed, every topic passes after each leg";
  return `Upgrade ${path}, ${u.mode}: ${head}`;
}

/** One line per leg: what it carried and what it cost, and the topics' counts after it. */
function legRows(input: GateInput): string[][] {
  const u = input.upgrade;
  return u.legRuns
    .flatMap((r) => r.legs)
    .map((l) => {
      const o = l.requests.longest_outage;
      const ok = l.connections.filter(connectionSurvived).length;
      const nested = input.legs.find((x) => x.leg === l.kind);
      return [
        `${l.kind} ${l.from} → ${l.to}`,
        `${l.requests.total}`,
        `${l.requests.failed}${l.requests.client_stalls !== undefined ? ` (${l.requests.client_stalls})` : ""}`,
        o ? `${legOutageMs(l)} ms (${o.to})` : "-",
        `${ok}/${l.connections.length} survived`,
        l.kind === "restart" ? "-" : nested ? countLine(nested.result.verdicts) : "not run again",
      ];
    });
}

/** The gate's answer on a terminal: formatGate's sections as plain lines, values as they are. */
function formatGateText(input: GateInput, g: Omit<GateResult, "summary" | "text">): TerminalText {
  const u = input.upgrade;
  const out: TerminalText[] = [terminal`${g.headline}`, terminal`bundle ${shown(u.bundle)}`];
  const section = (title: string, lines: string[]) => {
    if (lines.length === 0) return;
    out.push(terminal``, terminal`${title}`, ...lines.map((l) => terminal`  ${l}`));
  };
  section(
    "What broke",
    g.broken.flatMap((b) => [
      `${b.what}: ${b.id}: expected ${b.expected}, observed ${b.observed}`,
      `    ${b.line}`,
    ]),
  );
  section(
    "Not conclusive: failures without datapath evidence, or in the load's own stall",
    g.inconclusive.map((b) => `${b.what}: ${b.line}`),
  );
  section(
    `Not judged after a leg, though a fresh install judges them (${g.unjudged.length})`,
    g.unjudged.map((b) => `${b.what}: ${b.id}: ${b.line}`),
  );
  section(
    input.before
      ? `Known issues new on the target (not shown by ${shown(input.before.bundle)})`
      : "Known issues new on the target (no bundle of the source version to tell which are new)",
    g.newKnownIssues.map((k) => `${k.id}: ${k.detail}`),
  );
  section(
    `Known issues after the upgrade that ${shown(input.before?.bundle ?? "")} did not judge (not counted as new)`,
    g.knownUnjudgedBefore.map((k) => `${k.id}: ${k.detail}`),
  );
  section(
    "Known issues after the upgrade that the source version's declarations name too (not counted as new)",
    g.knownOfBoth.map((k) => `${k.id}: ${k.detail}`),
  );
  section(
    `Known issues of the source that the upgraded cluster no longer shows (${shown(input.before?.bundle ?? "")} showed them)`,
    g.goneKnownIssues,
  );
  const rows = legRows(input);
  if (rows.length > 0) {
    const head = ["leg", "requests", "failed (stalls)", "longest without success", "connections", "after it"];
    const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
    const line = (r: string[]) =>
      r
        .map((c, i) => c.padEnd(width[i] ?? 0))
        .join("  ")
        .trimEnd();
    section("The legs", [line(head), ...rows.map(line)]);
  }
  section(
    "What the rollback left (pinned maps the upgrade added, still there; named, not a failure)",
    g.leftovers.map((x) => `${x.node}: ${x.maps.join(", ")}`),
  );
  for (const l of input.legs) {
    if (!l.fresh) continue;
    const moved = l.fresh.comparison.changes.filter((x) => x.severity !== "other");
    out.push(
      terminal``,
      terminal`After the ${l.leg} vs a fresh install (${shown(l.fresh.result.bundle)}): ${moved.length === 0 ? "nothing the fresh install does differently" : `${moved.length} difference(s)`}`,
      ...moved.flatMap((x) => [
        terminal`  ${x.id}: fresh ${x.a}, after the leg ${x.b}`,
        terminal`      ${x.kind}: ${x.detail}`,
      ]),
    );
  }
  return terminalLines([...out, terminal``]);
}

function formatGate(input: GateInput, g: Omit<GateResult, "summary" | "text">): MarkdownText {
  const u = input.upgrade;
  const up = upgradeRun(u.legRuns);
  const out: MarkdownText[] = [
    markdown`### ${g.headline}`,
    markdown``,
    markdown`Bundle ${code(shown(u.bundle))}.`,
    markdown``,
  ];
  if (g.broken.length > 0) {
    out.push(
      markdown`#### What broke`,
      markdown``,
      markdown`| where | property | expected | observed |`,
      markdown`|---|---|---|---|`,
    );
    for (const b of g.broken)
      out.push(
        markdownRow([
          markdown`${b.what}`,
          markdown`${code(b.id)}`,
          markdown`${b.expected}`,
          markdown`${b.observed}`,
        ]),
      );
    out.push(markdown``);
    for (const b of g.broken) out.push(markdown`- ${b.line}`);
    out.push(markdown``);
  }
  if (g.inconclusive.length > 0) {
    out.push(
      markdown`#### Not conclusive: failures without datapath evidence, or in the load's own stall`,
      markdown``,
    );
    for (const b of g.inconclusive) out.push(markdown`- ${b.what}: ${b.line}`);
    out.push(markdown``);
  }
  if (g.unjudged.length > 0) {
    out.push(
      markdown`#### Not judged after a leg, though a fresh install judges them (${g.unjudged.length})`,
      markdown``,
    );
    for (const b of g.unjudged) out.push(markdown`- ${b.what}: ${code(b.id)}: ${b.line}`);
    out.push(markdown``);
  }
  if (g.newKnownIssues.length > 0) {
    out.push(
      input.before
        ? markdown`#### Known issues new on the target (not shown by ${code(shown(input.before.bundle))})`
        : markdown`#### Known issues new on the target (no bundle of the source version to tell which are new)`,
      markdown``,
    );
    for (const k of g.newKnownIssues) out.push(markdown`- ${code(k.id)}: ${k.detail}`);
    out.push(markdown``);
  }
  if (g.knownUnjudgedBefore.length > 0) {
    out.push(
      markdown`#### Known issues after the upgrade that ${code(shown(input.before?.bundle ?? ""))} did not judge (not counted as new)`,
      markdown``,
    );
    for (const k of g.knownUnjudgedBefore) out.push(markdown`- ${code(k.id)}: ${k.detail}`);
    out.push(markdown``);
  }
  if (g.knownOfBoth.length > 0) {
    out.push(
      markdown`#### Known issues after the upgrade that the source version's declarations name too (not counted as new)`,
      markdown``,
    );
    for (const k of g.knownOfBoth) out.push(markdown`- ${code(k.id)}: ${k.detail}`);
    out.push(markdown``);
  }
  if (g.goneKnownIssues.length > 0) {
    out.push(
      markdown`#### Known issues of the source that the upgraded cluster no longer shows (${code(shown(input.before?.bundle ?? ""))} showed them; they pass after the upgrade)`,
      markdown``,
    );
    for (const id of g.goneKnownIssues) out.push(markdown`- ${code(id)}`);
    out.push(markdown``);
  }
  if (up) {
    out.push(
      markdown`#### The legs`,
      markdown``,
      markdown`| leg | requests | failed (client stalls) | longest without success | connections | after it |`,
      markdown`|---|---|---|---|---|---|`,
    );
    for (const r of legRows(input)) out.push(markdownRow(r.map((c) => markdown`${c}`)));
    out.push(markdown``);
  }
  if (g.leftovers.length > 0) {
    out.push(
      markdown`#### What the rollback left (pinned maps the upgrade added, still there; named, not a failure)`,
      markdown``,
    );
    for (const x of g.leftovers) out.push(markdown`- ${x.node}: ${x.maps.join(", ")}`);
    out.push(markdown``);
  }
  for (const l of input.legs) {
    if (!l.fresh) continue;
    const c = l.fresh.comparison;
    const moved = c.changes.filter((x) => x.severity !== "other");
    out.push(
      markdown`#### After the ${l.leg} vs a fresh install (${code(shown(l.fresh.result.bundle))}): ${moved.length === 0 ? "nothing the fresh install does differently" : `${moved.length} difference(s)`}`,
      markdown``,
    );
    if (moved.length > 0) {
      out.push(markdown`| property | fresh | after the leg | change |`, markdown`|---|---|---|---|`);
      for (const x of moved)
        out.push(
          markdownRow([
            markdown`${code(x.id)}`,
            markdown`${x.a}`,
            markdown`${x.b}`,
            markdown`**${x.kind}**: ${x.detail}`,
          ]),
        );
      out.push(markdown``);
    }
  }
  return markdownLines(out);
}

/** The comparison of a leg's nested bundle with a fresh install of the version it ended on. */
export function againstFresh(
  fresh: CheckResult,
  after: CheckResult,
  topics: TopicDeclaration[],
): { result: CheckResult; comparison: Comparison } {
  return { result: fresh, comparison: compareResults(fresh, after, topics) };
}

/** The traffic properties whose failure is Cilium's only with datapath evidence at its time (issue 42). */
const PROVEN = [".no-failed-requests", ".connections-survive", ".longest-outage"];
const needsProof = (id: string) => PROVEN.some((p) => id.endsWith(p));

/** The leg of `kind` (the one a leg property is about), from the upgrade bundle's records. */
function legOf(r: CheckResult, kind: UpgradeLeg["kind"]): UpgradeLeg | null {
  return r.legRuns.flatMap((x) => x.legs).find((l) => l.kind === kind) ?? null;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The datapath evidence behind a failed traffic property of a leg: the attributed failures' lines, or what is
 * missing. A failed request or a broken connection is proven when the leg's captures and drop monitors attribute it
 * to the datapath (helpers/parse/packets.ts); an outage when a failure inside the leg is, or a drop of an
 * unexpected reason was counted.
 */
export function datapathProof(id: string, leg: UpgradeLeg | null): { lines: string[]; missing: string } {
  if (!leg) return { lines: [], missing: "the leg's record is not in the bundle" };
  const noCapture = leg.datapath_evidence
    ? null
    : "the leg recorded no capture of data packets on every node and no drop monitor (a bundle recorded before they existed)";
  const requests = leg.requests.failures
    .filter((f) => !f.stall)
    .map((f) => ({
      what: `request at ${iso(f.t)} to ${f.to} (local port ${f.port ?? "?"}, ${f.error})`,
      a: f.attribution,
    }));
  const connections = leg.connections
    .filter((c) => !connectionSurvived(c) && !c.client_stall)
    .map((c) => ({
      what: `${c.name} (${c.via}, from ${c.node}) broke${c.broke_at ? ` at ${c.broke_at}` : ""}`,
      a: c.attribution,
    }));
  const pool = id.endsWith(".connections-survive")
    ? connections
    : id.endsWith(".no-failed-requests")
      ? requests
      : [...requests, ...connections];
  const proven = pool.filter((x) => x.a?.kind === "datapath");
  const lines = proven.map((x) => `${x.what}: ${x.a?.why}${x.a?.lines[0] ? ` — ${x.a.lines[0]}` : ""}`);
  if (id.endsWith(".longest-outage") && lines.length === 0 && (leg.unexpected_drops ?? []).length > 0)
    lines.push(`drops of an unexpected reason during the leg: ${(leg.unexpected_drops ?? []).join(", ")}`);
  const missing =
    noCapture ??
    (pool.length === 0
      ? "no failed request or broken connection inside the leg to attribute it to"
      : pool
          .slice(0, 3)
          .map((x) => `${x.what}: ${x.a ? `${x.a.kind}: ${x.a.why}` : "not read back from the captures"}`)
          .join("; "));
  return { lines, missing };
}

/** What a fresh install of the version judged that the nested run after a leg skipped, each with its reason. */
export function unjudgedAfter(leg: string, fresh: CheckResult, after: CheckResult): Broken[] {
  const out: Broken[] = [];
  for (const v of fresh.verdicts) {
    if (v.status === "skip") continue;
    const a = after.verdicts.find((x) => x.id === v.id);
    if (a && a.status !== "skip") continue;
    out.push({
      what: `after the ${leg}`,
      id: v.id,
      expected: `judged, as the fresh install judged it (${v.status})`,
      observed: a ? "skipped" : "absent",
      line: a
        ? `skipped after the ${leg}: ${a.reason ?? "(no reason)"}; the fresh install ${shown(fresh.bundle)} judged it ${v.status}`
        : `not in the nested bundle after the ${leg}; the fresh install judged it ${v.status}`,
    });
  }
  return out;
}

export interface PathRun {
  bundle: string;
  gate: GateResult;
}

export interface PathAnswer {
  /** The path and mode (`1.19 → 1.20 and back, kpr`). */
  path: string;
  word: GateWord;
  runs: PathRun[];
  /** Each thing that broke or was not conclusive, with how many runs showed it: a rate, never a coin flip. */
  rates: {
    word: "BROKEN" | "INCONCLUSIVE";
    what: string;
    id: string;
    runs: number;
    of: number;
    line: string;
  }[];
  exitCode: 0 | 1;
  headline: string;
  summary: MarkdownText;
  /** The same answer as terminal text. */
  text: TerminalText;
}

const WORST: GateWord[] = ["BROKEN", "REGRESSED", "INCONCLUSIVE", "HELD"];

/**
 * Several runs of one upgrade path and mode, answered together (issue 42): the worst word any run earned (a BROKEN
 * is proven, so one proven run is enough), and each finding as a rate over the runs, so a disruption seen in some
 * runs reads "2 of 3 runs", the same however many times the command is run on the same bundles.
 */
export function judgePath(path: string, runs: PathRun[]): PathAnswer {
  const word = WORST.find((w) => runs.some((r) => r.gate.word === w)) ?? "HELD";
  const seen = new Map<
    string,
    { word: "BROKEN" | "INCONCLUSIVE"; what: string; id: string; bundles: Set<string>; line: string }
  >();
  for (const r of runs)
    for (const [w, list] of [
      ["BROKEN", r.gate.broken],
      ["INCONCLUSIVE", [...r.gate.inconclusive, ...r.gate.unjudged]],
    ] as const)
      for (const b of list) {
        const key = `${w} ${b.what} ${b.id}`;
        const e = seen.get(key) ?? {
          word: w,
          what: b.what,
          id: b.id,
          bundles: new Set<string>(),
          line: b.line,
        };
        e.bundles.add(r.bundle);
        seen.set(key, e);
      }
  const rates = [...seen.values()]
    .map((e) => ({
      word: e.word,
      what: e.what,
      id: e.id,
      runs: e.bundles.size,
      of: runs.length,
      line: e.line,
    }))
    .sort(
      (a, b) => WORST.indexOf(a.word) - WORST.indexOf(b.word) || b.runs - a.runs || a.id.localeCompare(b.id),
    );
  const count = (w: GateWord) => runs.filter((r) => r.gate.word === w).length;
  const tally = WORST.filter((w) => count(w) > 0)
    .map((w) => `${w} in ${count(w)} of ${runs.length}`)
    .join(", ");
  // what decided the word first: the broken thing, else the known issue new on the target, else the unseen
  const knownRuns = new Map<string, number>();
  for (const r of runs)
    for (const k of r.gate.newKnownIssues) knownRuns.set(k.id, (knownRuns.get(k.id) ?? 0) + 1);
  const topKnown = [...knownRuns].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0];
  const top = rates[0];
  const lead =
    word === "REGRESSED" && topKnown
      ? ` — ${topKnown[0]}${knownRuns.size > 1 ? ` and ${knownRuns.size - 1} more known issue(s)` : ""} new on the target in ${topKnown[1]} of ${runs.length} runs`
      : top
        ? ` — ${top.what}: ${top.id} in ${top.runs} of ${top.of} runs`
        : "";
  const headline = `Upgrade ${path}, ${runs.length} run(s): ${word}${lead} (${tally})`;
  const out: MarkdownText[] = [markdown`### ${headline}`, markdown``];
  out.push(markdown`| run | answer | headline |`, markdown`|---|---|---|`);
  for (const r of runs)
    out.push(
      markdownRow([
        markdown`${code(shown(r.bundle))}`,
        markdown`**${r.gate.word}**`,
        markdown`${r.gate.headline}`,
      ]),
    );
  out.push(markdown``);
  if (rates.length > 0) {
    out.push(markdown`#### Over the runs`, markdown``);
    for (const x of rates)
      out.push(
        markdown`- **${x.word}** ${x.what}: ${code(x.id)} in ${x.runs} of ${x.of} runs — e.g. ${x.line}`,
      );
    out.push(markdown``);
  }
  const known = [...new Set(runs.flatMap((r) => r.gate.newKnownIssues.map((k) => `${k.id}: ${k.detail}`)))];
  if (known.length > 0) {
    out.push(markdown`#### Known issues new on the target`, markdown``);
    for (const k of known) out.push(markdown`- ${k}`);
    out.push(markdown``);
  }
  const text: TerminalText[] = [terminal`${headline}`, terminal``];
  for (const r of runs) text.push(terminal`  ${r.gate.word.padEnd(12)} ${shown(r.bundle)}`);
  if (rates.length > 0) {
    text.push(terminal``, terminal`Over the runs`);
    for (const x of rates)
      text.push(
        terminal`  ${x.word} ${x.what}: ${x.id} in ${x.runs} of ${x.of} runs`,
        terminal`      e.g. ${x.line}`,
      );
  }
  if (known.length > 0) {
    text.push(terminal``, terminal`Known issues new on the target`);
    for (const k of known) text.push(terminal`  ${k}`);
  }
  return {
    path,
    word,
    runs,
    rates,
    exitCode: word === "HELD" ? 0 : 1,
    headline,
    summary: markdownLines(out),
    text: terminalLines([...text, terminal``]),
  };
}
