import { type CheckResult, checkBundle } from "./check.ts";
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
import { resolve } from "./properties/expectation.ts";
import type { Verdict } from "./properties/judge.ts";
import { isJudged, isKnownIssue, STATUS_RANK, STATUS_WORD, STATUSES } from "./properties/status.ts";
import type { Property, Tolerance } from "./properties/types.ts";
import { nearestShipped } from "./shipped.ts";
import type { TopicDeclaration } from "./topic.ts";

/**
 * How much a change matters to someone deciding on an upgrade, worst first. The first three make `compare`
 * exit 1: a verdict that got worse, a known issue B shows that A did not, a value that moved past its
 * tolerance while both verdicts agree (the datapath behaves differently, and no declaration says it should).
 */
export const SEVERITIES = ["regression", "new-known-issue", "behaviour", "other"] as const;
export type Severity = (typeof SEVERITIES)[number];

export const SEVERITY_TITLES: Record<Severity, string> = {
  regression: "Verdict regressions",
  "new-known-issue": "New known issues",
  behaviour: "Behaviour changes (both verdicts agree, the value moved past its tolerance)",
  other: "The rest",
};

export interface Change {
  id: string;
  severity: Severity;
  /** What changed, in a word: "pass → fail", "disappeared", "moved", "fixed", "declared", … */
  kind: string;
  /** A's and B's status or value, as shown. */
  a: string;
  b: string;
  /** One line: what it means (the known issue's claim and reference, the factor, the declared behaviour). */
  detail: string;
}

export interface Comparison {
  a: CheckResult;
  b: CheckResult;
  /** Every change, worst first (in declaration order within a severity). */
  changes: Change[];
  /** Properties with neither a verdict change nor a value change. */
  unchanged: number;
  /** True when a change of the first three severities happened: `compare` exits 1. */
  regressed: boolean;
}

const JUDGED = new Set<Verdict["status"]>(STATUSES.filter(isJudged));
/** A change in a new minor ranks as a failure: the expectation assumed for it did not hold. */
const RANK = STATUS_RANK;
const WORD = STATUS_WORD;

/** A verdict's status and value as a cell: "pass (7)", "known issue (28)". */
function shown(v: Verdict | undefined): string {
  if (!v) return "(absent)";
  return v.status === "skip" ? "skip" : `${WORD[v.status]} (${cut(v.observed)})`;
}

const cut = (s: string) => (s.length > 60 ? `${s.slice(0, 57)}...` : s);

/** The number a value stands for: itself, a numeric string, or a list's largest (the worst probe). */
function magnitude(observed: string): number | null {
  let v: unknown;
  try {
    v = JSON.parse(observed);
  } catch {
    return null;
  }
  if (typeof v === "number") return v;
  if (typeof v === "string" && /^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  // a reduce, not Math.max(...v): an observed list can be as long as a raw output (a spread overflows the stack)
  if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "number"))
    return v.reduce((m: number, x: number) => (x > m ? x : m), -Infinity);
  return null;
}

const num = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : Number(x.toPrecision(2)).toString());

/**
 * Whether an observed value moved past the property's tolerance between A and B, and how it reads ("0.0057 s →
 * 5.0 s (880×)"); null when it did not.
 */
export function moved(t: Tolerance | undefined, a: string, b: string): string | null {
  if (a === b) return null;
  const tol = t ?? { exact: true };
  if ("ignore" in tol) return null;
  if ("exact" in tol) return `${cut(a)} → ${cut(b)}`;
  const x = magnitude(a);
  const y = magnitude(b);
  if (x === null || y === null) return `${cut(a)} → ${cut(b)} (not a number on one side)`;
  if ("abs" in tol)
    return Math.abs(y - x) > tol.abs
      ? `${num(x)} → ${num(y)} (by ${num(y - x)}, tolerance ±${tol.abs})`
      : null;
  if (Math.abs(x) < tol.floor && Math.abs(y) < tol.floor) return null;
  const lo = Math.min(Math.abs(x), Math.abs(y));
  const hi = Math.max(Math.abs(x), Math.abs(y));
  const factor = lo === 0 ? Number.POSITIVE_INFINITY : hi / lo;
  if (factor <= tol.factor) return null;
  const f = Number.isFinite(factor) ? `${factor >= 10 ? factor.toFixed(0) : factor.toFixed(1)}×` : "from 0";
  return `${num(x)} ${tol.unit} → ${num(y)} ${tol.unit} (${f}; tolerance ${tol.factor}×)`;
}

