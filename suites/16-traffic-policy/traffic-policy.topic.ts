// One file over 450 lines: a topic reads top to bottom in one file: its declaration, then its observation and builders (docs/contributing.md)
/**
 * Topic "traffic-policy" — issue 34: externalTrafficPolicy Local and Cluster, and internalTrafficPolicy Local, with
 * every backend on one node. From outside the nodes: a node with a backend, a node without one, the client's address
 * as the backend saw it, the health-check node port's answer on each node. From inside: a Pod on a node without a
 * backend to the Local Service's LoadBalancer address, that node to its own Local NodePort, and a Pod on each node to
 * the internalTrafficPolicy Local ClusterIP.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds, then each
 * property with its claim, source, expectation per mode, per Cilium version and per configuration, and how it is
 * judged. The observation code and the record builder follow the declaration.
 */
import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { clusterIp } from "../../helpers/observe/cluster.ts";
import { type RunContext, waitSettled } from "../../helpers/observe/context.ts";
import { iptablesSaveRaw } from "../../helpers/observe/node.ts";
import { outsideAddress, type ProbeRead, probeFrom } from "../../helpers/observe/steps.ts";
import {
  apply,
  type Edge,
  ensureEdge,
  ensureLbPool,
  lbRange,
  renderManifest,
  waitLbAddress,
} from "../../helpers/observe/workloads.ts";
import { formatEndpoint } from "../../helpers/parse/address.ts";
import { type LbList, parseBpfLbList } from "../../helpers/parse/bpf-lb-list.ts";
import type { ByVersion } from "../../helpers/properties/expectation.ts";
import {
  IPV4_FAMILIES,
  IPV4_SERVICE,
  KUBE_PROXY_IPTABLES,
  requires,
} from "../../helpers/properties/requirements.ts";
import {
  ICMP_TAIL_UPSTREAM,
  ICMP_TAIL_WHY,
  SETRETVAL_ISSUE,
  SETRETVAL_WHY,
  UP,
} from "../../helpers/properties/sources.ts";
import type { Observation, RecordView } from "../../helpers/properties/types.ts";
import { ipOf, kubeProxyHasEndpoints, lbRows, lbScopes } from "../../helpers/records/common.ts";
import { derive, type EvidenceItem, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidence, Evidenced, Probe, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import { kubeProxyInIptables } from "../00-config/config.records.ts";
import { probeObservation, scopesObservation } from "../surface.ts";
import type { TrafficPolicyRecord } from "./traffic-policy.records.ts";
import { records } from "./traffic-policy.records.ts";

export const LOCAL_NODE_PORT = 30782;
export const HEALTH_PORT = 30783;
export const CLUSTER_NODE_PORT = 30784;

const ANY = requires(IPV4_SERVICE);
/** kube-proxy answers beside Cilium in iptables mode (its nftables mode is not modelled for these paths). */
const KP_IPTABLES = requires(KUBE_PROXY_IPTABLES, IPV4_SERVICE);

const K8S_ETP = UP(
  "Kubernetes docs: Service externalTrafficPolicy (Virtual IPs and Service Proxies), https://kubernetes.io/docs/reference/networking/virtual-ips/",
);
const K8S_ITP = UP(
  "Kubernetes docs: Service internalTrafficPolicy, https://kubernetes.io/docs/concepts/services-networking/service-traffic-policy/; KEP-2086, https://github.com/kubernetes/enhancements/tree/master/keps/sig-network/2086-service-internal-traffic-policy",
);
const CILIUM_TP = UP(
  "Cilium docs network/kubernetes/kubeproxy-free.rst: externalTrafficPolicy, internalTrafficPolicy, https://docs.cilium.io/en/v1.20/network/kubernetes/kubeproxy-free/#client-source-ip-preservation, https://docs.cilium.io/en/v1.20/network/kubernetes/kubeproxy-free/#internal-traffic-policy",
);
const NO_OUTSIDE = "no client outside the nodes could run here (existing cluster without a docker network)";
const NO_POOL = "no address range of ours for LoadBalancer addresses on this cluster (LB_IP_RANGE unset)";
const ASKED = "the probe did not run";

/** A Pod's connect() to a ClusterIP without a backend on its node, as the socket hook or bpf_lxc answers it. */
const ITP_FAR_KPR: ByVersion = {
  default: { eq: "UNREACHABLE" },
  byMinor: { "1.18": SETRETVAL_ISSUE("connect()", "EHOSTUNREACH", "never fixed in 1.18") },
  byPatch: [
    { from: "1.19.0", to: "1.19.3", ...SETRETVAL_ISSUE("connect()", "EHOSTUNREACH", "fixed in 1.19.4") },
  ],
} as const;
const ITP_FAR_PER_PACKET: ByVersion = {
  default: { eq: "REFUSED" },
  byPatch: [
    {
      from: "1.20.2",
      to: "1.20.2",
      kind: "known-issue",
      expect: { eq: "TIMEOUT" },
      claim:
        "the ICMP reject Cilium builds for the Pod's SYN is discarded: the connect() waits until curl's 5 s limit",
      why: ICMP_TAIL_WHY,
      upstream: ICMP_TAIL_UPSTREAM,
    },
  ],
};

export const topic = defineTopic({
  name: "traffic-policy",
  title:
    "externalTrafficPolicy Local and Cluster, internalTrafficPolicy Local: a node without a backend, the health-check port, the client's address",
  source: K8S_ETP,
  deploys: ["edge.yaml", "lb-pool.yaml", "traffic-policy.yaml"],
  steps: [
    { on: "api", run: "get nodes", for: "the node with edge's backends and one without" },
    { on: "local", run: "printenv LB_IP_RANGE", for: "the range of ours for the pool" },
    { on: "api", run: "get service edge-local -n <ns>", for: "its LoadBalancer address (polled)" },
    { on: "agent", run: "cilium-dbg bpf lb list", for: "the far node's Local NodePort frontends (polled)" },
    { on: "node", run: "iptables-save", for: "kube-proxy's rules for edge-local (polled)" },
    { on: "outside", run: "hostname -i", for: "the outside client's own address" },
    { on: "outside", run: "curl -sS -v --max-time 5", for: "both NodePorts on each node, GET /clientip" },
    {
      on: "node",
      run: "curl -sS -v --max-time 5",
      for: "the health-check port on each node; the far node's own NodePort",
    },
    {
      on: "pod",
      run: "curl -sS -v --max-time 5",
      for: "the Local LoadBalancer address and the iTP Local ClusterIP",
    },
  ],
  records,
  schedule: {
    after: ["iptables"],
    why: "its Services add KUBE-SVC lines iptables counts whole (program counts only the holder's own reverse-socket entries, so its clients' translated sockets do not disturb it); its NodePorts (30782–30784), Services and probes are its own (edge's Pods and the pool are shared, applied idempotently)",
  },
  shared: { changes: ["kube-proxy service rules"] },
  observe: observeTrafficPolicy,
  properties: [
    {
      id: "traffic-policy.local-np-backend-node",
      claim:
        "externalTrafficPolicy Local: the NodePort of a node with a backend answers a client outside the nodes",
      source: K8S_ETP,
      why: "Local keeps external traffic on the node it arrived at, which has backends here: Cilium's nodeport_lb4 or kube-proxy's KUBE-EXT chain picks a local one",
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "HTTP 200" } },
      config: { assumes: KP_IPTABLES },
      needs: ["trafficPolicy"],
      observe: (r) => verdictOf(r, "local_np_edge", NO_OUTSIDE),
    },
    {
      id: "traffic-policy.local-np-source-kept",
      claim: "externalTrafficPolicy Local: the backend sees the outside client's own address (no SNAT)",
      source: K8S_ETP,
      why: "the point of Local: no second hop, so no source NAT (GET /clientip returns the address agnhost saw)",
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      config: { assumes: KP_IPTABLES },
      needs: ["trafficPolicy"],
      observe: (r) => sourceKept(r, "local_np_edge"),
    },
    {
      id: "traffic-policy.local-np-no-backend-node",
      claim:
        "externalTrafficPolicy Local: the NodePort of a node without a backend turns the outside client away — Cilium refuses it at once, kube-proxy drops it (a timeout)",
      source: CILIUM_TP,
      why: "Cilium keeps only node-local backends in the NodePort's external scope (writer.go shouldUseLocalBackends): none here, so nodeport_lb4 takes the no-service path and answers an ICMP port unreachable (service-no-backend-response=reject, the default; lb.h __tail_no_service_ipv4); kube-proxy's filter table has `has no local endpoints … -j DROP` (proxier.go)",
      expect: {
        kpr: {
          default: { eq: "REFUSED" },
          byPatch: [
            {
              from: "1.20.2",
              to: "1.20.2",
              kind: "known-issue",
              expect: { eq: "TIMEOUT" },
              claim:
                "the ICMP port unreachable Cilium builds for the outside client's SYN never reaches the client: its connect() waits until curl's 5 s limit",
              why: `the reply leaves the node (captured on cdc-kpr-worker's eth0 in a lab run: \`ICMP 172.31.100.3 tcp port 30782 unreachable\`, IP length 56 in a 102-byte frame, the rejected SYN's tail not cut) and never reaches the client's IP layer (its IpInReceives stayed 0); the SYN came in with a pending checksum (tcpdump: \`cksum incorrect\`), as a Pod's does: ${ICMP_TAIL_WHY}`,
              upstream: ICMP_TAIL_UPSTREAM,
            },
          ],
        },
        "kube-proxy": { eq: "TIMEOUT" },
      },
      config: { assumes: KP_IPTABLES },
      needs: ["trafficPolicy"],
      observe: (r) => verdictOf(r, "local_np_far", NO_OUTSIDE),
    },
    {
      id: "traffic-policy.cluster-np-any-node",
      claim:
        "externalTrafficPolicy Cluster: the NodePort of a node without a backend answers (forwarded to another node)",
      source: K8S_ETP,
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "HTTP 200" } },
      config: { assumes: KP_IPTABLES },
      needs: ["trafficPolicy"],
      observe: (r) => verdictOf(r, "cluster_np_far", NO_OUTSIDE),
    },
    {
      id: "traffic-policy.cluster-np-source-replaced",
      claim:
        "externalTrafficPolicy Cluster: forwarded to another node, the request reaches the backend with a node's address as its source (SNAT), unless Cilium forwards it by DSR",
      source: K8S_ETP,
      why: "Cluster may take a second hop, and the reply must come back the same way: kube-proxy masquerades (KUBE-MARK-MASQ), Cilium's nodeport_lb4 SNATs in snat mode (bpf-lb-mode=snat, the default)",
      expect: { kpr: { eq: false }, "kube-proxy": { eq: false } },
      config: {
        assumes: {
          kpr: { lbMode: ["snat"], ipFamilies: IPV4_FAMILIES },
          "kube-proxy": KP_IPTABLES["kube-proxy"],
        },
        cases: [
          {
            when: { lbMode: ["dsr", "hybrid"] },
            expect: { kpr: { eq: true } },
            claim:
              "externalTrafficPolicy Cluster with DSR: the backend's node answers the client directly, so the backend sees the client's own address",
            why: "loadBalancer.mode=dsr (hybrid: DSR for TCP): the frontend node forwards without SNAT, the service address in an IP option (kubeproxy-free.rst, DSR mode)",
          },
        ],
      },
      needs: ["trafficPolicy"],
      observe: (r) => sourceKept(r, "cluster_np_far"),
    },
    {
      id: "traffic-policy.health-backend-node",
      claim:
        "The health-check node port of a node with backends answers 200 with their count (localEndpoints 2)",
      source: UP(
        "Kubernetes docs: Service healthCheckNodePort, https://kubernetes.io/docs/concepts/services-networking/service/; cilium pkg/loadbalancer/healthserver, https://github.com/cilium/cilium/tree/v1.20.2/pkg/loadbalancer/healthserver",
      ),
      why: "kpr: the agent serves it (enable-health-check-nodeport, default true; healthserver.go: 200 and `localEndpoints` when the node has backends); beside kube-proxy, kube-proxy's health server does (the same body with serviceProxyHealthy)",
      expect: { kpr: { eq: "200 localEndpoints=2" }, "kube-proxy": { eq: "200 localEndpoints=2" } },
      config: { assumes: KP_IPTABLES },
      needs: ["trafficPolicy"],
      observe: (r) => health(r, "health_edge"),
    },
    {
      id: "traffic-policy.health-no-backend-node",
      claim:
        "The health-check node port of a node without a backend answers 503 (localEndpoints 0): a load balancer takes it out",
      source: UP(
        "Kubernetes docs: Service healthCheckNodePort, https://kubernetes.io/docs/concepts/services-networking/service/; cilium pkg/loadbalancer/healthserver, https://github.com/cilium/cilium/tree/v1.20.2/pkg/loadbalancer/healthserver",
      ),
      why: "both health servers answer 503 Service Unavailable when the node has no local endpoint (healthserver.go ServeHTTP; kube-proxy pkg/proxy/healthcheck)",
      expect: { kpr: { eq: "503 localEndpoints=0" }, "kube-proxy": { eq: "503 localEndpoints=0" } },
      config: { assumes: KP_IPTABLES },
      needs: ["trafficPolicy"],
      observe: (r) => health(r, "health_far"),
    },
    {
      id: "traffic-policy.local-lb-from-pod-far",
      claim:
        "externalTrafficPolicy Local does not hold inside the cluster: a Pod on a node without a backend reaches the Local Service's LoadBalancer address",
      source: CILIUM_TP,
      why: "Cilium: in-cluster lookups take the internal scope, which holds every backend (lb.h lb4_lookup_service east_west, PR 12311; kubeproxy-free.rst: 'E/W: All'); kube-proxy: `pod traffic for … external destinations` jumps to KUBE-SVC (all endpoints)",
      expect: {
        kpr: { eq: "HTTP 200" },
        "kube-proxy": {
          default: { eq: "HTTP 200" },
          byPatch: [
            {
              from: "1.19.0",
              to: "1.19.6",
              kind: "known-issue",
              claim:
                "Cilium holds the LoadBalancer address in its own LB map beside kube-proxy and refuses the Pod's connection: the Local Service has no backend on this node, and kube-proxy's rule (all endpoints for Pod traffic) never sees it",
              why: "PR 43384 programmed every frontend type whatever kubeProxyReplacement says, so bpf_lxc translates the Pod's packet to the LoadBalancer address with the Local Service's node-local backends (none here) before kube-proxy; PR 47204 (backported to 1.19.7 as PR 47414) programs only ClusterIP, LocalRedirect and ExternalIPs again. Run lab-1196 (the lab's 1.19.6, beside kube-proxy): refused in 0.6 ms; 1.19.7 answers HTTP 200",
              upstream:
                "cilium issue 45252 ('[v1.19] LoadBalancer-Services with externalTrafficPolicy=Local are failing when internal workloads access the external LoadBalancer address'); fixed by PR 47204 (1.19.7, 1.20.0)",
              expect: { eq: "REFUSED" },
            },
          ],
        },
      },
      config: { assumes: KP_IPTABLES },
      needs: ["trafficPolicy"],
      observe: (r) => probeObservation(r, "trafficPolicy", "local_lb_from_pod_far", NO_POOL),
    },
    {
      id: "traffic-policy.local-np-from-node-far",
      claim: "A node without a backend reaches its own Local NodePort from its host namespace",
      source: CILIUM_TP,
      why: "in-cluster traffic again: socket LB translates the host's connect() with the internal scope; kube-proxy's `route LOCAL traffic … to cluster endpoints` rule (with masquerade) does the same",
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "HTTP 200" } },
      config: { assumes: KP_IPTABLES },
      needs: ["trafficPolicy"],
      observe: (r) => probeObservation(r, "trafficPolicy", "local_np_from_node_far", ASKED),
    },
    {
      id: "traffic-policy.local-np-scopes",
      claim:
        "With kube-proxy replacement the far node's Local NodePort has two scopes in the LB map: external with no backend (none is local), internal with both",
      source: CILIUM_TP,
      why: "a Service whose externalTrafficPolicy differs from its internalTrafficPolicy gets a `/i` twin (flags `Local, two-scopes`; writer.go shouldUseLocalBackends); with kubeProxyReplacement=false Cilium programs no NodePort (PR 41380)",
      expect: { kpr: { eq: "external 0, internal 2" }, "kube-proxy": { eq: "no entry" } },
      config: { assumes: ANY },
      needs: ["trafficPolicy"],
      observe: (r) => scopesObservation(r, "trafficPolicy", "local_np_slots"),
    },
    {
      id: "traffic-policy.itp-near",
      claim: "internalTrafficPolicy Local: a Pod on the backends' node reaches the ClusterIP",
      source: K8S_ITP,
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "HTTP 200" } },
      config: { assumes: ANY },
      needs: ["trafficPolicy"],
      observe: (r) => probeObservation(r, "trafficPolicy", "itp_from_pod_near", ASKED),
    },
    {
      id: "traffic-policy.itp-far",
      claim:
        "internalTrafficPolicy Local: a Pod on a node without a backend is turned away at once, never sent to another node",
      source: K8S_ITP,
      why: `Cilium serves the ClusterIP with node-local backends only in both modes (flag InternalLocal; PR 21871): with socket LB the connect() fails with EHOSTUNREACH (bpf_sock.c, svc->count == 0), per packet (beside kube-proxy) bpf_lxc answers an ICMP reject. On 1.18 and 1.19.0–1.19.3 the socket hook's errno is lost: ${SETRETVAL_WHY}`,
      expect: { kpr: ITP_FAR_KPR, "kube-proxy": ITP_FAR_PER_PACKET },
      config: {
        assumes: {
          kpr: { socketLB: ["on"], ipFamilies: IPV4_FAMILIES },
          "kube-proxy": { socketLB: ["off"], ipFamilies: IPV4_FAMILIES },
        },
        cases: [
          {
            when: { socketLB: ["hostns-only"] },
            expect: { kpr: ITP_FAR_PER_PACKET },
            claim:
              "internalTrafficPolicy Local: a Pod on a node without a backend is refused by bpf_lxc (socket LB covers only the host namespace)",
            why: "socketLB.hostNamespaceOnly leaves the Pod's connect() to per-packet LB in bpf_lxc, which answers as beside kube-proxy",
          },
        ],
      },
      needs: ["trafficPolicy"],
      observe: (r) => probeObservation(r, "trafficPolicy", "itp_from_pod_far", ASKED),
    },
  ],
});

