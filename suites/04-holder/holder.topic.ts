// One file over 450 lines: a topic reads top to bottom in one file: its declaration, then its observation and builders (docs/contributing.md)
/**
 * Topic "holder" — The lab, step 4.
 * A long-lived connection to web's ClusterIP: who translated it (the socket hook, or the packet path) and what each side sees.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */

import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { clusterIpRaw, pods } from "../../helpers/observe/cluster.ts";
import type { RunContext } from "../../helpers/observe/context.ts";
import { newerStep } from "../../helpers/observe/steps.ts";
import { ensureHolder, ensureWeb, HOLDER_PORT, holderConnected } from "../../helpers/observe/workloads.ts";
import { formatEndpoint } from "../../helpers/parse/address.ts";
import { type CtList, parseBpfCtList } from "../../helpers/parse/bpf-ct-list.ts";
import { type LbBackendRow, parseBpfLbBackends } from "../../helpers/parse/bpf-lb-backends.ts";
import { holderEventLines } from "../../helpers/parse/holder-log.ts";
import { type NetstatOutput, parseNetstat } from "../../helpers/parse/netstat.ts";
import { parseProcNetTcp } from "../../helpers/parse/proc-net-tcp.ts";
import { type AgentStatus, parseStatus } from "../../helpers/parse/status.ts";
import type { ConfigDependence, ConfigMatch } from "../../helpers/properties/config.ts";
import { hostnsOnlyWhy } from "../../helpers/properties/requirements.ts";
import { CILIUM_AT, ipOf, LAB, UP } from "../../helpers/properties/sources.ts";
import { mergeParts } from "../../helpers/records/catalogue.ts";
import {
  backendPods,
  ctQuotes,
  type PodRef,
  RecordError,
  statusQuote,
} from "../../helpers/records/common.ts";
import { derive, type EvidenceItem, RawText, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidenced, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import type { DatapathRecord } from "../datapath.records.ts";
import { datapathRecords, dp } from "../datapath.records.ts";
import type { CtRecord } from "./holder.records.ts";
import { records } from "./holder.records.ts";

/**
 * Who translates the holder's connect() (issue 25): the kpr expectations assume socket LB translates a Pod's
 * sockets (on, full coverage), the kube-proxy ones that nothing does (off). With host-namespace-only coverage a
 * Pod's connect() is left alone and its packets are translated, so those runs get the kube-proxy mode's
 * expectation (bpf_sock.c, bpf_lxc.c: ENABLE_SOCKET_LB_HOST_ONLY).
 */
const POD_SOCKET_LB = {
  kpr: { socketLB: ["on"] },
  "kube-proxy": { socketLB: ["off"] },
} as const satisfies ConfigDependence["assumes"];
const HOSTNS_ONLY = { socketLB: ["hostns-only"] } as const satisfies ConfigMatch;
const HOSTNS_ONLY_WHY = hostnsOnlyWhy(
  "(bpf_sock.c __sock4_xlate_fwd: `if (is_defined(ENABLE_SOCKET_LB_HOST_ONLY) && !in_hostns) return -ENXIO`, in_hostns from ctx_in_hostns), so the holder Pod's packets are translated by bpf_lxc (bpf_lxc.c defines ENABLE_PER_PACKET_LB when ENABLE_SOCKET_LB_HOST_ONLY is set), as beside kube-proxy (https://github.com/cilium/cilium/blob/v1.20.2/bpf/bpf_sock.c#L322, https://github.com/cilium/cilium/blob/v1.20.2/bpf/bpf_lxc.c#L91)",
);

export const topic = defineTopic({
  name: "holder",
  title:
    "A long-lived connection to web's ClusterIP: who translated it (the socket hook, or the packet path) and what each side sees",
  source: LAB(4),
  deploys: ["web.yaml", "holder.yaml"],
  steps: [
    { on: "kubectl", run: "-n <ns> logs holder", for: "the holder's `connected` line (polled)" },
    { on: "pod", run: "netstat -tn", for: "the holder's view of its peer" },
    { on: "agent", run: "cilium-dbg bpf ct list global", for: "the connection's conntrack entries" },
    { on: "agent", run: "cilium-dbg status --verbose", for: "socket LB and the attach mode" },
    { on: "pod", run: "cat /proc/net/tcp /proc/net/tcp6", for: "the backend's view of its peer" },
    {
      on: "agent",
      run: "cilium-dbg bpf lb list --backends",
      for: "backend ids, to read the SVC entry's BackendID",
    },
  ],
  records: { ...records, ...datapathRecords },
  schedule: {
    after: ["scale"],
    why: "the holder's connection keeps one web backend: web must be at four replicas and stay so (a scale beside it would end the connection)",
  },
  shared: { counts: ["web backends"] },
  observe: observeHolder,
  properties: [
    {
      id: "holder.app-sees-clusterip",
      claim: "getpeername() in the holder returns the ClusterIP:80 it dialled",
      source: LAB(4),
      why: "socket LB reverse-translates getpeername (kpr); per-packet DNAT leaves the socket on the VIP (kube-proxy mode)",
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      config: "none",
      needs: ["ct", "datapath"],
      observe: (r) => ({
        value: r.get("ct").app_peer === `${dp(r, "web_cluster_ip")}:80`,
        evidence: [...r.evidence("ct", "app_peer"), ...r.evidence("datapath", "web_cluster_ip")],
      }),
    },
    {
      id: "holder.socket-peer",
      claim:
        "The kernel socket table (netstat in the holder) shows the backend Pod with socket LB, the ClusterIP without it",
      source: LAB(4),
      why: "with kube-proxy, KPR=false has no socket LB (socketLB.enabled defaults to false): bpf_lxc translates per packet (Cilium docs, https://docs.cilium.io/en/v1.20/network/kubernetes/kubeproxy-free/#quick-start; the chart's socketLB.enabled: false, https://github.com/cilium/cilium/blob/v1.20.2/install/kubernetes/cilium/values.yaml#L1382-L1384)",
      expect: { kpr: { eq: "backend" }, "kube-proxy": { eq: "cluster-ip" } },
      config: {
        assumes: POD_SOCKET_LB,
        cases: [
          {
            when: HOSTNS_ONLY,
            expect: { kpr: { eq: "cluster-ip" } },
            claim:
              "The holder's socket table shows the ClusterIP: socket LB covers only the host namespace, so the Pod's connect() keeps the VIP and its packets are translated",
            why: HOSTNS_ONLY_WHY,
          },
        ],
      },
      needs: ["ct", "datapath"],
      observe: (r) => {
        const ct = r.get("ct");
        return {
          value: socketPeerSide(ct.socket_peer, ct.backend, dp(r, "web_cluster_ip")),
          evidence: [
            ...r.evidence("ct", "socket_peer"),
            ...r.evidence("ct", "backend"),
            ...r.evidence("datapath", "web_cluster_ip"),
          ],
        };
      },
    },
    {
      id: "holder.ct-backend-is-web-pod",
      claim: "The conntrack OUT entry of :40404 points at a web Pod IP:8080",
      source: LAB(4),
      why: "the OUT entry holds the translated connection whether the socket hook or bpf_lxc translated it, so no datapath setting changes it",
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      config: "none",
      needs: ["ct"],
      observe: (r) => {
        const ct = r.get("ct");
        return {
          value: ct.backend_pod.startsWith("web") && ct.backend.endsWith(":8080"),
          evidence: [...r.evidence("ct", "backend"), ...r.evidence("ct", "backend_pod")],
        };
      },
    },
    {
      id: "holder.svc-entries",
      claim:
        "TCP SVC conntrack entries for :40404: none with socket LB (the packet never carries the VIP), one with per-packet LB",
      source: LAB(4),
      why: "SVC entries are written by the per-packet service lookup (lb4_local's CT_SERVICE entry, https://github.com/cilium/cilium/blob/v1.20.2/bpf/lib/lb.h#L2266-L2304); socket LB bypasses it",
      expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 1 } },
      config: {
        assumes: POD_SOCKET_LB,
        cases: [
          {
            when: HOSTNS_ONLY,
            expect: { kpr: { eq: 1 } },
            claim:
              "One TCP SVC conntrack entry for :40404: socket LB covers only the host namespace, so the Pod's packets carry the VIP and bpf_lxc's per-packet lookup writes it",
            why: HOSTNS_ONLY_WHY,
          },
        ],
      },
      needs: ["ct"],
      observe: (r) => ({ value: r.get("ct").svc_entries, evidence: r.evidence("ct", "svc_entries") }),
    },
    {
      id: "holder.socket-lb",
      claim: "Socket LB is enabled with full coverage without kube-proxy, disabled beside kube-proxy",
      source: LAB(4),
      why: "KPR=true auto-enables socket LB; KPR=false leaves socketLB.enabled=false (https://github.com/cilium/cilium/blob/v1.20.2/pkg/kpr/kpr.go#L47-L49, https://github.com/cilium/cilium/blob/v1.20.2/install/kubernetes/cilium/values.yaml#L1382-L1384). The `Socket LB:` line decides: `Socket LB Coverage: Full` is printed even when socket LB is disabled (pkg/client/client.go, v1.19.7), so the kube-proxy expectation matches on the first part only",
      expect: { kpr: { eq: "Enabled/Full" }, "kube-proxy": { match: "^Disabled(/|$)" } },
      config: {
        // the observed value is the setting itself: a run's own socket LB is what this property reports
        assumes: POD_SOCKET_LB,
        cases: [
          {
            when: HOSTNS_ONLY,
            expect: { kpr: { eq: "Enabled/Hostns-only" } },
            claim: "Socket LB is enabled, its coverage the host network namespace only",
            why: "socketLB.hostNamespaceOnly=true (bpf-lb-sock-hostns-only): status prints `Socket LB Coverage: Hostns-only` (pkg/client/client.go, coverage Full unless BpfSocketLBHostnsOnly; https://github.com/cilium/cilium/blob/v1.20.2/pkg/client/client.go#L740; seen on the lab cluster, suites/bundles/profiles/socketlb-hostns/kpr)",
          },
        ],
      },
      needs: ["ct", "datapath"],
      observe: (r) => ({
        value: `${dp(r, "socket_lb") ?? "absent"}${r.get("ct").socket_lb_coverage ? `/${r.get("ct").socket_lb_coverage}` : ""}`,
        evidence: [...r.evidence("datapath", "socket_lb"), ...r.evidence("ct", "socket_lb_coverage")],
      }),
    },
    {
      id: "holder.backend-sees-client",
      claim: "The backend Pod sees the holder's IP:40404 (not SNATed to a node IP)",
      source: LAB(4),
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      config: {
        // Pod-to-Pod traffic in the tunnel is never masqueraded; in native routing it is unless the native
        // routing CIDR covers the PodCIDR, a setting the configuration record does not carry: not modelled
        assumes: { kpr: { routing: ["tunnel"] }, "kube-proxy": { routing: ["tunnel"] } },
      },
      needs: ["datapath"],
      observe: (r) => ({
        value: dp(r, "backend_sees_client"),
        evidence: r.evidence("datapath", "backend_sees_client"),
      }),
    },
    {
      id: "holder.ct-rev-nat",
      claim:
        "The holder's OUT conntrack entry has RevNAT 0 with socket LB (nothing to reverse: the socket already points at the backend) and the Service's id with per-packet LB",
      source: UP(
        `${CILIUM_AT}/bpf/lib/lb.h#L2266-L2304 (lb4_local: the connection's rev_nat_index is the Service's); ${CILIUM_AT}/bpf/bpf_sock.c#L145-L195 (sock4_update_revnat: socket LB's reverse mapping per socket)`,
      ),
      expect: { kpr: { eq: "0" }, "kube-proxy": { eq: "the Service's id" } },
      config: {
        assumes: POD_SOCKET_LB,
        cases: [
          {
            when: HOSTNS_ONLY,
            expect: { kpr: { eq: "the Service's id" } },
            claim:
              "The holder's OUT conntrack entry carries the Service's id as its RevNAT: socket LB covers only the host namespace, so bpf_lxc translates the Pod's packets and records the reverse translation",
            why: HOSTNS_ONLY_WHY,
          },
        ],
      },
      why: "per-packet LB (bpf_lxc) records the Service's reverse-NAT index on the connection to rewrite replies (the SVC entry carries the same index: the Service's id); socket LB translates at connect() and keeps the reverse mapping per socket instead (cilium_lb4_reverse_sk)",
      needs: ["datapath"],
      observe: (r) => {
        const rev = dp(r, "holder_out_rev_nat");
        const id = dp(r, "holder_svc_rev_nat");
        const value =
          rev === null
            ? "(no OUT entry)"
            : rev === 0
              ? "0"
              : rev === id
                ? "the Service's id"
                : `other (OUT ${rev}, SVC ${id ?? "none"})`;
        return {
          value,
          evidence: [
            ...r.evidence("datapath", "holder_out_rev_nat"),
            ...r.evidence("datapath", "holder_svc_rev_nat"),
          ],
        };
      },
    },
    {
      id: "holder.svc-backend-id",
      claim:
        "With per-packet LB an SVC conntrack entry names the holder's backend by its id in the backend map; socket LB leaves no SVC entry",
      source: UP(
        `${CILIUM_AT}/bpf/lib/lb.h#L2266-L2304 (lb4_local: the CT_SERVICE entry keeps the backend_id it chose); ${CILIUM_AT}/pkg/maps/ctmap/types.go (SVC entries print BackendID=)`,
      ),
      expect: { kpr: { eq: "no SVC entry" }, "kube-proxy": { eq: "the holder's backend" } },
      config: {
        assumes: POD_SOCKET_LB,
        cases: [
          {
            when: HOSTNS_ONLY,
            expect: { kpr: { eq: "the holder's backend" } },
            claim:
              "An SVC conntrack entry names the holder's backend by its id: socket LB covers only the host namespace, so the Pod's packets meet the per-packet service lookup",
            why: HOSTNS_ONLY_WHY,
          },
        ],
      },
      needs: ["datapath", "ct"],
      observe: (r) => {
        const b = dp(r, "holder_svc_backend");
        if (b === null)
          return {
            value: null,
            evidence: [],
            skip: "this bundle predates the backend-map step (no recorded call)",
          };
        const backend = ipOf(r.get("ct").backend);
        const value =
          b.backend_id === null
            ? "no SVC entry"
            : b.address === backend
              ? "the holder's backend"
              : `other (${b.address ?? `id ${b.backend_id} not in the map`})`;
        return {
          value,
          evidence: [...r.evidence("datapath", "holder_svc_backend"), ...r.evidence("ct", "backend")],
        };
      },
    },
  ],
});

