import { formatEndpoint } from "../parse/address.ts";
import type { CtList } from "../parse/bpf-ct-list.ts";
import type { LbList, LbService } from "../parse/bpf-lb-list.ts";
import type { BpftoolNet } from "../parse/bpftool-net.ts";
import type { AgentConfig } from "../parse/config.ts";
import type { CurlResult } from "../parse/curl.ts";
import type { AgentEndpoint } from "../parse/endpoint-json.ts";
import type { EndpointSlices } from "../parse/endpointslice-json.ts";
import { readyAddresses } from "../parse/endpointslice-json.ts";
import { allRules, type IptablesSave, kubeProxyChains, linesContaining } from "../parse/iptables-save.ts";
import { findPolicyMap, type MapList } from "../parse/map-list.ts";
import type { NetstatOutput } from "../parse/netstat.ts";
import type { AgentService, ServiceList } from "../parse/service-list.ts";
import type { SsOutput } from "../parse/ss.ts";
import type { AgentStatus } from "../parse/status.ts";
import type { TcFilterShow } from "../parse/tc-filter.ts";
import type {
  CtRecord,
  DatapathRecord,
  Evidenced,
  GhostRecord,
  IptablesRecord,
  NodePortRecord,
  ProgRecord,
  ReportRecord,
  ScaleRecord,
  SvcRecord,
} from "./types.ts";

/** A record could not be built: says which record, which field and what was missing. */
export class RecordError extends Error {
  constructor(record: string, field: string, why: string) {
    super(`${record}.${field}: ${why}`);
    this.name = "RecordError";
  }
}

export interface PodRef {
  name: string;
  ip: string;
}

/**
 * The lines mentioning an IP as a whole address (`10.96.0.1` does not match `10.96.0.10`), which is
 * what the lab's "lines containing that ClusterIP" means.
 */
export function linesWithAddress(text: string, ip: string): string[] {
  const boundary = new RegExp(`(^|[^0-9.])${ip.replace(/\./g, "\\.")}(?![0-9]|\\.[0-9])`);
  return linesContaining(text, ip).filter((l) => boundary.test(l));
}

function podsByIp(pods: PodRef[]): Map<string, string> {
  return new Map(pods.map((p) => [p.ip, p.name]));
}

function ipOf(address: string): string {
  return address.startsWith("[")
    ? address.slice(1, address.indexOf("]"))
    : address.slice(0, address.lastIndexOf(":"));
}

const statusLine = (st: AgentStatus, key: string): string[] =>
  st.fields[key] !== undefined ? [`${key}: ${st.fields[key]}`] : [];

/** Lab step 1. */
export function buildIptablesRecord(input: {
  iptablesSave: string;
  clusterIp: string;
  status: AgentStatus;
}): Evidenced<IptablesRecord> {
  const svc = linesContaining(input.iptablesSave, "KUBE-SVC");
  const cip = linesWithAddress(input.iptablesSave, input.clusterIp);
  const cil = linesContaining(input.iptablesSave, "CILIUM");
  if (!input.status.kubeProxyReplacement) {
    throw new RecordError(
      "iptables",
      "kube_proxy_replacement",
      "cilium-dbg status printed no KubeProxyReplacement line",
    );
  }
  return {
    record: {
      cluster_ip: input.clusterIp,
      kube_svc_lines: svc.length,
      cluster_ip_lines: cip.length,
      cilium_lines: cil.length,
      kube_proxy_replacement: input.status.kubeProxyReplacement,
    },
    evidence: {
      kube_svc_lines: svc,
      cluster_ip_lines: cip,
      cilium_lines: cil.slice(0, 5),
      kube_proxy_replacement: statusLine(input.status, "KubeProxyReplacement"),
    },
  };
}

/** The agent's ClusterIP entry for ns/name at ip:port (names are only in JSON; text rows match by address). */
export function findAgentService(
  list: ServiceList,
  frontend: string,
  opts: { type?: string; protocol?: string; namespace?: string; name?: string } = {},
): AgentService | null {
  return (
    list.services.find(
      (s) =>
        s.frontend === frontend &&
        s.scope === "external" &&
        (!opts.type || s.type === opts.type) &&
        (!opts.protocol || s.protocol === null || s.protocol === opts.protocol) &&
        (!opts.namespace || s.namespace === null || s.namespace === opts.namespace) &&
        (!opts.name || s.name === null || s.name === opts.name),
    ) ?? null
  );
}

