import { describe, expect, it } from "vitest";
import { asksForClusters, decide, modesConcurrent, NPM_TEST_NO_CLUSTER } from "./global-setup.ts";

describe("MODES_CONCURRENT", () => {
  it("unset, empty or 1 runs both modes at once (the faster order measured); 0 one after the other; anything else is one line naming the valid values", () => {
    expect(modesConcurrent({ MODES_CONCURRENT: "1" })).toBe(true);
    expect(modesConcurrent({})).toBe(true);
    expect(modesConcurrent({ MODES_CONCURRENT: "" })).toBe(true);
    expect(modesConcurrent({ MODES_CONCURRENT: "0" })).toBe(false);
    expect(() => modesConcurrent({ MODES_CONCURRENT: "yes" })).toThrow(
      "MODES_CONCURRENT=yes: valid values are 1 (both modes at once, the default) and 0 (one after the other)",
    );
  });
});

describe("npm test creates no cluster unless CLUSTER_PROVIDER names one", () => {
  it("only `npm run test:conformance` or `--project conformance` asks for clusters without naming a provider", () => {
    const vitest = ["node", "vitest.mjs", "run"];
    expect(asksForClusters({ npm_lifecycle_event: "test" }, vitest)).toBe(false);
    expect(asksForClusters({}, vitest)).toBe(false);
    expect(asksForClusters({}, [...vitest, "--project", "unit"])).toBe(false);
    expect(
      asksForClusters({ npm_lifecycle_event: "test:conformance" }, [...vitest, "--project", "conformance"]),
    ).toBe(true);
    expect(asksForClusters({}, [...vitest, "--project", "conformance", "suites/08-report"])).toBe(true);
    expect(asksForClusters({}, [...vitest, "--project=conformance"])).toBe(true);
  });

  it("`npm test` with CLUSTER_PROVIDER unset: every conformance spec skipped, saying so, and nothing asked of Docker", async () => {
    // the reason is this one, not Docker's or kind's: it decided before looking for either
    const r = await decide(new AbortController().signal, { npm_lifecycle_event: "test", PATH: "" }, [
      "node",
      "vitest.mjs",
      "run",
    ]);
    expect(r).toEqual({ state: { kind: "skip", reason: NPM_TEST_NO_CLUSTER } });
    expect(NPM_TEST_NO_CLUSTER).toBe(
      "CLUSTER_PROVIDER is unset: `npm test` creates no cluster (CLUSTER_PROVIDER=kind|k3d|existing names one; `npm run test:conformance` uses kind when Docker and kind answer)",
    );
    const none = await decide(new AbortController().signal, { CLUSTER_PROVIDER: "none" }, []);
    expect(none.state).toMatchObject({
      kind: "skip",
      reason: expect.stringMatching(/^CLUSTER_PROVIDER=none: /),
    });
  });
});