type ProbeKey = "local_np_edge" | "local_np_far" | "cluster_np_far" | "health_edge" | "health_far";

/** curl's class of a probe that asked /clientip or the health port (its body is no backend's name). */
function verdictOf(r: RecordView, key: ProbeKey, none: string): Observation {
  const p = r.get("trafficPolicy")[key];
  if (!p) return { value: null, evidence: [], skip: none };
  return { value: p.verdict, evidence: r.evidence("trafficPolicy", key) };
}

/** Whether the address agnhost's /clientip returned is the outside client's own. */
function sourceKept(r: RecordView, key: "local_np_edge" | "cluster_np_far"): Observation {
  const v = r.get("trafficPolicy");
  const p = v[key];
  if (!p || v.outside_ip === null) return { value: null, evidence: [], skip: NO_OUTSIDE };
  const ev = [...r.evidence("trafficPolicy", key), ...r.evidence("trafficPolicy", "outside_ip")];
  if (p.http !== 200 || p.body === null) return { value: `no answer (${p.verdict})`, evidence: ev };
  return { value: ipOf(p.body) === v.outside_ip, evidence: ev };
}

/** A health-check answer as `<status> localEndpoints=<n>`. */
function health(r: RecordView, key: "health_edge" | "health_far"): Observation {
  const p = r.get("trafficPolicy")[key];
  if (!p) return { value: null, evidence: [], skip: "the health-check port was not asked" };
  const n = /"localEndpoints"\s*:\s*(\d+)/.exec(p.body ?? "")?.[1];
  return {
    value: p.http === null ? p.verdict : `${p.http} localEndpoints=${n ?? "?"}`,
    evidence: r.evidence("trafficPolicy", key),
  };
}

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Issue 34: the traffic policies, from outside, from a node and from Pods. */
export async function observeTrafficPolicy(ctx: RunContext): Promise<RecordSet> {
  const edge = await ensureEdge(ctx);
  const range = await lbRange(ctx, edge);
  if ("none" in range) ctx.log(range.none);
  else await ensureLbPool(ctx, range);
  await apply(ctx, renderManifest("traffic-policy.yaml", ctx.namespace, { POOL: `${ctx.namespace}-lb` }));
  const lbIp = "none" in range ? null : (await waitLbAddress(ctx, "edge-local")).ip;
  const itpIp = await clusterIp(ctx, ctx.namespace, "edge-itp");
  const far = edge.far.name;
  const npFar = formatEndpoint(edge.far.internalIp, LOCAL_NODE_PORT);
  const iptables = kubeProxyInIptables(ctx);
  const { value: seen } = await waitSettled(ctx, {
    what: `edge-local's NodePort ${npFar} in ${far}'s ${iptables ? "iptables" : "LB map"}`,
    deadlineMs: 30_000,
    intervalMs: 1000,
    probe: async () => ({
      lb: read(await ciliumDbgRaw(ctx, far, ["bpf", "lb", "list"]), parseBpfLbList),
      rules: iptables ? await iptablesSaveRaw(ctx, far) : null,
    }),
    done: (s) =>
      s.rules
        ? kubeProxyHasEndpoints(s.rules, `${ctx.namespace}/edge-local:http`) &&
          kubeProxyHasEndpoints(s.rules, `${ctx.namespace}/edge-cluster:http`)
        : lbScopes(s.lb.parsed, npFar)?.internal === 2,
    show: (s) => JSON.stringify(lbScopes(s.lb.parsed, npFar)),
  });
  const outside = await outsideAddress(ctx);
  const fromOutside = (host: string, port: number) =>
    outside
      ? probeFrom(ctx, { kind: "outside" }, "outside", `http://${formatEndpoint(host, port)}/clientip`)
      : Promise.resolve(null);
  const checker = (edge.third ?? edge.far).name;
  const onChecker = { kind: "node" as const, node: checker };
  const onFarPod = { kind: "pod" as const, namespace: ctx.namespace, pod: edge.client.name };
  const pick = { pick: /"localEndpoints"/ };
  const [localEdge, localFar, clusterFar, healthEdge, healthFar, lbFromPod, npFromNode, itpNear, itpFar] =
    await Promise.all([
      fromOutside(edge.edge.internalIp, LOCAL_NODE_PORT),
      fromOutside(edge.far.internalIp, LOCAL_NODE_PORT),
      fromOutside(edge.far.internalIp, CLUSTER_NODE_PORT),
      probeFrom(
        ctx,
        onChecker,
        `node ${checker}`,
        `http://${formatEndpoint(edge.edge.internalIp, HEALTH_PORT)}/`,
        pick,
      ),
      probeFrom(
        ctx,
        onChecker,
        `node ${checker}`,
        `http://${formatEndpoint(edge.far.internalIp, HEALTH_PORT)}/`,
        pick,
      ),
      lbIp ? probeFrom(ctx, onFarPod, "pod far", `http://${lbIp}/hostname`) : Promise.resolve(null),
      probeFrom(ctx, { kind: "node", node: far }, `node ${far}`, `http://${npFar}/hostname`),
      probeFrom(
        ctx,
        { kind: "pod", namespace: ctx.namespace, pod: edge.near.name },
        "pod near",
        `http://${itpIp}/hostname`,
      ),
      probeFrom(ctx, onFarPod, "pod far", `http://${itpIp}/hostname`),
    ]);
  return {
    trafficPolicy: buildTrafficPolicyRecord({
      edge,
      outside,
      lbIp,
      lbList: seen.lb,
      probes: {
        local_np_edge: localEdge,
        local_np_far: localFar,
        cluster_np_far: clusterFar,
        health_edge: healthEdge,
        health_far: healthFar,
        local_lb_from_pod_far: lbFromPod,
        local_np_from_node_far: npFromNode,
        itp_from_pod_near: itpNear,
        itp_from_pod_far: itpFar,
      },
    }),
  };
}

