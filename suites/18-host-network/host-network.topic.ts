/**
 * Topic "host-network" — issue 34: a Pod's hostPort, and a Service whose backend uses the host network. The hostPort
 * (8089 on the edge node) from a Pod on another node, from its own node and from another node's host namespace: who
 * serves it (Cilium's BPF with kube-proxy replacement; beside kube-proxy nothing, without the portmap CNI plugin). The
 * host-network backend (agnhost on the far node's port 18080) behind a ClusterIP, from a Pod on each node and from a
 * node's host namespace: its slot at the node's address, and who translates it.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds, then each
 * property with its claim, source, expectation per mode, per Cilium version and per configuration, and how it is
 * judged. The observation code and the record builder follow the declaration.
 */
import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { clusterIp } from "../../helpers/observe/cluster.ts";
import { type RunContext, waitSettled } from "../../helpers/observe/context.ts";
import { iptablesSaveRaw } from "../../helpers/observe/node.ts";
import { type ProbeRead, probeFrom, slotAddresses } from "../../helpers/observe/steps.ts";
import {
  apply,
  type Edge,
  ensureEdge,
  renderManifest,
  waitPodReady,
} from "../../helpers/observe/workloads.ts";
import { formatEndpoint } from "../../helpers/parse/address.ts";
import { type LbList, parseBpfLbList } from "../../helpers/parse/bpf-lb-list.ts";
import { IPV4_FAMILIES, IPV4_SERVICE, requires } from "../../helpers/properties/requirements.ts";
import { UP } from "../../helpers/properties/sources.ts";
import { findLbService, lbRows } from "../../helpers/records/common.ts";
import { derive, type RawText, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidence, Evidenced, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import { kubeProxyInIptables } from "../00-config/config.records.ts";
import { probeObservation } from "../surface.ts";
import type { HostNetworkRecord } from "./host-network.records.ts";
import { records } from "./host-network.records.ts";

export const HOST_PORT = 8089;
export const HOSTNET_PORT = 18080;
const HOSTPORT_POD = "edge-hostport";

const ANY = requires(IPV4_SERVICE);
const HOSTPORT = UP(
  "Cilium docs network/kubernetes/kubeproxy-free.rst: Container HostPort Support, https://docs.cilium.io/en/v1.20/network/kubernetes/kubeproxy-free/#container-hostport-support; PRs 41277, 41380 (1.19), https://github.com/cilium/cilium/pull/41277, https://github.com/cilium/cilium/pull/41380",
);
const HOSTNET = UP(
  "Kubernetes docs: Service (endpoints at node addresses), https://kubernetes.io/docs/concepts/services-networking/service/; cilium bpf/bpf_sock.c, bpf/lib/nodeport.h, https://github.com/cilium/cilium/blob/v1.20.2/bpf/bpf_sock.c, https://github.com/cilium/cilium/blob/v1.20.2/bpf/lib/nodeport.h",
);
/** Why nothing serves a hostPort beside kube-proxy here. */
const NOBODY =
  "with kubeProxyReplacement=false Cilium programs no HostPort frontend (1.19 removed enable-host-port, PRs 41277 and 41380; in 1.18 it was off by default and the chart has no value for it), kube-proxy has no hostPort code, and the suite chains no portmap CNI plugin (cni.chainingMode none: Cilium's conflist holds cilium-cni alone): the SYN meets the node's own stack, where nothing listens";

export const topic = defineTopic({
  name: "host-network",
  title:
    "A Pod's hostPort and a host-network backend: who serves the hostPort, and how a Service reaches a backend at a node's address",
  source: HOSTPORT,
  deploys: ["edge.yaml", "host-network.yaml"],
  steps: [
    { on: "api", run: "get nodes", for: "the node with edge's backends and one without" },
    {
      on: "api",
      run: "watch pod edge-hostport -n <ns> --until ready",
      for: "the hostPort Pod and the host-network Pod ready",
    },
    { on: "api", run: "get service edge-hostnet -n <ns>", for: "the host-network Service's ClusterIP" },
    {
      on: "agent",
      run: "cilium-dbg bpf lb list",
      for: "HostPort frontends and the host-network slot (polled)",
    },
    { on: "node", run: "iptables-save", for: "kube-proxy's DNAT to the host-network backend" },
    { on: "pod", run: "curl -sS -v --max-time 5", for: "the hostPort and the Service from Pods" },
    {
      on: "node",
      run: "curl -sS -v --max-time 5",
      for: "the hostPort and the Service from nodes' host namespaces",
    },
  ],
  records,
  schedule: {
    after: ["iptables"],
    why: "its Service adds KUBE-SVC lines iptables counts whole (program counts only the holder's own reverse-socket entries, so its clients' translated sockets do not disturb it); its hostPort (8089), host port 18080 and Service are its own",
  },
  shared: { changes: ["kube-proxy service rules"] },
  observe: observeHostNetwork,
  properties: [
    {
      id: "host-network.hostport-from-pod",
      claim:
        "A Pod on another node reaches the hostPort at the edge node's address with kube-proxy replacement; beside kube-proxy nothing serves it (refused)",
      source: HOSTPORT,
      why: `kpr: the agent turns the hostPort into a HostPort frontend at each node address (reflectors/k8s.go upsertHostPort) and nodeport_lb4 on the edge node translates it. Beside kube-proxy: ${NOBODY}`,
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "REFUSED" } },
      config: { assumes: ANY },
      needs: ["hostNetwork"],
      observe: (r) =>
        probeObservation(r, "hostNetwork", "hostport_from_pod_far", "not asked", [HOSTPORT_POD]),
    },
    {
      id: "host-network.hostport-from-own-node",
      claim:
        "The edge node reaches its own hostPort from its host namespace with kube-proxy replacement; beside kube-proxy it is refused",
      source: HOSTPORT,
      why: `kpr: socket LB translates the host namespace's connect() to the HostPort frontend at the node's address. Beside kube-proxy: ${NOBODY}`,
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "REFUSED" } },
      config: {
        assumes: {
          kpr: { socketLB: ["on", "hostns-only"], ipFamilies: IPV4_FAMILIES },
          "kube-proxy": ANY["kube-proxy"],
        },
      },
      needs: ["hostNetwork"],
      observe: (r) =>
        probeObservation(r, "hostNetwork", "hostport_from_node_edge", "not asked", [HOSTPORT_POD]),
    },
    {
      id: "host-network.hostport-from-other-node",
      claim:
        "Another node reaches the hostPort at the edge node's address from its host namespace with kube-proxy replacement; beside kube-proxy it is refused",
      source: HOSTPORT,
      why: `kpr: the far node's socket LB does not translate another node's address outside the NodePort range, so the SYN reaches the edge node, whose nodeport_lb4 serves the HostPort frontend. Beside kube-proxy: ${NOBODY}`,
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "REFUSED" } },
      config: { assumes: ANY },
      needs: ["hostNetwork"],
      observe: (r) =>
        probeObservation(r, "hostNetwork", "hostport_from_node_far", "not asked", [HOSTPORT_POD]),
    },
    {
      id: "host-network.hostport-frontends",
      claim:
        "The edge node's LB map holds the hostPort as HostPort frontends (0.0.0.0:8089 and the node's address) with kube-proxy replacement, none beside kube-proxy",
      source: HOSTPORT,
      why: "a hostPort without hostIP becomes 0.0.0.0:<port>, expanded to every node address in the map (bpf_reconciler.go; bpf lb list `[HostPort, non-routable]` and `[HostPort]`)",
      expect: { kpr: { eq: 2 }, "kube-proxy": { eq: 0 } },
      config: {
        assumes: ANY,
        cases: [
          {
            when: { ipFamilies: ["ipv4+ipv6"] },
            expect: { kpr: { eq: 4 } },
            claim:
              "On a dual-stack cluster the edge node's LB map holds the hostPort as four HostPort frontends: each family's zero address and the node's address of that family ([::]:8089 and the node's IPv6 address beside the IPv4 two)",
            why: "upsertHostPort (pkg/loadbalancer/reflectors/k8s.go) adds the IPv6 zero address beside the IPv4 one when the Pod has an IPv6 address, and the reconciler expands each to the node's addresses of its family; seen so in suites/bundles/profiles/dual-stack/kpr (1.20.2: 0.0.0.0:8089, 172.31.101.4:8089, [::]:8089, [fd00:ca1d:101::4]:8089)",
          },
        ],
      },
      needs: ["hostNetwork"],
      observe: (r) => ({
        value: r.get("hostNetwork").hostport_frontends.length,
        evidence: r.evidence("hostNetwork", "hostport_frontends"),
      }),
    },
    {
      id: "host-network.hostnet-slot",
      claim:
        "The host-network Service's one slot in the LB map is the far node's address and the backend's port, in both modes",
      source: HOSTNET,
      why: "a host-network Pod's address is its node's: the EndpointSlice, and so the slot, names <node InternalIP>:18080; Cilium serves ClusterIPs in both modes",
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      config: { assumes: ANY },
      needs: ["hostNetwork"],
      observe: (r) => {
        const v = r.get("hostNetwork");
        const ok = v.hostnet_slots.length === 1 && v.hostnet_slots[0] === v.hostnet_backend;
        return {
          value: ok ? true : `slots [${v.hostnet_slots.join(", ")}], backend ${v.hostnet_backend}`,
          evidence: [...r.evidence("hostNetwork", "hostnet_slots"), ...r.evidence("hostNetwork", "far_ip")],
        };
      },
    },
    {
      id: "host-network.hostnet-from-pod-other-node",
      claim: "A Pod on another node reaches the host-network backend through the ClusterIP",
      source: HOSTNET,
      why: "socket LB (kpr) or bpf_lxc (beside kube-proxy) rewrites the destination to <node address>:18080; the packet then travels as any Pod-to-node traffic (the tunnel here)",
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "HTTP 200" } },
      config: { assumes: ANY },
      needs: ["hostNetwork"],
      observe: (r) =>
        probeObservation(r, "hostNetwork", "hostnet_from_pod_near", "not asked", [
          r.get("hostNetwork").hostnet_node,
        ]),
    },
    {
      id: "host-network.hostnet-from-pod-same-node",
      claim: "A Pod on the backend's own node reaches the host-network backend through the ClusterIP",
      source: HOSTNET,
      why: "translated to the node's own address: delivered to the node's stack, where agnhost listens",
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "HTTP 200" } },
      config: { assumes: ANY },
      needs: ["hostNetwork"],
      observe: (r) =>
        probeObservation(r, "hostNetwork", "hostnet_from_pod_far", "not asked", [
          r.get("hostNetwork").hostnet_node,
        ]),
    },
    {
      id: "host-network.hostnet-from-node",
      claim: "Another node reaches the host-network backend through the ClusterIP from its host namespace",
      source: HOSTNET,
      why: "kpr: socket LB translates the host's connect() to <far node>:18080; beside kube-proxy its KUBE-SEP rule DNATs it there",
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "HTTP 200" } },
      config: { assumes: ANY },
      needs: ["hostNetwork"],
      observe: (r) =>
        probeObservation(r, "hostNetwork", "hostnet_from_node_edge", "not asked", [
          r.get("hostNetwork").hostnet_node,
        ]),
    },
    {
      id: "host-network.hostnet-kube-proxy-rule",
      claim:
        "kube-proxy DNATs to the host-network backend (one KUBE-SEP rule to the far node's address); none without kube-proxy",
      source: UP(
        "kubernetes pkg/proxy/iptables/proxier.go (v1.35.5): the KUBE-SEP chains, https://github.com/kubernetes/kubernetes/blob/v1.35.5/pkg/proxy/iptables/proxier.go",
      ),
      expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 1 } },
      config: {
        assumes: {
          kpr: { kubeProxy: ["none"], ipFamilies: IPV4_FAMILIES },
          "kube-proxy": { kubeProxy: ["iptables"], ipFamilies: IPV4_FAMILIES },
        },
      },
      needs: ["hostNetwork"],
      observe: (r) => ({
        value: r.get("hostNetwork").hostnet_rules,
        evidence: r.evidence("hostNetwork", "hostnet_rules"),
      }),
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Issue 34: the hostPort and the host-network backend, from Pods and nodes. */
export async function observeHostNetwork(ctx: RunContext): Promise<RecordSet> {
  const edge = await ensureEdge(ctx);
  await apply(
    ctx,
    renderManifest("host-network.yaml", ctx.namespace, {
      EDGE_NODE: edge.edge.name,
      FAR_NODE: edge.far.name,
    }),
  );
  await waitPodReady(ctx, HOSTPORT_POD);
  await waitPodReady(ctx, "edge-hostnet");
  const svc = await clusterIp(ctx, ctx.namespace, "edge-hostnet");
  const backend = formatEndpoint(edge.far.internalIp, HOSTNET_PORT);
  const kpr = ctx.mode === "kpr";
  // a HostPort frontend per family the cluster has, at the zero address and at the node's address
  const families = ctx.earlierRecords().config?.record.ipFamilies.value ?? ["ipv4"];
  const frontends = 2 * families.length;
  const { value: lb } = await waitSettled(ctx, {
    what: `edge-hostnet's slot${kpr ? " and the HostPort frontends" : ""} in ${edge.edge.name}'s LB map`,
    deadlineMs: 30_000,
    intervalMs: 1000,
    probe: async () => read(await ciliumDbgRaw(ctx, edge.edge.name, ["bpf", "lb", "list"]), parseBpfLbList),
    done: (l) =>
      slotAddresses(l.parsed, `${svc}:80`).join() === backend &&
      (!kpr || hostPorts(l.parsed).length === frontends),
    show: (l) =>
      `slots [${slotAddresses(l.parsed, `${svc}:80`).join(", ")}], HostPort [${hostPorts(l.parsed).join(", ")}]`,
  });
  // beside kube-proxy the edge node's own request goes through its rules: wait for the DNAT to the backend
  const rules = kubeProxyInIptables(ctx)
    ? (
        await waitSettled(ctx, {
          what: `kube-proxy's DNAT to ${backend} on ${edge.edge.name}`,
          deadlineMs: 30_000,
          intervalMs: 1000,
          probe: () => iptablesSaveRaw(ctx, edge.edge.name),
          done: (raw) => raw.lines.some((l) => l.includes(`--to-destination ${backend}`)),
          show: (raw) =>
            `${raw.lines.filter((l) => l.includes("/edge-hostnet:http")).length} lines name edge-hostnet`,
        })
      ).value
    : kpr
      ? await iptablesSaveRaw(ctx, edge.edge.name)
      : null;
  const hp = `http://${formatEndpoint(edge.edge.internalIp, HOST_PORT)}/hostname`;
  const hn = `http://${svc}/hostname`;
  const onFarPod = { kind: "pod" as const, namespace: ctx.namespace, pod: edge.client.name };
  const onNearPod = { kind: "pod" as const, namespace: ctx.namespace, pod: edge.near.name };
  const onEdge = { kind: "node" as const, node: edge.edge.name };
  const onFar = { kind: "node" as const, node: edge.far.name };
  const [hpPod, hpOwn, hpOther, hnNear, hnFar, hnNode] = await Promise.all([
    probeFrom(ctx, onFarPod, "pod far", hp),
    probeFrom(ctx, onEdge, `node ${edge.edge.name}`, hp),
    probeFrom(ctx, onFar, `node ${edge.far.name}`, hp),
    probeFrom(ctx, onNearPod, "pod near", hn),
    probeFrom(ctx, onFarPod, "pod far", hn),
    probeFrom(ctx, onEdge, `node ${edge.edge.name}`, hn),
  ]);
  return {
    hostNetwork: buildHostNetworkRecord({
      edge,
      svc,
      lb,
      rules,
      probes: {
        hostport_from_pod_far: hpPod,
        hostport_from_node_edge: hpOwn,
        hostport_from_node_far: hpOther,
        hostnet_from_pod_near: hnNear,
        hostnet_from_pod_far: hnFar,
        hostnet_from_node_edge: hnNode,
      },
    }),
  };
}

