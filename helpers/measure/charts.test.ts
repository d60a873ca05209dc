import { describe, expect, it } from "vitest";
import { dotBoxChart, niceTicks } from "./charts.ts";

describe("charts", () => {
  it("ticks are round steps covering the largest value", () => {
    expect(niceTicks(2800)).toEqual([0, 1000, 2000, 3000]);
    expect(niceTicks(200)).toEqual([0, 50, 100, 150, 200]);
    expect(niceTicks(0.0062)).toEqual([0, 0.002, 0.004, 0.006, 0.008]);
    expect(niceTicks(0)).toEqual([0, 1]);
  });

  it("a dot/box row marks p50 and p90 where the values put them (nearest rank, as the records compute them)", () => {
    const svg = dotBoxChart({
      title: "t",
      xLabel: "ms",
      rows: [{ name: "kpr", color: "#000", values: [10, 20, 30, 40, 50, 60, 70, 80, 90, 100] }],
    }).text;
    expect(svg).toContain("<title>p50 50</title>");
    expect(svg).toContain("<title>p90 90</title>");
    // ten values, and the key's sample dot
    expect(svg.match(/<circle/g)).toHaveLength(11);
  });

  it("a chart without values says so instead of drawing an empty box", () => {
    expect(
      dotBoxChart({ title: "t", xLabel: "s", rows: [{ name: "kpr", color: "#000", values: [] }] }).text,
    ).toContain("no values recorded");
  });
});