export function findLbService(lb: LbList, frontend: string, protocol = "TCP"): LbService | null {
  return (
    lb.services.find(
      (s) =>
        s.frontend === frontend && s.scope === "external" && (s.protocol === null || s.protocol === protocol),
    ) ?? null
  );
}

function lbRow(s: LbService, slot: number): string {
  const b = s.backends.find((x) => x.slot === slot);
  return `${s.frontend}${s.protocol ? `/${s.protocol}` : ""} (${slot})  ${b?.address ?? "?"} (${s.revNat}) (${slot})`;
}

/** Lab step 2. */
export function buildSvcRecord(input: {
  services: ServiceList;
  lb: LbList;
  clusterIp: string;
  port: number;
  namespace: string;
  name: string;
  pods: PodRef[];
}): Evidenced<SvcRecord> {
  const frontend = formatEndpoint(input.clusterIp, input.port);
  const svc = findAgentService(input.services, frontend, {
    type: "ClusterIP",
    protocol: "TCP",
    namespace: input.namespace,
    name: input.name,
  });
  if (!svc)
    throw new RecordError(
      "svc",
      "service_id",
      `no ClusterIP entry ${frontend} for ${input.namespace}/${input.name} in the agent's service list`,
    );
  const lb = findLbService(input.lb, frontend);
  if (!lb) throw new RecordError("svc", "backends", `no ${frontend} frontend in bpf lb list`);
  const byIp = podsByIp(input.pods);
  const backends = lb.backends.filter((b) => b.address !== null).map((b) => b.address as string);
  return {
    record: {
      service_id: svc.id,
      frontend,
      backends,
      backend_pods: backends.map((b) => byIp.get(ipOf(b)) ?? `<no pod with IP ${ipOf(b)}>`),
    },
    evidence: {
      service_id: [`${svc.id} ${svc.frontend} ${svc.type} ${svc.namespace ?? ""}/${svc.name ?? ""}`],
      backends: lb.backends.map((b) => lbRow(lb, b.slot)),
      backend_pods: input.pods.map((p) => `${p.name} ${p.ip}`),
    },
  };
}

/** Lab step 3. `pods` are the web Pods after the scale. */
export function buildScaleRecord(input: {
  lb: LbList;
  frontend: string;
  before: string[];
}): Evidenced<ScaleRecord> {
  const lb = findLbService(input.lb, input.frontend);
  if (!lb) throw new RecordError("scale", "backends", `no ${input.frontend} frontend in bpf lb list`);
  const backends = lb.backends.filter((b) => b.address !== null).map((b) => b.address as string);
  return {
    record: { backends, new_backends: backends.filter((b) => !input.before.includes(b)) },
    evidence: { backends: lb.backends.map((b) => lbRow(lb, b.slot)) },
  };
}

export interface HolderEvent {
  event: string;
  local?: string;
  peer?: string;
  [key: string]: unknown;
}

/** The holder logs one JSON object per line; the last `connected` event is the live connection. */
export function lastHolderConnection(log: string): HolderEvent | null {
  let last: HolderEvent | null = null;
  for (const line of log.split("\n")) {
    const t = line.trim();
    if (!t.startsWith("{")) continue;
    try {
      const e = JSON.parse(t) as HolderEvent;
      if (e.event === "connected") last = e;
    } catch {
      // a torn last line while the log is being written
    }
  }
  return last;
}

