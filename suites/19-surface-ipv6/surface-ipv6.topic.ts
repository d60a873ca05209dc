// One file over 450 lines: a topic reads top to bottom in one file: its declaration, then its observation and builders (docs/contributing.md)
/**
 * Topic "surface-ipv6" — issue 34: the Service surface's IPv6 family on a dual-stack cluster. The surface topics
 * (loadbalancer … host-network) put single-stack IPv4 Services in front of edge's Pods; this one asks their questions
 * of single-stack IPv6 Services in front of the same Pods: a LoadBalancer address from an IPv6 pool of ours reached
 * from a Pod on each node and from a node, who translates it; externalTrafficPolicy Local from a Pod on a node
 * without a backend (the path of cilium issue 45252) and the Local NodePort's scopes; an IPv6 externalIP; ClientIP
 * affinity; a hostPort at a node's IPv6 address. On a cluster without IPv6 (the config topic's record says its
 * families) it deploys nothing and every property is not applicable, naming the setting.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds, then each
 * property with its claim, source, expectation per mode, per Cilium version and per configuration, and how it is
 * judged. The observation code and the record builder follow the declaration.
 */
import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { apiJsonRaw } from "../../helpers/observe/cluster.ts";
import { type RunContext, waitSettled } from "../../helpers/observe/context.ts";
import { onNode } from "../../helpers/observe/node.ts";
import { type ProbeRead, probeFrom } from "../../helpers/observe/steps.ts";
import {
  apply,
  type Edge,
  ensureEdge,
  ensureLbPool,
  inRange6,
  lb6Range,
  renderManifest,
  waitLbAddress,
  waitPodReady,
} from "../../helpers/observe/workloads.ts";
import { formatEndpoint } from "../../helpers/parse/address.ts";
import { type LbList, parseBpfLbList } from "../../helpers/parse/bpf-lb-list.ts";
import { ipv6Of, ipv6Twin } from "../../helpers/properties/family.ts";
import {
  DUAL_STACK,
  KUBE_PROXY_RULES,
  POD_SOCKET_LB,
  requires,
} from "../../helpers/properties/requirements.ts";
import { UP } from "../../helpers/properties/sources.ts";
import {
  kubeProxyHasEndpoints,
  kubeProxyServes,
  lbRows,
  lbRowsAt,
  lbScopes,
  RecordError,
  ruleLines,
  slotCount,
} from "../../helpers/records/common.ts";
import { derive, type EvidenceItem, RawText, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidence, Evidenced, Probe, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import { kubeProxyInIptables } from "../00-config/config.records.ts";
import { nodeIpv6s, serviceIpv6 } from "../13-ipv6/ipv6.topic.ts";
import { INTERCEPTED, LB_MAP_SLOTS, WILDCARD_ENTRY } from "../14-loadbalancer/loadbalancer.topic.ts";
import { STICKY_TRIES, series } from "../17-session-affinity/session-affinity.topic.ts";
import {
  addressedObservation,
  distinctAnswers,
  lbAddressFacts,
  probeObservation,
  scopesObservation,
} from "../surface.ts";
import type { SurfaceIpv6Record } from "./surface-ipv6.records.ts";
import { records } from "./surface-ipv6.records.ts";

/** edge6-local's NodePort and health-check node port, the hostPort (manifests/surface-ipv6.yaml). */
export const LOCAL6_NODE_PORT = 30788;
export const HOST_PORT6 = 8090;

/** Every property is about the IPv6 family: it applies where the cluster has both families. */
const ANY = requires(DUAL_STACK);
/** kube-proxy's rules are counted in ip6tables: its iptables mode beside Cilium, none with kube-proxy replacement. */
const RULES = requires(KUBE_PROXY_RULES, DUAL_STACK);
/** What a Pod's connect() meets: socket LB (kpr, full coverage) or per-packet LB (beside kube-proxy). */
const POD_LB = requires(POD_SOCKET_LB, DUAL_STACK);

const NO_RANGE6 =
  "no IPv6 address range of ours for LoadBalancer addresses and externalIPs on this cluster (LB_IP6_RANGE unset)";
/** What the IPv6 path adds to each IPv4 twin's sources (ipv6Twin). */
const LB6 = "Cilium bpf/lib/lb.h lb6_*, https://github.com/cilium/cilium/blob/v1.20.2/bpf/lib/lb.h";
const HOSTPORT_POD = ["edge6-hostport"];

export const topic = defineTopic({
  name: "surface-ipv6",
  family: "ipv6",
  title:
    "The Service surface's IPv6 family: an IPv6 LoadBalancer address, externalTrafficPolicy Local, an externalIP, ClientIP affinity and a hostPort, on a dual-stack cluster",
  source: UP(
    "Kubernetes docs: IPv4/IPv6 dual-stack (Services: ipFamilies), https://kubernetes.io/docs/concepts/services-networking/dual-stack/; Cilium docs network/lb-ipam.rst, https://docs.cilium.io/en/v1.20/network/lb-ipam/",
  ),
  deploys: ["edge.yaml", "lb-pool.yaml", "surface-ipv6.yaml"],
  steps: [
    {
      on: "api",
      run: "get nodes",
      for: "the node with edge's backends and one without, and their IPv6 InternalIPs",
    },
    {
      on: "local",
      run: "printenv LB_IP6_RANGE",
      for: "the IPv6 range of ours for the pool and the externalIP",
    },
    { on: "api", run: "get namespace", for: "the run namespace's uid (the pool's owner)" },
    {
      on: "api",
      run: "get service edge6-lb -n <ns>",
      for: "the IPv6 addresses LB-IPAM gives edge6-lb and edge6-local (polled)",
    },
    { on: "api", run: "get service edge6-sticky -n <ns>", for: "edge6-sticky's IPv6 ClusterIP" },
    {
      on: "agent",
      run: "cilium-dbg bpf lb list",
      for: "the Services' IPv6 frontends in the far node's LB map (polled)",
    },
    { on: "node", run: "ip6tables-save", for: "kube-proxy's IPv6 rules naming them (polled)" },
    {
      on: "pod",
      run: "curl -sS -v --max-time 5",
      for: "each address from a Pod on each node; a series to edge6-sticky",
    },
    { on: "node", run: "curl -sS -v --max-time 5", for: "edge6-lb from the far node's host namespace" },
  ],
  records,
  schedule: {
    after: ["iptables"],
    why: "it follows iptables as every surface topic does (edge's Pods, shared and applied idempotently, are on web's nodes); its Services are IPv6 ones, which kube-proxy's IPv6 proxier writes into ip6tables: they change none of the IPv4 rules iptables and ghost count whole. Its Services, pool, NodePorts (30788, 30789) and hostPort (8090) are its own",
  },
  observe: observeSurfaceIpv6,
  properties: [
    {
      id: "surface-ipv6.lb-ipam-assigns",
      claim:
        "Cilium's LB-IPAM gives edge6-lb an IPv6 address from our IPv6 CiliumLoadBalancerIPPool, in both modes",
      source: UP(
        "Cilium docs network/lb-ipam.rst (IPv6 blocks; a Service's ipFamilies choose the family), https://docs.cilium.io/en/v1.20/network/lb-ipam/",
      ),
      family: ipv6Of("lb.ipam-assigns"),
      why: "LB-IPAM allocates from the pool's blocks of the families the Service asks for (operator/pkg/lbipam: ipFamilies SingleStack IPv6 takes an IPv6 address); it checks nothing of kube-proxy replacement",
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      config: { assumes: ANY },
      needs: ["surfaceIpv6"],
      observe: (r) => {
        const v = r.get("surfaceIpv6");
        if (v.pool6 === null) return { value: null, evidence: [], skip: NO_RANGE6 };
        return {
          value: v.lb6_ip !== null && inRange6(v.lb6_ip, v.pool6),
          evidence: [...r.evidence("surfaceIpv6", "pool6"), ...r.evidence("surfaceIpv6", "lb6_ip")],
        };
      },
    },
    {
      id: "surface-ipv6.lb-from-pod-near",
      claim:
        "A Pod on the backends' node reaches edge6-lb's IPv6 LoadBalancer address (an edge backend answers)",
      ...ipv6Twin("lb.from-pod-near", LB6),
      why: "kpr: socket LB's connect6 hook translates the address like an IPv6 ClusterIP; beside kube-proxy its ip6tables `loadbalancer IP` rule DNATs it",
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "HTTP 200" } },
      config: { assumes: ANY },
      needs: ["surfaceIpv6"],
      observe: (r) => probeObservation(r, "surfaceIpv6", "lb6_from_pod_near", NO_RANGE6),
    },
    {
      id: "surface-ipv6.lb-from-pod-far",
      claim:
        "A Pod on a node without a backend reaches edge6-lb's IPv6 LoadBalancer address (an edge backend answers)",
      ...ipv6Twin("lb.from-pod-far", LB6),
      why: "kpr: socket LB translates it on the client's node; beside kube-proxy the ip6tables `loadbalancer IP` rule sends it through KUBE-EXT (masqueraded, eTP Cluster) to a backend on another node",
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "HTTP 200" } },
      config: { assumes: ANY },
      needs: ["surfaceIpv6"],
      observe: (r) => probeObservation(r, "surfaceIpv6", "lb6_from_pod_far", NO_RANGE6),
    },
    {
      id: "surface-ipv6.lb-from-node",
      claim: "A node without a backend reaches edge6-lb's IPv6 LoadBalancer address from its host namespace",
      ...ipv6Twin("lb.from-node", LB6),
      why: "kpr: the host namespace's connect() is translated by socket LB; beside kube-proxy the ip6tables OUTPUT chain's KUBE-SERVICES rule DNATs it",
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "HTTP 200" } },
      config: { assumes: ANY },
      needs: ["surfaceIpv6"],
      observe: (r) => probeObservation(r, "surfaceIpv6", "lb6_from_node", NO_RANGE6),
    },
    {
      id: "surface-ipv6.lb-map-slots",
      claim:
        "edge6-lb's IPv6 address is in the agent's LB map with both backends with kube-proxy replacement, and absent beside kube-proxy",
      ...ipv6Twin("lb.lb-map-slots", LB6),
      why: "the frontends are reflected and programmed whatever their family (pkg/loadbalancer/reflectors/conversions.go, reconciler/bpf_reconciler.go isDatapathCandidate: by frontend type, not family); an IPv6 frontend lives in the lb6 maps. 1.19.0–1.19.6 programmed it beside kube-proxy too (PR 43384 populated every frontend type, of either family)",
      expect: LB_MAP_SLOTS,
      config: { assumes: ANY },
      needs: ["surfaceIpv6"],
      observe: (r) => addressedObservation(r, "surfaceIpv6", "pool6", "lb6_slots", NO_RANGE6),
    },
    {
      id: "surface-ipv6.lb-wildcard-entry",
      claim:
        "With kube-proxy replacement, Cilium 1.19+ adds a `[address]:0/ANY` entry for edge6-lb's IPv6 address, as for IPv4",
      source: UP(
        "cilium PR 40684 (1.19: wildcard service entries), https://github.com/cilium/cilium/pull/40684",
      ),
      family: ipv6Of("lb.wildcard-entry"),
      why: "bpf_reconciler.go isWildcardCandidate picks LoadBalancer frontends by type and IPAM class, not by family; kube-proxy's addresses are not in the map at all",
      expect: WILDCARD_ENTRY,
      config: { assumes: ANY },
      needs: ["surfaceIpv6"],
      observe: (r) => addressedObservation(r, "surfaceIpv6", "pool6", "lb6_wildcard", NO_RANGE6),
    },
    {
      id: "surface-ipv6.lb-kube-proxy-rule",
      claim:
        "kube-proxy writes one ip6tables `loadbalancer IP` rule for edge6-lb's address; none without kube-proxy",
      source: UP(
        "kubernetes pkg/proxy/iptables/proxier.go syncProxyRules (v1.35.5), https://github.com/kubernetes/kubernetes/blob/v1.35.5/pkg/proxy/iptables/proxier.go; the IPv6 proxier of a dual-stack node",
      ),
      family: ipv6Of("lb.kube-proxy-rule"),
      why: "kube-proxy runs one proxier per family on a dual-stack node (metaproxier); the IPv6 one writes `-d <address>/128 … loadbalancer IP … -j KUBE-EXT-…` into ip6tables",
      expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 1 } },
      config: { assumes: RULES },
      needs: ["surfaceIpv6"],
      observe: (r) => addressedObservation(r, "surfaceIpv6", "pool6", "lb6_rules", NO_RANGE6),
    },
    {
      id: "surface-ipv6.local-lb-from-pod-far",
      claim:
        "externalTrafficPolicy Local does not hold inside the cluster: a Pod on a node without a backend reaches edge6-local's IPv6 LoadBalancer address",
      ...ipv6Twin("traffic-policy.local-lb-from-pod-far", LB6),
      why: "Cilium: in-cluster lookups take the internal scope, which holds every backend (lb6_lookup_service as lb4's); kube-proxy: `pod traffic for … external destinations` jumps to KUBE-SVC (all endpoints). 1.19.0–1.19.6 held the address in Cilium's LB map beside kube-proxy, with the node-local backends only (cilium issue 45252, not family-bound)",
      expect: {
        kpr: { eq: "HTTP 200" },
        "kube-proxy": {
          default: { eq: "HTTP 200" },
          byPatch: [
            {
              ...INTERCEPTED,
              claim:
                "Cilium holds the IPv6 LoadBalancer address in its own LB map beside kube-proxy and refuses the Pod's connection: the Local Service has no backend on this node",
              why: "as the IPv4 twin's, observed on 1.19.6 for IPv4 (run lab-1196); never run here for IPv6",
              expect: { eq: "REFUSED" },
            },
          ],
        },
      },
      config: { assumes: RULES },
      needs: ["surfaceIpv6"],
      observe: (r) => probeObservation(r, "surfaceIpv6", "local6_from_pod_far", NO_RANGE6),
    },
    {
      id: "surface-ipv6.local-np-scopes",
      claim:
        "With kube-proxy replacement the far node's IPv6 Local NodePort has two scopes in the LB map: external with no backend, internal with both",
      ...ipv6Twin("traffic-policy.local-np-scopes", LB6),
      why: "a Service whose externalTrafficPolicy differs from its internalTrafficPolicy gets a `/i` twin per frontend, of either family (writer.go shouldUseLocalBackends); with kubeProxyReplacement=false Cilium programs no NodePort (PR 41380)",
      expect: { kpr: { eq: "external 0, internal 2" }, "kube-proxy": { eq: "no entry" } },
      config: { assumes: ANY },
      needs: ["surfaceIpv6"],
      observe: (r) => scopesObservation(r, "surfaceIpv6", "local6_np_slots"),
    },
    {
      id: "surface-ipv6.external-ip-from-pod",
      claim:
        "A Pod reaches edge6-ext's IPv6 externalIP beside kube-proxy; with socket LB its connect() is left untranslated (no answer)",
      ...ipv6Twin("external-ip.from-pod", LB6),
      why: "socket LB refuses to translate an ExternalIPs frontend that is not an address of the client's own node (bpf_sock.c sock6_skip_xlate, as sock4_skip_xlate: the CVE-2020-8554 mitigation), so the SYN goes out to the address's owner (none here: neighbour discovery unanswered on the lab's network); beside kube-proxy, bpf_lxc (1.19+) or kube-proxy's ip6tables `external IP` rule DNATs it",
      expect: {
        kpr: { oneOf: ["UNREACHABLE", "TIMEOUT", "CONNECT_FAILED"] },
        "kube-proxy": { eq: "HTTP 200" },
      },
      config: { assumes: POD_LB },
      needs: ["surfaceIpv6"],
      observe: (r) => probeObservation(r, "surfaceIpv6", "ext6_from_pod", NO_RANGE6),
    },
    {
      id: "surface-ipv6.affinity-pod-same-backend",
      claim: `sessionAffinity ClientIP on an IPv6 ClusterIP: ${STICKY_TRIES} new connections from one Pod all reach the same backend`,
      ...ipv6Twin("session-affinity.pod-same-backend", LB6),
      why: "kpr: socket LB keeps the affinity per network namespace in cilium_lb6_affinity (bpf_sock.c, lb6_affinity_backend_id_by_netns); beside kube-proxy bpf_lxc translates the Pod's IPv6 ClusterIP traffic and keeps it per client address (lb6_affinity_backend_id_by_addr)",
      expect: { kpr: { eq: 1 }, "kube-proxy": { eq: 1 } },
      config: { assumes: ANY },
      needs: ["surfaceIpv6"],
      observe: (r) => distinctAnswers(r, "surfaceIpv6", "sticky6_from_pod"),
    },
    {
      id: "surface-ipv6.hostport-from-pod",
      claim:
        "A Pod on another node reaches hostPort 8090 at the edge node's IPv6 address with kube-proxy replacement; beside kube-proxy nothing serves it (refused)",
      ...ipv6Twin("host-network.hostport-from-pod", LB6),
      why: "kpr: the agent turns the hostPort into HostPort frontends at the node's addresses of the Pod's families (reflectors/k8s.go upsertHostPort), which nodeport_lb6 on the edge node translates. Beside kube-proxy no one: Cilium's HostPort frontends need kube-proxy replacement and kind's CNI config has no portmap plugin, so the edge node's stack refuses the SYN",
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "REFUSED" } },
      config: { assumes: ANY },
      needs: ["surfaceIpv6"],
      observe: (r) => probeObservation(r, "surfaceIpv6", "hostport6_from_pod", "not asked", HOSTPORT_POD),
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Issue 34: the IPv6 family of the Service surface. */
export async function observeSurfaceIpv6(ctx: RunContext): Promise<RecordSet> {
  const fam = ctx.earlierRecords().config?.record.ipFamilies.value ?? null;
  if (fam !== null && !fam.includes("ipv6")) {
    ctx.log(`the cluster has no IPv6 (IP families ${fam.join("+")}): nothing deployed, nothing observed`);
    return {};
  }
  const edge = await ensureEdge(ctx);
  const v6 = nodeIpv6s((await apiJsonRaw(ctx, { resource: "nodes" })).raw);
  const edge6 = v6.find((n) => n.name === edge.edge.name);
  const far6 = v6.find((n) => n.name === edge.far.name);
  if (!edge6 || !far6)
    throw new RecordError("surfaceIpv6", "edge_ip6", "the edge or far node has no IPv6 InternalIP");
  const range = await lb6Range(ctx, {
    name: edge6.name,
    ip6: edge6.v6.ip,
    ip4: edge.edge.internalIp,
    evidence: edge6.v6.evidence,
  });
  if ("none" in range) {
    ctx.log(range.none);
    return { surfaceIpv6: buildSurfaceIpv6Record({ edge, edge6: edge6.v6, far6: far6.v6, range: null }) };
  }
  await ensureLbPool(ctx, range);
  await apply(
    ctx,
    renderManifest("surface-ipv6.yaml", ctx.namespace, {
      POOL: range.pool,
      EXTERNAL_IP: range.externalIp,
      EDGE_NODE: edge.edge.name,
    }),
  );
  const lb = await waitLbAddress(ctx, "edge6-lb");
  const local = await waitLbAddress(ctx, "edge6-local");
  const sticky = serviceIpv6(
    (await apiJsonRaw(ctx, { resource: "service", name: "edge6-sticky", namespace: ctx.namespace })).raw,
    "edge6-sticky",
  ).v6.ip;
  const far = edge.far.name;
  const ep = (ip: string, port = 80) => formatEndpoint(ip, port);
  const npFar = ep(far6.v6.ip, LOCAL6_NODE_PORT);
  const iptables = kubeProxyInIptables(ctx);
  const ip6tablesSave = async () => RawText.stdout(await onNode(ctx, far, ["ip6tables-save"]));
  // settled: kpr programs edge6-lb, the Local NodePort's internal scope and edge6-sticky; kube-proxy writes its rules
  const { value: seen } = await waitSettled(ctx, {
    what: `edge6-lb, edge6-local and edge6-sticky settled in ${far}'s ${iptables ? "ip6tables" : "LB map"}`,
    deadlineMs: 30_000,
    intervalMs: 1000,
    probe: async () => ({
      lb: read(await ciliumDbgRaw(ctx, far, ["bpf", "lb", "list"]), parseBpfLbList),
      rules: iptables ? await ip6tablesSave() : null,
    }),
    done: (s) =>
      slotCount(s.lb.parsed, ep(sticky)) === 2 &&
      (s.rules
        ? kubeProxyServes(s.rules, lb.ip) &&
          kubeProxyServes(s.rules, range.externalIp) &&
          kubeProxyHasEndpoints(s.rules, `${ctx.namespace}/edge6-local:http`)
        : slotCount(s.lb.parsed, ep(lb.ip)) === 2 && lbScopes(s.lb.parsed, npFar)?.internal === 2),
    show: (s) =>
      `LB map: edge6-lb ${slotCount(s.lb.parsed, ep(lb.ip))} slots, edge6-sticky ${slotCount(s.lb.parsed, ep(sticky))}, ${npFar} ${JSON.stringify(lbScopes(s.lb.parsed, npFar))}${s.rules ? `; ip6tables: edge6-lb ${ruleLines(s.rules, lb.ip).length} lines` : ""}`,
  });
  const rules = seen.rules ?? (await ip6tablesSave());
  await waitPodReady(ctx, "edge6-hostport");
  const onNear = { kind: "pod" as const, namespace: ctx.namespace, pod: edge.near.name };
  const onFar = { kind: "pod" as const, namespace: ctx.namespace, pod: edge.client.name };
  const url = (ip: string, port = 80) => `http://${ep(ip, port)}/hostname`;
  const [fromNear, fromFar, fromNode, localFar, extFar, hostportFar] = await Promise.all([
    probeFrom(ctx, onNear, "pod near", url(lb.ip)),
    probeFrom(ctx, onFar, "pod far", url(lb.ip)),
    probeFrom(ctx, { kind: "node", node: far }, `node ${far}`, url(lb.ip)),
    probeFrom(ctx, onFar, "pod far", url(local.ip)),
    probeFrom(ctx, onFar, "pod far", url(range.externalIp)),
    probeFrom(ctx, onFar, "pod far", url(edge6.v6.ip, HOST_PORT6)),
  ]);
  const stickySeries = await series(ctx, onFar, "pod far", url(sticky), STICKY_TRIES);
  return {
    surfaceIpv6: buildSurfaceIpv6Record({
      edge,
      edge6: edge6.v6,
      far6: far6.v6,
      range: { text: `${range.start}-${range.stop}`, externalIp: range.externalIp, evidence: range.evidence },
      lb,
      local,
      lbList: seen.lb,
      rules,
      probes: {
        lb6_from_pod_near: fromNear,
        lb6_from_pod_far: fromFar,
        lb6_from_node: fromNode,
        local6_from_pod_far: localFar,
        ext6_from_pod: extFar,
        hostport6_from_pod: hostportFar,
      },
      sticky: stickySeries,
    }),
  };
}

