// One file over 450 lines: a topic reads top to bottom in one file: its declaration, then its observation and builders (docs/contributing.md)
/**
 * Topic "ghost" — The lab, step 7.
 * A Service without backends: refused at once (and by whom), or a timeout under the opt-in drop profile.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */

import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { clusterIp } from "../../helpers/observe/cluster.ts";
import { DEADLINES, type RunContext, waitFor } from "../../helpers/observe/context.ts";
import { iptablesSaveRaw, onNode } from "../../helpers/observe/node.ts";
import { type CurlRead, curlFrom, curlLineQuote, lbList, newerStep } from "../../helpers/observe/steps.ts";
import { ensureGhostAndProbe, WEB_PORT } from "../../helpers/observe/workloads.ts";
import { formatEndpoint } from "../../helpers/parse/address.ts";
import type { LbList } from "../../helpers/parse/bpf-lb-list.ts";
import { type AgentConfig, parseConfig } from "../../helpers/parse/config.ts";
import {
  allRules,
  type IptablesRule,
  type IptablesSave,
  parseIptablesSave,
} from "../../helpers/parse/iptables-save.ts";
import type { ServiceList } from "../../helpers/parse/service-list.ts";
import { parseServiceListJson } from "../../helpers/parse/service-list-json.ts";
import { type U64, u64Compare, u64Diff } from "../../helpers/parse/u64.ts";
import type { ByVersion } from "../../helpers/properties/expectation.ts";
import {
  HOSTNS_ONLY_SOCKET_LB,
  hostnsOnlyWhy,
  IPV4_SERVICE,
  POD_SOCKET_LB,
  requires,
} from "../../helpers/properties/requirements.ts";
import {
  FAST_FAIL_TOLERANCE,
  ICMP_TAIL_UPSTREAM,
  ICMP_TAIL_WHY,
  KUBE_PROXY_PROXIER,
  LAB,
  LB_NO_SERVICE,
  SETRETVAL_ISSUE,
  SETRETVAL_WHY,
  SOCK4_NO_BACKEND,
  UP,
  WILDCARD_PR,
} from "../../helpers/properties/sources.ts";
import type { Observation, RecordView } from "../../helpers/properties/types.ts";
import { mergeParts } from "../../helpers/records/catalogue.ts";
import {
  findAgentService,
  lbRows,
  RecordError,
  SERVICE_ID_MEMBERS,
  serviceBackendQuotes,
  serviceQuotes,
} from "../../helpers/records/common.ts";
import { derive, type EvidenceItem, RawText, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidenced, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import type { DatapathRecord } from "../datapath.records.ts";
import { datapathRecords, dp } from "../datapath.records.ts";
import type { GhostRecord } from "./ghost.records.ts";
import { DROP_PROFILE, dropProfile, dropProfileWaits, records } from "./ghost.records.ts";

/** Before 1.19 a ClusterIP has no `<vip>:0/ANY` entry: the wildcard came with 1.19 (its documented behaviour). */
const NO_WILDCARD = {
  kind: "behaviour",
  expect: { eq: false },
  claim: "no `<vip>:0/ANY` wildcard entry: a ClusterIP has only its ports' entries before 1.19",
  why: "the wildcard entry came with 1.19 (cilium PR 40684, https://github.com/cilium/cilium/pull/40684)",
} as const;

/**
 * What a Pod sees when its packets are translated (per-packet LB in bpf_lxc): beside kube-proxy, and in kpr with
 * socket LB for the host namespace only. Declared once, so Cilium 1.20.2's lost ICMP reject is the same known
 * issue in both places.
 */
const EXIT_PER_PACKET: ByVersion = {
  default: { eq: 7 },
  byPatch: [
    {
      from: "1.20.2",
      to: "1.20.2",
      kind: "known-issue",
      expect: { eq: 28 },
      claim:
        "curl to the ghost ClusterIP hangs until its 5 s limit (exit 28): the ICMP reject Cilium builds for the Pod is discarded",
      why: ICMP_TAIL_WHY,
      upstream: ICMP_TAIL_UPSTREAM,
    },
  ],
};
const ERRNO_PER_PACKET: ByVersion = {
  default: { eq: "ECONNREFUSED" },
  byPatch: [
    {
      from: "1.20.2",
      to: "1.20.2",
      kind: "known-issue",
      expect: { eq: "none: timed out (exit 28)" },
      claim: "no errno: the ICMP reject never reaches the Pod, so connect() waits until curl's 5 s limit",
      why: ICMP_TAIL_WHY,
      upstream: ICMP_TAIL_UPSTREAM,
    },
  ],
};
const SECONDS_PER_PACKET: ByVersion = {
  default: { each: { lte: 0.1 } },
  byPatch: [
    {
      from: "1.20.2",
      to: "1.20.2",
      kind: "known-issue",
      expect: { each: { gte: 4.9 } },
      claim: "every probe from the Pod waits for curl's 5 s limit: the ICMP reject never reaches the Pod",
      why: ICMP_TAIL_WHY,
      upstream: ICMP_TAIL_UPSTREAM,
    },
  ],
};

/**
 * Who refuses the probe Pod's connect() (issue 25): the kpr expectations assume socket LB translates a Pod's
 * sockets (on, full coverage), the kube-proxy ones that nothing does (off). Host-namespace-only coverage leaves
 * the Pod's connect() to per-packet LB: those runs get the kube-proxy mode's expectation (bpf_sock.c, bpf_lxc.c: ENABLE_SOCKET_LB_HOST_ONLY).
 */
const POD_LB = requires(POD_SOCKET_LB);
const HOSTNS_ONLY = HOSTNS_ONLY_SOCKET_LB;
const HOSTNS_ONLY_WHY = hostnsOnlyWhy(
  "(bpf_sock.c __sock4_xlate_fwd returns -ENXIO for `is_defined(ENABLE_SOCKET_LB_HOST_ONLY) && !in_hostns`, before its no-backend check), so the probe Pod's SYN meets bpf_lxc's per-packet LB (ENABLE_PER_PACKET_LB with ENABLE_SOCKET_LB_HOST_ONLY, bpf_lxc.c), which answers it as beside kube-proxy, 1.20.2's lost ICMP reject included (https://github.com/cilium/cilium/blob/v1.20.2/bpf/bpf_sock.c#L322, https://github.com/cilium/cilium/blob/v1.20.2/bpf/bpf_lxc.c#L91)",
);

/** ghost is a single-stack IPv4 Service (its manifest asks no ipFamilyPolicy): a dual-stack cluster leaves its entries as they are. */
const IPV4_ONLY = requires(IPV4_SERVICE);

export const topic = defineTopic({
  name: "ghost",
  title:
    "A Service without backends: refused at once (and by whom), or a timeout under the opt-in drop profile",
  source: LAB(7),
  deploys: ["ghost.yaml"],
  steps: [
    { on: "agent", run: "cilium-dbg service list -o json", for: "ghost's frontend (polled)" },
    { on: "pod", run: "curl -sS -v -o /dev/null --max-time 5", for: "connect from the probe Pod" },
    { on: "agent", run: "cilium-dbg config -a", for: "serviceNoBackendResponse" },
    { on: "node", run: "iptables-save", for: "kube-proxy's REJECT rule" },
    { on: "agent", run: "cilium-dbg bpf lb list", for: "ghost's entries in the LB map" },
    {
      on: "node",
      run: "iptables-save -c -t filter",
      for: "kube-proxy's REJECT counter before, between and after",
    },
    {
      on: "node",
      run: "curl -sS -v -o /dev/null --max-time 5",
      for: "probes from the node's host namespace",
    },
    {
      on: "node",
      run: "curl -s --max-time 2 http://127.0.0.1:10249/metrics",
      for: "beside kube-proxy: when it last rewrote its rules (a rewrite resets the REJECT counter mid-window)",
    },
  ],
  records: { ...records, ...datapathRecords },
  schedule: {
    after: [
      "nodeport",
      "loadbalancer",
      "external-ip",
      "traffic-policy",
      "session-affinity",
      "host-network",
      "lifecycle",
      "lifecycle-ports",
    ],
    why: "beside kube-proxy its REJECT counter windows count the filter table's counter whole, and kube-proxy rewrites (and resets) it whenever a Service or its endpoints change: it follows every topic that adds Services or moves web's backends (iptables and scale through nodeport). In the run of the shipped 1.20 bundles (suites/bundles/1.20), beside those topics, kube-proxy rewrote its rules during three of its four Pod windows (17 s each). Otherwise its own Service without backends and its own probe Pod, and the only host traffic to that Service; the probes' timings are the Pod's own (curl's), and the topics that load the cluster (measure-scale, measure-latency, which shares ghost and probe) run alone",
  },
  // its ghost Service makes kube-proxy rewrite its chains once (the counters reset), as any new Service does
  shared: { counts: ["kube-proxy service rules", "web backends"], changes: ["kube-proxy service rules"] },
  observe: observeGhost,
  properties: [
    {
      id: "ghost.no-backends",
      claim: "The agent lists the ghost ClusterIP with zero backends",
      source: LAB(7),
      expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 0 } },
      config: { assumes: IPV4_ONLY },
      needs: ["ghost"],
      observe: (r) => ({ value: r.get("ghost").backends, evidence: r.evidence("ghost", "backends") }),
    },
    {
      id: "ghost.fails-fast",
      claim:
        "curl to the ghost ClusterIP fails with exit 7 (refused/unreachable), not 28 (timeout): an answer, not a wait (how soon: ghost.seconds)",
      source: LAB(7),
      why: "socket LB answers EHOSTUNREACH at connect(); per-packet LB answers an ICMP reject (https://github.com/cilium/cilium/blob/v1.20.2/bpf/bpf_sock.c#L337-L343; https://github.com/cilium/cilium/blob/v1.20.2/bpf/lib/lb.h#L2455-L2477). Under the opt-in drop profile kpr still fails fast (the socket hook refuses whatever serviceNoBackendResponse says: bpf_sock.c, 1.19.7); only kube-proxy mode waits",
      expect: {
        kpr: { eq: 7 },
        "kube-proxy": EXIT_PER_PACKET,
      },
      config: {
        assumes: POD_LB,
        cases: [
          {
            when: HOSTNS_ONLY,
            expect: { kpr: EXIT_PER_PACKET },
            claim:
              "curl from the probe Pod to the ghost ClusterIP fails with exit 7: socket LB covers only the host namespace, so bpf_lxc answers the Pod's SYN with an ICMP reject (how soon: ghost.seconds)",
            why: HOSTNS_ONLY_WHY,
          },
        ],
      },
      needs: ["ghost"],
      observe: (r, mode) => {
        if (dropProfileWaits(r, mode)) return { value: null, evidence: [], skip: DROP_PROFILE };
        return { value: r.get("ghost").curl_exit, evidence: r.evidence("ghost", "curl_exit") };
      },
    },
    {
      id: "ghost.errno",
      claim:
        "The fast failure differs by path: socket LB refuses connect() with EHOSTUNREACH, per-packet LB answers an ICMP reject (ECONNREFUSED)",
      source: UP(
        `${SOCK4_NO_BACKEND} (bpf_sock.c returns -EHOSTUNREACH when a service has no backends); ${LB_NO_SERVICE}`,
      ),
      why: `Cilium 1.18 and 1.19.0-1.19.3 return EPERM instead: ${SETRETVAL_WHY}. With KPR=false on 1.20.2 the reject never arrives and the probe times out (no errno: curl's 5 s limit, exit 28): ${ICMP_TAIL_WHY}`,
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
        "kube-proxy": ERRNO_PER_PACKET,
      },
      config: {
        assumes: POD_LB,
        cases: [
          {
            when: HOSTNS_ONLY,
            expect: { kpr: ERRNO_PER_PACKET },
            claim:
              "The Pod's connect() fails with ECONNREFUSED, the per-packet LB's ICMP reject: socket LB covers only the host namespace, so no socket hook refuses it",
            why: HOSTNS_ONLY_WHY,
          },
        ],
      },
      needs: ["datapath"],
      observe: (r, mode) => {
        if (dropProfileWaits(r, mode)) return { value: null, evidence: [], skip: DROP_PROFILE };
        return errnoObservation(
          { errno: dp(r, "ghost_errno"), evidence: r.evidence("datapath", "ghost_errno") },
          { exit: r.get("ghost").curl_exit, evidence: r.evidence("ghost", "curl_exit") },
          "curl printed no connect() errno (it needs -v); the exit code is judged by ghost.fails-fast",
        );
      },
    },
    {
      id: "ghost.seconds",
      tolerance: FAST_FAIL_TOLERANCE,
      claim:
        "Every probe of the ghost Service from the probe Pod fails in under 0.1 s, far inside curl's 5 s limit",
      source: LAB(7),
      why: "every fast failure recorded on the lab cluster took 0.06–6.5 ms (32 probes in this topic, 80 in measure-latency, six bundles): a refusal needs no round trip off the node (socket LB answers in connect(); per-packet LB's reject is the node's own reply). 0.1 s is 15× the slowest recorded probe (a loaded CI runner) and 10× under TCP's 1 s initial retransmission timeout (RFC 6298 §2.1, Linux TCP_TIMEOUT_INIT), so a probe whose SYN was dropped even once cannot pass; the former bound, 1 s, could not tell that from a refusal",
      expect: {
        kpr: { each: { lte: 0.1 } },
        "kube-proxy": SECONDS_PER_PACKET,
      },
      config: {
        assumes: POD_LB,
        cases: [
          {
            when: HOSTNS_ONLY,
            expect: { kpr: SECONDS_PER_PACKET },
            claim:
              "Every probe of the ghost Service from the probe Pod fails in under 0.1 s: bpf_lxc rejects it per packet on the Pod's own node",
            why: HOSTNS_ONLY_WHY,
          },
        ],
      },
      needs: ["datapath"],
      observe: (r, mode) => {
        if (dropProfileWaits(r, mode)) return { value: null, evidence: [], skip: DROP_PROFILE };
        return probeSeconds(r, "pod");
      },
    },
    {
      id: "ghost.host-seconds",
      tolerance: FAST_FAIL_TOLERANCE,
      claim:
        "Every probe of the ghost Service from a node's host network namespace fails in under 0.1 s: the socket hook (kpr) or kube-proxy's REJECT (kube-proxy mode) refuses it",
      source: UP(
        `${SOCK4_NO_BACKEND} (socket LB); ${KUBE_PROXY_PROXIER} (kube-proxy's REJECT for a Service without endpoints)`,
      ),
      why: "a host process is served by Cilium's socket LB with KPR (connect() refused on the node) and by kube-proxy's filter REJECT beside it (an ICMP reply from the node's own stack): neither needs a round trip off the node, and neither depends on the ICMP reply Cilium builds for a Pod (1.20.2 kept refusing host probes at once on the lab cluster: suites/bundles/1.20/kube-proxy, under 2 ms); 0.1 s as for ghost.seconds",
      expect: { kpr: { each: { lte: 0.1 } }, "kube-proxy": { each: { lte: 0.1 } } },
      config: {
        // the host's connect() is refused by the socket hook in kpr, host-namespace-only coverage included;
        // beside kube-proxy (socket LB off) kube-proxy refuses it
        assumes: {
          kpr: { socketLB: ["on", "hostns-only"] },
          "kube-proxy": { socketLB: ["off"], kubeProxy: ["iptables"] },
        },
        cases: [
          {
            when: { socketLB: ["off"], kubeProxy: ["nftables"] },
            expect: { "kube-proxy": { each: { lte: 0.1 } } },
            claim:
              "Every probe of the ghost Service from a node's host network namespace fails in under 0.1 s: kube-proxy's nftables reject-chain refuses it",
            why: "kube-proxy in nftables mode puts a Service without endpoints in its no-endpoint-services map (`<ip> . tcp . 80 : goto reject-chain`), checked by service-endpoints-check from the filter-output-pre-dnat chain for the host's own packets; reject-chain's `reject` answers from the node's own stack (https://github.com/kubernetes/kubernetes/blob/v1.35.5/pkg/proxy/nftables/proxier.go)",
          },
        ],
      },
      needs: ["datapath"],
      // judged under the opt-in drop profile too: it changes only bpf_lxc's answer to a Pod's SYN, and the host's
      // probes meet the socket hook or kube-proxy's REJECT either way (the drop profile's kube-proxy bundle: refused
      // in 0.2–0.5 ms, where this was once skipped as "the SYN is dropped")
      observe: (r) => {
        const host = probeSeconds(r, "node");
        return host.value.length > 0
          ? host
          : {
              ...host,
              skip: "this bundle has no probe from a node (recorded before the REJECT counter step)",
            };
      },
    },
    {
      id: "ghost.no-backend-response",
      claim: "ServiceNoBackendResponse is reject (the chart default in 1.16–1.20)",
      source: LAB(7),
      why: "an agent option of its own (serviceNoBackendResponse), set by none of the datapath settings the suite reads",
      expect: { kpr: { eq: "reject" }, "kube-proxy": { eq: "reject" } },
      config: "none",
      needs: ["ghost"],
      observe: (r) => {
        if (dropProfile(r)) return { value: null, evidence: [], skip: DROP_PROFILE };
        return {
          value: r.get("ghost").no_backend_response,
          evidence: r.evidence("ghost", "no_backend_response"),
        };
      },
    },
    {
      id: "ghost.kube-proxy-reject-rule",
      claim:
        "kube-proxy adds a filter REJECT 'has no endpoints' rule for ghost; without kube-proxy there is none",
      source: UP(`${KUBE_PROXY_PROXIER} (a filter-table REJECT 'has no endpoints' per Service port)`),
      why: "one `has no endpoints` REJECT per Service port without endpoints (kube-proxy's proxier); recorded on the lab cluster",
      expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 1 } },
      config: {
        // nftables mode keeps the reject as a no-endpoint-services element, not an iptables rule: not modelled
        assumes: { kpr: { kubeProxy: ["none"] }, "kube-proxy": { kubeProxy: ["iptables"] } },
      },
      needs: ["datapath"],
      observe: (r) => ({
        value: dp(r, "ghost_reject_rules"),
        evidence: r.evidence("datapath", "ghost_reject_rules"),
      }),
    },
    {
      id: "ghost.wildcard-entry",
      claim:
        "Since 1.19 each ClusterIP also gets a `<vip>:0/ANY` wildcard entry in bpf lb list that rejects unknown ports",
      source: UP(`${WILDCARD_PR} (1.19.0 CHANGELOG: 'Introduce wildcard service entries')`),
      expect: {
        kpr: {
          default: { eq: true },
          byMinor: { "1.16": NO_WILDCARD, "1.17": NO_WILDCARD, "1.18": NO_WILDCARD },
        },
        "kube-proxy": {
          default: { eq: true },
          byMinor: { "1.16": NO_WILDCARD, "1.17": NO_WILDCARD, "1.18": NO_WILDCARD },
        },
      },
      config: { assumes: IPV4_ONLY },
      needs: ["datapath"],
      observe: (r) => ({
        value: dp(r, "ghost_wildcard_entry"),
        evidence: r.evidence("datapath", "ghost_wildcard_entry"),
      }),
    },
    {
      id: "ghost.reject-counter",
      claim:
        "kube-proxy's REJECT rule answers probes from a node's host namespace but not from a Pod (Cilium answers the Pod's packet first); without kube-proxy there is no such rule",
      source: UP(`${KUBE_PROXY_PROXIER} (the filter REJECT); ${LB_NO_SERVICE}`),
      why: "a Pod's packet meets bpf_lxc's per-packet LB, which replies for a Service without backends before netfilter sees it; the host's packet has no Cilium hook in front (KPR=false: no socket LB) and reaches kube-proxy's filter rule",
      expect: { kpr: { eq: "no REJECT rule" }, "kube-proxy": { eq: "host moves, Pod does not" } },
      config: {
        // the counter is an iptables rule's (nftables mode writes no counters), and the host's packet reaches
        // it only where no socket hook refuses the host's connect() first
        assumes: {
          kpr: { kubeProxy: ["none"] },
          "kube-proxy": { kubeProxy: ["iptables"], socketLB: ["off"] },
        },
      },
      needs: ["datapath"],
      observe: (r) => {
        const c = dp(r, "ghost_reject_counters");
        if (c === null)
          return {
            value: null,
            evidence: [],
            skip: "this bundle predates the REJECT-counter probes (no recorded call)",
          };
        const evidence = r.evidence("datapath", "ghost_reject_counters");
        if (c.rule === null) return { value: "no REJECT rule", evidence };
        if (c.spoiled?.length)
          return {
            value: null,
            evidence,
            skip: `kube-proxy rewrote its rules (resetting the counter) during every ${c.spoiled.join(" and ")} window tried: the counter cannot say who answered`,
          };
        if ([c.host_before, c.host_after, c.pod_before, c.pod_after].some((v) => v === null))
          return { value: "(a counter was not read)", evidence };
        const host = u64Diff(c.host_after as U64, c.host_before as U64);
        const pod = u64Diff(c.pod_after as U64, c.pod_before as U64);
        const hostMoved = u64Compare(host, c.host_probes) >= 0;
        const podMoved = u64Compare(pod, 0) > 0;
        const value =
          hostMoved && !podMoved
            ? "host moves, Pod does not"
            : `host +${host} for ${c.host_probes}, Pod +${pod} for ${c.pod_probes}`;
        return { value, evidence };
      },
    },
  ],
});

