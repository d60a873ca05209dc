/**
 * "Is this upgrade safe?" from one upgrade bundle: what the workflow's upgrade job answers and a person runs as
 * `datapath-conformance upgrade BUNDLE`. Pure over re-judged bundles (check), so a test feeds it the shipped ones.
 *
 * Red (exit 1) when something broke, each named: an upgrade property that fails (a connection lost or moved, a
 * failed request, an outage over its bound, an agent not on the target, a property failing on the upgraded or
 * rolled-back cluster), or a nested bundle that fails when judged today. Known issues the target shows that the
 * source did not come first in the summary and fail with --strict only (check's default, docs/verdicts.md).
 * Beside it, what the upgraded cluster does differently from a fresh install of the same version (compare
 * against the fresh bundle), as information.
 */
import { isAbsolute, relative } from "node:path";
import { type CheckResult, countLine } from "./check.ts";
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
import type { EvidenceItem } from "./records/evidence.ts";
import { connectionSurvived } from "./records/upgrade.ts";
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
  strict: boolean;
}

export interface Broken {
  what: string;
  id: string;
  expected: string;
  observed: string;
  line: string;
}

export interface GateResult {
  held: boolean;
  broken: Broken[];
  /**
   * What makes the answer inconclusive (issue 35): the load's own client stalled (a leg's client-kept-time property
   * fails), so the failures it explains are neither Cilium's nor proof of safety; never HELD then.
   */
  inconclusive: Broken[];
  /**
   * Pinned maps the upgrade leg added that are still there after the rollback, per node (issue 35: what a rollback
   * leaves; named, not a failure).
   */
  leftovers: { node: string; maps: string[] }[];
  /** Known issues after the upgrade leg that the source version did not show (id, the issue's words). */
  newKnownIssues: { id: string; detail: string }[];
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
  return r.verdicts.filter((v) => v.status === "known-issue");
}

export function judgeUpgrade(input: GateInput): GateResult {
  const { upgrade, legs } = input;
  const broken: Broken[] = [];
  const inconclusive: Broken[] = [];
  // the legs: the restart on the source version (issue 35), the upgrade, the rollback
  const legVerdicts = upgrade.verdicts.filter((v) => v.topic === "upgrade" || v.topic === "restart");
  const ups = legVerdicts.filter((v) => v.topic === "upgrade");
  for (const v of legVerdicts)
    if (v.status === "fail" || v.status === "changed")
      (v.id.endsWith(".client-kept-time") ? inconclusive : broken).push({
        what:
          v.topic === "restart" ? "restart" : v.id.startsWith("upgrade.rollback.") ? "rollback" : "upgrade",
        id: v.id,
        expected: v.expected,
        observed: v.observed,
        line: firstLine(v),
      });
  if (!ups.some((v) => v.status === "pass"))
    broken.push({
      what: "upgrade",
      id: "(no upgrade leg)",
      expected: "an upgrade leg",
      observed: "none recorded",
      line: `${upgrade.bundle} records no upgrade leg: it is not an upgrade bundle (UPGRADE_TO)`,
    });
  const legNames = new Set(
    ups.filter((v) => v.id.endsWith(".conformance-after") && v.status !== "skip").map((v) => v.id),
  );
  for (const l of legs)
    for (const v of l.result.verdicts)
      if (v.status === "fail" || v.status === "changed")
        broken.push({
          what: `after the ${l.leg}`,
          id: v.id,
          expected: v.expected,
          observed: v.observed,
          line: firstLine(v),
        });
  const expectedLegs = [...legNames].map((id) =>
    id.startsWith("upgrade.rollback.") ? "rollback" : "upgrade",
  );
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
  const newKnownIssues = afterUp
    ? knownIssues(afterUp.result)
        .filter((v) => !had.has(v.id))
        .map((v) => ({
          id: v.id,
          detail: v.deviation
            ? `${v.deviation.claim} (${v.deviation.upstream ?? v.deviation.why})`
            : firstLine(v),
        }))
    : [];
  const goneKnownIssues =
    afterUp && input.before
      ? [...had].filter((id) => afterUp.result.verdicts.some((v) => v.id === id && v.status === "pass"))
      : [];
  const held = broken.length === 0 && inconclusive.length === 0;
  const exitCode: 0 | 1 = !held || (input.strict && newKnownIssues.length > 0) ? 1 : 0;
  const upLegs = upgrade.records.upgrade?.record.legs ?? [];
  const added = upLegs.find((l) => l.kind === "upgrade")?.maps ?? [];
  const back = upLegs.find((l) => l.kind === "rollback")?.maps ?? [];
  const leftovers = back
    .map((b) => ({
      node: b.node,
      maps: (added.find((a) => a.node === b.node)?.added ?? []).filter((m) => b.after.includes(m)),
    }))
    .filter((x) => x.maps.length > 0);
  const judged = { held, broken, inconclusive, leftovers, newKnownIssues, goneKnownIssues, exitCode };
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
  const up = u.records.upgrade?.record;
  const path = up
    ? `Cilium ${up.from} → ${up.to}${up.legs.length > 1 ? ` → ${up.from} (rollback)` : ""}`
    : "?";
  const head = g.held
    ? g.newKnownIssues.length > 0
      ? `HELD, with ${g.newKnownIssues.length} known issue(s) new on the target${input.strict ? " (--strict: exit 1)" : ""}`
      : "HELD: every connection survived, no request failed, every topic passes after each leg"
    : g.broken.length > 0
      ? `BROKEN: ${g.broken.length} thing(s) broke${g.inconclusive.length > 0 ? ` (and the load's client stalled in ${g.inconclusive.length} leg(s))` : ""}`
      : `INCONCLUSIVE: the load's own client stalled in ${g.inconclusive.length} leg(s), nothing else broke: rerun on a quieter machine`;
  return `Upgrade ${path}, ${u.mode}: ${head}`;
}

/** One line per leg: what it carried and what it cost, and the topics' counts after it. */
function legRows(input: GateInput): string[][] {
  const u = input.upgrade;
  const restart = u.records.restart?.record.legs ?? [];
  const up = u.records.upgrade?.record.legs ?? [];
  return [...restart, ...up].map((l) => {
    const o = l.requests.longest_outage;
    const ok = l.connections.filter(connectionSurvived).length;
    const nested = input.legs.find((x) => x.leg === l.kind);
    return [
      `${l.kind} ${l.from} → ${l.to}`,
      `${l.requests.total}`,
      `${l.requests.failed}${l.requests.client_stalls !== undefined ? ` (${l.requests.client_stalls})` : ""}`,
      o ? `${o.judged_ms ?? o.ms} ms (${o.to})` : "-",
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
    "Not conclusive: the load's own client stalled",
    g.inconclusive.map((b) => `${b.what}: ${b.line}`),
  );
  section(
    input.before
      ? `Known issues new on the target (not shown by ${shown(input.before.bundle)})`
      : "Known issues new on the target (no bundle of the source version to tell which are new)",
    g.newKnownIssues.map((k) => `${k.id}: ${k.detail}`),
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
  const up = u.records.upgrade?.record;
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
    out.push(markdown`#### Not conclusive: the load's own client stalled`, markdown``);
    for (const b of g.inconclusive) out.push(markdown`- ${b.what}: ${b.line}`);
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