/** One property's change from A to B, or null when nothing changed. */
function change(
  p: Property,
  va: Verdict | undefined,
  vb: Verdict | undefined,
  ctx: { naInB: boolean; bRecorded: boolean; runsIn?: string; bCilium: string },
): Change | null {
  const a = shown(va);
  const b = shown(vb);
  const aJudged = va !== undefined && JUDGED.has(va.status);
  const bJudged = vb !== undefined && JUDGED.has(vb.status);
  const mk = (severity: Severity, kind: string, detail: string): Change => ({
    id: p.id,
    severity,
    kind,
    a,
    b,
    detail,
  });
  if (aJudged && !bJudged) {
    if (ctx.naInB)
      return mk(
        "other",
        "not applicable in B",
        vb?.reason ?? "declared not applicable in B's mode and version",
      );
    if (!ctx.bRecorded && ctx.runsIn)
      return mk("other", "not recorded in B", `its topic runs only in ${ctx.runsIn}`);
    // B recorded the topic but could not judge this one here (no outside client, a bundle older than the probe):
    // nothing about the datapath got worse, and the reason is said
    if (ctx.bRecorded && vb?.status === "skip")
      return mk("other", "not checked in B", vb.reason ?? vb.message);
    return mk(
      "regression",
      "disappeared",
      vb ? `judged in A, skipped in B: ${vb.reason ?? vb.message}` : "judged in A, absent from B",
    );
  }
  if (!aJudged && bJudged) {
    if (isKnownIssue(vb?.status)) return mk("new-known-issue", "appeared as a known issue", knownLine(vb));
    return mk("other", "appeared", `judged in B only (${vb?.status})`);
  }
  if (!aJudged || !va || !vb) return null;
  if (isKnownIssue(vb.status) && !isKnownIssue(va.status)) {
    // the move is named too: a known issue that turned a 5 ms refusal into a 5 s timeout says so
    const m = moved(p.tolerance, va.observed, vb.observed);
    return mk("new-known-issue", `${WORD[va.status]} → known issue`, `${knownLine(vb)}${m ? `; ${m}` : ""}`);
  }
  if (RANK[vb.status] > RANK[va.status])
    return mk("regression", `${WORD[va.status]} → ${WORD[vb.status]}`, vb.message.split("\n")[0] ?? "");
  if (RANK[vb.status] < RANK[va.status])
    return mk(
      "other",
      isKnownIssue(va.status) ? "known issue gone" : "fixed",
      vb.note ?? `${WORD[va.status]} → ${WORD[vb.status]}: ${vb.checked ?? vb.claim}`,
    );
  // both verdicts agree: did the value move?
  const m = moved(p.tolerance, va.observed, vb.observed);
  if (!m) return null;
  if (va.expected !== vb.expected && vb.status === "pass")
    return mk(
      "other",
      "declared",
      `${m}: declared for Cilium ${ctx.bCilium}${vb.deviation ? ` (${vb.deviation.kind} of ${vb.deviation.versions}: ${vb.deviation.claim})` : ""}`,
    );
  return mk("behaviour", "moved", m);
}

function knownLine(v: Verdict): string {
  const d = v.deviation;
  return d
    ? `known issue of Cilium ${d.versions}: ${d.claim} (${d.upstream ?? d.why}); expected ${v.expected}, observed ${cut(v.observed)}`
    : (v.message.split("\n")[0] ?? "");
}