/** The times of the ghost probes made from `from` (the probe Pod, or a node), each with its write-out line. */
function probeSeconds(
  r: RecordView,
  from: "pod" | "node",
): { value: (number | null)[]; evidence: EvidenceItem[] } {
  const probes = dp(r, "ghost_probes");
  const evidence = r.evidence("datapath", "ghost_probes");
  // the evidence holds one item per probe, in the record's order
  const mine = probes.map((p, i) => ({ p, e: evidence[i] })).filter((x) => x.p.from === from);
  return {
    value: mine.map((x) => x.p.seconds),
    evidence: mine.flatMap((x) => (x.e ? [x.e] : [])),
  };
}

/**
 * The errno a probe's connect() to a Service without backends failed with, in either family (the IPv6 twin,
 * ipv6.ghost-errno, reads ghost6's): "none: timed out (exit 28)" when nothing answered and curl's own limit ended
 * the connect; a skip with `noErrno` when curl printed none otherwise.
 */
export function errnoObservation(
  errno: { errno: string | null; evidence: EvidenceItem[] },
  curl: { exit: number | null; evidence: EvidenceItem[] },
  noErrno: string,
): Observation {
  if (errno.errno !== null) return { value: errno.errno, evidence: errno.evidence };
  if (curl.exit === 28)
    return { value: "none: timed out (exit 28)", evidence: [...errno.evidence, ...curl.evidence] };
  return { value: null, evidence: errno.evidence, skip: noErrno };
}

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Lab step 7. */
export async function observeGhost(ctx: RunContext): Promise<RecordSet> {
  const probe = await ensureGhostAndProbe(ctx);
  const cip = await clusterIp(ctx, ctx.namespace, "ghost");
  const frontend = formatEndpoint(cip, WEB_PORT);
  const { value: services } = await waitFor(ctx, {
    what: `the agent on ${probe.node} to list ${frontend}`,
    deadlineMs: DEADLINES.mapConverged,
    intervalMs: 1000,
    probe: async () =>
      read(await ciliumDbgRaw(ctx, probe.node, ["service", "list", "-o", "json"]), parseServiceListJson),
    done: (s) => s.parsed.services.some((x) => x.frontend === frontend),
    show: (s) => `${s.parsed.services.length} services, ${frontend} absent`,
  });
  const curl = await curlFrom(ctx, { kind: "pod", namespace: ctx.namespace, pod: "probe" }, `http://${cip}/`);
  const config = read(await ciliumDbgRaw(ctx, probe.node, ["config", "-a"]), parseConfig);
  const ipt = read(await iptablesSaveRaw(ctx, probe.node), parseIptablesSave);
  const lb = await lbList(ctx, probe.node);
  // who answers: kube-proxy's REJECT counter around probes from the node's host namespace, then from the Pod. The
  // rule lives in KUBE-SERVICES, which kube-proxy rewrites on every sync (a Service created elsewhere, its periodic
  // resync): a sync resets the counter to 0, so a window in which kube-proxy synced says nothing and is run again
  // (issue 35: "host +2 for 3", "Pod +-2", the counter reset between two readings). The sync's time is kube-proxy's
  // own metric, read on the node before and after each window.
  const counters = await newerStep(ctx, "REJECT counters", async () => {
    // the counter's reading, and when the call that read it started (ms since the epoch; null where the call was
    // neither recorded nor replayed): a sync after that start may have reset the counter the reading holds
    const filter = async () => {
      const r = await onNode(ctx, probe.node, ["iptables-save", "-c", "-t", "filter"]);
      return {
        filter: read(RawText.stdout(r), parseIptablesSave),
        started: r.recorded ? r.recorded.at - r.durationMs : null,
      };
    };
    // kube-proxy's last sync; null without kube-proxy, or in a bundle recorded before the windows were checked
    const lastSync = async () =>
      ctx.mode !== "kube-proxy"
        ? null
        : newerStep(ctx, "kube-proxy's last sync", async () => {
            const r = await onNode(ctx, probe.node, ["curl", "-s", "--max-time", "2", KUBE_PROXY_METRICS]);
            const raw = RawText.stdout(r);
            // `kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} 1.79…e+09` (v1.35.5), or unlabelled
            const q = raw.find((l) => new RegExp(`^${SYNC_METRIC}(?:\\{ip_family="IPv4"\\})? `).test(l));
            return { at: q ? (q.quote.trim().split(/\s+/).at(-1) ?? null) : null, quote: q, raw };
          });
    const url = `http://${cip}/`;
    const syncs: EvidenceItem[] = [];
    type Reading = Awaited<ReturnType<typeof filter>> & { sync: Awaited<ReturnType<typeof lastSync>> };
    /** Three probes from `from` between two readings; again from a fresh reading while kube-proxy synced between. */
    const window = async (from: "node" | "pod", start: Reading) => {
      let first = start;
      for (let attempt = 1; ; attempt++) {
        const probes: CurlRead[] = [];
        for (let i = 0; i < REJECT_PROBES; i++)
          probes.push(
            await curlFrom(
              ctx,
              from === "node"
                ? { kind: "node", node: probe.node }
                : { kind: "pod", namespace: ctx.namespace, pod: "probe" },
              url,
            ),
          );
        const last: Reading = { ...(await filter()), sync: await lastSync() };
        const s0 = first.sync;
        const s1 = last.sync;
        // kube-proxy synced in the window when its last sync moved, or (a window that starts from the last one's
        // end reading, whose sync was read after it) when its last sync is not older than the start reading's
        // call: a sync between that call and the sync read before it reset the counter the window starts from
        // (run up-119-120-kp-c: window 2 began at a reading taken 65 ms before a sync, and its "host +0 for 3"
        // was the reset, the probes all refused by kube-proxy's rule)
        const syncMs = s1?.at != null ? Number(s1.at) * 1000 : Number.NaN;
        const late = first.started !== null && Number.isFinite(syncMs) && syncMs >= first.started;
        const synced = s0?.at != null && s1 !== null && (s1.at !== s0.at || late);
        const when =
          late && s1?.at === s0?.at
            ? ` at ${s1?.at}, after the window's first reading began (${((first.started ?? 0) / 1000).toFixed(3)})`
            : "";
        const rerun = synced
          ? `: it rewrote its rules${when} (the counter reset), so the window runs again`
          : "";
        if (s0 && s1)
          syncs.push(
            derive(
              `${from} window ${attempt}: kube-proxy's last sync ${s0.at ?? "not read"} before, ${s1.at ?? "not read"} after${rerun}`,
              s0.quote ?? s0.raw,
              s1.quote ?? s1.raw,
            ),
          );
        if (!synced || attempt >= REJECT_WINDOW_TRIES) return { first, last, probes, clean: !synced };
        ctx.log(`REJECT counter: kube-proxy synced during the ${from} window (attempt ${attempt}); again`);
        first = last;
      }
    };
    // the sync read before the counter: a window's start must not postdate a reset
    const start: Reading = { sync: await lastSync(), ...(await filter()) };
    const host = await window("node", start);
    const pod = await window("pod", host.last);
    return {
      before: host.first.filter,
      afterHost: host.last.filter,
      podBefore: pod.first.filter,
      afterPod: pod.last.filter,
      hostProbes: host.probes,
      podProbes: pod.probes,
      syncs,
      spoiled: [...(host.clean ? [] : ["host"]), ...(pod.clean ? [] : ["Pod"])],
    };
  });
  return {
    ghost: buildGhostRecord({ clusterIp: cip, port: WEB_PORT, services, curl, config }),
    datapath: mergeParts([
      buildGhostFacts({ iptables: ipt, lb, clusterIp: cip, namespace: ctx.namespace }),
      buildErrnoFacts(curl),
      buildProbeFacts([
        { from: "pod", curl },
        ...(counters?.hostProbes ?? []).map((c) => ({ from: "node" as const, curl: c })),
        ...(counters?.podProbes ?? []).map((c) => ({ from: "pod" as const, curl: c })),
      ]),
      buildRejectCounterFacts({ counters, namespace: ctx.namespace, probes: REJECT_PROBES }),
    ]),
  };
}

