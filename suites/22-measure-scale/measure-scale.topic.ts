/**
 * Topic "measure-scale" — The lab, step 1, measured as the number of Services grows.
 * How the datapath grows with the number of Services: kube-proxy's rules and the BPF LB entries at 1, 50 and 200 Services.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */

import type { MeasureScaleRecord } from "../../helpers/measure/records.ts";
import { fitLine } from "../../helpers/measure/stats.ts";
import {
  agentNodes,
  applyInBulk,
  deleteMeasurement,
  ENDPOINTS_PER_SERVICE,
  measureFrontends,
  SCALE_LABEL,
  SCALE_POINTS,
  scaleManifest,
  timedCalls,
} from "../../helpers/measure/workloads.ts";
import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { type RunContext, waitFor } from "../../helpers/observe/context.ts";
import { iptablesSaveRaw } from "../../helpers/observe/node.ts";
import { parseBpfLbList } from "../../helpers/parse/bpf-lb-list.ts";
import { linesContaining } from "../../helpers/parse/iptables-save.ts";
import type { ConfigDependence } from "../../helpers/properties/config.ts";
import { KUBE_PROXY_PROXIER, LAB, UP } from "../../helpers/properties/sources.ts";
import { derive, type EvidenceItem, type RawText } from "../../helpers/records/evidence.ts";
import type { RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import { kubeProxyInIptables } from "../00-config/config.records.ts";
import { records } from "./measure-scale.records.ts";

/** 1.18 keeps one entry fewer per Service: the `<vip>:0/ANY` wildcard came with 1.19. */
const FIVE_ENTRIES = {
  kind: "behaviour",
  expect: { eq: 5 },
  claim:
    "a Service with 4 backends is 5 map entries (slot 0 + one per backend): no wildcard entry before 1.19",
  why: "the `<vip>:0/ANY` wildcard entry came with 1.19 (cilium PR 40684, https://github.com/cilium/cilium/pull/40684)",
} as const;

/**
 * kube-proxy's lines are read from iptables-save: kpr runs without kube-proxy, beside it kube-proxy runs in
 * iptables mode; its nftables mode (rules in `table ip kube-proxy`) and ipvs mode are not modelled here
 * (helpers/properties/config.ts).
 */
const KUBE_PROXY_IPTABLES = {
  kpr: { kubeProxy: ["none"] },
  "kube-proxy": { kubeProxy: ["iptables"] },
} as const satisfies ConfigDependence["assumes"];

export const topic = defineTopic({
  name: "measure-scale",
  title:
    "How the datapath grows with the number of Services: kube-proxy's rules and the BPF LB entries at 1, 50 and 200 Services",
  source: LAB(1),
  deploys: [
    "generated: 1, 50 and 200 ClusterIP Services, each with an EndpointSlice of 4 endpoints (helpers/measure/workloads.ts)",
  ],
  steps: [
    {
      on: "api",
      run: "bulk-apply --server-side -f -",
      for: "the Services and their EndpointSlices, created through the API 16 at a time (timed)",
    },
    { on: "agent", run: "cilium-dbg service list -o json", for: "every agent has the Services (polled)" },
    { on: "node", run: "iptables-save", for: "kube-proxy's rules" },
    { on: "agent", run: "cilium-dbg bpf lb list", for: "the LB entries" },
    {
      on: "api",
      run: "bulk-delete services,endpointslices -n <ns> -l dpc-measure=scale",
      for: "removing them in bulk (timed), then every agent polled until they are gone",
    },
  ],
  records,
  schedule: {
    alone:
      "up to 200 Services and their EndpointSlices load the API server, the agents and kube-proxy: its convergence figures must be its own, and every Service count and timing of the others would move",
  },
  shared: { changes: ["kube-proxy service rules"] },
  observe: observeScaling,
  properties: [
    {
      id: "measure.kube-proxy-lines",
      claim:
        "kube-proxy's iptables lines grow linearly with Services (1, 50, 200 × 4 endpoints); without kube-proxy there are none",
      source: LAB(1),
      why: "the lab's 'rules grow with every Service and endpoint'; per-Service shape 1 + 2N (kube-proxy's iptables proxier, https://github.com/kubernetes/kubernetes/blob/v1.35.5/pkg/proxy/iptables/proxier.go: a KUBE-SERVICES match, then per endpoint a KUBE-SVC jump and a KUBE-SEP DNAT)",
      expect: { kpr: { eq: "none" }, "kube-proxy": { eq: "linear" } },
      config: { assumes: KUBE_PROXY_IPTABLES },
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
      source: UP(KUBE_PROXY_PROXIER),
      why: "the count is of rule lines carrying the Service's comment, so the 1 + N chain declarations (`:KUBE-SVC-…`, `:KUBE-SEP-…`) are not in it; 14 = 2 + 3·4 recorded on the lab cluster (kube-proxy v1.35.5, iptables mode)",
      expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 14 } },
      config: { assumes: KUBE_PROXY_IPTABLES },
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
      why: "the lab's 'each Service as a hash map entry'; KPR=false keeps ClusterIP entries too (Cilium docs, https://docs.cilium.io/en/v1.20/network/kubernetes/kubeproxy-free/#quick-start). 1 + N on 1.18, 2 + N from 1.19 with the `<vip>:0/ANY` wildcard entry: 6 for N=4 recorded on the lab cluster (1.19.7) in both modes",
      expect: {
        kpr: { default: { eq: 6 }, byMinor: { "1.18": FIVE_ENTRIES } },
        "kube-proxy": { default: { eq: 6 }, byMinor: { "1.18": FIVE_ENTRIES } },
      },
      config: {
        // the generated Services are single-stack IPv4 (IPv4 EndpointSlices): a dual-stack cluster adds no entry
        // for them; Maglev keeps its table in a map of its own, not in these entries (helpers/properties/config.ts)
        assumes: {
          kpr: { ipFamilies: ["ipv4", "ipv4+ipv6"] },
          "kube-proxy": { ipFamilies: ["ipv4", "ipv4+ipv6"] },
        },
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

/** Each wait on the agents: the named deadline, and the poll interval (a cilium-dbg exec per agent per tick). */
const CONVERGE_DEADLINE_MS = 120_000;
const POLL_MS = 1000;

/**
 * Issue 6: kube-proxy lines and BPF LB entries as the number of Services grows (both modes). Each point is
 * created in bulk through the API, every agent is polled (all at once) until it lists every Service with its 4
 * backends (and, with kube-proxy, until the node has every DNAT rule), the entries are counted, then the point
 * is deleted in bulk and every agent polled until the Services are gone. The record keeps, per point, what the
 * API took (create, delete) and what the cluster took (converged, gone), and the observation's own time beside
 * their sum (issue 20: the suite within 1.5× of the convergence it measures).
 */
export async function observeScaling(outer: RunContext): Promise<RecordSet> {
  const timed = timedCalls(outer);
  const ctx = timed.ctx;
  // the end of the latest call so far (recorded times): the agents are read all at once, and in a replay the
  // call served last need not be the one that ended last
  const lastEnd = () => timed.span()?.endMs ?? ctx.recordedAt();
  const agents = await agentNodes(ctx);
  const node = agents[0] as string;
  const points: MeasureScaleRecord["points"] = [];
  const pointEvidence: EvidenceItem[] = [];
  const timeEvidence: EvidenceItem[] = [];
  let convergence = 0;
  for (const n of SCALE_POINTS) {
    ctx.log(`${n} Services × ${ENDPOINTS_PER_SERVICE} endpoints`);
    // from the end of the call before the create to the read that found every Service programmed: recorded
    // times, so a replay reproduces them
    const t0 = lastEnd();
    const applied = await applyInBulk(ctx, scaleManifest(ctx.namespace, n));
    const appliedAt = lastEnd();
    let frontends = new Map<string, number>();
    const lastReads: RawText[] = [];
    const confirmed: number[] = [];
    const complete = (m: { frontends: Map<string, number> }) =>
      m.frontends.size === n && [...m.frontends.values()].every((c) => c === ENDPOINTS_PER_SERVICE);
    const comment = `${ctx.namespace}/dpc-m-`;
    const want = n * ENDPOINTS_PER_SERVICE;
    const dnat = (t: RawText) => t.lines.filter((l) => l.includes(comment) && l.includes("-j DNAT")).length;
    // the agents and, with kube-proxy, the node's rules are waited for at once: they converge side by side
    const [programmed, rules] = await Promise.all([
      Promise.all(
        agents.map((a) =>
          waitFor(ctx, {
            what: `${n} measurement Services with ${ENDPOINTS_PER_SERVICE} backends each in the agent on ${a}`,
            deadlineMs: CONVERGE_DEADLINE_MS,
            intervalMs: POLL_MS,
            probe: () => measureFrontends(ctx, a, "dpc-m-"),
            done: complete,
            show: (m) =>
              `${m.frontends.size} Services, ${[...m.frontends.values()].filter((c) => c === ENDPOINTS_PER_SERVICE).length} complete`,
          }),
        ),
      ),
      kubeProxyInIptables(ctx)
        ? waitFor(ctx, {
            what: `${want} KUBE-SEP DNAT rules for the measurement Services on ${node}`,
            deadlineMs: CONVERGE_DEADLINE_MS,
            intervalMs: POLL_MS,
            probe: () => iptablesSaveRaw(ctx, node),
            done: (t) => dnat(t) === want,
            show: (t) => `${dnat(t)} DNAT rules`,
          })
        : null,
    ]);
    programmed.forEach(({ value }, i) => {
      lastReads.push(value.raw);
      confirmed.push(value.at);
      if (agents[i] === node) frontends = value.frontends;
    });
    let raw: RawText;
    if (rules) {
      raw = rules.value;
      lastReads.push(raw);
      // its last read is the node's latest call (the agents are read through their own targets)
      confirmed.push(timed.latestAt(`node/${node}`));
    } else raw = await iptablesSaveRaw(ctx, node);
    // converged: the last read that confirmed it (the agents', and kube-proxy's rules where it runs); programmed
    // (as recorded before the convergence figures) ends with the node's rules read in either mode
    const programmedMs = lastEnd() - t0;
    const convergedMs = Math.max(...confirmed) - appliedAt;
    const applyMs = appliedAt - t0;
    const ips = new Set([...frontends.keys()].map((f) => f.slice(0, f.lastIndexOf(":"))));
    const lbRaws = await Promise.all(agents.map((a) => ciliumDbgRaw(ctx, a, ["bpf", "lb", "list"])));
    const lbEntries: Record<string, number> = {};
    agents.forEach((a, i) => {
      lbEntries[a] = parseBpfLbList((lbRaws[i] as RawText).text)
        .services.filter((s) => ips.has(s.frontend.slice(0, s.frontend.lastIndexOf(":"))))
        .reduce((acc, s) => acc + 1 + s.backends.length, 0);
    });
    const lines = linesContaining(raw.text, comment).length;
    const beforeDelete = lastEnd();
    const deleted = await deleteMeasurement(ctx, SCALE_LABEL);
    const deletedAt = lastEnd();
    const gone = await Promise.all(
      agents.map((a) =>
        waitFor(ctx, {
          what: `the measurement Services gone from the agent on ${a}`,
          deadlineMs: CONVERGE_DEADLINE_MS,
          intervalMs: POLL_MS,
          probe: () => measureFrontends(ctx, a, "dpc-m-"),
          done: (m) => m.frontends.size === 0,
          show: (m) => `${m.frontends.size} left`,
        }),
      ),
    );
    const goneMs = Math.max(...gone.map((g) => g.value.at)) - deletedAt;
    const deleteMs = deletedAt - beforeDelete;
    convergence += convergedMs + goneMs;
    points.push({
      services: n,
      endpoints: n * ENDPOINTS_PER_SERVICE,
      kube_proxy_lines: lines,
      lb_entries: lbEntries,
      programmed_ms: programmedMs,
      apply_ms: applyMs,
      converged_ms: convergedMs,
      delete_ms: deleteMs,
      gone_ms: goneMs,
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
    timeEvidence.push(
      derive(
        `${n} Services: created in ${applyMs} ms, programmed everywhere ${convergedMs} ms after the create (its end → the last confirming read)`,
        applied,
        lastReads,
      ),
      derive(
        `${n} Services: deleted in ${deleteMs} ms, gone from every agent ${goneMs} ms after the delete (its end → the last read that found none)`,
        deleted,
        gone.map((g) => g.value.raw),
      ),
    );
    ctx.log(
      `${n} Services: created in ${(applyMs / 1000).toFixed(1)} s, programmed ${(convergedMs / 1000).toFixed(1)} s later; deleted in ${(deleteMs / 1000).toFixed(1)} s, gone ${(goneMs / 1000).toFixed(1)} s later`,
    );
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
  const span = timed.span();
  const suiteMs = span ? span.endMs - span.startMs : 0;
  ctx.log(
    `measured ${(convergence / 1000).toFixed(1)} s of convergence in ${(suiteMs / 1000).toFixed(1)} s (${convergence > 0 ? (suiteMs / convergence).toFixed(2) : "?"}×)`,
  );
  return {
    scaling: {
      record: {
        endpoints_per_service: ENDPOINTS_PER_SERVICE,
        points,
        kube_proxy_per_service: round(kp.slope),
        kube_proxy_r2: round(kp.r2),
        lb_per_service: round(lb.slope),
        lb_r2: round(lb.r2),
        convergence_ms: convergence,
        suite_ms: suiteMs,
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
        convergence_ms: [
          derive(`${convergence} ms: every point's programmed and gone times`, timeEvidence),
          ...timeEvidence,
        ],
        suite_ms: [derive(`${suiteMs} ms from the first call's start to the last call's end`, timeEvidence)],
      },
    },
  };
}