/** Property by property, verdicts and observed values, of two bundles (each re-judged from its raw outputs). */
export async function compareBundles(
  dirA: string,
  dirB: string,
  topics: TopicDeclaration[],
): Promise<Comparison> {
  const a = await checkBundle(dirA, topics);
  const b = await checkBundle(dirB, topics);
  return compareResults(a, b, topics);
}

/** A bundle's comparison with the shipped bundle of the nearest declared version (A), and why; null: none. */
export interface NearestComparison {
  comparison: Comparison;
  why: string;
}

/**
 * Compares a judged bundle (B) with the shipped bundle of the nearest declared version of its mode and profile
 * (A), when the suite ships none of its own version (helpers/shipped.ts); null when it does. Over the topics B
 * recorded: a run of a few topics on a new patch asks what changed in those (run lab-1196: the Service-surface
 * topics on 1.19.6 listed 62 "regressions" for the topics it never ran); `compare A B` still counts a topic B
 * lacks as a regression.
 */
export async function compareWithNearest(
  r: CheckResult,
  topics: TopicDeclaration[],
): Promise<NearestComparison | null> {
  const near = nearestShipped(r.bundle);
  if (!near) return null;
  const a = await checkBundle(near.dir, topics);
  // topics the shipped bundle recorded and this run did not: left out, and said
  const missing = a.topics.filter((t) => !r.topics.includes(t));
  const over = missing.length > 0 ? topics.filter((t) => r.topics.includes(t.name)) : topics;
  return {
    comparison: compareResults(a, r, over),
    why:
      missing.length > 0
        ? `${near.why}, over the ${r.topics.length} topics this run recorded (${missing.length} more in that bundle)`
        : near.why,
  };
}

export function compareResults(a: CheckResult, b: CheckResult, topics: TopicDeclaration[]): Comparison {
  const byId = (r: CheckResult) => new Map(r.verdicts.map((v) => [v.id, v]));
  const va = byId(a);
  const vb = byId(b);
  const changes: Change[] = [];
  let unchanged = 0;
  for (const t of topics) {
    const bRecorded = b.topics.includes(t.name);
    for (const p of t.properties) {
      const c = change(p, va.get(p.id), vb.get(p.id), {
        // declared not applicable in B's mode and version (comparing two modes): no regression
        naInB: "na" in resolve(p.expect[b.mode], b.cilium),
        bRecorded,
        ...(t.runsIn ? { runsIn: t.runsIn } : {}),
        bCilium: b.cilium,
      });
      if (c) changes.push(c);
      else unchanged++;
    }
  }
  const order = (s: Severity) => SEVERITIES.indexOf(s);
  changes.sort((x, y) => order(x.severity) - order(y.severity));
  return { a, b, changes, unchanged, regressed: changes.some((c) => c.severity !== "other") };
}

/** "1 verdict regression, 4 new known issues, 1 behaviour change" (the first three severities that happened). */
export function verdictLine(c: Comparison): string {
  const n = (s: Severity) => c.changes.filter((x) => x.severity === s).length;
  const parts = [
    [n("regression"), "verdict regression"],
    [n("new-known-issue"), "new known issue"],
    [n("behaviour"), "behaviour change"],
  ] as const;
  const said = parts.filter(([k]) => k > 0).map(([k, w]) => `${k} ${w}${k === 1 ? "" : "s"}`);
  return said.length > 0
    ? `Regression: ${said.join(", ")}.`
    : "No verdict regression, no new known issue, no behaviour change.";
}

/**
 * The comparison as `check` prints it: what it is compared with and the verdict line, then one line per
 * change (worst first), so the comparison opens the check of a version the suite ships no bundle of. Terminal
 * text: the why (the bundle's version and profile in it) and each change (B's message, its values) are shown,
 * never obeyed.
 */
