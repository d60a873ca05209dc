import { describe, expect, it } from "vitest";
import type { BundleMeta } from "../bundle/read.ts";
import { runTimes, specsSeconds } from "./runs-table.ts";

// phases WRITTEN BY US, in the shape bundle.json records them
const oneByOne = {
  "create cluster": 50,
  "Cilium ready": 80,
  "spec config": 2,
  "spec iptables": 5,
  "spec ghost": 4,
};
const atOnce = { ...oneByOne, "specs (wall)": 7.5 };

describe("the specs' time of a run", () => {
  it("one topic at a time (every run before issue 27): the sum of the topics' own times", () => {
    expect(specsSeconds(oneByOne)).toBe(11);
    expect(runTimes({ phases: oneByOne } as unknown as BundleMeta)).toEqual({
      create: 50,
      ready: 80,
      specs: 11,
      total: 141,
    });
  });

  it("topics at once: their wall time, counted once (not beside the sum, nor as a setup phase)", () => {
    expect(specsSeconds(atOnce)).toBe(7.5);
    expect(runTimes({ phases: atOnce } as unknown as BundleMeta).total).toBe(137.5);
  });

  it("end to end is wall time: the agents' own start, measured inside Cilium ready, is not added (as bench counts it)", () => {
    const t = runTimes({ phases: { ...atOnce, "agents' own start (max)": 40 } } as unknown as BundleMeta);
    expect(t.total).toBe(137.5);
  });
});
