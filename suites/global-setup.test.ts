import { describe, expect, it } from "vitest";
import { modesConcurrent } from "./global-setup.ts";

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