/** Lab step 4. */
export function buildCtRecord(input: {
  holderIp: string;
  sourcePort: number;
  holderLog: string;
  holderNetstat: NetstatOutput;
  ct: CtList;
  status: AgentStatus;
  pods: PodRef[];
}): Evidenced<CtRecord> {
  const client = formatEndpoint(input.holderIp, input.sourcePort);
  const conn = lastHolderConnection(input.holderLog);
  if (!conn?.peer) throw new RecordError("ct", "app_peer", "the holder log has no `connected` event");
  const sock = input.holderNetstat.connections.find((c) => c.local === client && c.proto.startsWith("tcp"));
  if (!sock)
    throw new RecordError("ct", "socket_peer", `no connection from ${client} in the holder's netstat`);
  const out = input.ct.entries.find(
    (e) => e.protocol === "TCP" && e.direction === "OUT" && e.source === client,
  );
  if (!out) throw new RecordError("ct", "backend", `no TCP OUT conntrack entry from ${client}`);
  const svcEntries = input.ct.entries.filter(
    (e) => e.protocol === "TCP" && e.direction === "SVC" && e.source.endsWith(`:${input.sourcePort}`),
  );
  const byIp = podsByIp(input.pods);
  const ctLine = (e: {
    protocol: string;
    direction: string;
    source: string;
    destination: string;
    revNat: number;
    backendId: number | null;
  }) =>
    `${e.protocol} ${e.direction} ${e.source} -> ${e.destination} RevNAT=${e.revNat} BackendID=${e.backendId ?? "-"}`;
  return {
    record: {
      client,
      app_peer: conn.peer,
      socket_peer: sock.foreign,
      backend: out.destination,
      backend_pod: byIp.get(ipOf(out.destination)) ?? `<no pod with IP ${ipOf(out.destination)}>`,
      svc_entries: svcEntries.length,
      socket_lb_coverage: input.status.socketLbCoverage,
    },
    evidence: {
      app_peer: [JSON.stringify(conn)],
      socket_peer: [`${sock.proto} ${sock.local} ${sock.foreign} ${sock.state ?? ""}`],
      backend: [ctLine(out)],
      svc_entries: svcEntries.map(ctLine),
      socket_lb_coverage: statusLine(input.status, "KubeProxyReplacement Details/Socket LB Coverage"),
    },
  };
}

/** Lab step 5. */
export function buildProgRecord(input: {
  endpointId: number;
  endpoint: AgentEndpoint;
  bpftool: BpftoolNet;
  tcFilterRaw: string;
  tcFilter: TcFilterShow;
  maps: MapList;
}): Evidenced<ProgRecord> {
  const dev = input.endpoint.interfaceName;
  if (!dev)
    throw new RecordError(
      "prog",
      "interface",
      `endpoint ${input.endpointId} has no status.networking.interface-name`,
    );
  const onDev = input.bpftool.attachments.filter((a) => a.device === dev);
  const ingress = onDev.find((a) => a.attach.endsWith("/ingress")) ?? onDev[0];
  const policy = findPolicyMap(input.maps, input.endpointId);
  return {
    record: {
      endpoint_id: input.endpointId,
      interface: dev,
      ifindex: input.endpoint.interfaceIndex ?? ingress?.ifindex ?? 0,
      attach: ingress?.attach ?? "",
      program: ingress?.program ?? "",
      policy_map: policy?.name ?? "",
      tc_filter_lines: input.tcFilter.lineCount,
    },
    evidence: {
      attach: onDev.map(
        (a) =>
          `${a.device}(${a.ifindex}) ${a.attach} ${a.rawName} ${a.linkId !== null ? `prog_id ${a.progId} link_id ${a.linkId}` : `id ${a.progId}`}`,
      ),
      policy_map: policy ? [`${policy.name} ${policy.entries}`] : [],
      tc_filter_lines: input.tcFilterRaw.split("\n").filter((l) => l.trim() !== ""),
    },
  };
}

/** Lab step 6. */
export function buildNodePortRecord(input: {
  nodeIp: string;
  nodePort: number;
  curl: CurlResult;
  iptablesSave: string;
  ssRaw: string;
  ss: SsOutput;
  services: ServiceList;
}): Evidenced<NodePortRecord> {
  const ipt = linesContaining(input.iptablesSave, String(input.nodePort));
  const np = findAgentService(input.services, formatEndpoint("0.0.0.0", input.nodePort), {
    type: "NodePort",
    protocol: "TCP",
  });
  return {
    record: {
      node_ip: input.nodeIp,
      node_port: input.nodePort,
      http_code: input.curl.httpCode ?? 0,
      iptables_lines: ipt.length,
      listen_sockets: input.ss.sockets.length,
      service_id: np?.id ?? null,
    },
    evidence: {
      http_code: [
        `curl exit=${input.curl.exitCode} http_code=${input.curl.httpCode ?? "000"} time_total=${input.curl.timeTotal ?? "?"}`,
        ...(input.curl.error ? [input.curl.error] : []),
      ],
      iptables_lines: ipt,
      listen_sockets: input.ssRaw.split("\n").filter((l) => l.trim() !== ""),
      service_id: np ? [`${np.id} ${np.frontend} ${np.type}`] : [],
    },
  };
}