/**
 * Where a held connection's kernel socket points, in either family: at its backend (socket LB translated
 * connect()), at the ClusterIP:80 it dialled (its packets are translated), elsewhere, or nowhere (no socket from
 * the holder's port). The IPv6 twin (ipv6.holder-socket-peer) asks it of holder6.
 */
export function socketPeerSide(peer: string | null, backend: string | null, clusterIp: string): string {
  if (peer === null) return "(no socket from the holder's port)";
  if (peer === backend) return "backend";
  return peer === formatEndpoint(clusterIp, 80) ? "cluster-ip" : `other (${peer})`;
}

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

export async function holderState(ctx: RunContext) {
  const web = await pods(ctx, ctx.namespace, "app=web");
  const cip = await clusterIpRaw(ctx, ctx.namespace, "web");
  const holder = await ensureHolder(ctx, cip.ip);
  const log = await holderConnected(ctx);
  const netstat = read(
    RawText.stdout(
      await ctx.exec.run({
        target: { kind: "pod", namespace: ctx.namespace, pod: "holder" },
        argv: ["netstat", "-tn"],
      }),
    ),
    parseNetstat,
  );
  const ct = read(await ciliumDbgRaw(ctx, holder.node, ["bpf", "ct", "list", "global"]), parseBpfCtList);
  const status = read(await ciliumDbgRaw(ctx, holder.node, ["status", "--verbose"]), parseStatus);
  const ctRec = buildCtRecord({
    holderIp: holder.ip,
    holderEvidence: holder.evidence ?? [],
    sourcePort: HOLDER_PORT,
    holderLog: log,
    holderNetstat: netstat,
    ct,
    status,
    pods: web,
  });
  return { web, holder, cip: cip.ip, cipEvidence: cip.evidence, status, ctRec, ct };
}

