import { expect } from "vitest";
import type { Verdict } from "../properties/judge.ts";
import { assumedText, CHANGED_LABEL } from "../properties/versions.ts";
import { showItem } from "../records/evidence.ts";

interface PropertyMatchers<R = unknown> {
  /** The verdict holds: on failure the report shows the expected and observed values as its diff, then the evidence. */
  toHoldProperty(): R;
}

declare module "vitest" {
  // biome-ignore lint/suspicious/noExplicitAny: the shape vitest's own Assertion declares
  interface Assertion<T = any> extends PropertyMatchers<T> {}
  interface AsymmetricMatchersContaining extends PropertyMatchers {}
}

/**
 * What a failed property says under its diff: the claim, where it comes from, and the raw lines; under an
 * expectation assumed for a minor the suite has not declared, that it changed in the new minor.
 */
export function propertyFailure(v: Verdict): string {
  const evidence =
    v.evidence.length > 0 ? v.evidence.map((e) => `    ${showItem(e)}`).join("\n") : "    (no evidence)";
  const where = `[${v.mode}${v.cilium ? `, Cilium ${v.cilium}` : ""}${v.assumedFrom ? `, ${assumedText(v.assumedFrom)}` : ""}]`;
  const what = v.status === "changed" ? `${CHANGED_LABEL.toUpperCase()}:` : "does not hold";
  return `${v.id} ${what} ${where}: ${v.claim}\n  source: ${v.source}\n  evidence:\n${evidence}`;
}

expect.extend({
  toHoldProperty(received: Verdict) {
    return {
      pass: received.status === "pass",
      message: () =>
        received.status === "pass"
          ? `${received.id} holds (observed ${received.observed}), but it was expected not to`
          : propertyFailure(received),
      // vitest prints these two as the diff: expected vs observed, as the verdict shows them
      expected: received.expected,
      actual: received.observed,
    };
  },
});
