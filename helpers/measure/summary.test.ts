import { describe, expect, it } from "vitest";
import { kprRecords, kubeProxyRecords } from "../../suites/example-records.ts";
import { RECORDS } from "../../suites/topics.ts";
import { type BundleMeta, readMeta, readRecords } from "../bundle/read.ts";
import { shipped } from "../testing/tamper.ts";
import { type MeasuredBundle, measurementCharts, summaryMarkdown, summarySvg } from "./summary.ts";

const meta = (mode: "kpr" | "kube-proxy"): BundleMeta => ({
  format: 1,
  mode,
  cilium: "1.20.1",
  ciliumMinor: "1.20",
  kubernetes: "v1.35.0",
  kernel: "6.17.0",
  attachMode: "TCX",
  provider: "kind",
  origin: "recorded",
  runId: "r",
  createdAt: "2026-12-02T00:00:00Z",
  phases: { "create cluster": 61.2, "Cilium ready": 83.4 },
});

function measured(): MeasuredBundle[] {
  return (["kpr", "kube-proxy"] as const).map((mode) => {
    const r = mode === "kpr" ? kprRecords() : kubeProxyRecords();
    return {
      label: mode,
      meta: meta(mode),
      scaling: r.scaling?.record,
      latency: r.latency?.record,
    } as MeasuredBundle;
  });
}

describe("summary", () => {
  it("markdown: per-bundle figures, the scale table and the phase timings", () => {
    const md = summaryMarkdown(measured());
    expect(md).toContain("| kpr | kpr | 1.20.1 | 0 (r² 1) | 6 (r² 1) | 420 ms / 1300 ms | – / – |");
    expect(md).toContain(
      "| kube-proxy | kube-proxy | 1.20.1 | 14 (r² 1) | 6 (r² 1) | 420 ms / 1300 ms | 800 ms / 2100 ms |",
    );
    expect(md).toContain("| 200 | 800 | 0 | 1200 | 2800 | 1200 |");
    expect(md).toContain("| create cluster | 61.2 s | 61.2 s |");
  });

  it("charts of the recorded bundles: scaling with a legend swatch per series, a dot/box plot per latency", () => {
    const charts = measurementCharts(
      ["kpr", "kube-proxy"].map((m) => {
        const dir = shipped(m);
        const r = readRecords(dir, RECORDS);
        return { label: m, meta: readMeta(dir), scaling: r.scaling?.record, latency: r.latency?.record };
      }),
    );
    expect(charts.map((c) => c.id)).toEqual([
      "scaling",
      "map-latency",
      "kube-proxy-latency",
      "ghost-latency",
    ]);
    const scaling = charts[0]?.svg.text ?? "";
    expect(scaling.match(/<polyline/g)).toHaveLength(4);
    // each legend item repeats its series' colour, dash and marker
    expect(scaling.match(/class="legend-item"/g)).toHaveLength(4);
    expect(scaling).toMatch(
      /<g class="legend-item"><line [^>]*stroke-dasharray="6,4"\/><rect [^>]*\/?>.*kpr: BPF LB entries/,
    );
    // the y axis is ticked to a round value above the largest count (2800 rules at 200 Services)
    expect(scaling).toContain('text-anchor="end">3000</text>');
    expect(scaling).toContain("ClusterIP Services (4 endpoints each)");
    // the second bundle is drawn 5 px to the right, so equal LB-entry lines do not hide each other
    const xsOf = (name: string) =>
      /points="([^"]+)"/.exec(scaling.slice(scaling.indexOf(`data-series="${name}"`)))?.[1]?.split(" ")[0];
    expect(
      Number(xsOf("kube-proxy: BPF LB entries (first node)")?.split(",")[0]) -
        Number(xsOf("kpr: BPF LB entries (first node)")?.split(",")[0]),
    ).toBe(5);
    const map = charts[1]?.svg.text ?? "";
    expect(map.match(/class="box"/g)).toHaveLength(2);
    expect(map.match(/class="p50"/g)).toHaveLength(2);
    expect(map.match(/class="p90"/g)).toHaveLength(2);
  });

  it("split: small multiples, a chart per group for each kind, a legend by bundle, each bundle by its short name", () => {
    const bundles = ["1.20/kpr", "1.20/kube-proxy", "1.19/kpr", "1.19/kube-proxy", "existing/kpr"].map(
      (m) => {
        const dir = shipped(m);
        const r = readRecords(dir, RECORDS);
        return { label: m, meta: readMeta(dir), scaling: r.scaling?.record, latency: r.latency?.record };
      },
    );
    const charts = measurementCharts(bundles, {
      split: (b) => String(b.meta.mode),
      name: (b) => b.label.split("/")[0] as string,
      width: 400,
    });
    expect(charts.map((c) => c.id)).toEqual([
      "scaling-kpr",
      "scaling-kube-proxy",
      "map-latency-kpr",
      "map-latency-kube-proxy",
      "kube-proxy-latency-kube-proxy",
      "ghost-latency-kpr",
      "ghost-latency-kube-proxy",
    ]);
    const kpr = charts[0]?.svg.text ?? "";
    // its group is its title; two lines a bundle, the legend the two styles then a swatch per bundle
    expect(kpr).toContain('font-weight="600">kpr</text>');
    expect(kpr.match(/<polyline/g)).toHaveLength(6);
    expect(kpr.match(/class="legend-item"/g)).toHaveLength(2 + 3);
    expect(kpr).toMatch(/<g class="legend-item"><rect [^>]*\/><text [^>]*>existing<\/text><\/g>/);
    expect(kpr).toContain('width="400"');
    expect(charts.map((c) => c.kindTitle)).toContain("EndpointSlice change → every agent's BPF map");
  });

  it("summary --svg stacks the charts into one SVG", () => {
    const svg = summarySvg(measured());
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg.match(/<svg /g)).toHaveLength(1 + measurementCharts(measured()).length);
  });
});