const REJECT_PROBES = 3;
/** How often a counter window is run again when kube-proxy synced during it (then it is not judged). */
const REJECT_WINDOW_TRIES = 6;
/** kube-proxy's metrics on its node (metricsBindAddress, default 127.0.0.1:10249), and its last sync's time. */
const KUBE_PROXY_METRICS = "http://127.0.0.1:10249/metrics";
const SYNC_METRIC = "kubeproxy_sync_proxy_rules_last_timestamp_seconds";

/** Ours: the connect() errno curl -v named, by the stderr line that named it (quoted at its place in the call). */
export function buildErrnoFacts(curl: CurlRead): Evidenced<DatapathRecord> {
  const errno = curlLineQuote(curl, curl.at.errno);
  return {
    record: { ghost_errno: curl.errno },
    evidence: {
      ghost_errno: errno ? [errno] : [derive("curl -v named no connect() errno", curl.stderr)],
    },
  };
}

/** Ours: every probe of the ghost Service, each by its write-out line (curl's exit code and time_total). */
export function buildProbeFacts(
  probes: { from: "pod" | "node"; curl: CurlRead }[],
): Evidenced<DatapathRecord> {
  return {
    record: {
      ghost_probes: probes.map((p) => ({ from: p.from, exit: p.curl.exitCode, seconds: p.curl.timeTotal })),
    },
    evidence: {
      ghost_probes: probes.flatMap((p): EvidenceItem[] => {
        const w = p.curl.at.writeOut;
        return w ? [p.curl.stdout.quote(w.line)] : [derive("curl printed no time_total", p.curl.stdout)];
      }),
    },
  };
}

