// One file over 450 lines: a topic reads top to bottom in one file: its declaration, then its observation and builders (docs/contributing.md)
/**
 * Topic "loadbalancer" — issue 34: a LoadBalancer address from Cilium's LB-IPAM (our pool), reached from inside the
 * cluster, and the same with ipMode Proxy (KEP-1860): who translates each (the agent's LB map or kube-proxy's rules)
 * and what a Pod on the backends' node, a Pod on a node without a backend and a node's host namespace get.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds, then each
 * property with its claim, source, expectation per mode, per Cilium version and per configuration, and how it is
 * judged. The observation code and the record builder follow the declaration.
 */
import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { kubectl } from "../../helpers/observe/cluster.ts";
import { type RunContext, waitSettled } from "../../helpers/observe/context.ts";
import { iptablesSaveRaw } from "../../helpers/observe/node.ts";
import { type ProbeRead, probeFrom } from "../../helpers/observe/steps.ts";
import {
  apply,
  type Edge,
  ensureEdge,
  ensureLbPool,
  type LbIngress,
  lbIngress,
  lbRange,
  renderManifest,
  waitLbIngress,
} from "../../helpers/observe/workloads.ts";
import { type LbList, parseBpfLbList } from "../../helpers/parse/bpf-lb-list.ts";
import { IPV4_SERVICE, KUBE_PROXY_RULES, requires } from "../../helpers/properties/requirements.ts";
import { UP } from "../../helpers/properties/sources.ts";
import { kubeProxyServes, lbRows, ruleLines, slotCount } from "../../helpers/records/common.ts";
import { derive, type EvidenceItem, type RawText, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidence, Evidenced, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic, type PropertyDeclaration } from "../../helpers/topic.ts";
import { kubeProxyInIptables } from "../00-config/config.records.ts";
import { addressedObservation, lbAddressFacts, probeObservation } from "../surface.ts";
import type { LoadBalancerRecord } from "./loadbalancer.records.ts";
import { records } from "./loadbalancer.records.ts";

/** edge-lb, edge-proxy and edge-ext are single-stack IPv4 Services; kube-proxy's rules are counted in iptables. */
const RULES = requires(KUBE_PROXY_RULES, IPV4_SERVICE);
const ANY_LB = requires(IPV4_SERVICE);

const NO_POOL = "no address range of ours for LoadBalancer addresses on this cluster (LB_IP_RANGE unset)";
const LB_IPAM = UP(
  "Cilium docs network/lb-ipam.rst (1.18–1.20), https://docs.cilium.io/en/v1.20/network/lb-ipam/; operator/pkg/lbipam, https://github.com/cilium/cilium/blob/v1.20.2/operator/pkg/lbipam/lbipam.go",
);
const KEP_1860 = UP(
  "KEP-1860 (LoadBalancer ipMode, GA in Kubernetes 1.32), https://github.com/kubernetes/enhancements/tree/master/keps/sig-network/1860-kube-proxy-IP-node-binding",
);
/** Why a LoadBalancer address is kube-proxy's beside it (what 1.19.0–1.19.6 did instead is a known issue). */
const NOT_PROGRAMMED =
  "with kubeProxyReplacement=false Cilium leaves LoadBalancer addresses to kube-proxy: 1.18 reflects only ClusterIPs (pkg/loadbalancer/reflectors/conversions.go wraps NodePort, LoadBalancer and ExternalIPs in `if extCfg.KubeProxyReplacement`); 1.19.7 and 1.20 reflect them for BGP and L2 announcements but program only ClusterIP, LocalRedirect and ExternalIPs (bpf_reconciler.go isDatapathCandidate, PR 47204)";
export const INTERCEPTED = {
  from: "1.19.0",
  to: "1.19.6",
  kind: "known-issue",
  claim:
    "Cilium programs the LoadBalancer address into its LB map with kubeProxyReplacement=false and intercepts traffic that kube-proxy should handle",
  why: "PR 43384 populated every frontend type whatever KPR says; PR 47204 limited the map again (backported to 1.19.7 as PR 47414)",
  upstream: "cilium issue 45252; fixed by PR 47204 (1.19.7, 1.20.0)",
} as const;

