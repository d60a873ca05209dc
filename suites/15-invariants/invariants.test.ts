import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readBaseline, writeBaseline } from "../../helpers/baseline.ts";
import { dropsSince } from "./invariants.topic.ts";

describe("drops over the run", () => {
  it("counts each reason's increase since the baseline; a counter that went down (an agent restart) counts anew", () => {
    expect(
      dropsSince(
        { "Service backend not found": 10, "Stale or unroutable IP": 4 },
        { "Service backend not found": 13, "Stale or unroutable IP": 4, "Policy denied": 2 },
      ),
    ).toEqual({ "Service backend not found": 3, "Policy denied": 2 });
    expect(dropsSince({ "Unknown L3 target address": 50 }, { "Unknown L3 target address": 7 })).toEqual({
      "Unknown L3 target address": 7,
    });
  });

  it("the baseline round-trips through the bundle; a bundle without one has none", () => {
    const dir = mkdtempSync(join(tmpdir(), "dpc-baseline-"));
    try {
      expect(readBaseline(dir)).toBeNull();
      writeBaseline(dir, { "cdc-kpr-worker": "[]", "cdc-kpr-worker2": '[{"name":"x"}]' });
      expect(readBaseline(dir)).toEqual({ "cdc-kpr-worker": "[]", "cdc-kpr-worker2": '[{"name":"x"}]' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