export function formatComparisonText(c: Comparison, why: string): TerminalText[] {
  const tag: Record<Severity, string> = {
    regression: "REGRESSION",
    "new-known-issue": "NEW KNOWN",
    behaviour: "BEHAVIOUR",
    other: "other",
  };
  return [
    terminal`${why}`,
    terminal`  ${verdictLine(c)} (${c.unchanged} properties unchanged${c.regressed ? "; `compare A B` exits 1 on this" : ""})`,
    ...c.changes.map((x) => {
      // a regression's detail is B's message: its first line without what A → B says already (the place, the
      // id, the verdict), so the claim is left
      const detail = x.detail
        .replace(/^\[[^\]]*\] \S+: /, "")
        .replace(/^(CHANGED in the new minor \([^)]*\)|FAILS)( for Cilium \S+)?: /, "");
      return terminal`  ${tag[x.severity].padEnd(10)} ${x.id.padEnd(44)} ${x.a} → ${x.b}: ${detail.length > 110 ? `${detail.slice(0, 107)}...` : detail}`;
    }),
  ];
}

/** The comparison as markdown, line by line (check --markdown opens on them after the why). */
export function formatComparisonLines(c: Comparison): MarkdownText[] {
  const head = (r: CheckResult) => `${r.mode}, Cilium ${r.cilium}`;
  const out: MarkdownText[] = [
    markdown`### Compare ${code(c.a.bundle)} (${head(c.a)}) → ${code(c.b.bundle)} (${head(c.b)})`,
    markdown``,
    markdown`**${verdictLine(c)}**`,
    markdown``,
  ];
  if (c.a.mode !== c.b.mode)
    out.push(
      markdown`> The bundles are of different modes (${c.a.mode} vs ${c.b.mode}); each verdict is judged against its own mode's expectation.`,
      markdown``,
    );
  for (const s of SEVERITIES) {
    const rows = c.changes.filter((x) => x.severity === s);
    if (rows.length === 0 && s === "other") continue;
    out.push(markdown`#### ${SEVERITY_TITLES[s]} (${rows.length})`, markdown``);
    if (rows.length === 0) {
      out.push(markdown`None.`, markdown``);
      continue;
    }
    out.push(markdown`| property | A | B | change |`, markdown`|---|---|---|---|`);
    for (const r of rows)
      out.push(
        markdownRow([
          markdown`${code(r.id)}`,
          markdown`${r.a}`,
          markdown`${r.b}`,
          markdown`**${r.kind}**: ${r.detail}`,
        ]),
      );
    out.push(markdown``);
  }
  out.push(
    markdown`(${c.unchanged} properties unchanged: same verdict, value within its tolerance)`,
    markdown``,
  );
  return out.filter((l, i) => !(l === "" && out[i - 1] === ""));
}

export function formatComparison(c: Comparison): MarkdownText {
  return markdownLines(formatComparisonLines(c));
}

/**
 * `compare A B` on a terminal: the same sections as the markdown, as plain text (no table, no escape: a value
 * such as `cilium_policy_v3_<id:05>` reads as it is), each change on its own lines with its whole detail.
 */
export function formatComparisonTerminal(c: Comparison): TerminalText {
  const head = (r: CheckResult) => `${r.mode}, Cilium ${r.cilium}`;
  const out: TerminalText[] = [
    terminal`Compare ${c.a.bundle} (${head(c.a)}) → ${c.b.bundle} (${head(c.b)})`,
    terminal`${verdictLine(c)}`,
  ];
  if (c.a.mode !== c.b.mode)
    out.push(
      terminal`The bundles are of different modes (${c.a.mode} vs ${c.b.mode}); each verdict is judged against its own mode's expectation.`,
    );
  for (const s of SEVERITIES) {
    const rows = c.changes.filter((x) => x.severity === s);
    if (rows.length === 0 && s === "other") continue;
    out.push(
      terminal``,
      terminal`${SEVERITY_TITLES[s]} (${rows.length})${rows.length === 0 ? ": none" : ""}`,
    );
    for (const r of rows)
      out.push(terminal`  ${r.id}: ${r.a} → ${r.b}`, terminal`      ${r.kind}: ${r.detail}`);
  }
  out.push(
    terminal``,
    terminal`(${c.unchanged} properties unchanged: same verdict, value within its tolerance)`,
    terminal``,
  );
  return terminalLines(out);
}
