/**
 * Declaring a new minor from evidence (issue 38, item 4): from a bundle of a minor the suite has not declared
 * (every verdict judged on the newest declared minor's expectations), what to declare for the new minor before
 * it is added to clusters/lab/versions.env, each property with its observed value and the raw lines behind it:
 *
 * - changed: the assumed expectation did not hold — a new behaviour of the minor (declare it, with its source)
 *   or a regression (declare a known issue with its upstream reference, or report it);
 * - carried: it held only through what the newest declared minor declares for itself (its behaviour, or a
 *   known issue of its newest patch still shown): once the new minor is declared, that no longer applies to it,
 *   so the same is declared for the new minor, or its default is expected;
 * - the rest held under the default (nothing to declare), or was not observed (no evidence to declare from).
 *
 * Pure: a judged bundle in, the lists out; formatDeclaration says them as terminal text (helpers/output.ts: the
 * bundle's strings in it, its version, observed values and raw lines, are shown, never obeyed).
 */

import type { CheckResult } from "./check.ts";
import { type TerminalText, terminal, terminalLines } from "./output.ts";
import { describeExpect, isByVersion, satisfies } from "./properties/expectation.ts";
import { skipReason, type Verdict } from "./properties/judge.ts";
import { isKnownIssue } from "./properties/status.ts";
import type { Property } from "./properties/types.ts";
import { assumedText, CHANGED_TITLE, minorOf } from "./properties/versions.ts";
import { type EvidenceItem, showItem } from "./records/evidence.ts";
import type { TopicDeclaration } from "./topic.ts";

export interface ToDeclare {
  verdict: Verdict;
  /** The property's declared default for the bundle's mode (what the new minor gets when nothing is declared). */
  defaultExpect: string;
  /** Whether the observed value satisfies that default: declaring the minor with nothing for it would do. */
  defaultHolds: boolean;
}

export interface Declaration {
  bundle: string;
  mode: Verdict["mode"];
  cilium: string;
  /** The new minor ("1.21") and the declared one its verdicts assumed ("1.20"). */
  minor: string;
  assumedFrom: string;
  changed: ToDeclare[];
  carried: ToDeclare[];
  /** Held under the property's default: nothing to declare. */
  heldOnDefault: number;
  /** Skipped (not observed here, or not applicable): no evidence to declare from, with the reasons. */
  notObserved: { reason: string; ids: string[] }[];
}

/** What to declare for the bundle's minor; null when the bundle's version is of a declared minor (nothing assumed). */
export function toDeclare(r: CheckResult, topics: TopicDeclaration[]): Declaration | null {
  if (!r.assumedFrom) return null;
  const props = new Map<string, Property>(topics.flatMap((t) => t.properties).map((p) => [p.id, p]));
  const item = (v: Verdict): ToDeclare => {
    const e = props.get(v.id)?.expect[r.mode];
    const def = e ? (isByVersion(e) ? e.default : e) : null;
    return {
      verdict: v,
      defaultExpect: def ? describeExpect(def) : "?",
      defaultHolds: def !== null && !("na" in def) && satisfies(def, parsedObserved(v.observed)),
    };
  };
  const changed = r.verdicts.filter((v) => v.status === "changed").map(item);
  // held (or a known issue still shown) only by what the assumed minor declares for itself
  const carried = r.verdicts
    .filter(
      (v) =>
        v.deviation && (isKnownIssue(v.status) || (v.status === "pass" && v.deviation.kind === "behaviour")),
    )
    .map(item);
  const carriedIds = new Set(carried.map((c) => c.verdict.id));
  const skipped = new Map<string, string[]>();
  for (const v of r.verdicts.filter((x) => x.status === "skip")) {
    const reason = skipReason(v);
    skipped.set(reason, [...(skipped.get(reason) ?? []), v.id]);
  }
  return {
    bundle: r.bundle,
    mode: r.mode,
    cilium: r.cilium,
    minor: minorOf(r.cilium),
    assumedFrom: r.assumedFrom,
    changed,
    carried,
    heldOnDefault: r.verdicts.filter((v) => v.status === "pass" && !carriedIds.has(v.id)).length,
    notObserved: [...skipped].map(([reason, ids]) => ({ reason, ids })),
  };
}

/** A verdict's observed value as the judge saw it: JSON where it reads as JSON, else the string itself. */
function parsedObserved(observed: string): unknown {
  try {
    return JSON.parse(observed);
  } catch {
    return observed;
  }
}

/** An observed value as a declaration's `expect` would take it: JSON where it reads as JSON, else a string. */
function asExpectValue(observed: string): string {
  try {
    return JSON.stringify(JSON.parse(observed));
  } catch {
    return JSON.stringify(observed);
  }
}