type ProbeFields = {
  [K in keyof TrafficPolicyRecord]: TrafficPolicyRecord[K] extends Probe | null ? K : never;
}[keyof TrafficPolicyRecord];

/** Issue 34: the traffic-policy record from what the topic read. */
export function buildTrafficPolicyRecord(input: {
  edge: Pick<Edge, "site" | "siteEvidence">;
  outside: { ip: string; evidence: EvidenceItem[] } | null;
  lbIp: string | null;
  lbList: Read<LbList>;
  probes: Record<ProbeFields, ProbeRead | null>;
}): Evidenced<TrafficPolicyRecord> {
  const { probes, lbList } = input;
  const npFar = formatEndpoint(input.edge.site.far_ip, LOCAL_NODE_PORT);
  const slots = lbScopes(lbList.parsed, npFar);
  const rows = lbList.parsed.services.filter((s) => s.frontend === npFar && s.protocol !== "UDP");
  const probeFields = Object.fromEntries(
    Object.entries(probes).map(([k, p]) => [k, p?.probe ?? null]),
  ) as Record<ProbeFields, Probe | null>;
  const evidence: Evidence<TrafficPolicyRecord> = {
    ...input.edge.siteEvidence,
    outside_ip: input.outside?.evidence ?? [],
    local_np_slots:
      rows.length > 0
        ? rows.flatMap((s) => lbRows(lbList.raw, s))
        : [derive(`no ${npFar}/TCP entry in bpf lb list`, lbList.raw)],
  };
  for (const [k, p] of Object.entries(probes)) evidence[k as ProbeFields] = p?.evidence ?? [];
  return {
    record: {
      ...input.edge.site,
      local_node_port: LOCAL_NODE_PORT,
      health_port: HEALTH_PORT,
      cluster_node_port: CLUSTER_NODE_PORT,
      outside_ip: input.outside?.ip ?? null,
      local_lb_ip: input.lbIp,
      local_np_slots: slots,
      ...probeFields,
    },
    evidence,
  };
}