/**
 * A LoadBalancer address's slots in the agent's LB map (both backends) and its wildcard entry, by mode and version:
 * the same for either family (the reconciler picks frontends by type, not family), so surface-ipv6 declares them too.
 */
export const LB_MAP_SLOTS: PropertyDeclaration["expect"] = {
  kpr: { eq: 2 },
  "kube-proxy": { default: { eq: 0 }, byPatch: [{ ...INTERCEPTED, expect: { eq: 2 } }] },
};
export const WILDCARD_ENTRY: PropertyDeclaration["expect"] = {
  kpr: {
    default: { eq: true },
    byMinor: {
      "1.18": {
        kind: "behaviour",
        expect: { eq: false },
        claim: "no wildcard entry: they came with 1.19",
        why: "cilium PR 40684 is in 1.19.0; 1.18.11's bpf lb list has no `:0/ANY` row (the shipped 1.18 bundles)",
      },
    },
  },
  "kube-proxy": { default: { eq: false }, byPatch: [{ ...INTERCEPTED, expect: { eq: true } }] },
};

export const topic = defineTopic({
  name: "loadbalancer",
  title:
    "LoadBalancer addresses from Cilium's LB-IPAM, ipMode VIP and Proxy, reached from Pods and nodes: who translates them",
  source: LB_IPAM,
  deploys: ["edge.yaml", "lb-pool.yaml", "loadbalancer.yaml"],
  steps: [
    { on: "api", run: "get nodes", for: "the node with edge's backends and one without" },
    { on: "local", run: "printenv LB_IP_RANGE", for: "the range of ours for the pool" },
    { on: "api", run: "get namespace", for: "the run namespace's uid (the pool's owner)" },
    { on: "api", run: "get service edge-lb -n <ns>", for: "the address LB-IPAM gives edge-lb (polled)" },
    {
      on: "kubectl",
      run: "-n <ns> patch service edge-proxy --subresource=status",
      for: "edge-proxy's ingress marked ipMode Proxy",
    },
    {
      on: "agent",
      run: "cilium-dbg bpf lb list",
      for: "the three addresses in the far node's LB map (polled)",
    },
    { on: "node", run: "iptables-save", for: "kube-proxy's rules naming them (polled)" },
    { on: "pod", run: "curl -sS -v --max-time 5", for: "each address from a Pod on each node" },
    { on: "node", run: "curl -sS -v --max-time 5", for: "edge-lb from the far node's host namespace" },
  ],
  records,
  schedule: {
    after: ["iptables"],
    why: "its Services add KUBE-SVC lines iptables counts whole (program counts only the holder's own reverse-socket entries, so its clients' translated sockets do not disturb it); its own Pods (edge, clients), Services and pool are apart from every other topic's (the traffic-policy topic shares edge and the pool, applied idempotently)",
  },
  shared: { changes: ["kube-proxy service rules"] },
  observe: observeLoadBalancer,
  properties: [
    {
      id: "lb.ipam-assigns",
      claim: "Cilium's LB-IPAM gives edge-lb an address from our CiliumLoadBalancerIPPool, in both modes",
      source: LB_IPAM,
      why: "LB-IPAM runs in cilium-operator, on by default (enable-lb-ipam, default-lb-service-ipam=lbipam) and dormant until a pool exists; it checks nothing of kube-proxy replacement (operator/pkg/lbipam/cell.go at v1.18.11, v1.19.7, v1.20.2)",
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      config: "none",
      needs: ["loadbalancer"],
      observe: (r) => {
        const v = r.get("loadbalancer");
        if (v.pool === null) return { value: null, evidence: [], skip: NO_POOL };
        return {
          value: v.lb_ip !== null && inRange(v.lb_ip, v.pool),
          evidence: [...r.evidence("loadbalancer", "pool"), ...r.evidence("loadbalancer", "lb_ip")],
        };
      },
    },
    {
      id: "lb.ip-mode",
      claim: "edge-lb's address has ipMode VIP: Cilium sets none, the API server fills in the default",
      source: KEP_1860,
      why: "LB-IPAM appends ingress entries without IPMode (operator/pkg/lbipam/lbipam.go); Kubernetes 1.35 defaults ipMode to VIP for every ingress IP (pkg/apis/core/v1/defaults.go SetDefaults_Service). VIP: the address is the Service's, and every node may translate it",
      expect: { kpr: { eq: "VIP" }, "kube-proxy": { eq: "VIP" } },
      config: "none",
      needs: ["loadbalancer"],
      observe: (r) => {
        const v = r.get("loadbalancer");
        if (v.pool === null) return { value: null, evidence: [], skip: NO_POOL };
        return { value: v.lb_ip_mode, evidence: r.evidence("loadbalancer", "lb_ip_mode") };
      },
    },
    {
      id: "lb.from-pod-near",
      claim: "A Pod on the backends' node reaches edge-lb's LoadBalancer address (an edge backend answers)",
      source: LB_IPAM,
      why: "kpr: socket LB translates the address at connect() like a ClusterIP; beside kube-proxy its `loadbalancer IP` rule DNATs it (the backend is on the same node)",
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "HTTP 200" } },
      config: { assumes: ANY_LB },
      needs: ["loadbalancer"],
      observe: (r) => probeObservation(r, "loadbalancer", "lb_from_pod_near", NO_POOL),
    },
    {
      id: "lb.from-pod-far",
      claim:
        "A Pod on a node without a backend reaches edge-lb's LoadBalancer address (an edge backend answers)",
      source: LB_IPAM,
      why: "kpr: socket LB translates it on the client's node; beside kube-proxy the `loadbalancer IP` rule sends it through KUBE-EXT (masqueraded, eTP Cluster) to a backend on another node",
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "HTTP 200" } },
      config: { assumes: ANY_LB },
      needs: ["loadbalancer"],
      observe: (r) => probeObservation(r, "loadbalancer", "lb_from_pod_far", NO_POOL),
    },
    {
      id: "lb.from-node",
      claim: "A node without a backend reaches edge-lb's LoadBalancer address from its host namespace",
      source: LB_IPAM,
      why: "kpr: the host namespace's connect() is translated by socket LB (host-namespace-only coverage keeps it); beside kube-proxy the OUTPUT chain's KUBE-SERVICES rule DNATs it",
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "HTTP 200" } },
      config: { assumes: ANY_LB },
      needs: ["loadbalancer"],
      observe: (r) => probeObservation(r, "loadbalancer", "lb_from_node", NO_POOL),
    },
    {
      id: "lb.lb-map-slots",
      claim:
        "edge-lb's address is in the agent's LB map with both backends with kube-proxy replacement, and absent beside kube-proxy",
      source: UP(
        "cilium pkg/loadbalancer/reflectors/conversions.go, reconciler/bpf_reconciler.go (v1.18.11–v1.20.2): https://github.com/cilium/cilium/blob/v1.20.2/pkg/loadbalancer/reflectors/conversions.go, https://github.com/cilium/cilium/blob/v1.20.2/pkg/loadbalancer/reconciler/bpf_reconciler.go",
      ),
      why: NOT_PROGRAMMED,
      expect: LB_MAP_SLOTS,
      config: { assumes: ANY_LB },
      needs: ["loadbalancer"],
      observe: (r) => addressedObservation(r, "loadbalancer", "pool", "lb_slots", NO_POOL),
    },
    {
      id: "lb.wildcard-entry",
      claim:
        "With kube-proxy replacement, Cilium 1.19+ adds a `<address>:0/ANY` entry for edge-lb's address (traffic to a port the Service lacks is dropped, not routed on)",
      source: UP(
        "cilium PR 40684 (1.19: wildcard service entries), https://github.com/cilium/cilium/pull/40684; Documentation/operations/upgrade.rst 1.19, https://docs.cilium.io/en/v1.20/operations/upgrade/",
      ),
      why: "LoadBalancer addresses of class-less Services under default-lb-service-ipam=lbipam get one (bpf_reconciler.go isWildcardCandidate, isWildcardClass); kube-proxy's addresses are not in the map at all",
      expect: WILDCARD_ENTRY,
      config: { assumes: ANY_LB },
      needs: ["loadbalancer"],
      observe: (r) => addressedObservation(r, "loadbalancer", "pool", "lb_wildcard", NO_POOL),
    },
    {
      id: "lb.kube-proxy-rule",
      claim: "kube-proxy writes one `loadbalancer IP` rule for edge-lb's address; none without kube-proxy",
      source: UP(
        "kubernetes pkg/proxy/iptables/proxier.go syncProxyRules (v1.35.5), https://github.com/kubernetes/kubernetes/blob/v1.35.5/pkg/proxy/iptables/proxier.go",
      ),
      why: "one KUBE-SERVICES rule per VIP-mode ingress address and port (`-d <address>/32 … loadbalancer IP … -j KUBE-EXT-…`); KUBE-FW chains only with loadBalancerSourceRanges",
      expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 1 } },
      config: { assumes: RULES },
      needs: ["loadbalancer"],
      observe: (r) => addressedObservation(r, "loadbalancer", "pool", "lb_rules", NO_POOL),
    },
    {
      id: "lb.proxy-mode-untranslated",
      claim:
        "An address with ipMode Proxy is translated by nobody in the cluster: no LB map entry, no kube-proxy rule",
      source: KEP_1860,
      why: "ipMode Proxy says an outside load balancer proxies the address, so in-cluster clients must reach it: Cilium skips non-VIP ingress entries (conversions.go `KEP-1860, skip non-VIP`, PR 34780), kube-proxy builds rules only for VIP-mode ones (pkg/proxy/serviceport.go, util.IsVIPMode)",
      expect: {
        kpr: {
          default: { eq: 0 },
          byPatch: [
            {
              from: "1.18.0",
              to: "1.18.0",
              kind: "known-issue",
              expect: { gte: 1 },
              claim: "the Proxy-mode address is in the LB map and translated in the cluster",
              why: "the 1.18 control plane stopped checking ipMode",
              upstream: "cilium issue 40913; fixed by PR 40915 (1.18.1)",
            },
          ],
        },
        "kube-proxy": { eq: 0 },
      },
      config: { assumes: RULES },
      needs: ["loadbalancer"],
      observe: (r) => {
        const v = r.get("loadbalancer");
        if (v.pool === null) return { value: null, evidence: [], skip: NO_POOL };
        return {
          value: v.proxy_ip_mode === "Proxy" ? v.proxy_entries : `ipMode ${v.proxy_ip_mode ?? "unset"}`,
          evidence: [
            ...r.evidence("loadbalancer", "proxy_ip_mode"),
            ...r.evidence("loadbalancer", "proxy_entries"),
          ],
        };
      },
    },
    {
      id: "lb.proxy-mode-leaves",
      claim:
        "A Pod's connection to the Proxy-mode address leaves the cluster for the outside load balancer (none here: no backend answers)",
      source: KEP_1860,
      why: "untranslated, the SYN is routed out of the node to the address's owner on the nodes' network; ours has none (the lab's kind network), so the client gets no route to host (ARP unanswered) or a timeout, never an edge backend",
      expect: {
        kpr: { oneOf: ["UNREACHABLE", "TIMEOUT", "CONNECT_FAILED"] },
        "kube-proxy": { oneOf: ["UNREACHABLE", "TIMEOUT", "CONNECT_FAILED"] },
      },
      config: { assumes: ANY_LB },
      needs: ["loadbalancer"],
      observe: (r) => probeObservation(r, "loadbalancer", "proxy_from_pod", NO_POOL),
    },
  ],
});

