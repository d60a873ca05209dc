import { describe, expect, it } from "vitest";
import { kprRecords, kubeProxyRecords } from "../../suites/example-records.ts";
import type { BundleMeta } from "../bundle.ts";
import { type MeasuredBundle, summaryMarkdown, summarySvg } from "./summary.ts";

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

  it("SVG: one polyline per series, scaled to the largest value", () => {
    const svg = summarySvg(measured());
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg.match(/<polyline/g)).toHaveLength(4);
    // kube-proxy lines reach the top of the plot (2800 is the largest value), kpr's stay on the axis
    expect(svg).toContain('points="49.5,251.0 125.0,201.0 356.0,48.0"><title>kube-proxy kube-proxy lines');
    expect(svg).toContain('points="49.5,252.0 125.0,252.0 356.0,252.0"><title>kpr kube-proxy lines');
  });
});