/** Lab step 4. */
export async function observeHolder(ctx: RunContext): Promise<RecordSet> {
  await ensureWeb(ctx, 4);
  const { holder, status, ctRec, cip, cipEvidence, ct } = await holderState(ctx);
  const backends = await newerStep(ctx, "bpf lb list --backends", async () =>
    read(await ciliumDbgRaw(ctx, holder.node, ["bpf", "lb", "list", "--backends"]), parseBpfLbBackends),
  );
  const backendPod = ctRec.record.backend_pod;
  const backendTcp = read(
    RawText.stdout(
      await ctx.exec.run({
        target: { kind: "pod", namespace: ctx.namespace, pod: backendPod },
        // both tables: a Go server (agnhost) listens dual-stack, so its IPv4 peers are IPv4-mapped in tcp6
        argv: ["cat", "/proc/net/tcp", "/proc/net/tcp6"],
      }),
    ),
    parseProcNetTcp,
  );
  return {
    ct: ctRec,
    datapath: mergeParts([
      buildHolderFacts({
        status,
        backendNetstat: backendTcp,
        client: formatEndpoint(holder.ip, HOLDER_PORT),
        webClusterIp: cip,
        webClusterIpEvidence: cipEvidence,
      }),
      buildHolderCtFacts({ ct, client: formatEndpoint(holder.ip, HOLDER_PORT), backends }),
    ]),
  };
}