/** HostPort frontends on HOST_PORT (external scope, TCP). */
function hostPorts(lb: LbList): string[] {
  return lb.services
    .filter(
      (s) =>
        s.frontend.endsWith(`:${HOST_PORT}`) &&
        s.scope === "external" &&
        s.protocol !== "UDP" &&
        s.flags.includes("HostPort"),
    )
    .map((s) => s.frontend)
    .sort();
}

type Probes = Record<
  | "hostport_from_pod_far"
  | "hostport_from_node_edge"
  | "hostport_from_node_far"
  | "hostnet_from_pod_near"
  | "hostnet_from_pod_far"
  | "hostnet_from_node_edge",
  ProbeRead
>;

/** Issue 34: the host-network record from what the topic read (`rules`: null beside kube-proxy in another mode). */
export function buildHostNetworkRecord(input: {
  edge: Pick<Edge, "site" | "siteEvidence">;
  svc: string;
  lb: Read<LbList>;
  rules: RawText | null;
  probes: Probes;
}): Evidenced<HostNetworkRecord> {
  const { lb, rules, probes, edge } = input;
  const backend = formatEndpoint(edge.site.far_ip, HOSTNET_PORT);
  const hp = hostPorts(lb.parsed);
  const hpRows = lb.parsed.services.filter((s) => hp.includes(s.frontend) && s.flags.includes("HostPort"));
  const svc = findLbService(lb.parsed, `${input.svc}:80`);
  const dnat = rules ? rules.quotes((l) => l.includes(`--to-destination ${backend}`)) : [];
  const evidence: Evidence<HostNetworkRecord> = {
    ...edge.siteEvidence,
    hostport_frontends:
      hpRows.length > 0
        ? hpRows.flatMap((s) => lbRows(lb.raw, s).slice(0, 1))
        : [derive(`no HostPort frontend on port ${HOST_PORT} in bpf lb list`, lb.raw)],
    hostnet_backend: edge.siteEvidence.far_ip ?? [],
    hostnet_slots: svc
      ? lbRows(lb.raw, svc)
      : [derive(`no ${input.svc}:80/TCP entry in bpf lb list`, lb.raw)],
    hostnet_rules: rules
      ? dnat.length > 0
        ? dnat
        : [derive(`no rule DNATs to ${backend}`, rules)]
      : [derive("kube-proxy is not in iptables mode: its rules were not read", lb.raw)],
  };
  for (const [k, p] of Object.entries(probes)) evidence[k as keyof Probes] = p.evidence;
  return {
    record: {
      ...edge.site,
      host_port: HOST_PORT,
      hostport_from_pod_far: probes.hostport_from_pod_far.probe,
      hostport_from_node_edge: probes.hostport_from_node_edge.probe,
      hostport_from_node_far: probes.hostport_from_node_far.probe,
      hostport_frontends: hp,
      hostnet_backend: backend,
      hostnet_node: edge.site.far_node,
      hostnet_slots: svc ? svc.backends.map((b) => b.address ?? "?") : [],
      hostnet_from_pod_near: probes.hostnet_from_pod_near.probe,
      hostnet_from_pod_far: probes.hostnet_from_pod_far.probe,
      hostnet_from_node_edge: probes.hostnet_from_node_edge.probe,
      hostnet_rules: dnat.length,
    },
    evidence,
  };
}
