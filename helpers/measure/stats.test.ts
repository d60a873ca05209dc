import { describe, expect, it } from "vitest";
import { fitLine, percentile } from "./stats.ts";

describe("stats", () => {
  it("nearest-rank percentiles", () => {
    const v = [120, 80, 400, 95, 210, 150, 90, 110, 300, 100];
    expect(percentile(v, 50)).toBe(110);
    expect(percentile(v, 90)).toBe(300);
    expect(percentile(v, 100)).toBe(400);
    expect(percentile([], 50)).toBeNull();
  });

  it("a perfect line, a noisy one, a flat one", () => {
    const exact = fitLine([1, 50, 200], [14, 700, 2800]);
    expect(exact.slope).toBeCloseTo(14, 9);
    expect(exact.intercept).toBeCloseTo(0, 9);
    expect(exact.r2).toBeCloseTo(1, 9);
    const noisy = fitLine([1, 2, 3, 4], [1, 3, 2, 4]);
    expect(noisy.slope).toBeCloseTo(0.8);
    expect(noisy.r2).toBeCloseTo(0.64);
    expect(fitLine([1, 50, 200], [0, 0, 0])).toEqual({ slope: 0, intercept: 0, r2: 1 });
    expect(() => fitLine([1], [])).toThrow();
  });
});