/**
 * Ours: the holder's conntrack entries per mode. With socket LB the connection is already to the backend
 * (OUT RevNAT 0, no SVC entry); with per-packet LB the OUT entry carries the Service's RevNAT and an SVC
 * entry names the backend by its id in the backend map.
 */
export function buildHolderCtFacts(input: {
  ct: Read<CtList>;
  client: string;
  backends: Read<{ backends: LbBackendRow[] }> | null;
}): Evidenced<DatapathRecord> {
  const mine = input.ct.parsed.entries.filter((e) => e.protocol === "TCP" && e.source === input.client);
  const out = mine.find((e) => e.direction === "OUT");
  const svc = mine.find((e) => e.direction === "SVC");
  const rows = input.backends?.parsed.backends ?? [];
  const row = svc?.backendId != null ? rows.find((b) => b.id === svc.backendId) : undefined;
  const svcBackend = !svc
    ? { backend_id: null, address: null }
    : input.backends
      ? { backend_id: svc.backendId, address: row?.address ?? null }
      : null;
  const entry = (dir: string) =>
    ctQuotes(input.ct.raw, (e) => e.protocol === "TCP" && e.direction === dir && e.source === input.client);
  const none = (dir: string) => [derive(`no TCP ${dir} entry from ${input.client}`, input.ct.raw)];
  const outQ = out ? entry("OUT") : none("OUT");
  const svcQ = svc ? entry("SVC") : none("SVC");
  return {
    record: {
      holder_out_rev_nat: out?.revNat ?? null,
      holder_svc_rev_nat: svc?.revNat ?? null,
      holder_svc_backend: svcBackend,
    },
    evidence: {
      holder_out_rev_nat: outQ,
      holder_svc_rev_nat: svcQ,
      holder_svc_backend: [
        ...svcQ,
        ...(row && input.backends ? [input.backends.raw.quote(row.line)] : []),
        ...(svc && input.backends && !row
          ? [derive(`backend id ${svc.backendId} is not in the backend map`, input.backends.raw)]
          : []),
      ],
    },
  };
}