type ProbeFields = {
  [K in keyof SurfaceIpv6Record]: SurfaceIpv6Record[K] extends Probe | null ? K : never;
}[keyof SurfaceIpv6Record];

interface V6 {
  ip: string;
  evidence: EvidenceItem[];
}

/** Issue 34: the surface-ipv6 record from what the topic read; no range: every address field null. */
export function buildSurfaceIpv6Record(input: {
  edge: Pick<Edge, "site" | "siteEvidence">;
  edge6: V6;
  far6: V6;
  range: { text: string; externalIp: string; evidence: EvidenceItem[] } | null;
  lb?: V6;
  local?: V6;
  lbList?: Read<LbList>;
  rules?: RawText;
  probes?: Record<ProbeFields, ProbeRead>;
  sticky?: ProbeRead[];
}): Evidenced<SurfaceIpv6Record> {
  const { range, lb, local, lbList, rules, probes, sticky } = input;
  const base = { ...input.edge.site, edge_ip6: input.edge6.ip, far_ip6: input.far6.ip };
  const baseEvidence = {
    ...input.edge.siteEvidence,
    edge_ip6: input.edge6.evidence,
    far_ip6: input.far6.evidence,
  };
  if (!range || !lb || !local || !lbList || !rules || !probes || !sticky) {
    return {
      record: {
        ...base,
        pool6: null,
        lb6_ip: null,
        lb6_slots: null,
        lb6_wildcard: null,
        lb6_rules: null,
        lb6_from_pod_near: null,
        lb6_from_pod_far: null,
        lb6_from_node: null,
        local6_ip: null,
        local6_from_pod_far: null,
        local6_np_slots: null,
        ext6_ip: null,
        ext6_from_pod: null,
        sticky6_from_pod: [],
        hostport6_from_pod: null,
      },
      evidence: baseEvidence,
    };
  }
  const list = lbList.parsed;
  const npFar = formatEndpoint(input.far6.ip, LOCAL6_NODE_PORT);
  const at = lbAddressFacts(lbList, rules, lb.ip, "edge6-lb");
  const npRows = lbRowsAt(list, npFar);
  const answers = sticky.map((p) => (p.probe.http === 200 ? (p.probe.body ?? "(no body)") : p.probe.verdict));
  const record: SurfaceIpv6Record = {
    ...base,
    pool6: range.text,
    lb6_ip: lb.ip,
    lb6_slots: at.slots,
    lb6_wildcard: at.wildcard,
    lb6_rules: at.rules,
    lb6_from_pod_near: probes.lb6_from_pod_near.probe,
    lb6_from_pod_far: probes.lb6_from_pod_far.probe,
    lb6_from_node: probes.lb6_from_node.probe,
    local6_ip: local.ip,
    local6_from_pod_far: probes.local6_from_pod_far.probe,
    local6_np_slots: lbScopes(list, npFar),
    ext6_ip: range.externalIp,
    ext6_from_pod: probes.ext6_from_pod.probe,
    sticky6_from_pod: answers,
    hostport6_from_pod: probes.hostport6_from_pod.probe,
  };
  const evidence: Evidence<SurfaceIpv6Record> = {
    ...baseEvidence,
    pool6: range.evidence,
    lb6_ip: lb.evidence,
    lb6_slots: at.evidence.slots,
    lb6_wildcard: at.evidence.wildcard,
    lb6_rules: at.evidence.rules,
    local6_ip: local.evidence,
    local6_np_slots:
      npRows.length > 0
        ? npRows.flatMap((s) => lbRows(lbList.raw, s))
        : [derive(`no ${npFar}/TCP entry in bpf lb list`, lbList.raw)],
    ext6_ip: range.evidence,
    sticky6_from_pod: sticky.flatMap((p) => p.evidence),
  };
  for (const [k, p] of Object.entries(probes)) evidence[k as ProbeFields] = p.evidence;
  return { record, evidence };
}