/** Ours: kube-proxy's "has no endpoints" REJECT rule for ghost, and its packet counter around each set of probes. */
export function buildRejectCounterFacts(input: {
  counters: {
    before: Read<IptablesSave>;
    afterHost: Read<IptablesSave>;
    /** The Pod window's own first reading (bundles from before issue 35: the host window's last). */
    podBefore?: Read<IptablesSave>;
    afterPod: Read<IptablesSave>;
    /** kube-proxy's sync times around each window (issue 35), and the windows it rewrote its rules in every time. */
    syncs?: EvidenceItem[];
    spoiled?: string[];
  } | null;
  namespace: string;
  probes: number;
}): Evidenced<DatapathRecord> {
  if (!input.counters) return { record: { ghost_reject_counters: null }, evidence: {} };
  const rule = (s: IptablesSave) =>
    ghostRejectRules(s, input.namespace).find((r) => (r.comment ?? "").includes("has no endpoints"));
  const { before, afterHost, afterPod } = input.counters;
  const podBefore = input.counters.podBefore ?? afterHost;
  const [b, h, p] = [rule(before.parsed), rule(afterHost.parsed), rule(afterPod.parsed)];
  const pb = rule(podBefore.parsed);
  const quote = (read: Read<IptablesSave>, r: IptablesRule | undefined) =>
    r ? [read.raw.quote(r.line)] : [derive(`no REJECT rule for ${input.namespace}/ghost`, read.raw)];
  return {
    record: {
      ghost_reject_counters: {
        rule: b ? b.text.replace(/^\[\d+:\d+\] /, "") : null,
        host_probes: input.probes,
        host_before: b?.packets ?? null,
        host_after: h?.packets ?? null,
        pod_probes: input.probes,
        pod_before: pb?.packets ?? null,
        pod_after: p?.packets ?? null,
        ...(input.counters.spoiled?.length ? { spoiled: input.counters.spoiled } : {}),
      },
    },
    evidence: {
      ghost_reject_counters: b
        ? [
            ...quote(before, b),
            ...quote(afterHost, h),
            ...(podBefore !== afterHost ? quote(podBefore, pb) : []),
            ...quote(afterPod, p),
            ...(input.counters.syncs ?? []),
          ]
        : quote(before, undefined),
    },
  };
}