/** Whether an IPv4 address lies in `start-stop`. */
export function inRange(ip: string, range: string): boolean {
  const n = (a: string) => a.split(".").reduce((x, p) => x * 256 + Number(p), 0);
  const [a, b] = range.split("-");
  return a !== undefined && b !== undefined && n(ip) >= n(a) && n(ip) <= n(b);
}

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Issue 34: LB-IPAM's addresses and ipMode Proxy, translated (or not) and reached. */
export async function observeLoadBalancer(ctx: RunContext): Promise<RecordSet> {
  const edge = await ensureEdge(ctx);
  const range = await lbRange(ctx, edge);
  if ("none" in range) {
    ctx.log(range.none);
    return { loadbalancer: buildLoadBalancerRecord({ edge, range: null }) };
  }
  await ensureLbPool(ctx, range);
  await apply(ctx, renderManifest("loadbalancer.yaml", ctx.namespace, { POOL: range.pool }));
  const lb = await waitLbIngress(ctx, "edge-lb", null);
  const proxyVip = await waitLbIngress(ctx, "edge-proxy", null);
  await kubectl(ctx, [
    "-n",
    ctx.namespace,
    "patch",
    "service",
    "edge-proxy",
    "--subresource=status",
    "--type=merge",
    "-p",
    JSON.stringify({ status: { loadBalancer: { ingress: [{ ip: proxyVip.ip, ipMode: "Proxy" }] } } }),
  ]);
  await waitLbIngress(ctx, "edge-proxy", "Proxy");
  const far = edge.far.name;
  const iptables = kubeProxyInIptables(ctx);
  // the datapath settled: kpr programs edge-lb and drops edge-proxy's entry; kube-proxy writes edge-lb's rule
  const { value: seen } = await waitSettled(ctx, {
    what: `edge-lb and edge-proxy settled in ${far}'s ${iptables ? "iptables" : "LB map"}`,
    deadlineMs: 30_000,
    intervalMs: 1000,
    probe: async () => ({
      lb: read(await ciliumDbgRaw(ctx, far, ["bpf", "lb", "list"]), parseBpfLbList),
      rules: iptables ? await iptablesSaveRaw(ctx, far) : null,
    }),
    done: (s) =>
      s.rules
        ? kubeProxyServes(s.rules, lb.ip) && ruleLines(s.rules, proxyVip.ip).length === 0
        : slots(s.lb.parsed, lb.ip) === 2 && entries(s.lb.parsed, proxyVip.ip) === 0,
    show: (s) =>
      `LB map: edge-lb ${slots(s.lb.parsed, lb.ip)} slots, edge-proxy ${entries(s.lb.parsed, proxyVip.ip)} entries${s.rules ? `; rules: edge-lb ${ruleLines(s.rules, lb.ip).length}, edge-proxy ${ruleLines(s.rules, proxyVip.ip).length}` : ""}`,
  });
  const rules = seen.rules ?? (await iptablesSaveRaw(ctx, far));
  const onNear = { kind: "pod" as const, namespace: ctx.namespace, pod: edge.near.name };
  const onFar = { kind: "pod" as const, namespace: ctx.namespace, pod: edge.client.name };
  const onNode = { kind: "node" as const, node: far };
  const url = (ip: string | null) => `http://${ip}/hostname`;
  // the wait above reads the far node; the backends' node may program the address seconds later (a lab run beside
  // kube-proxy, not shipped: the near Pod's request 3.5 s after the far node served met "No route to host", its
  // node's kube-proxy had not written the rule yet), so the near Pod asks again until it answers, for up to 10 s,
  // and the last answer is judged
  const nearSettled = async () =>
    (
      await waitSettled(ctx, {
        what: "edge-lb's address answering a Pod on the backends' node",
        deadlineMs: 10_000,
        intervalMs: 1000,
        probe: () => probeFrom(ctx, onNear, "pod near", url(lb.ip)),
        done: (p) => p.probe.verdict === "HTTP 200",
        show: (p) => p.probe.verdict,
      })
    ).value;
  const [fromNear, fromFar, fromNode, proxyFromPod] = await Promise.all([
    nearSettled(),
    probeFrom(ctx, onFar, "pod far", url(lb.ip)),
    probeFrom(ctx, onNode, `node ${far}`, url(lb.ip)),
    probeFrom(ctx, onFar, "pod far", url(proxyVip.ip)),
  ]);
  // read again after the probes: an ipMode put back by a controller shows here
  const proxy = await lbIngress(ctx, "edge-proxy");
  return {
    loadbalancer: buildLoadBalancerRecord({
      edge,
      range: { text: `${range.start}-${range.stop}`, evidence: range.evidence },
      lb,
      proxy,
      lbList: seen.lb,
      rules,
      probes: { fromNear, fromFar, fromNode, proxyFromPod },
    }),
  };
}

