import { describe, expect, it } from "vitest";
import { dropDeltas, parseBpfMetrics } from "./bpf-metrics.ts";

// Written by us in the layout of Cilium 1.20.2's cilium-dbg/cmd/bpf_metrics_list.go (jsonMetric: reason,
// direction, packets, bytes, line, file); not captured from a cluster.
const before = `[
  {"reason":"Success","direction":"egress","packets":1200,"bytes":90000,"line":1411,"file":"bpf_lxc.c"},
  {"reason":"Unsupported L3 protocol","direction":"egress","packets":40,"bytes":3600,"line":1502,"file":"bpf_lxc.c"},
  {"reason":"Policy denied","direction":"ingress","packets":18446744073709551610,"bytes":0,"line":2032,"file":"bpf_lxc.c"}
]`;
const after = `[
  {"reason":"Success","direction":"egress","packets":5200,"bytes":390000,"line":1411,"file":"bpf_lxc.c"},
  {"reason":"Unsupported L3 protocol","direction":"egress","packets":43,"bytes":3870,"line":1502,"file":"bpf_lxc.c"},
  {"reason":"Policy denied","direction":"ingress","packets":18446744073709551615,"bytes":0,"line":2032,"file":"bpf_lxc.c"},
  {"reason":"Stale or unroutable IP","direction":"ingress","packets":7,"bytes":420,"line":911,"file":"bpf_host.c"}
]`;

describe("cilium-dbg bpf metrics list -o json", () => {
  it("keeps 64-bit counters exactly as printed", () => {
    const m = parseBpfMetrics(before);
    expect(m[2]?.packets).toBe("18446744073709551610");
    expect(m[0]).toMatchObject({ reason: "Success", packets: 1200, line: 1411, file: "bpf_lxc.c" });
    expect(parseBpfMetrics("")).toEqual([]);
    expect(() => parseBpfMetrics("[{")).toThrow(/line 1/);
  });

  it("drops counted between two reads: forwards left out, per source line, new entries counted whole", () => {
    expect(dropDeltas(parseBpfMetrics(before), parseBpfMetrics(after))).toEqual([
      { reason: "Stale or unroutable IP", direction: "ingress", file: "bpf_host.c", line: 911, packets: 7 },
      { reason: "Policy denied", direction: "ingress", file: "bpf_lxc.c", line: 2032, packets: 5 },
      { reason: "Unsupported L3 protocol", direction: "egress", file: "bpf_lxc.c", line: 1502, packets: 3 },
    ]);
    // a map recreated by the new agent starts again from zero: all of it counts
    const reset = dropDeltas(parseBpfMetrics(after), parseBpfMetrics(before));
    expect(reset.find((d) => d.reason === "Unsupported L3 protocol")?.packets).toBe(40);
    expect(reset[0]).toMatchObject({ reason: "Policy denied", packets: "18446744073709551610" });
  });
});