/** Lab step 7. */
export function buildGhostRecord(input: {
  clusterIp: string;
  port: number;
  services: Read<ServiceList>;
  curl: CurlRead;
  config: Read<AgentConfig>;
}): Evidenced<GhostRecord> {
  const frontend = formatEndpoint(input.clusterIp, input.port);
  const svc = findAgentService(input.services.parsed, frontend, { type: "ClusterIP", protocol: "TCP" });
  if (!svc) throw new RecordError("ghost", "backends", `no ${frontend} entry in the agent's service list`);
  const cfg = input.config.parsed;
  const nbr = cfg.options.ServiceNoBackendResponse;
  if (nbr === undefined)
    throw new RecordError(
      "ghost",
      "no_backend_response",
      "cilium-dbg config -a has no ServiceNoBackendResponse",
    );
  if (input.curl.timeTotal === null) throw new RecordError("ghost", "seconds", "curl printed no time_total");
  const entry = serviceQuotes(input.services.raw, svc, SERVICE_ID_MEMBERS);
  const backends = svc.backends.flatMap((b) => serviceBackendQuotes(input.services.raw, b));
  const w = input.curl.at.writeOut;
  return {
    record: {
      cluster_ip: input.clusterIp,
      backends: svc.backends.length,
      curl_exit: input.curl.exitCode,
      seconds: input.curl.timeTotal,
      no_backend_response: nbr,
    },
    evidence: {
      backends:
        svc.backends.length > 0
          ? [...entry, ...backends]
          : [...entry, derive(`${frontend}'s spec lists no backend-addresses`, entry)],
      curl_exit: input.curl.evidence,
      seconds: w ? [input.curl.stdout.quote(w.line)] : [],
      no_backend_response:
        cfg.lines.ServiceNoBackendResponse !== undefined
          ? [input.config.raw.quote(cfg.lines.ServiceNoBackendResponse)]
          : [],
    },
  };
}