const MAX_EVIDENCE = 6;
function evidenceLines(items: EvidenceItem[]): TerminalText[] {
  if (items.length === 0) return [terminal`      (no evidence)`];
  const cut = (s: string) => (s.length > 220 ? `${s.slice(0, 217)}...` : s);
  return [
    ...items.slice(0, MAX_EVIDENCE).map((e) => terminal`      ${cut(showItem(e))}`),
    ...(items.length > MAX_EVIDENCE
      ? [terminal`      (${items.length - MAX_EVIDENCE} more: check shows them all)`]
      : []),
  ];
}

/**
 * The declaration's steps as text: each property with where it is declared, what was expected and observed,
 * the raw lines, and the entry to write (its value from the observation; its claim and source from you).
 */
export function formatDeclaration(d: Declaration, topicFile: (topic: string) => string): TerminalText {
  const key = `expect["${d.mode}"].byMinor["${d.minor}"]`;
  const head = (t: ToDeclare): TerminalText[] => {
    const v = t.verdict;
    return [
      terminal`  ${v.id}  (${topicFile(v.topic)})`,
      terminal`    claim: ${v.checked ?? v.claim}`,
      terminal`    expected (${assumedText(d.assumedFrom)}): ${v.expected}${v.deviation ? `  [${v.deviation.kind} of ${v.deviation.versions}: ${v.deviation.claim}]` : ""}; the default: ${t.defaultExpect}`,
      terminal`    observed: ${v.observed}`,
      ...(v.note ? [terminal`    note: ${v.note}`] : []),
      terminal`    evidence (raw lines at their place in the bundle):`,
      ...evidenceLines(v.evidence),
    ];
  };
  const out: TerminalText[] = [
    terminal`Declaring Cilium ${d.minor} from ${d.bundle} (mode ${d.mode}, Cilium ${d.cilium}; every verdict ${assumedText(d.assumedFrom)}):`,
    terminal``,
    terminal`1. ${CHANGED_TITLE} (${d.changed.length}). For each: a new behaviour of ${d.minor} (declare it with its source: the doc, the code or the PR), or a regression (a known issue with its upstream reference, or a bug to report upstream).`,
  ];
  if (d.changed.length === 0) out.push(terminal`  none`);
  for (const t of d.changed)
    out.push(
      ...head(t),
      t.defaultHolds
        ? terminal`    declare: nothing for ${d.minor} if the change is intended: the default (${t.defaultExpect}) holds for what was observed once ${d.minor} is declared (say why in the property's \`why\`); or, a regression: ${key} = { kind: "known-issue", expect: { eq: ${asExpectValue(t.verdict.observed)} }, claim: "…", why: "…", upstream: "…" }`
        : terminal`    declare: ${key} = { kind: "behaviour" | "known-issue", expect: { eq: ${asExpectValue(t.verdict.observed)} }, claim: "…", why: "…"${t.verdict.note ? ', upstream: "…"' : ""} }`,
      terminal``,
    );
  out.push(
    terminal``,
    terminal`2. Held only by what ${d.assumedFrom} declares for itself (${d.carried.length}). Once ${d.minor} is declared, ${d.assumedFrom}'s declaration no longer applies to it: declare the same for ${d.minor} where it still holds for the same reason, or its default is expected.`,
  );
  if (d.carried.length === 0) out.push(terminal`  none`);
  for (const t of d.carried) {
    const dev = t.verdict.deviation;
    out.push(
      ...head(t),
      terminal`    declare: ${key} = { kind: "${dev?.kind}", expect: <as ${dev?.versions} declares it: ${dev?.expected}>, claim: "…", why: "…"${dev?.kind === "known-issue" ? `, upstream: ${JSON.stringify(dev.upstream ?? "…")}` : ""} }`,
      terminal``,
    );
  }
  out.push(
    terminal``,
    terminal`3. Held under the property's default (${d.heldOnDefault}): nothing to declare.`,
    terminal``,
    terminal`4. Not judged in this bundle (${d.notObserved.reduce((n, x) => n + x.ids.length, 0)}: skipped or not applicable here): no evidence to declare them from.`,
    ...d.notObserved.map(
      (x) =>
        terminal`  ${x.ids.length} ${x.ids.length === 1 ? "property" : "properties"}: ${x.reason}${x.ids.length <= 4 ? ` (${x.ids.join(", ")})` : ""}`,
    ),
    terminal``,
    terminal`Then add the patch to CILIUM_VERSIONS in clusters/lab/versions.env (newest first: "${d.cilium.split(" ")[0]} …"), and check the bundle again: every verdict is then judged on ${d.minor}'s own declaration, nothing assumed.`,
    terminal``,
  );
  // one blank line at most between parts; the text ends with a newline (the last line is empty)
  return terminalLines(out.filter((l, i) => !(l === "" && out[i - 1] === "")));
}
