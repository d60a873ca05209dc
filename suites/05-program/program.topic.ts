/**
 * Topic "program" — The lab, step 5.
 * The holder's endpoint: which BPF program is attached to its device, how, and its policy map.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */

import { agentBpftool, ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { clusterIp, endpointIdRaw, type PodInfo } from "../../helpers/observe/cluster.ts";
import type { RunContext } from "../../helpers/observe/context.ts";
import { onNode } from "../../helpers/observe/node.ts";
import { kernelOf, newerStep } from "../../helpers/observe/steps.ts";
import { ensureHolder, ensureWeb, WEB_PORT } from "../../helpers/observe/workloads.ts";
import { type CgroupAttachment, parseBpftoolCgroup } from "../../helpers/parse/bpftool-cgroup.ts";
import { type BpftoolNet, parseBpftoolNet } from "../../helpers/parse/bpftool-net.ts";
import { type AgentEndpoint, parseEndpointJson } from "../../helpers/parse/endpoint-json.ts";
import { findPolicyMap, type MapList, parseMapList } from "../../helpers/parse/map-list.ts";
import { parseReverseSkDump, type ReverseSkEntry } from "../../helpers/parse/reverse-sk.ts";
import { type AgentStatus, parseStatus } from "../../helpers/parse/status.ts";
import { parseTcFilter, type TcFilterShow } from "../../helpers/parse/tc-filter.ts";
import type { ConfigDependence, ConfigMatch } from "../../helpers/properties/config.ts";
import { CILIUM_AT, KPR_GUIDE, LAB, UP } from "../../helpers/properties/sources.ts";
import { mergeParts } from "../../helpers/records/catalogue.ts";
import { RecordError, statusQuote } from "../../helpers/records/common.ts";
import { derive, type EvidenceItem, RawText, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidenced, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import type { DatapathRecord } from "../datapath.records.ts";
import { datapathRecords, dp } from "../datapath.records.ts";
import type { ProgRecord } from "./program.records.ts";
import { records } from "./program.records.ts";

/** The policy map's name by minor: the map format's version is in its name (a documented rename, not a bug). */
const POLICY_V1 = {
  kind: "behaviour",
  expect: { eq: "cilium_policy_<id:05>" },
  claim: "the endpoint's policy map is cilium_policy_<id:05> (before the v2 format of 1.17)",
  why: "pkg/maps/policymap MapName before 1.17",
} as const;
const POLICY_V3 = {
  kind: "behaviour",
  expect: { eq: "cilium_policy_v3_<id:05>" },
  claim: "the endpoint's policy map is cilium_policy_v3_<id:05>: 1.20 renamed it with its new format",
  why: "pkg/maps/policymap MapName is `cilium_policy_v3_` in 1.20 (v1.20.2; cilium PR 47080)",
} as const;

/**
 * The Pod's device is a veth pair whose host side carries the programs (tcx or clsact): netkit devices attach
 * theirs as netkit links, not modelled here (clusters/datapath-profiles.ts: netkit).
 */
const VETH = {
  kpr: { deviceMode: ["veth"] },
  "kube-proxy": { deviceMode: ["veth"] },
} as const satisfies ConfigDependence["assumes"];

/** socketLB.hostNamespaceOnly: the socket hooks stay, but pass a Pod's connect() through untranslated. */
const HOSTNS_ONLY = { socketLB: ["hostns-only"] } as const satisfies ConfigMatch;

export const topic = defineTopic({
  name: "program",
  title: "The holder's endpoint: which BPF program is attached to its device, how, and its policy map",
  source: LAB(5),
  deploys: ["holder.yaml"],
  steps: [
    { on: "agent", run: "cilium-dbg endpoint get <id> -o json", for: "the holder's endpoint and device" },
    { on: "agent", run: "bpftool net show dev <dev>", for: "programs attached to the device" },
    { on: "node", run: "tc filter show dev <dev> ingress", for: "tc filters (legacy attach)" },
    { on: "agent", run: "cilium-dbg map list", for: "the endpoint's policy map" },
    { on: "agent", run: "cilium-dbg status", for: "attach mode and kernel facts" },
    {
      on: "agent",
      run: "bpftool cgroup show /run/cilium/cgroupv2",
      for: "socket-LB programs at Cilium's cgroup root",
    },
    {
      on: "agent",
      run: "bpftool -p map dump pinned /sys/fs/bpf/tc/globals/cilium_lb4_reverse_sk",
      for: "the holder's own reverse-translation entries",
    },
  ],
  records: { ...records, ...datapathRecords },
  schedule: {
    after: ["holder"],
    why: "reads the endpoint of the holder, connected (holder waits for that); counts the whole reverse socket map, so no host process of another topic may hold a connection beside it (nodeport's node curls, translation's host queries follow it)",
  },
  observe: observeProgram,
  properties: [
    {
      id: "program.from-container",
      claim: "cil_from_container is attached at ingress of the Pod's host-side lxc device",
      source: LAB(5),
      expect: { kpr: { eq: "cil_from_container" }, "kube-proxy": { eq: "cil_from_container" } },
      config: { assumes: VETH },
      needs: ["prog"],
      observe: (r) => ({ value: r.get("prog").program, evidence: r.evidence("prog", "attach") }),
    },
    {
      id: "program.attach-point",
      claim:
        "The attach point follows the agent's Attach Mode: tcx/ingress (kernel ≥ 6.6, bpf.enableTCX default) or clsact/ingress (legacy tc)",
      source: LAB(5),
      why: "bpf.enableTCX defaults to true since 1.16; tcx needs kernel ≥ 6.6 (the chart's bpf.enableTCX: true, https://github.com/cilium/cilium/blob/v1.20.2/install/kubernetes/cilium/values.yaml#L747; the legacy tc fallback, https://github.com/cilium/cilium/blob/v1.20.2/pkg/datapath/loader/tc.go)",
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      config: { assumes: VETH },
      needs: ["prog", "datapath"],
      observe: (r) => {
        const attach = r.get("prog").attach;
        const mode = dp(r, "attach_mode");
        const ok =
          (mode === "TCX" && attach === "tcx/ingress") ||
          (mode === "Legacy TC" && attach === "clsact/ingress");
        return {
          value: ok,
          evidence: [...r.evidence("prog", "attach"), ...r.evidence("datapath", "attach_mode")],
        };
      },
    },
    {
      id: "program.tc-filter-lines",
      claim:
        "`tc filter show … ingress` prints nothing for a tcx attachment and two lines for a legacy cls_bpf filter",
      source: LAB(5),
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      config: { assumes: VETH },
      needs: ["prog"],
      observe: (r) => {
        const p = r.get("prog");
        const ok = p.attach.startsWith("tcx/") ? p.tc_filter_lines === 0 : p.tc_filter_lines === 2;
        return {
          value: ok,
          evidence: [...r.evidence("prog", "attach"), ...r.evidence("prog", "tc_filter_lines")],
        };
      },
    },
    {
      id: "program.policy-map",
      claim: "The endpoint has its own policy map, named after its endpoint id",
      source: LAB(5),
      why: "bpf.LocalMapName zero-pads to 5 digits; pkg/maps/policymap MapName is `cilium_policy_v2_` from 1.17 (v1.19.7) and `cilium_policy_v3_` in 1.20 (v1.20.2; cilium PR 47080)",
      expect: {
        kpr: {
          default: { eq: "cilium_policy_v2_<id:05>" },
          byMinor: { "1.16": POLICY_V1, "1.20": POLICY_V3 },
        },
        "kube-proxy": {
          default: { eq: "cilium_policy_v2_<id:05>" },
          byMinor: { "1.16": POLICY_V1, "1.20": POLICY_V3 },
        },
      },
      config: "none",
      needs: ["prog"],
      observe: (r) => {
        const p = r.get("prog");
        const id = String(p.endpoint_id).padStart(5, "0");
        const value = p.policy_map.replace(id, "<id:05>");
        return {
          value: p.policy_map.endsWith(id)
            ? value
            : `${p.policy_map || "(none)"} (endpoint ${p.endpoint_id})`,
          evidence: [...r.evidence("prog", "policy_map"), ...r.evidence("prog", "endpoint_id")],
        };
      },
    },
    {
      id: "program.socket-lb-hooks",
      claim:
        "Socket LB's programs (cil_sock4_connect, sendmsg, recvmsg, getpeername) are attached at Cilium's cgroup2 root with KPR, none with kube-proxy",
      source: UP(
        `Cilium docs ${KPR_GUIDE}#validate-bpf-cgroup-programs-attachment; ${CILIUM_AT}/pkg/socketlb/socketlb.go`,
      ),
      why: "socketLB.enabled follows kubeProxyReplacement (chart default); the connect4 hook translates the ClusterIP before a packet exists, getpeername4/recvmsg4 translate back",
      expect: { kpr: { eq: 4 }, "kube-proxy": { eq: 0 } },
      config: {
        // the four IPv4 hooks are counted: a dual-stack agent attaches the IPv6 ones beside them
        assumes: {
          kpr: { socketLB: ["on"], ipFamilies: ["ipv4", "ipv4+ipv6"] },
          "kube-proxy": { socketLB: ["off"] },
        },
        cases: [
          {
            when: { ...HOSTNS_ONLY, ipFamilies: ["ipv4", "ipv4+ipv6"] },
            expect: { kpr: { eq: 4 } },
            claim:
              "Socket LB's four programs stay attached at Cilium's cgroup2 root with host-namespace-only coverage: the host-only check is inside them",
            why: "pkg/socketlb/socketlb.go Enable attaches connect4, sendmsg4, recvmsg4 (and getpeername4 with EnableSocketLBPeer) with no regard to hostns-only; hostns-only turns off only socket-LB tracing (pkg/kpr/initializer, `if BPFSocketLBHostnsOnly { EnableSocketLBTracing = false }`); the check is in bpf_sock.c (ENABLE_SOCKET_LB_HOST_ONLY, https://github.com/cilium/cilium/blob/v1.20.2/bpf/bpf_sock.c#L322)",
          },
        ],
      },
      needs: ["datapath"],
      observe: (r) => {
        const hooks = dp(r, "sock_hooks");
        return hooks === null
          ? { value: null, evidence: [], skip: "this bundle predates the cgroup step (no recorded call)" }
          : { value: hooks.length, evidence: r.evidence("datapath", "sock_hooks") };
      },
    },
    {
      id: "program.reverse-sk-entry",
      claim:
        "Socket LB keeps a reverse-translation entry per translated socket (cilium_lb4_reverse_sk holds the holder's); empty with kube-proxy",
      source: UP(`${CILIUM_AT}/bpf/bpf_sock.c#L145-L195 (sock4_update_revnat, cilium_lb4_reverse_sk)`),
      why: "sock4_update_revnat stores backend → ClusterIP per socket cookie so getpeername() can answer the VIP (bpf_sock.c); per-packet LB reverses through conntrack instead. Only the holder's own entries are counted (those reversing web's ClusterIP:80 for the holder's backend, read from the map with bpftool): the map is the node's, and any Pod there with a translated socket open (CoreDNS's to the API server, another topic's query) adds to it, so its whole count differed between identical runs (1 and 3). A bundle recorded before the map was read counts it whole",
      expect: { kpr: { eq: 1 }, "kube-proxy": { eq: 0 } },
      config: {
        assumes: { kpr: { socketLB: ["on"] }, "kube-proxy": { socketLB: ["off"] } },
        cases: [
          {
            when: HOSTNS_ONLY,
            expect: { kpr: { eq: 0 } },
            claim:
              "cilium_lb4_reverse_sk holds no entry for the holder: socket LB covers only the host namespace, so the Pod's connect() is not translated and per-packet LB reverses through conntrack, as beside kube-proxy",
            why: "socketLB.hostNamespaceOnly=true: bpf_sock.c __sock4_xlate_fwd returns -ENXIO before sock4_update_revnat for a socket outside the host network namespace (`is_defined(ENABLE_SOCKET_LB_HOST_ONLY) && !in_hostns`), and bpf_lxc.c translates the Pod's packets (ENABLE_PER_PACKET_LB); the map is counted whole, so this holds while no host process keeps a connection to a Service open (https://github.com/cilium/cilium/blob/v1.20.2/bpf/bpf_sock.c#L322, https://github.com/cilium/cilium/blob/v1.20.2/bpf/bpf_lxc.c#L91)",
          },
        ],
      },
      needs: ["datapath"],
      observe: (r) => {
        const own = r.get("datapath").reverse_sk_holder ?? null;
        return own === null
          ? { value: dp(r, "reverse_sk_entries"), evidence: r.evidence("datapath", "reverse_sk_entries") }
          : { value: own, evidence: r.evidence("datapath", "reverse_sk_holder") };
      },
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

export async function programState(ctx: RunContext, holder: PodInfo) {
  const { id, evidence: idEvidence } = await endpointIdRaw(ctx, ctx.namespace, "holder");
  const endpoint = read(
    await ciliumDbgRaw(ctx, holder.node, ["endpoint", "get", String(id), "-o", "json"]),
    parseEndpointJson,
  );
  const dev = endpoint.parsed.interfaceName ?? "";
  const bpftool = read(await agentBpftool(ctx, holder.node, ["net", "show", "dev", dev]), parseBpftoolNet);
  const tcFilter = RawText.stdout(
    await onNode(ctx, holder.node, ["tc", "filter", "show", "dev", dev, "ingress"]),
  );
  const maps = read(await ciliumDbgRaw(ctx, holder.node, ["map", "list"]), parseMapList);
  return {
    prog: buildProgRecord({
      endpointId: id,
      endpointIdEvidence: idEvidence,
      endpoint,
      bpftool,
      tcFilter: read(tcFilter, parseTcFilter),
      maps,
    }),
    maps,
  };
}

/** Lab step 5. */
export async function observeProgram(ctx: RunContext): Promise<RecordSet> {
  const cip = await clusterIp(ctx, ctx.namespace, "web").catch(async () => {
    await ensureWeb(ctx, 2);
    return clusterIp(ctx, ctx.namespace, "web");
  });
  const holder = await ensureHolder(ctx, cip);
  const { prog, maps } = await programState(ctx, holder);
  const status = read(await ciliumDbgRaw(ctx, holder.node, ["status"]), parseStatus);
  // socket LB's plumbing: programs at Cilium's cgroup root (none without socket LB; the path may be absent)
  const cgroup = await newerStep(ctx, "bpftool cgroup show", async () => {
    const r = await ctx.exec.run({
      target: { kind: "agent", node: holder.node },
      argv: ["bpftool", "cgroup", "show", CILIUM_CGROUP],
    });
    return {
      exitCode: r.exitCode,
      stdout: RawText.stdout(r),
      stderr: RawText.stderr(r),
      cgroup: r.exitCode === 0 ? parseBpftoolCgroup(r.stdout) : null,
    };
  });
  // the holder's own reverse entries, read from the map itself (its whole count is the node's)
  const reverse = await newerStep(ctx, "cilium_lb4_reverse_sk dump", async () =>
    read(
      await agentBpftool(ctx, holder.node, [
        "-p",
        "map",
        "dump",
        "pinned",
        `${TC_GLOBALS}/cilium_lb4_reverse_sk`,
      ]),
      parseReverseSkDump,
    ),
  );
  const backend = ctx.earlierRecords().ct?.record.backend ?? null;
  return {
    prog,
    datapath: mergeParts([
      buildAgentFacts({ status, kernel: await kernelOf(ctx, holder.node) }),
      buildSocketLbFacts({ maps, cgroup }),
      buildHolderReverse({ reverse, frontend: `${cip}:${WEB_PORT}`, backend }),
    ]),
  };
}

const TC_GLOBALS = "/sys/fs/bpf/tc/globals";

/** Issue 35: the holder's own entries in cilium_lb4_reverse_sk (web's ClusterIP reversed for its backend). */
export function buildHolderReverse(input: {
  reverse: Read<ReverseSkEntry[]> | null;
  frontend: string;
  backend: string | null;
}): Evidenced<DatapathRecord> {
  const { reverse } = input;
  if (!reverse) return { record: { reverse_sk_holder: null }, evidence: {} };
  const mine = reverse.parsed.filter(
    (e) => e.frontend === input.frontend && (input.backend === null || e.backend === input.backend),
  );
  const quotes = mine.map((e) => reverse.raw.jsonQuote([e.index]) ?? derive(`entry ${e.index}`, reverse.raw));
  return {
    record: { reverse_sk_holder: mine.length },
    evidence: {
      reverse_sk_holder: [
        ...quotes,
        derive(
          `${mine.length} of the map's ${reverse.parsed.length} entries reverse ${input.frontend}${input.backend ? ` for ${input.backend} (the holder's backend)` : ""}`,
          reverse.raw,
        ),
      ],
    },
  };
}

/** Where Cilium mounts its cgroup2 hierarchy and attaches the socket-LB programs (the chart's cgroup.hostRoot). */
export const CILIUM_CGROUP = "/run/cilium/cgroupv2";
const SOCK_HOOKS = ["connect4", "sendmsg4", "recvmsg4", "getpeername4"];

/** Ours: the socket-LB hooks attached at Cilium's cgroup root, and the reverse-socket map's entries. */
export function buildSocketLbFacts(input: {
  maps: Read<MapList>;
  cgroup: {
    exitCode: number | null;
    stdout: RawText;
    stderr: RawText;
    cgroup: { attachments: CgroupAttachment[] } | null;
  } | null;
}): Evidenced<DatapathRecord> {
  const sk = input.maps.parsed.maps.find((m) => m.name === "cilium_lb4_reverse_sk");
  const attached = input.cgroup?.cgroup?.attachments.filter((a) => a.name?.startsWith("cil_sock")) ?? [];
  const hooks = input.cgroup
    ? [...new Set(attached.map((a) => a.hook))].filter((h) => SOCK_HOOKS.includes(h)).sort()
    : null;
  const cg = input.cgroup;
  return {
    record: { reverse_sk_entries: sk?.entries ?? 0, sock_hooks: hooks },
    evidence: {
      reverse_sk_entries: sk
        ? [input.maps.raw.quote(sk.line)]
        : [derive("cilium_lb4_reverse_sk is not in map list: 0 entries", input.maps.raw)],
      sock_hooks: !cg
        ? []
        : cg.cgroup
          ? attached.length > 0
            ? attached.map((a) => cg.stdout.quote(a.line))
            : [derive(`no cil_sock program at ${CILIUM_CGROUP}`, cg.stdout)]
          : [
              ...cg.stderr.nonBlank(),
              derive(
                `bpftool cgroup show ${CILIUM_CGROUP} exited ${cg.exitCode}: no programs read`,
                cg.stderr,
              ),
            ],
    },
  };
}

/** Lab step 5. */
export function buildProgRecord(input: {
  endpointId: number;
  endpointIdEvidence?: EvidenceItem[];
  endpoint: Read<AgentEndpoint>;
  bpftool: Read<BpftoolNet>;
  tcFilter: Read<TcFilterShow>;
  maps: Read<MapList>;
}): Evidenced<ProgRecord> {
  const ep = input.endpoint.parsed;
  const dev = ep.interfaceName;
  if (!dev)
    throw new RecordError(
      "prog",
      "interface",
      `endpoint ${input.endpointId} has no status.networking.interface-name`,
    );
  const onDev = input.bpftool.parsed.attachments.filter((a) => a.device === dev);
  const ingress = onDev.find((a) => a.attach.endsWith("/ingress")) ?? onDev[0];
  const policy = findPolicyMap(input.maps.parsed, input.endpointId);
  const epLine = (member: string) =>
    [
      [0, "status", "networking", member],
      ["status", "networking", member],
    ]
      .map((p) => input.endpoint.raw.jsonQuote(p))
      .find((q) => q !== null) ?? null;
  const tc = input.tcFilter.raw.nonBlank();
  // a kernel ifindex is an int; the model's int64 printed past 2^53 would not be one
  if (typeof ep.interfaceIndex === "string")
    throw new RecordError("prog", "ifindex", `interface-index ${ep.interfaceIndex} is not an ifindex`);
  return {
    record: {
      endpoint_id: input.endpointId,
      interface: dev,
      ifindex: ep.interfaceIndex ?? ingress?.ifindex ?? 0,
      attach: ingress?.attach ?? "",
      program: ingress?.program ?? "",
      policy_map: policy?.name ?? "",
      tc_filter_lines: input.tcFilter.parsed.lineCount,
    },
    evidence: {
      endpoint_id: input.endpointIdEvidence ?? [],
      interface: [epLine("interface-name")].filter((q) => q !== null),
      ifindex: [epLine("interface-index")].filter((q) => q !== null),
      attach:
        onDev.length > 0
          ? onDev.map((a) => input.bpftool.raw.quote(a.line))
          : [derive(`no program attached to ${dev}`, input.bpftool.raw)],
      program: ingress ? [input.bpftool.raw.quote(ingress.line)] : [],
      policy_map: policy
        ? [input.maps.raw.quote(policy.line)]
        : [derive(`no policy map for endpoint ${input.endpointId} in map list`, input.maps.raw)],
      tc_filter_lines: tc.length > 0 ? tc : [derive("tc printed nothing: 0 lines", input.tcFilter.raw)],
    },
  };
}

/** Ours (program topic): the agent's attach mode, version, routing and the node's kernel. */
export function buildAgentFacts(input: {
  status: Read<AgentStatus>;
  kernel: string | null;
}): Evidenced<DatapathRecord> {
  const st = input.status.parsed;
  return {
    record: {
      cilium_version: st.ciliumVersion ?? "",
      kernel: input.kernel,
      attach_mode: st.attachMode,
      routing: st.routing,
    },
    evidence: { attach_mode: statusQuote(input.status.raw, st, "Attach Mode") },
  };
}
