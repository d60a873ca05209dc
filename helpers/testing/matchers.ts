import { expect } from "vitest";
import type { Verdict } from "../properties/judge.ts";
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

/** What a failed property says under its diff: the claim, where it comes from, and the raw lines. */
export function propertyFailure(v: Verdict): string {
  const evidence =
    v.evidence.length > 0 ? v.evidence.map((e) => `    ${showItem(e)}`).join("\n") : "    (no evidence)";
  return `${v.id} does not hold [${v.mode}${v.cilium ? `, Cilium ${v.cilium}` : ""}]: ${v.claim}\n  source: ${v.source}\n  evidence:\n${evidence}`;
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
