/**
 * Real values instead of patterns (issue 27): where a verdict's expected value is a regular expression
 * (`/^Disabled(/|$)/`) or a template (`cilium_policy_v3_<id:05>`), the page shows the real value the run
 * observed — the observed value itself, or for a template the token of the quoted evidence that fits it — and
 * keeps the pattern as secondary detail.
 */
import type { Verdict } from "../properties/judge.ts";

export interface ShownValues {
  /** What the run observed, as a real value (for a template: the token of the evidence that fits it). */
  observed: string;
  /** What was expected: the real value that matched when the expectation is a pattern and it held. */
  expected: string;
  /** The expectation's pattern or template, when it is one (shown as secondary detail). */
  pattern?: string;
}

/** `/…/` as describeExpect writes a `match` expectation. */
const REGEX = /^\/.+\/$/s;
/** Placeholders as the declarations write templates: a name in angle brackets, with an optional width (id:05). */
const PLACEHOLDER = /<([a-z][a-z0-9_-]*)(?::(\d+))?>/gi;

/** A template as a regular expression finding a token that fits it; null when it holds no placeholder. */
export function templateRegex(template: string): RegExp | null {
  if (!new RegExp(PLACEHOLDER.source, "i").test(template)) return null;
  let src = "";
  let last = 0;
  for (const m of template.matchAll(PLACEHOLDER)) {
    src += template.slice(last, m.index).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    src += m[2] ? `[0-9]{${Number(m[2])}}` : "[A-Za-z0-9_.:-]+";
    last = (m.index ?? 0) + m[0].length;
  }
  src += template.slice(last).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  return new RegExp(`(?<![A-Za-z0-9_])${src}(?![A-Za-z0-9_])`);
}

/** The first token of the verdict's quoted evidence that fits the template, or null. */
function fromEvidence(v: Pick<Verdict, "evidence">, template: string): string | null {
  const re = templateRegex(template);
  if (!re) return null;
  for (const e of v.evidence) {
    if (!("quote" in e) || typeof e.quote !== "string") continue;
    const m = re.exec(e.quote);
    if (m) return m[0];
  }
  return null;
}

/** The values a verdict is shown with. */
export function shownValues(v: Pick<Verdict, "status" | "expected" | "observed" | "evidence">): ShownValues {
  const expected = String(v.expected ?? "");
  const observed = String(v.observed ?? "");
  const held = v.status === "pass";
  if (REGEX.test(expected))
    return held
      ? { observed, expected: observed, pattern: expected }
      : { observed, expected, pattern: expected };
  const template = templateRegex(expected) ? expected : templateRegex(observed) ? observed : null;
  if (template) {
    const real = fromEvidence(v, template);
    // the observed value is the template itself when the property reads it that way (the id put back)
    const obs = observed === template && real ? real : observed;
    return held && real
      ? { observed: obs, expected: real, pattern: template }
      : { observed: obs, expected, pattern: template };
  }
  return { observed, expected };
}
