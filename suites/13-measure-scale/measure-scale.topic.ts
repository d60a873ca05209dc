/**
 * Topic "measure-scale" — The lab, step 1, measured as the number of Services grows.
 * How the datapath grows with the number of Services: kube-proxy's rules and the BPF LB entries at 1, 50 and 200 Services.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */
import { fitLine } from "../../helpers/measure/stats.ts";
import {
  agentNodes,
  deleteMeasurement,
  ENDPOINTS_PER_SERVICE,
  measureFrontends,
  SCALE_LABEL,
  SCALE_POINTS,
  scaleManifest,
} from "../../helpers/measure/workloads.ts";
import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { kubectlRaw } from "../../helpers/observe/cluster.ts";
import { type RunContext, waitFor } from "../../helpers/observe/context.ts";
import { iptablesSaveRaw } from "../../helpers/observe/node.ts";
import { parseBpfLbList } from "../../helpers/parse/bpf-lb-list.ts";
import { linesContaining } from "../../helpers/parse/iptables-save.ts";
import { KN, LAB } from "../../helpers/properties/sources.ts";
import { derive, type EvidenceItem, type RawText } from "../../helpers/records/evidence.ts";
import type { MeasureScaleRecord, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";

export const topic = defineTopic({
  name: "measure-scale",
  title:
    "How the datapath grows with the number of Services: kube-proxy's rules and the BPF LB entries at 1, 50 and 200 Services",
  source: LAB(1),
  deploys: [
    "generated: 1, 50 and 200 ClusterIP Services, each with an EndpointSlice of 4 endpoints (helpers/measure/workloads.ts)",
  ],
  steps: [
    { on: "agent", run: "cilium-dbg service list -o json", for: "every agent has the Services (polled)" },
    { on: "node", run: "iptables-save", for: "kube-proxy's rules" },
    { on: "agent", run: "cilium-dbg bpf lb list", for: "the LB entries" },
  ],
  builds: ["scaling"],
  observe: observeScaling,
  properties: [
    {
      id: "measure.kube-proxy-lines",
      claim:
        "kube-proxy's iptables lines grow linearly with Services (1, 50, 200 × 4 endpoints); without kube-proxy there are none",
      source: LAB(1),
      why: "the lab's 'rules grow with every Service and endpoint'; per-Service shape 1 + 2N (peers-and-pitfalls.md §4.3)",
      expect: { kpr: { eq: "none" }, "kube-proxy": { eq: "linear" } },
      needs: ["scaling"],
      observe: (r) => {
        const m = r.get("scaling");
        const max = Math.max(...m.points.map((p) => p.kube_proxy_lines));
        const value =
          max === 0
            ? "none"
            : m.kube_proxy_r2 >= 0.99 && m.kube_proxy_per_service > 0
              ? "linear"
              : `not linear (r²=${m.kube_proxy_r2})`;
        return {
          value,
          evidence: [...r.evidence("scaling", "kube_proxy_per_service"), ...r.evidence("scaling", "points")],
        };
      },
    },
    {
      id: "measure.kube-proxy-lines-per-service",
      claim:
        "Rules kube-proxy writes per ClusterIP Service port with N=4 endpoints: 2 + 3N (the KUBE-SERVICES jump, the KUBE-SVC masquerade rule, N KUBE-SVC jumps, and per endpoint a KUBE-SEP masquerade and a DNAT rule)",
      source: KN("peers-and-pitfalls.md §4.3"),
      why: "the count is of rule lines carrying the Service's comment, so the 1 + N chain declarations (`:KUBE-SVC-…`, `:KUBE-SEP-…`) are not in it; 14 = 2 + 3·4 recorded on the lab cluster (kube-proxy v1.35.5, iptables mode)",
      expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 14 } },
      needs: ["scaling"],
      observe: (r) => ({
        value: r.get("scaling").kube_proxy_per_service,
        evidence: [...r.evidence("scaling", "kube_proxy_per_service"), ...r.evidence("scaling", "points")],
      }),
    },
    {
      id: "measure.lb-entries-per-service",
      claim:
        "Cilium keeps a Service as a few map entries (slot 0 + one per backend, + the 1.19+ wildcard), in both modes",
      source: LAB(1),
      why: "the lab's 'each Service as a hash map entry'; KPR=false keeps ClusterIP entries too (clusters.md §4.2). 1 + N on 1.18, 2 + N from 1.19 with the `<vip>:0/ANY` wildcard entry: 6 for N=4 recorded on the lab cluster (1.19.7) in both modes",
      expect: {
        kpr: { default: { eq: 6 }, byMinor: { "1.18": { eq: 5 } } },
        "kube-proxy": { default: { eq: 6 }, byMinor: { "1.18": { eq: 5 } } },
      },
      needs: ["scaling"],
      observe: (r) => {
        const m = r.get("scaling");
        return {
          value: m.lb_per_service,
          evidence: [...r.evidence("scaling", "lb_per_service"), ...r.evidence("scaling", "points")],
        };
      },
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Issue 6: kube-proxy lines and BPF LB entries as the number of Services grows (both modes). */
export async function observeScaling(ctx: RunContext): Promise<RecordSet> {
  const agents = await agentNodes(ctx);
  const node = agents[0] as string;
  const points: MeasureScaleRecord["points"] = [];
  const pointEvidence: EvidenceItem[] = [];
  for (const n of SCALE_POINTS) {
    ctx.log(`${n} Services × ${ENDPOINTS_PER_SERVICE} endpoints`);
    // from the end of the call before the apply to the read that found every Service programmed: recorded
    // times, so a replay reproduces them
    const t0 = ctx.recordedAt();
    const applied = await kubectlRaw(ctx, ["apply", "-f", "-"], scaleManifest(ctx.namespace, n));
    let frontends = new Map<string, number>();
    const lastReads: RawText[] = [];
    for (const a of agents) {
      const { value } = await waitFor(ctx, {
        what: `${n} measurement Services with ${ENDPOINTS_PER_SERVICE} backends each in the agent on ${a}`,
        deadlineMs: 120_000,
        intervalMs: 1000,
        probe: () => measureFrontends(ctx, a, "dpc-m-"),
        done: (m) =>
          m.frontends.size === n && [...m.frontends.values()].every((c) => c === ENDPOINTS_PER_SERVICE),
        show: (m) =>
          `${m.frontends.size} Services, ${[...m.frontends.values()].filter((c) => c === ENDPOINTS_PER_SERVICE).length} complete`,
      });
      lastReads.push(value.raw);
      if (a === node) frontends = value.frontends;
    }
    const comment = `${ctx.namespace}/dpc-m-`;
    let raw: RawText;
    if (ctx.mode === "kube-proxy") {
      const want = n * ENDPOINTS_PER_SERVICE;
      const dnat = (t: RawText) => t.lines.filter((l) => l.includes(comment) && l.includes("-j DNAT")).length;
      const { value } = await waitFor(ctx, {
        what: `${want} KUBE-SEP DNAT rules for the measurement Services on ${node}`,
        deadlineMs: 120_000,
        intervalMs: 1000,
        probe: () => iptablesSaveRaw(ctx, node),
        done: (t) => dnat(t) === want,
        show: (t) => `${dnat(t)} DNAT rules`,
      });
      raw = value;
      lastReads.push(value);
    } else raw = await iptablesSaveRaw(ctx, node);
    const programmedMs = ctx.recordedAt() - t0;
    const ips = new Set([...frontends.keys()].map((f) => f.slice(0, f.lastIndexOf(":"))));
    const lbEntries: Record<string, number> = {};
    const lbRaws: RawText[] = [];
    for (const a of agents) {
      const lbRaw = await ciliumDbgRaw(ctx, a, ["bpf", "lb", "list"]);
      lbRaws.push(lbRaw);
      lbEntries[a] = parseBpfLbList(lbRaw.text)
        .services.filter((s) => ips.has(s.frontend.slice(0, s.frontend.lastIndexOf(":"))))
        .reduce((acc, s) => acc + 1 + s.backends.length, 0);
    }
    const lines = linesContaining(raw.text, comment).length;
    points.push({
      services: n,
      endpoints: n * ENDPOINTS_PER_SERVICE,
      kube_proxy_lines: lines,
      lb_entries: lbEntries,
      programmed_ms: programmedMs,
    });
    pointEvidence.push(
      derive(`${n} Services: ${lines} iptables lines mention ${comment}`, raw),
      derive(`${n} Services: LB entries of their frontends ${JSON.stringify(lbEntries)}`, lbRaws),
      derive(
        `${n} Services: programmed in ${programmedMs} ms (apply → last confirming read)`,
        applied,
        lastReads,
      ),
    );
    await deleteMeasurement(ctx, SCALE_LABEL);
    for (const a of agents) {
      await waitFor(ctx, {
        what: `the measurement Services gone from the agent on ${a}`,
        deadlineMs: 120_000,
        intervalMs: 1000,
        probe: () => measureFrontends(ctx, a, "dpc-m-"),
        done: (m) => m.frontends.size === 0,
        show: (m) => `${m.frontends.size} left`,
      });
    }
  }
  const xs = points.map((p) => p.services);
  const kp = fitLine(
    xs,
    points.map((p) => p.kube_proxy_lines),
  );
  const lb = fitLine(
    xs,
    points.map((p) => p.lb_entries[node] ?? 0),
  );
  const round = (v: number) => Math.round(v * 1000) / 1000;
  return {
    scaling: {
      record: {
        endpoints_per_service: ENDPOINTS_PER_SERVICE,
        points,
        kube_proxy_per_service: round(kp.slope),
        kube_proxy_r2: round(kp.r2),
        lb_per_service: round(lb.slope),
        lb_r2: round(lb.r2),
      },
      evidence: {
        points: pointEvidence,
        kube_proxy_per_service: [
          derive(
            `least squares over ${points.length} points: ${round(kp.slope)} lines per Service (r²=${round(kp.r2)})`,
            pointEvidence,
          ),
        ],
        lb_per_service: [
          derive(
            `least squares over ${points.length} points: ${round(lb.slope)} entries per Service on ${node} (r²=${round(lb.r2)})`,
            pointEvidence,
          ),
        ],
      },
    },
  };
}