/** Lab step 7. */
export function buildGhostRecord(input: {
  clusterIp: string;
  port: number;
  services: ServiceList;
  curl: CurlResult;
  config: AgentConfig;
}): Evidenced<GhostRecord> {
  const frontend = formatEndpoint(input.clusterIp, input.port);
  const svc = findAgentService(input.services, frontend, { type: "ClusterIP", protocol: "TCP" });
  if (!svc) throw new RecordError("ghost", "backends", `no ${frontend} entry in the agent's service list`);
  const nbr = input.config.options.ServiceNoBackendResponse;
  if (nbr === undefined)
    throw new RecordError(
      "ghost",
      "no_backend_response",
      "cilium-dbg config -a has no ServiceNoBackendResponse",
    );
  if (input.curl.timeTotal === null) throw new RecordError("ghost", "seconds", "curl printed no time_total");
  return {
    record: {
      cluster_ip: input.clusterIp,
      backends: svc.backends.length,
      curl_exit: input.curl.exitCode,
      seconds: input.curl.timeTotal,
      no_backend_response: nbr,
    },
    evidence: {
      backends: [`${svc.id} ${svc.frontend} ${svc.type} (${svc.backends.length} backends)`],
      curl_exit: [
        `curl exit=${input.curl.exitCode} time_total=${input.curl.timeTotal}`,
        ...(input.curl.error ? [input.curl.error] : []),
      ],
      no_backend_response: [`ServiceNoBackendResponse          : ${nbr}`],
    },
  };
}

/** Lab step 8: re-read from the current state, never copied from earlier records. */
export function buildReportRecord(input: {
  status: AgentStatus;
  webLb: LbService | null;
  holderBackend: string;
  holderProgram: string;
  iptablesSave: string;
  nodePort: number;
  config: AgentConfig;
}): Evidenced<ReportRecord> {
  const lines = linesContaining(input.iptablesSave, String(input.nodePort));
  return {
    record: {
      kube_proxy_replacement: input.status.kubeProxyReplacement ?? "",
      socket_lb_coverage: input.status.socketLbCoverage,
      web_backends: input.webLb ? input.webLb.backends.length : 0,
      holder_backend: input.holderBackend,
      holder_program: input.holderProgram,
      nodeport_iptables_lines: lines.length,
      ghost_no_backend_response: input.config.options.ServiceNoBackendResponse ?? "",
    },
    evidence: {
      nodeport_iptables_lines: lines,
      web_backends: input.webLb
        ? input.webLb.backends.map((b) => lbRow(input.webLb as LbService, b.slot))
        : [],
    },
  };
}

/** report.txt: seven `key=value` lines in the lab's order (a missing value is written empty). */
export function formatReport(r: ReportRecord): string {
  const keys: (keyof ReportRecord)[] = [
    "kube_proxy_replacement",
    "socket_lb_coverage",
    "web_backends",
    "holder_backend",
    "holder_program",
    "nodeport_iptables_lines",
    "ghost_no_backend_response",
  ];
  return `${keys.map((k) => `${k}=${r[k] ?? ""}`).join("\n")}\n`;
}

/** Reads report.txt back; numbers become numbers, an empty coverage becomes null. */
export function parseReport(text: string): ReportRecord {
  const kv = new Map<string, string>();
  for (const line of text.split("\n")) {
    const at = line.indexOf("=");
    if (at > 0) kv.set(line.slice(0, at).trim(), line.slice(at + 1).trim());
  }
  const need = (k: string) => {
    const v = kv.get(k);
    if (v === undefined) throw new RecordError("report", k, "missing from report.txt");
    return v;
  };
  return {
    kube_proxy_replacement: need("kube_proxy_replacement"),
    socket_lb_coverage: need("socket_lb_coverage") || null,
    web_backends: Number(need("web_backends")),
    holder_backend: need("holder_backend"),
    holder_program: need("holder_program"),
    nodeport_iptables_lines: Number(need("nodeport_iptables_lines")),
    ghost_no_backend_response: need("ghost_no_backend_response"),
  };
}

const KUBELET_CHAIN = /^KUBE-(FIREWALL|KUBELET-CANARY|IPTABLES-HINT)$/;

function chainNames(save: IptablesSave): string[] {
  const chains = new Set<string>();
  for (const t of Object.values(save.tables)) for (const c of Object.keys(t.chains)) chains.add(c);
  return [...chains].sort();
}