/** Ours (ghost topic): kube-proxy's REJECT rules for ns/ghost and the 1.19+ `<vip>:0/ANY` entry. */
export function buildGhostFacts(input: {
  iptables: Read<IptablesSave>;
  lb: Read<LbList>;
  clusterIp: string;
  namespace: string;
}): Evidenced<DatapathRecord> {
  const rejects = ghostRejectRules(input.iptables.parsed, input.namespace);
  const wildcard = input.lb.parsed.services.find(
    (s) => s.frontend === formatEndpoint(input.clusterIp, 0) && s.protocol === "ANY",
  );
  return {
    record: { ghost_reject_rules: rejects.length, ghost_wildcard_entry: wildcard !== undefined },
    evidence: {
      ghost_reject_rules:
        rejects.length > 0
          ? rejects.map((r) => input.iptables.raw.quote(r.line))
          : [derive(`no REJECT rule commented ${input.namespace}/ghost`, input.iptables.raw)],
      ghost_wildcard_entry: wildcard
        ? lbRows(input.lb.raw, wildcard)
        : [derive(`no ${formatEndpoint(input.clusterIp, 0)}/ANY row in bpf lb list`, input.lb.raw)],
    },
  };
}

/** kube-proxy's REJECT rules for ns/ghost (it comments them `ns/ghost:port has no endpoints`). */
function ghostRejectRules(save: IptablesSave, namespace: string) {
  return allRules(save).filter((r) => r.target === "REJECT" && r.comment?.startsWith(`${namespace}/ghost`));
}
