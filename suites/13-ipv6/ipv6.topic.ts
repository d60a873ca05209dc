// One file over 450 lines: a topic reads top to bottom in one file: its declaration, then its observation and builders (docs/contributing.md)
/**
 * Topic "ipv6" — issue 25: the IPv6 family of a dual-stack cluster.
 * web's Pods behind IPv6-only Services: their slots in the LB map, a Pod's request and a held connection to the
 * IPv6 ClusterIP (who translated it), a Service without backends, and the NodePort on a node's IPv6 address.
 *
 * The IPv4 topics observe web and ghost, single-stack IPv4 Services (their manifests ask no ipFamilyPolicy), so a
 * dual-stack cluster leaves what they see as it was; this topic asks the same questions of the IPv6 family. On a
 * cluster without IPv6 (the config topic's record says its families) it deploys nothing and every property is not
 * applicable, naming the setting.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builder follow the declaration.
 */

import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { apiJsonRaw } from "../../helpers/observe/cluster.ts";
import type { RunContext } from "../../helpers/observe/context.ts";
import { onNode } from "../../helpers/observe/node.ts";
import { type CurlRead, curlFrom, curlLineQuote, lbList, waitSlots } from "../../helpers/observe/steps.ts";
import {
  apply,
  ensureHolder,
  ensureWeb,
  holderConnected,
  renderManifest,
  TARGET_PORT,
  WEB_PORT,
  waitPodReady,
} from "../../helpers/observe/workloads.ts";
import { canonicalEndpoint, canonicalIp, formatEndpoint } from "../../helpers/parse/address.ts";
import { type CtList, parseBpfCtList } from "../../helpers/parse/bpf-ct-list.ts";
import type { LbList } from "../../helpers/parse/bpf-lb-list.ts";
import { holderEventLines } from "../../helpers/parse/holder-log.ts";
import { allRules, type IptablesSave, parseIptablesSave } from "../../helpers/parse/iptables-save.ts";
import type { NetstatOutput } from "../../helpers/parse/netstat.ts";
import { parseProcNetTcp } from "../../helpers/parse/proc-net-tcp.ts";
import type { ConfigMatch } from "../../helpers/properties/config.ts";
import type { ByVersion } from "../../helpers/properties/expectation.ts";
import { ipv6Of, ipv6Only } from "../../helpers/properties/family.ts";
import {
  DUAL,
  DUAL_STACK,
  HOSTNS_ONLY_SOCKET_LB,
  POD_SOCKET_LB,
  requires,
} from "../../helpers/properties/requirements.ts";
import {
  CILIUM_AT,
  FAST_FAIL_TOLERANCE,
  KPR_FALSE_CLUSTERIP,
  KPR_GUIDE,
  KUBE_PROXY_PROXIER,
  LB_NO_SERVICE,
  SETRETVAL_ISSUE,
  SETRETVAL_WHY,
  SOCK6_NO_BACKEND,
  UP,
} from "../../helpers/properties/sources.ts";
import { ctQuotes, lbRows, RecordError } from "../../helpers/records/common.ts";
import {
  derive,
  type EvidenceItem,
  type Quote,
  RawText,
  type Read,
  read,
} from "../../helpers/records/evidence.ts";
import type { Evidenced, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import { socketPeerSide } from "../04-holder/holder.topic.ts";
import { errnoObservation } from "../07-ghost/ghost.topic.ts";
import type { Ipv6Record } from "./ipv6.records.ts";
import { records } from "./ipv6.records.ts";

/** web6's NodePort (manifests/ipv6.yaml) and the holder6's source port: apart from the IPv4 topics' 30780 and 40404. */
export const WEB6_NODE_PORT = 30786;
export const HOLDER6_PORT = 40406;

/** Every property here is about the IPv6 family: it applies where the cluster has both families. */
const BOTH_MODES = requires(DUAL_STACK);

/**
 * Who translates a Pod's connect() to an IPv6 ClusterIP, as for IPv4 (the holder and ghost topics): socket LB
 * with full coverage in kpr (the connect6 hook), nothing beside kube-proxy (socket LB off: bpf_lxc translates
 * per packet). Host-namespace-only coverage leaves the Pod's connect() to per-packet LB.
 */
const POD_LB = requires(POD_SOCKET_LB, DUAL_STACK);
const HOSTNS_ONLY = { ...HOSTNS_ONLY_SOCKET_LB, ...DUAL_STACK.assumes.kpr } as const satisfies ConfigMatch;
const SOCK6_WHY =
  "bpf_sock.c's cgroup/connect6 program (cil_sock6_connect → __sock6_xlate_fwd) translates an IPv6 socket's connect() as cil_sock4_connect does an IPv4 one; it is attached with socket LB where IPv6 is enabled (pkg/socketlb/socketlb.go: the connect6, sendmsg6, recvmsg6, getpeername6 programs under EnableIPv6)";
const HOSTNS_ONLY_WHY =
  "socketLB.hostNamespaceOnly=true: __sock6_xlate_fwd returns before translating a socket outside the host network namespace (`if (is_defined(ENABLE_SOCKET_LB_HOST_ONLY) && !in_hostns) return -ENXIO`, as __sock4_xlate_fwd), so the Pod's IPv6 packets meet bpf_lxc's per-packet LB, as beside kube-proxy";

/** What a Pod's connect() to an IPv6 ClusterIP without backends gets from per-packet LB (bpf_lxc). */
const GHOST_EXIT_PER_PACKET: ByVersion = { default: { eq: 7 } };
const GHOST_ERRNO_PER_PACKET: ByVersion = { default: { eq: "ECONNREFUSED" } };

/**
 * Where the ghost pairs part (family.differs): where per-packet LB answers the Pod (beside kube-proxy; with socket
 * LB for the host namespace only), 1.20.2 loses the IPv4 twin's reject, not this one's.
 */
const ICMP4_ONLY =
  "where per-packet LB answers, 1.20.2 loses the IPv4 twin's ICMP reject (a known issue: generate_icmp4_reply cuts it short, cilium PR 48426); the ICMPv6 reject of the IPv6 path is built apart and arrives (suites/bundles/profiles/dual-stack/kube-proxy, 1.20.2: ghost.fails-fast exit 28, ipv6.ghost-fails-fast exit 7)";
/** Why web6's slots are a list held to web's Pods where the IPv4 twin counts two. */
const SLOTS_DIFFER =
  "service-map runs before scale and counts web's two slots; this topic runs after scale and holder, so it holds the slots to web's Pods as it finds them (true), whatever their number";

export const topic = defineTopic({
  name: "ipv6",
  family: "ipv6",
  title:
    "The IPv6 family of a dual-stack cluster: web's IPv6 ClusterIP and NodePort, a held connection and a Service without backends, translated as their IPv4 twins",
  source: UP(
    `the IPv4 facts, asked of the IPv6 family: Cilium docs ${KPR_GUIDE}; ${CILIUM_AT}/bpf/bpf_sock.c (cil_sock6_*), ${CILIUM_AT}/bpf/lib/lb.h (lb6_*)`,
  ),
  deploys: ["ipv6.yaml", "holder.yaml"],
  steps: [
    { on: "api", run: "get pods -n <ns> -l app=web", for: "web's Pods and their IPv6 addresses" },
    { on: "api", run: "get service web6 -n <ns>", for: "web6's IPv6 ClusterIP and NodePort" },
    { on: "api", run: "get service ghost6 -n <ns>", for: "ghost6's IPv6 ClusterIP" },
    {
      on: "agent",
      run: "cilium-dbg bpf lb list",
      for: "web6's backend slots (polled) and NodePort frontends",
    },
    { on: "pod", run: "curl -sS -v -o /dev/null --max-time 5", for: "web6 and ghost6 from the probe Pod" },
    { on: "api", run: "get pod holder6 -n <ns>", for: "holder6's IPv6 address (its connection's source)" },
    { on: "kubectl", run: "-n <ns> logs holder6", for: "holder6's `connected` line (polled)" },
    { on: "pod", run: "cat /proc/net/tcp6", for: "holder6's socket and its peer" },
    { on: "agent", run: "cilium-dbg bpf ct list global", for: "holder6's conntrack entries" },
    { on: "api", run: "get nodes", for: "the nodes' IPv6 InternalIPs" },
    { on: "node", run: "curl -sS -v -o /dev/null --max-time 5", for: "web6's NodePort on another node" },
    { on: "node", run: "ip6tables-save", for: "kube-proxy's rules for web6" },
  ],
  records,
  schedule: {
    after: ["holder"],
    why: "it reads web's Pods as they are and expects web6's slots to equal them: web must have reached the four replicas scale and holder leave (a scale beside it would change the backends). Its own Services, probe and holder (holder6, source port 40406, NodePort 30786) are apart from every IPv4 topic's, and IPv6 rules and maps are apart from the IPv4 ones the others count",
  },
  shared: { counts: ["web backends"] },
  observe: observeIpv6,
  properties: [
    {
      id: "ipv6.backend-slots",
      claim:
        "The agent's LB map holds web6's IPv6 ClusterIP with one slot per web Pod, at the Pods' IPv6 addresses",
      source: UP(
        `${CILIUM_AT}/bpf/lib/lb.h (lb6_key: backend_slot 0 is the frontend, each slot ≥ 1 a backend); ${CILIUM_AT}/cilium-dbg/cmd/bpf_lb_list.go`,
      ),
      why: "Cilium's service map holds every ClusterIP of each enabled family with its backends in both modes (with KPR=false it still serves ClusterIPs per packet in bpf_lxc); an IPv6 frontend lives in the lb6 maps and prints bracketed (cilium-dbg bpf lb list, https://github.com/cilium/cilium/blob/v1.20.2/cilium-dbg/cmd/bpf_lb_list.go)",
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      config: { assumes: BOTH_MODES },
      family: ipv6Of("service-map.two-backends", {
        kpr: SLOTS_DIFFER,
        "kube-proxy": SLOTS_DIFFER,
      }),
      needs: ["ipv6"],
      observe: (r) => {
        const v = r.get("ipv6");
        const same = JSON.stringify([...v.slots].sort()) === JSON.stringify([...v.web_pods].sort());
        return {
          value: same ? true : `slots [${v.slots.join(", ")}], Pods [${v.web_pods.join(", ")}]`,
          evidence: [...r.evidence("ipv6", "slots"), ...r.evidence("ipv6", "web_pods")],
        };
      },
    },
    {
      id: "ipv6.clusterip-http",
      claim: "A Pod's request to web6's IPv6 ClusterIP is answered (HTTP 200)",
      source: UP(
        `Cilium docs ${KPR_FALSE_CLUSTERIP}; ${CILIUM_AT}/bpf/bpf_sock.c#L1177-L1178 (cil_sock6_connect)`,
      ),
      why: "socket LB (kpr) or bpf_lxc per packet (beside kube-proxy) translates the IPv6 VIP to a web Pod's IPv6 address, as for IPv4",
      expect: { kpr: { eq: 200 }, "kube-proxy": { eq: 200 } },
      config: { assumes: BOTH_MODES },
      family: ipv6Only(
        "the IPv4 topics judge a Pod's request to web's ClusterIP by who translated it (translation.pod-by-ebpf, holder), not by its HTTP status alone",
      ),
      needs: ["ipv6"],
      observe: (r) => ({
        value: r.get("ipv6").clusterip_http,
        evidence: r.evidence("ipv6", "clusterip_http"),
      }),
    },
    {
      id: "ipv6.holder-app-sees-clusterip",
      claim: "getpeername() in holder6 returns the IPv6 ClusterIP:80 it dialled",
      source: UP(
        `${CILIUM_AT}/bpf/bpf_sock.c#L1295-L1296 (cil_sock6_getpeername); ${CILIUM_AT}/pkg/socketlb/socketlb.go`,
      ),
      why: `socket LB reverse-translates getpeername (cil_sock6_getpeername) in kpr; per-packet DNAT leaves the socket on the VIP beside kube-proxy. ${SOCK6_WHY}`,
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      config: { assumes: BOTH_MODES },
      family: ipv6Of("holder.app-sees-clusterip"),
      needs: ["ipv6"],
      observe: (r) => {
        const v = r.get("ipv6");
        return {
          value: v.holder_app_peer === formatEndpoint(v.web6_cluster_ip, WEB_PORT),
          evidence: [...r.evidence("ipv6", "holder_app_peer"), ...r.evidence("ipv6", "web6_cluster_ip")],
        };
      },
    },
    {
      id: "ipv6.holder-socket-peer",
      claim:
        "holder6's kernel socket (/proc/net/tcp6) points at the backend Pod's IPv6 address with socket LB, at the IPv6 ClusterIP without it",
      source: UP(
        `${CILIUM_AT}/bpf/bpf_sock.c#L1177-L1178 (cil_sock6_connect); ${CILIUM_AT}/pkg/socketlb/socketlb.go`,
      ),
      why: SOCK6_WHY,
      expect: { kpr: { eq: "backend" }, "kube-proxy": { eq: "cluster-ip" } },
      config: {
        assumes: POD_LB,
        cases: [
          {
            when: HOSTNS_ONLY,
            expect: { kpr: { eq: "cluster-ip" } },
            claim:
              "holder6's kernel socket points at the IPv6 ClusterIP: socket LB covers only the host namespace, so the Pod's connect() keeps the VIP and its packets are translated",
            why: HOSTNS_ONLY_WHY,
          },
        ],
      },
      family: ipv6Of("holder.socket-peer"),
      needs: ["ipv6"],
      observe: (r) => {
        const v = r.get("ipv6");
        return {
          value: socketPeerSide(v.holder_socket_peer, v.holder_backend, v.web6_cluster_ip),
          evidence: [
            ...r.evidence("ipv6", "holder_socket_peer"),
            ...r.evidence("ipv6", "holder_backend"),
            ...r.evidence("ipv6", "web6_cluster_ip"),
          ],
        };
      },
    },
    {
      id: "ipv6.holder-svc-entries",
      claim:
        "TCP SVC conntrack entries for holder6's connection: none with socket LB (its packets never carry the VIP), one with per-packet LB",
      source: UP(
        `${CILIUM_AT}/bpf/lib/lb.h#L1432-L1507 (lb6_local: the CT_SERVICE entry); ${CILIUM_AT}/pkg/maps/ctmap/types.go (SVC entries)`,
      ),
      why: "SVC entries are written by the per-packet service lookup (lb6_local in bpf_lxc); socket LB bypasses it, as for IPv4",
      expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 1 } },
      config: {
        assumes: POD_LB,
        cases: [
          {
            when: HOSTNS_ONLY,
            expect: { kpr: { eq: 1 } },
            claim:
              "One TCP SVC conntrack entry for holder6's connection: socket LB covers only the host namespace, so the Pod's packets carry the VIP and bpf_lxc's per-packet lookup writes it",
            why: HOSTNS_ONLY_WHY,
          },
        ],
      },
      family: ipv6Of("holder.svc-entries"),
      needs: ["ipv6"],
      observe: (r) => ({
        value: r.get("ipv6").holder_svc_entries,
        evidence: r.evidence("ipv6", "holder_svc_entries"),
      }),
    },
    {
      id: "ipv6.ghost-fails-fast",
      claim:
        "curl from a Pod to ghost6's IPv6 ClusterIP (no backends) fails with exit 7 (refused/unreachable), not 28 (timeout): an answer, not a wait (how soon: ipv6.ghost-seconds)",
      source: UP(`${SOCK6_NO_BACKEND} (socket LB: -EHOSTUNREACH); ${LB_NO_SERVICE}`),
      why: "socket LB refuses connect() (__sock6_xlate_fwd: no backend → -EHOSTUNREACH); per-packet LB answers an ICMPv6 destination unreachable for the Pod (tail_no_service_ipv6)",
      expect: { kpr: { eq: 7 }, "kube-proxy": GHOST_EXIT_PER_PACKET },
      config: {
        assumes: POD_LB,
        cases: [
          {
            when: HOSTNS_ONLY,
            expect: { kpr: GHOST_EXIT_PER_PACKET },
            claim:
              "curl from a Pod to ghost6's IPv6 ClusterIP fails with exit 7: socket LB covers only the host namespace, so bpf_lxc answers the Pod's SYN with an ICMPv6 reject (how soon: ipv6.ghost-seconds)",
            why: HOSTNS_ONLY_WHY,
          },
        ],
      },
      family: ipv6Of("ghost.fails-fast", { kpr: ICMP4_ONLY, "kube-proxy": ICMP4_ONLY }),
      needs: ["ipv6"],
      observe: (r) => ({ value: r.get("ipv6").ghost_exit, evidence: r.evidence("ipv6", "ghost_exit") }),
    },
    {
      id: "ipv6.ghost-seconds",
      tolerance: FAST_FAIL_TOLERANCE,
      claim:
        "The probe Pod's request to ghost6 fails in under 0.1 s, as the IPv4 ghost's do: a refusal, not a SYN retransmitted",
      source: UP(`${SOCK6_NO_BACKEND} (socket LB: -EHOSTUNREACH); ${LB_NO_SERVICE}`),
      why: "held to the IPv4 ghost's bound (ghost.seconds: every fast failure recorded took 0.06–6.5 ms; 0.1 s is 10× under TCP's 1 s initial retransmission timeout, RFC 6298 §2.1): socket LB answers in connect(), bpf_lxc's ICMPv6 reject is the node's own reply. ipv6.ghost-fails-fast passed at 1.03 s on the dual-stack kube-proxy bundles (one SYN retransmission), which only a seconds bound can see",
      expect: { kpr: { lte: 0.1 }, "kube-proxy": { lte: 0.1 } },
      config: {
        assumes: POD_LB,
        cases: [
          {
            when: HOSTNS_ONLY,
            expect: { kpr: { lte: 0.1 } },
            claim: "The probe Pod's request to ghost6 is refused per packet by bpf_lxc in under 0.1 s",
            why: HOSTNS_ONLY_WHY,
          },
        ],
      },
      family: ipv6Of("ghost.seconds", { kpr: ICMP4_ONLY, "kube-proxy": ICMP4_ONLY }),
      needs: ["ipv6"],
      observe: (r) => {
        const v = r.get("ipv6");
        if (v.ghost_seconds === null)
          return { value: null, evidence: r.evidence("ipv6", "ghost_seconds"), skip: "curl printed no time" };
        return {
          value: v.ghost_seconds,
          evidence: [...r.evidence("ipv6", "ghost_seconds"), ...r.evidence("ipv6", "ghost_exit")],
        };
      },
    },
    {
      id: "ipv6.ghost-errno",
      claim:
        "The failure differs by path as for IPv4: socket LB refuses connect() with EHOSTUNREACH, per-packet LB's ICMPv6 reject gives ECONNREFUSED",
      source: UP(`${SOCK6_NO_BACKEND} (socket LB: -EHOSTUNREACH); ${LB_NO_SERVICE}`),
      why: `the connect6 hook sets its errno as the connect4 one does (try_set_retval), so the versions whose hook cannot set it answer EPERM for IPv6 too: ${SETRETVAL_WHY}`,
      expect: {
        kpr: {
          default: { eq: "EHOSTUNREACH" },
          byMinor: { "1.18": SETRETVAL_ISSUE("connect()", "EHOSTUNREACH", "never fixed in 1.18") },
          byPatch: [
            {
              from: "1.19.0",
              to: "1.19.3",
              ...SETRETVAL_ISSUE("connect()", "EHOSTUNREACH", "fixed in 1.19.4"),
            },
          ],
        },
        "kube-proxy": GHOST_ERRNO_PER_PACKET,
      },
      config: {
        assumes: POD_LB,
        cases: [
          {
            when: HOSTNS_ONLY,
            expect: { kpr: GHOST_ERRNO_PER_PACKET },
            claim:
              "The Pod's connect() to ghost6 fails with ECONNREFUSED, the per-packet LB's ICMPv6 reject: socket LB covers only the host namespace",
            why: HOSTNS_ONLY_WHY,
          },
        ],
      },
      family: ipv6Of("ghost.errno", { kpr: ICMP4_ONLY, "kube-proxy": ICMP4_ONLY }),
      needs: ["ipv6"],
      observe: (r) =>
        errnoObservation(
          { errno: r.get("ipv6").ghost_errno, evidence: r.evidence("ipv6", "ghost_errno") },
          { exit: r.get("ipv6").ghost_exit, evidence: r.evidence("ipv6", "ghost_exit") },
          "curl printed no connect() errno; the exit code is judged by ipv6.ghost-fails-fast",
        ),
    },
    {
      id: "ipv6.nodeport-http",
      claim: "web6's NodePort on another node's IPv6 InternalIP answers HTTP 200 to a node",
      source: UP(
        `Cilium docs ${KPR_GUIDE}#nodeport-devices-port-and-bind-settings; ${KUBE_PROXY_PROXIER} (KUBE-NODEPORTS, the IPv6 proxier of a dual-stack node)`,
      ),
      why: "kpr: the node's connect6 is translated by socket LB (NodePort frontends on each node address, host-namespace-only coverage included); beside kube-proxy, its ip6tables KUBE-NODEPORTS rules DNAT it",
      expect: { kpr: { eq: 200 }, "kube-proxy": { eq: 200 } },
      config: {
        assumes: {
          kpr: { socketLB: ["on", "hostns-only"], ...DUAL },
          "kube-proxy": { kubeProxy: ["iptables"], ...DUAL },
        },
      },
      family: ipv6Of("nodeport.http-200"),
      needs: ["ipv6"],
      observe: (r) => ({
        value: r.get("ipv6").nodeport_http,
        evidence: [...r.evidence("ipv6", "nodeport_http"), ...r.evidence("ipv6", "nodeport_target")],
      }),
    },
    {
      id: "ipv6.nodeport-lb-frontends",
      claim:
        "web6's NodePort is in the agent's LB map (IPv6 frontends) with kube-proxy replacement, and absent beside kube-proxy",
      source: UP(
        `Cilium docs ${KPR_GUIDE}#nodeport-devices-port-and-bind-settings; cilium PRs 41380, 41277 (1.19), https://github.com/cilium/cilium/pull/41380, https://github.com/cilium/cilium/pull/41277`,
      ),
      why: "BPF NodePort is part of kube-proxy replacement only since 1.19 (cilium PRs 41380, 41277), for each enabled family",
      expect: { kpr: { eq: true }, "kube-proxy": { eq: false } },
      config: { assumes: BOTH_MODES },
      family: ipv6Of("nodeport.agent-entry"),
      needs: ["ipv6"],
      observe: (r) => ({
        value: r.get("ipv6").nodeport_lb_frontends.length > 0,
        evidence: r.evidence("ipv6", "nodeport_lb_frontends"),
      }),
    },
    {
      id: "ipv6.kube-proxy-rules",
      claim: "ip6tables holds kube-proxy's rules for web6 beside kube-proxy, and none without it",
      source: UP(KUBE_PROXY_PROXIER),
      why: "kube-proxy's iptables mode runs one proxier per family (the IPv6 one writes ip6tables), its rules commented with the Service's namespace/name:port",
      expect: { kpr: { eq: 0 }, "kube-proxy": { gte: 1 } },
      config: {
        // nftables mode writes the IPv6 family's rules to its ip6 table, not ip6tables: not modelled here
        assumes: {
          kpr: { kubeProxy: ["none"], ...DUAL },
          "kube-proxy": { kubeProxy: ["iptables"], ...DUAL },
        },
      },
      family: ipv6Of("iptables.kube-svc-lines"),
      needs: ["ipv6"],
      observe: (r) => ({
        value: r.get("ipv6").kube_proxy_rules,
        evidence: r.evidence("ipv6", "kube_proxy_rules"),
      }),
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === "object" && v !== null ? (v as Json) : {});
const list = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);

/** An IPv6 address (of a Pod's podIPs, a node's addresses, a Service's clusterIPs) and the line that gives it. */
interface V6 {
  ip: string;
  evidence: Quote[];
}

/**
 * The IPv6 podIP of each Pod of a `get pods` List, or of one Pod, with its name (a Pod without one is an error
 * naming it): status.podIP is the first family's (IPv4 on kind's dual-stack clusters), so it is not that.
 */
export function podIpv6s(raw: RawText): { name: string; node: string; v6: V6 }[] {
  const j = JSON.parse(raw.text) as Json;
  const listed = Array.isArray(j.items);
  return (listed ? list(j.items) : [j]).map((p, i) => {
    const name = String(obj(p.metadata).name ?? "");
    const ips = list(obj(p.status).podIPs);
    const at = ips.findIndex((x) => String(x.ip ?? "").includes(":"));
    if (at < 0) throw new RecordError("ipv6", "web_pods", `Pod ${name} has no IPv6 address in status.podIPs`);
    const q = raw.jsonQuote([...(listed ? ["items", i] : []), "status", "podIPs", at, "ip"]);
    return {
      name,
      node: String(obj(p.spec).nodeName ?? ""),
      v6: { ip: canonicalIp(String(ips[at]?.ip)), evidence: q ? [q] : [] },
    };
  });
}

/** A Service's IPv6 ClusterIP (spec.clusterIPs) and its first port's nodePort, each with its line. */
export function serviceIpv6(raw: RawText, name: string): { v6: V6; nodePort: number | null } {
  const j = JSON.parse(raw.text) as Json;
  const spec = obj(j.spec);
  const ips = Array.isArray(spec.clusterIPs) ? (spec.clusterIPs as unknown[]).map(String) : [];
  const at = ips.findIndex((x) => x.includes(":"));
  if (at < 0) throw new RecordError("ipv6", "web6_cluster_ip", `service ${name} has no IPv6 ClusterIP`);
  const q = raw.jsonQuote(["spec", "clusterIPs", at]);
  const np = list(spec.ports)[0]?.nodePort;
  return {
    v6: { ip: canonicalIp(ips[at] as string), evidence: q ? [q] : [] },
    nodePort: typeof np === "number" ? np : null,
  };
}

/** Each node's IPv6 InternalIP (a node without one is left out). */
export function nodeIpv6s(raw: RawText): { name: string; v6: V6 }[] {
  const j = JSON.parse(raw.text) as Json;
  return list(j.items).flatMap((n, i) => {
    const addrs = list(obj(n.status).addresses);
    const at = addrs.findIndex((a) => a.type === "InternalIP" && String(a.address ?? "").includes(":"));
    if (at < 0) return [];
    const q = raw.jsonQuote(["items", i, "status", "addresses", at, "address"]);
    return [
      {
        name: String(obj(n.metadata).name ?? ""),
        v6: { ip: canonicalIp(String(addrs[at]?.address)), evidence: q ? [q] : [] },
      },
    ];
  });
}

/** The families the config topic read, or null where it did not run or could not read them. */
function families(ctx: RunContext): string[] | null {
  const c = ctx.earlierRecords().config;
  return c?.record.ipFamilies.value ?? null;
}

export async function observeIpv6(ctx: RunContext): Promise<RecordSet> {
  const fam = families(ctx);
  if (fam !== null && !fam.includes("ipv6")) {
    ctx.log(`the cluster has no IPv6 (IP families ${fam.join("+")}): nothing deployed, nothing observed`);
    return {};
  }
  // web's Pods as the earlier topics left them; deployed here (at two) where no topic did
  const webPods = async () =>
    (await apiJsonRaw(ctx, { resource: "pods", namespace: ctx.namespace, selector: "app=web" })).raw;
  let webRaw = await webPods();
  if (list((JSON.parse(webRaw.text) as Json).items).length === 0) {
    ctx.log("web is not deployed (the topics that deploy it did not run before this one): deploying it at 2");
    await ensureWeb(ctx, 2);
    webRaw = await webPods();
  }
  const web = podIpv6s(webRaw);
  await apply(ctx, renderManifest("ipv6.yaml", ctx.namespace));
  const web6 = serviceIpv6(
    (await apiJsonRaw(ctx, { resource: "service", name: "web6", namespace: ctx.namespace })).raw,
    "web6",
  );
  const ghost6 = serviceIpv6(
    (await apiJsonRaw(ctx, { resource: "service", name: "ghost6", namespace: ctx.namespace })).raw,
    "ghost6",
  );
  const probe = await waitPodReady(ctx, "probe6");
  const frontend = formatEndpoint(web6.v6.ip, WEB_PORT);
  const { lb } = await waitSlots(
    ctx,
    probe.node,
    frontend,
    web.map((p) => formatEndpoint(p.v6.ip, TARGET_PORT)),
  );
  const onProbe = { kind: "pod", namespace: ctx.namespace, pod: "probe6" } as const;
  const web6Curl = await curlFrom(ctx, onProbe, `http://${frontend}/hostname`);
  const ghostCurl = await curlFrom(ctx, onProbe, `http://${formatEndpoint(ghost6.v6.ip, WEB_PORT)}/`);
  // a held connection from a fixed source port, read from both ends of the translation
  const holder = await ensureHolder(ctx, web6.v6.ip, { name: "holder6", sourcePort: HOLDER6_PORT });
  // its IPv6 address: the source of its connection to the IPv6 VIP (status.podIP is its IPv4 one)
  const [holder6] = podIpv6s(
    (await apiJsonRaw(ctx, { resource: "pod", name: "holder6", namespace: ctx.namespace })).raw,
  );
  if (!holder6) throw new RecordError("ipv6", "holder_socket_peer", "no Pod holder6");
  const holderLog = await holderConnected(ctx, "holder6");
  const tcp6 = read(
    RawText.stdout(
      await ctx.exec.run({
        target: { kind: "pod", namespace: ctx.namespace, pod: "holder6" },
        argv: ["cat", "/proc/net/tcp6"],
      }),
    ),
    parseProcNetTcp,
  );
  const ct = read(await ciliumDbgRaw(ctx, holder.node, ["bpf", "ct", "list", "global"]), parseBpfCtList);
  // the NodePort on another node's IPv6 address, from the probe's node
  const nodesRaw = (await apiJsonRaw(ctx, { resource: "nodes" })).raw;
  const other = nodeIpv6s(nodesRaw).find((n) => n.name !== probe.node);
  if (!other) throw new RecordError("ipv6", "nodeport_target", "no other node has an IPv6 InternalIP");
  if (web6.nodePort === null) throw new RecordError("ipv6", "nodeport_target", "web6 has no nodePort");
  const npTarget = formatEndpoint(other.v6.ip, web6.nodePort);
  const npCurl = await curlFrom(ctx, { kind: "node", node: probe.node }, `http://${npTarget}/hostname`);
  const ip6t = read(RawText.stdout(await onNode(ctx, probe.node, ["ip6tables-save"])), parseIptablesSave);
  const lbAfter = await lbList(ctx, probe.node);
  return {
    ipv6: buildIpv6Record({
      namespace: ctx.namespace,
      web: web.map((p) => p.v6),
      web6: web6.v6,
      ghost6: ghost6.v6,
      lb,
      lbAfter,
      web6Curl,
      ghostCurl,
      holderIp: holder6.v6.ip,
      holderEvidence: holder6.v6.evidence,
      holderLog,
      tcp6,
      ct,
      npTarget: { text: npTarget, evidence: [...other.v6.evidence] },
      nodePort: web6.nodePort,
      npCurl,
      ip6tables: ip6t,
    }),
  };
}

/** Ours: the IPv6 family's record, every field by the lines that say it. */
export function buildIpv6Record(input: {
  namespace: string;
  web: V6[];
  web6: V6;
  ghost6: V6;
  /** bpf lb list once web6's slots converged, and again after the NodePort probe. */
  lb: Read<LbList>;
  lbAfter: Read<LbList>;
  web6Curl: CurlRead;
  ghostCurl: CurlRead;
  holderIp: string;
  holderEvidence: EvidenceItem[];
  holderLog: RawText;
  tcp6: Read<NetstatOutput>;
  ct: Read<CtList>;
  npTarget: { text: string; evidence: EvidenceItem[] };
  nodePort: number;
  npCurl: CurlRead;
  ip6tables: Read<IptablesSave>;
}): Evidenced<Ipv6Record> {
  const canon = (t: string) => canonicalEndpoint(t) ?? t;
  const frontend = formatEndpoint(input.web6.ip, WEB_PORT);
  const svc = input.lb.parsed.services.find((s) => canon(s.frontend) === frontend && s.protocol !== "ANY");
  if (!svc) throw new RecordError("ipv6", "slots", `no ${frontend} frontend in bpf lb list`);
  const slots = svc.backends.map((b) => canon(b.address ?? "?"));
  const client = formatEndpoint(canonicalIp(input.holderIp), HOLDER6_PORT);
  const conn = holderEventLines(input.holderLog.text)
    .filter((e) => e.event.event === "connected")
    .at(-1);
  if (!conn?.event.peer)
    throw new RecordError("ipv6", "holder_app_peer", "holder6's log has no `connected` event");
  const sock = input.tcp6.parsed.connections.find(
    (c) => canon(c.local) === client && c.state === "ESTABLISHED",
  );
  const mine = (dir: string) =>
    input.ct.parsed.entries.filter(
      (e) => e.protocol === "TCP" && e.direction === dir && canon(e.source) === client,
    );
  const out = mine("OUT")[0];
  const svcEntries = mine("SVC");
  const ctQ = (dir: string) =>
    ctQuotes(input.ct.raw, (e) => e.protocol === "TCP" && e.direction === dir && canon(e.source) === client);
  const npFrontends = input.lbAfter.parsed.services.filter((s) => {
    const ep = canonicalEndpoint(s.frontend);
    return ep?.startsWith("[") === true && ep.endsWith(`]:${input.nodePort}`);
  });
  const rules = allRules(input.ip6tables.parsed).filter((r) =>
    (r.comment ?? "").startsWith(`${input.namespace}/web6`),
  );
  const curlEvidence = (c: CurlRead) =>
    c.evidence.length > 0 ? c.evidence : [derive("curl printed nothing to judge", c.stdout)];
  const errno = curlLineQuote(input.ghostCurl, input.ghostCurl.at.errno);
  const w = curlLineQuote(input.ghostCurl, input.ghostCurl.at.writeOut);
  return {
    record: {
      web6_cluster_ip: input.web6.ip,
      web_pods: input.web.map((p) => formatEndpoint(p.ip, TARGET_PORT)),
      slots,
      clusterip_http: input.web6Curl.httpCode,
      holder_app_peer: canon(conn.event.peer),
      holder_socket_peer: sock ? canon(sock.foreign) : null,
      holder_backend: out ? canon(out.destination) : null,
      holder_svc_entries: svcEntries.length,
      ghost6_cluster_ip: input.ghost6.ip,
      ghost_exit: input.ghostCurl.exitCode,
      ghost_errno: input.ghostCurl.errno,
      ghost_seconds: input.ghostCurl.timeTotal,
      nodeport_target: input.npTarget.text,
      nodeport_http: input.npCurl.httpCode,
      nodeport_lb_frontends: npFrontends.map((s) => canon(s.frontend)),
      kube_proxy_rules: rules.length,
    },
    evidence: {
      web6_cluster_ip: input.web6.evidence,
      web_pods: input.web.flatMap((p) => p.evidence),
      slots: lbRows(input.lb.raw, svc),
      clusterip_http: curlEvidence(input.web6Curl),
      holder_app_peer: [input.holderLog.quote(conn.line)],
      holder_socket_peer: sock
        ? [...input.holderEvidence, input.tcp6.raw.quote(sock.line)]
        : [derive(`no established socket from ${client} in holder6's /proc/net/tcp6`, input.tcp6.raw)],
      holder_backend: out ? ctQ("OUT") : [derive(`no TCP OUT conntrack entry from ${client}`, input.ct.raw)],
      holder_svc_entries:
        svcEntries.length > 0
          ? ctQ("SVC")
          : [derive(`no TCP SVC conntrack entry from ${client}`, input.ct.raw)],
      ghost6_cluster_ip: input.ghost6.evidence,
      ghost_exit: curlEvidence(input.ghostCurl),
      ghost_errno: errno ? [errno] : [derive("curl -v named no connect() errno", input.ghostCurl.stderr)],
      ghost_seconds: w ? [w] : [],
      nodeport_target: input.npTarget.evidence,
      nodeport_http: curlEvidence(input.npCurl),
      nodeport_lb_frontends:
        npFrontends.length > 0
          ? npFrontends.flatMap((s) => lbRows(input.lbAfter.raw, s))
          : [derive(`no IPv6 frontend on port ${input.nodePort} in bpf lb list`, input.lbAfter.raw)],
      kube_proxy_rules:
        rules.length > 0
          ? rules.map((r) => input.ip6tables.raw.quote(r.line))
          : [derive(`no ip6tables rule commented ${input.namespace}/web6`, input.ip6tables.raw)],
    },
  };
}