/** Ours (iptables topic): kube-proxy, kubelet and Cilium chains on the node. */
export function buildChainFacts(save: IptablesSave): Evidenced<DatapathRecord> {
  const chains = chainNames(save);
  const kp = kubeProxyChains(save);
  return {
    record: {
      kube_proxy_chains: kp,
      kubelet_chains: chains.filter((c) => KUBELET_CHAIN.test(c)),
      cilium_chains: chains.filter((c) => c.startsWith("CILIUM_")),
    },
    evidence: { kube_proxy_chains: kp.slice(0, 10) },
  };
}

/** Ours (scale topic): KUBE-SEP chains of ns/web, the EndpointSlice and the Pods after the scale. */
export function buildScaleFacts(input: {
  iptables: IptablesSave;
  namespace: string;
  slices: EndpointSlices;
  pods: PodRef[];
  targetPort: number;
}): Evidenced<DatapathRecord> {
  const rules = allRules(input.iptables);
  // kube-proxy comments a KUBE-SEP rule `ns/svc` or `ns/svc:port`: `ns/web-np` is another Service
  const web = `${input.namespace}/web`;
  const seps = new Set(
    rules
      .filter(
        (r) => r.chain.startsWith("KUBE-SEP-") && (r.comment === web || r.comment?.startsWith(`${web}:`)),
      )
      .map((r) => r.chain),
  );
  return {
    record: {
      web_sep_chains: seps.size,
      scale_endpointslice: readyAddresses(input.slices, input.targetPort),
      scale_pods: Object.fromEntries(input.pods.map((p) => [p.name, formatEndpoint(p.ip, input.targetPort)])),
    },
    evidence: { web_sep_chains: [...seps] },
  };
}

/** Ours (holder topic): socket LB state and whether the backend saw the holder's own address. */
export function buildHolderFacts(input: {
  status: AgentStatus;
  backendNetstat: NetstatOutput;
  client: string;
  webClusterIp: string;
}): Evidenced<DatapathRecord> {
  const seen = input.backendNetstat.connections.filter((c) => c.foreign === input.client);
  return {
    record: {
      socket_lb: input.status.socketLb,
      backend_sees_client: seen.length > 0,
      web_cluster_ip: input.webClusterIp,
    },
    evidence: {
      backend_sees_client: seen.map((c) => `${c.proto} ${c.local} ${c.foreign} ${c.state ?? ""}`),
      socket_lb: statusLine(input.status, "KubeProxyReplacement Details/Socket LB"),
    },
  };
}

/** Ours (program topic): the agent's attach mode, version, routing and the node's kernel. */
export function buildAgentFacts(input: {
  status: AgentStatus;
  kernel: string | null;
}): Evidenced<DatapathRecord> {
  return {
    record: {
      cilium_version: input.status.ciliumVersion ?? "",
      kernel: input.kernel,
      attach_mode: input.status.attachMode,
      routing: input.status.routing,
    },
    evidence: { attach_mode: statusLine(input.status, "Attach Mode") },
  };
}

/** Ours (ghost topic): kube-proxy's REJECT rules for ns/ghost and the 1.19+ `<vip>:0/ANY` entry. */
export function buildGhostFacts(input: {
  iptables: IptablesSave;
  lb: LbList;
  clusterIp: string;
  namespace: string;
}): Evidenced<DatapathRecord> {
  const rules = allRules(input.iptables);
  const rejects = rules.filter(
    (r) => r.target === "REJECT" && r.comment?.startsWith(`${input.namespace}/ghost`),
  );
  const wildcard = input.lb.services.find(
    (s) => s.frontend === formatEndpoint(input.clusterIp, 0) && s.protocol === "ANY",
  );
  return {
    record: { ghost_reject_rules: rejects.length, ghost_wildcard_entry: wildcard !== undefined },
    evidence: {
      ghost_reject_rules: rejects.map((r) => r.text),
      ghost_wildcard_entry: wildcard ? [`${wildcard.frontend}/ANY (0) [${wildcard.flags.join(", ")}]`] : [],
    },
  };
}

/** Merges partial datapath records (fields and evidence) from several topics. */
export function mergeDatapath(parts: (Evidenced<DatapathRecord> | undefined)[]): Evidenced<DatapathRecord> {
  const out: Evidenced<DatapathRecord> = { record: {}, evidence: {} };
  for (const p of parts) {
    if (!p) continue;
    Object.assign(out.record, p.record);
    Object.assign(out.evidence, p.evidence);
  }
  return out;
}