/** Lab step 4. */
export function buildCtRecord(input: {
  holderIp: string;
  /** The lines of `get pod holder -o json` that name it and its IP. */
  holderEvidence?: EvidenceItem[];
  sourcePort: number;
  holderLog: RawText;
  holderNetstat: Read<NetstatOutput>;
  ct: Read<CtList>;
  status: Read<AgentStatus>;
  pods: PodRef[];
}): Evidenced<CtRecord> {
  const client = formatEndpoint(input.holderIp, input.sourcePort);
  const connected = holderEventLines(input.holderLog.text).filter((e) => e.event.event === "connected");
  const conn = connected.at(-1);
  if (!conn?.event.peer) throw new RecordError("ct", "app_peer", "the holder log has no `connected` event");
  const sock = input.holderNetstat.parsed.connections.find(
    (c) => c.local === client && c.proto.startsWith("tcp"),
  );
  if (!sock)
    throw new RecordError("ct", "socket_peer", `no connection from ${client} in the holder's netstat`);
  const out = input.ct.parsed.entries.find(
    (e) => e.protocol === "TCP" && e.direction === "OUT" && e.source === client,
  );
  if (!out) throw new RecordError("ct", "backend", `no TCP OUT conntrack entry from ${client}`);
  const svcEntries = input.ct.parsed.entries.filter(
    (e) => e.protocol === "TCP" && e.direction === "SVC" && e.source.endsWith(`:${input.sourcePort}`),
  );
  const svcQ = ctQuotes(
    input.ct.raw,
    (e) => e.protocol === "TCP" && e.direction === "SVC" && e.source.endsWith(`:${input.sourcePort}`),
  );
  const pod = backendPods([out.destination], input.pods);
  const st = input.status;
  return {
    record: {
      client,
      app_peer: conn.event.peer,
      socket_peer: sock.foreign,
      backend: out.destination,
      backend_pod: pod.names[0] as string,
      svc_entries: svcEntries.length,
      socket_lb_coverage: st.parsed.socketLbCoverage,
    },
    evidence: {
      client: input.holderEvidence ?? [],
      app_peer: [input.holderLog.quote(conn.line)],
      socket_peer: [input.holderNetstat.raw.quote(sock.line)],
      backend: ctQuotes(
        input.ct.raw,
        (e) => e.protocol === "TCP" && e.direction === "OUT" && e.source === client,
      ),
      backend_pod: pod.evidence,
      svc_entries:
        svcQ.length > 0 ? svcQ : [derive(`no TCP SVC entry from port ${input.sourcePort}`, input.ct.raw)],
      socket_lb_coverage: statusQuote(st.raw, st.parsed, "KubeProxyReplacement Details/Socket LB Coverage"),
    },
  };
}

/** Ours (holder topic): socket LB state and whether the backend saw the holder's own address. */
export function buildHolderFacts(input: {
  status: Read<AgentStatus>;
  backendNetstat: Read<NetstatOutput>;
  client: string;
  webClusterIp: string;
  webClusterIpEvidence?: EvidenceItem[];
}): Evidenced<DatapathRecord> {
  const seen = input.backendNetstat.parsed.connections.filter((c) => c.foreign === input.client);
  const st = input.status;
  return {
    record: {
      socket_lb: st.parsed.socketLb,
      backend_sees_client: seen.length > 0,
      web_cluster_ip: input.webClusterIp,
    },
    evidence: {
      backend_sees_client:
        seen.length > 0
          ? seen.map((c) => input.backendNetstat.raw.quote(c.line))
          : [
              derive(
                `no connection from ${input.client} in the backend's socket tables`,
                input.backendNetstat.raw,
              ),
            ],
      socket_lb: statusQuote(st.raw, st.parsed, "KubeProxyReplacement Details/Socket LB"),
      web_cluster_ip: input.webClusterIpEvidence ?? [],
    },
  };
}
