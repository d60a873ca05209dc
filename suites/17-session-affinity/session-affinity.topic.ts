/**
 * Topic "session-affinity" — issue 34: sessionAffinity ClientIP. A series of new connections from one Pod, and from
 * one node's host namespace, to a ClusterIP with ClientIP affinity all reach the same backend; the same series to a
 * Service without it reaches both. Where the affinity is kept: Cilium's LB map flag (its affinity maps) and
 * kube-proxy's `-m recent` rules.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds, then each
 * property with its claim, source, expectation per mode and per configuration, and how it is judged. The
 * observation code and the record builder follow the declaration.
 */
import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { clusterIp } from "../../helpers/observe/cluster.ts";
import { type RunContext, waitSettled } from "../../helpers/observe/context.ts";
import { iptablesSaveRaw } from "../../helpers/observe/node.ts";
import { type ProbeRead, probeFrom } from "../../helpers/observe/steps.ts";
import { apply, type Edge, ensureEdge, renderManifest } from "../../helpers/observe/workloads.ts";
import { type LbList, parseBpfLbList } from "../../helpers/parse/bpf-lb-list.ts";
import { IPV4_FAMILIES, IPV4_SERVICE, requires } from "../../helpers/properties/requirements.ts";
import { UP } from "../../helpers/properties/sources.ts";
import { findLbService, kubeProxyHasEndpoints, lbRows, slotCount } from "../../helpers/records/common.ts";
import { derive, type EvidenceItem, type RawText, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidenced, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import { kubeProxyInIptables } from "../00-config/config.records.ts";
import { distinctAnswers } from "../surface.ts";
import type { SessionAffinityRecord } from "./session-affinity.records.ts";
import { records } from "./session-affinity.records.ts";

/** New connections per series: without affinity all 12 reach one of two backends with probability 2^-11. */
export const STICKY_TRIES = 8;
export const LOOSE_TRIES = 12;

const ANY = requires(IPV4_SERVICE);
const K8S_AFFINITY = UP(
  "Kubernetes docs: Service sessionAffinity (Virtual IPs and Service Proxies), https://kubernetes.io/docs/reference/networking/virtual-ips/",
);
const CILIUM_AFFINITY = UP(
  "Cilium docs network/kubernetes/kubeproxy-free.rst: Session Affinity, https://docs.cilium.io/en/v1.20/network/kubernetes/kubeproxy-free/#session-affinity",
);

export const topic = defineTopic({
  name: "session-affinity",
  title:
    "sessionAffinity ClientIP: every new connection from one client to the same backend, and where that is kept",
  source: K8S_AFFINITY,
  deploys: ["edge.yaml", "session-affinity.yaml"],
  steps: [
    { on: "api", run: "get nodes", for: "the node with edge's backends and one without" },
    {
      on: "api",
      run: "get service edge-sticky -n <ns>",
      for: "the ClusterIPs of edge-sticky and edge-loose",
    },
    { on: "agent", run: "cilium-dbg bpf lb list", for: "both Services in the far node's LB map (polled)" },
    { on: "node", run: "iptables-save", for: "kube-proxy's `-m recent` rules for edge-sticky" },
    {
      on: "pod",
      run: "curl -sS -v --max-time 5",
      for: "a series of new connections from a Pod, GET /hostname",
    },
    { on: "node", run: "curl -sS -v --max-time 5", for: "a series from the far node's host namespace" },
  ],
  records,
  schedule: {
    after: ["iptables"],
    why: "its Services add KUBE-SVC lines iptables counts whole (program counts only the holder's own reverse-socket entries, so its clients' translated sockets do not disturb it); its Services are its own (edge's Pods are shared, applied idempotently; no other topic sends to edge-sticky or edge-loose)",
  },
  shared: { changes: ["kube-proxy service rules"] },
  observe: observeSessionAffinity,
  properties: [
    {
      id: "session-affinity.pod-same-backend",
      claim: `sessionAffinity ClientIP: ${STICKY_TRIES} new connections from one Pod all reach the same backend`,
      source: K8S_AFFINITY,
      why: "kpr: socket LB keeps the affinity per network namespace (its netns cookie) in cilium_lb4_affinity (bpf_sock.c lb4_affinity_backend_id_by_netns); beside kube-proxy Cilium's bpf_lxc translates the Pod's ClusterIP traffic and keeps it per client address",
      expect: { kpr: { eq: 1 }, "kube-proxy": { eq: 1 } },
      config: { assumes: ANY },
      needs: ["sessionAffinity"],
      observe: (r) => distinctAnswers(r, "sessionAffinity", "sticky_from_pod"),
    },
    {
      id: "session-affinity.node-same-backend",
      claim: `sessionAffinity ClientIP: ${STICKY_TRIES} new connections from a node's host namespace all reach the same backend`,
      source: K8S_AFFINITY,
      why: "kpr: socket LB, keyed by the host namespace's cookie; beside kube-proxy the node's own traffic goes through kube-proxy's rules, whose `-m recent` list sends a known source to its backend for 10800 s",
      expect: { kpr: { eq: 1 }, "kube-proxy": { eq: 1 } },
      config: { assumes: ANY },
      needs: ["sessionAffinity"],
      observe: (r) => distinctAnswers(r, "sessionAffinity", "sticky_from_node"),
    },
    {
      id: "session-affinity.loose-spreads",
      claim: `Without sessionAffinity, ${LOOSE_TRIES} new connections from the same Pod reach both backends (the contrast that gives the two claims above their meaning)`,
      source: K8S_AFFINITY,
      why: `each new connection picks a backend at random (Cilium's random or Maglev selection, kube-proxy's statistic rules): all ${LOOSE_TRIES} on one of two backends happens once in 2048 runs`,
      expect: { kpr: { eq: 2 }, "kube-proxy": { eq: 2 } },
      config: { assumes: ANY },
      needs: ["sessionAffinity"],
      observe: (r) => distinctAnswers(r, "sessionAffinity", "loose_from_pod"),
    },
    {
      id: "session-affinity.lb-map-flag",
      claim: "edge-sticky's ClusterIP carries the sessionAffinity flag in the agent's LB map, in both modes",
      source: CILIUM_AFFINITY,
      why: "the agent writes the affinity timeout into the frontend's master slot and a cilium_lb_affinity_match entry per backend (bpf_reconciler.go); Cilium serves ClusterIPs in both modes, and session affinity is always on from 1.19 (its flag was removed) and on by default in 1.18",
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      config: { assumes: ANY },
      needs: ["sessionAffinity"],
      observe: (r) => {
        const v = r.get("sessionAffinity");
        return {
          value: v.sticky_flags === null ? "no entry" : v.sticky_flags.includes("sessionAffinity"),
          evidence: r.evidence("sessionAffinity", "sticky_flags"),
        };
      },
    },
    {
      id: "session-affinity.kube-proxy-recent",
      claim:
        "kube-proxy keeps the affinity in `-m recent` rules: one check and one set per backend (4 for two); none without kube-proxy",
      source: UP(
        "kubernetes pkg/proxy/iptables/proxier.go (v1.35.5): writeServiceToEndpointRules, the SEP chains, https://github.com/kubernetes/kubernetes/blob/v1.35.5/pkg/proxy/iptables/proxier.go",
      ),
      why: "KUBE-SVC-… gets `-m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-…` per endpoint before its statistic rules, and each KUBE-SEP-… `-m recent --set --name KUBE-SEP-…` before its DNAT",
      expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 4 } },
      config: {
        assumes: {
          kpr: { kubeProxy: ["none"], ipFamilies: IPV4_FAMILIES },
          "kube-proxy": { kubeProxy: ["iptables"], ipFamilies: IPV4_FAMILIES },
        },
      },
      needs: ["sessionAffinity"],
      observe: (r) => ({
        value: r.get("sessionAffinity").recent_rules,
        evidence: r.evidence("sessionAffinity", "recent_rules"),
      }),
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** `n` new connections one after the other (curl opens one per run); surface-ipv6's series too. */
export async function series(
  ctx: RunContext,
  target: Parameters<typeof probeFrom>[1],
  from: string,
  url: string,
  n: number,
): Promise<ProbeRead[]> {
  const out: ProbeRead[] = [];
  for (let i = 0; i < n; i++) out.push(await probeFrom(ctx, target, from, url));
  return out;
}

/** Issue 34: affinity from a Pod and a node, the contrast without it, and where each mode keeps it. */
export async function observeSessionAffinity(ctx: RunContext): Promise<RecordSet> {
  const edge = await ensureEdge(ctx);
  await apply(ctx, renderManifest("session-affinity.yaml", ctx.namespace));
  const sticky = await clusterIp(ctx, ctx.namespace, "edge-sticky");
  const loose = await clusterIp(ctx, ctx.namespace, "edge-loose");
  const far = edge.far.name;
  const { value: lb } = await waitSettled(ctx, {
    what: `edge-sticky and edge-loose with both backends in ${far}'s LB map`,
    deadlineMs: 30_000,
    intervalMs: 1000,
    probe: async () => read(await ciliumDbgRaw(ctx, far, ["bpf", "lb", "list"]), parseBpfLbList),
    done: (l) => slotCount(l.parsed, `${sticky}:80`) === 2 && slotCount(l.parsed, `${loose}:80`) === 2,
    show: (l) =>
      `edge-sticky ${slotCount(l.parsed, `${sticky}:80`)}, edge-loose ${slotCount(l.parsed, `${loose}:80`)} slots`,
  });
  // beside kube-proxy the node's own series goes through its rules: wait for them to DNAT edge-sticky
  const rules = kubeProxyInIptables(ctx)
    ? (
        await waitSettled(ctx, {
          what: `kube-proxy's rules for edge-sticky on ${far}`,
          deadlineMs: 30_000,
          intervalMs: 1000,
          probe: () => iptablesSaveRaw(ctx, far),
          done: (raw) => kubeProxyHasEndpoints(raw, `${ctx.namespace}/edge-sticky:http`),
          show: (raw) => `${raw.lines.filter((l) => l.includes("/edge-sticky:http")).length} lines name it`,
        })
      ).value
    : await iptablesSaveRaw(ctx, far);
  const onPod = { kind: "pod" as const, namespace: ctx.namespace, pod: edge.client.name };
  const [fromPod, fromNode, loosePod] = await Promise.all([
    series(ctx, onPod, "pod far", `http://${sticky}/hostname`, STICKY_TRIES),
    series(ctx, { kind: "node", node: far }, `node ${far}`, `http://${sticky}/hostname`, STICKY_TRIES),
    series(ctx, onPod, "pod far", `http://${loose}/hostname`, LOOSE_TRIES),
  ]);
  return {
    sessionAffinity: buildSessionAffinityRecord({
      edge,
      sticky,
      lb,
      rules,
      series: { sticky_from_pod: fromPod, sticky_from_node: fromNode, loose_from_pod: loosePod },
    }),
  };
}

/** Issue 34: the session-affinity record from what the topic read. */
export function buildSessionAffinityRecord(input: {
  edge: Pick<Edge, "site" | "siteEvidence">;
  sticky: string;
  lb: Read<LbList>;
  rules: RawText;
  series: Record<"sticky_from_pod" | "sticky_from_node" | "loose_from_pod", ProbeRead[]>;
}): Evidenced<SessionAffinityRecord> {
  const { lb, rules, series } = input;
  const s = findLbService(lb.parsed, `${input.sticky}:80`);
  const recent = rules.quotes((l) => l.includes(" -m recent ") && /\/edge-sticky:http/.test(l));
  const answers = (ps: ProbeRead[]) =>
    ps.map((p) => (p.probe.http === 200 ? (p.probe.body ?? "(no body)") : p.probe.verdict));
  const ev = (ps: ProbeRead[]): EvidenceItem[] => ps.flatMap((p) => p.evidence);
  return {
    record: {
      ...input.edge.site,
      sticky_from_pod: answers(series.sticky_from_pod),
      sticky_from_node: answers(series.sticky_from_node),
      loose_from_pod: answers(series.loose_from_pod),
      sticky_flags: s ? s.flags : null,
      recent_rules: recent.length,
    },
    evidence: {
      ...input.edge.siteEvidence,
      sticky_from_pod: ev(series.sticky_from_pod),
      sticky_from_node: ev(series.sticky_from_node),
      loose_from_pod: ev(series.loose_from_pod),
      sticky_flags: s
        ? lbRows(lb.raw, s).slice(0, 1)
        : [derive(`no ${input.sticky}:80/TCP entry in bpf lb list`, lb.raw)],
      recent_rules: recent.length > 0 ? recent : [derive("no `-m recent` line names edge-sticky", rules)],
    },
  };
}
