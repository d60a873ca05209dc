import { describe, expect, it } from "vitest";
import { formatFigures, median } from "./figures.ts";

describe("bench figures", () => {
  it("each figure with its reference, the ratio and whether its goal is met", () => {
    expect(
      formatFigures([
        {
          what: "check, two bundles",
          seconds: 0.84,
          reference: { what: "in process", seconds: 0.42 },
          goalSeconds: 2,
        },
        { what: "npm test", seconds: 71.5, goalSeconds: 60 },
        {
          what: "parse --ndjson",
          seconds: 3.7,
          reference: { what: "streamed in process", seconds: 1.2 },
          note: "peak RSS 170 MB",
        },
      ]),
    ).toBe(
      [
        "| figure | time | reference (same run) | ratio | goal |",
        "|---|---|---|---|---|",
        "| check, two bundles | 0.84 s | in process: 0.42 s | 2.0× | ≤ 2 s ✔ |",
        "| npm test | 71.5 s |  |  | ≤ 60 s ✘ missed |",
        "| parse --ndjson | 3.70 s (peak RSS 170 MB) | streamed in process: 1.20 s | 3.1× |  |",
        "",
      ].join("\n"),
    );
  });

  it("a ratio goal is judged against the reference; without one it says so", () => {
    expect(
      formatFigures([
        { what: "create", seconds: 50, reference: { what: "bare", seconds: 40 }, goalRatio: 1.2 },
        { what: "ready", seconds: 44, reference: { what: "own start", seconds: 40 }, goalRatio: 1.2 },
        { what: "scale", seconds: 30, noReference: "none: not measured", goalRatio: 1.5 },
      ])
        .split("\n")
        .slice(2, 5),
    ).toEqual([
      "| create | 50.0 s | bare: 40.0 s | 1.3× | ≤ 1.2× ✘ missed |",
      "| ready | 44.0 s | own start: 40.0 s | 1.1× | ≤ 1.2× ✔ |",
      "| scale | 30.0 s | none: not measured |  | ≤ 1.5× (no reference) |",
    ]);
  });

  it("median of odd and even counts", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
});
