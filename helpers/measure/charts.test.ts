import { describe, expect, it } from "vitest";
import { dotBoxChart, lineChart, niceTicks, textWidth, wrapWords } from "./charts.ts";

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

  it("a percentile's label near 0 stays inside the plot, off the row's name; the key inside a narrow chart", () => {
    const svg = dotBoxChart({
      title: "t",
      xLabel: "s",
      width: 400,
      rows: [{ name: "run 2 · after rollback", color: "#000", values: [0.001, 0.002, 0.003, 1000] }],
    }).text;
    const left = Number(
      /<line x1="([\d.]+)" x2="[\d.]+" y1="[\d.]+" y2="[\d.]+" stroke="#333"\/>/.exec(svg)?.[1],
    );
    const p50 = /<text x="([\d.]+)"[^>]*>p50 0\.00<\/text>/.exec(svg);
    expect(Number(p50?.[1]) - textWidth("p50 0.00".length, 10) / 2).toBeGreaterThanOrEqual(left - 0.1);
    const key = /<text x="([\d.]+)" y="[\d.]+">p90 \(nearest rank\)<\/text>/.exec(svg);
    expect(Number(key?.[1]) + textWidth(18, 11)).toBeLessThanOrEqual(400);
  });

  it("a chart without values says so instead of drawing an empty box", () => {
    expect(
      dotBoxChart({ title: "t", xLabel: "s", rows: [{ name: "kpr", color: "#000", values: [] }] }).text,
    ).toContain("no values recorded");
  });

  it("legends wrap (issue 37: 60 entries of 35 bundles ran off the right edge), the chart as tall as they need", () => {
    expect(wrapWords("1.20.2 / kpr / dsr-maglev · existing: BPF LB entries (first node)", 30)).toEqual([
      "1.20.2 / kpr / dsr-maglev ·",
      "existing: BPF LB entries",
      "(first node)",
    ]);
    expect(wrapWords("x".repeat(25), 10)).toEqual(["xxxxxxxxxx", "xxxxxxxxxx", "xxxxx"]);
    const series = Array.from({ length: 60 }, (_, i) => ({
      name: `1.20.2 / kube-proxy / native-bpf · existing ${i}: kube-proxy rules (same values as 1.18.11 / kpr: kube-proxy rules)`,
      color: "#000",
      marker: "circle" as const,
      points: [[i, i] as [number, number]],
    }));
    const svg = lineChart({ title: "t", xLabel: "x", yLabel: "y", series }).text;
    const [, w, h] = /width="(\d+)" height="(\d+)"/.exec(svg) as RegExpExecArray;
    // every legend line starts at 64 + 42 and fits the width
    const lines = [...svg.matchAll(/<text x="106"[^>]*>([^<]*)|<tspan x="106" dy="15">([^<]*)</g)].map(
      (m) => m[1] ?? m[2] ?? "",
    );
    expect(lines.length).toBeGreaterThanOrEqual(120);
    for (const l of lines) expect(106 + textWidth(l.length), l).toBeLessThanOrEqual(Number(w));
    expect(Number(h)).toBeGreaterThan(34 + 220 + 48 + lines.length * 15);
  });

  it("a row's name is as wide as the left margin it gets (issue 37: latency labels cut on the left)", () => {
    const svg = dotBoxChart({
      title: "t",
      xLabel: "ms",
      rows: [{ name: "1.20.2 / kube-proxy / socketlb-hostns · existing", color: "#000", values: [1, 2] }],
    }).text;
    const x = Number(/<text class="row-name" x="([\d.]+)"/.exec(svg)?.[1]);
    const names = [...svg.matchAll(/class="row-name"[^>]*>([^<]*)|<tspan x="[\d.]+" dy="14">([^<]*)</g)].map(
      (m) => m[1] ?? m[2] ?? "",
    );
    expect(names.length).toBeGreaterThan(1);
    for (const n of names) expect(x - textWidth(n.length), n).toBeGreaterThanOrEqual(0);
  });
});