const slots = (lb: LbList, ip: string | null) => (ip ? slotCount(lb, `${ip}:80`) : 0);
/** Rows of any scope and port for an address (a Proxy-mode address must have none at all). */
const entries = (lb: LbList, ip: string | null) =>
  ip ? lb.services.filter((s) => s.frontend.startsWith(`${ip}:`)).length : 0;

/** Issue 34: the loadbalancer record from what the topic read; no range: every address field null. */
export function buildLoadBalancerRecord(input: {
  edge: Pick<Edge, "site" | "siteEvidence">;
  range: { text: string; evidence: EvidenceItem[] } | null;
  lb?: LbIngress;
  proxy?: LbIngress;
  lbList?: Read<LbList>;
  rules?: RawText;
  probes?: Record<"fromNear" | "fromFar" | "fromNode" | "proxyFromPod", ProbeRead>;
}): Evidenced<LoadBalancerRecord> {
  const { lb, proxy, lbList, rules, probes, range } = input;
  const base = { ...input.edge.site };
  if (!range || !lb || !proxy || !lbList || !rules || !probes) {
    const none: LoadBalancerRecord = {
      ...base,
      pool: null,
      lb_ip: null,
      lb_ip_mode: null,
      lb_slots: null,
      lb_wildcard: null,
      lb_rules: null,
      lb_from_pod_near: null,
      lb_from_pod_far: null,
      lb_from_node: null,
      proxy_ip: null,
      proxy_ip_mode: null,
      proxy_entries: null,
      proxy_from_pod: null,
    };
    return { record: none, evidence: { ...input.edge.siteEvidence } };
  }
  const list = lbList.parsed;
  const at = lbAddressFacts(lbList, rules, lb.ip, "edge-lb");
  const proxyRows = proxy.ip ? list.services.filter((s) => s.frontend.startsWith(`${proxy.ip}:`)) : [];
  const proxyRules = ruleLines(rules, proxy.ip);
  const record: LoadBalancerRecord = {
    ...base,
    pool: range.text,
    lb_ip: lb.ip,
    lb_ip_mode: lb.mode,
    lb_slots: at.slots,
    lb_wildcard: at.wildcard,
    lb_rules: at.rules,
    lb_from_pod_near: probes.fromNear.probe,
    lb_from_pod_far: probes.fromFar.probe,
    lb_from_node: probes.fromNode.probe,
    proxy_ip: proxy.ip,
    proxy_ip_mode: proxy.mode,
    proxy_entries: proxyRows.length + proxyRules.length,
    proxy_from_pod: probes.proxyFromPod.probe,
  };
  const evidence: Evidence<LoadBalancerRecord> = {
    ...input.edge.siteEvidence,
    pool: range.evidence,
    lb_ip: lb.evidence.ip,
    lb_ip_mode: lb.evidence.mode,
    lb_slots: at.evidence.slots,
    lb_wildcard: at.evidence.wildcard,
    lb_rules: at.evidence.rules,
    lb_from_pod_near: probes.fromNear.evidence,
    lb_from_pod_far: probes.fromFar.evidence,
    lb_from_node: probes.fromNode.evidence,
    proxy_ip: proxy.evidence.ip,
    proxy_ip_mode: proxy.evidence.mode,
    proxy_entries: [
      ...proxyRows.flatMap((s) => lbRows(lbList.raw, s)),
      ...proxyRules,
      derive(
        `${proxyRows.length} LB map row(s) and ${proxyRules.length} iptables line(s) for ${proxy.ip}`,
        lbList.raw,
        rules,
      ),
    ],
    proxy_from_pod: probes.proxyFromPod.evidence,
  };
  return { record, evidence };
}
