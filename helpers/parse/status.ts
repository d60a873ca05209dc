import { ParseError } from "../errors.ts";
import { contentLines, parseJsonText } from "./lines.ts";

export interface KprDevice {
  name: string;
  ips: string[];
  directRouting: boolean;
}

export interface AgentStatus {
  /** "True" / "False" (1.16+); older agents print Strict/Partial/Probe/Disabled, kept as printed. */
  kubeProxyReplacement: string | null;
  devices: KprDevice[];
  /** "Enabled" / "Disabled" from KubeProxyReplacement Details (verbose) or JSON; null when absent. */
  socketLb: string | null;
  /** "Full" / "Hostns-only"; null when absent (plain `status`, or a build that does not print it). */
  socketLbCoverage: string | null;
  /** "TCX" / "Legacy TC" as printed in text; "tcx" / "tc" from JSON is mapped to the same words. */
  attachMode: string | null;
  /** e.g. "Network: Tunnel [vxlan]   Host: Legacy" normalised to single spaces. */
  routing: string | null;
  tunnelProtocol: string | null;
  deviceMode: string | null;
  ciliumVersion: string | null;
  kubernetesVersion: string | null;
  masquerading: string | null;
  nodePort: string | null;
  /** Every `Key: value` of the top block and of the KPR details block, as printed. */
  fields: Record<string, string>;
  /** The 1-based line of each of `fields` (text only). */
  lines: Record<string, number>;
}

const FORMAT = "status";
const TOP = /^([A-Za-z][A-Za-z0-9 /()-]*?):\s+(.*)$/;
const DETAIL = /^\s+-?\s*([^:]+):\s*(.*?)\s*$/;

export function parseDevices(text: string): KprDevice[] {
  const inner = text.trim().replace(/^\[/, "").replace(/\]$/, "").trim();
  if (inner === "") return [];
  return inner.split(/,\s+(?=\S)/).map((part) => {
    const directRouting = /\(Direct Routing\)|\*\*\(Direct Routing\)\*\*/.test(part);
    const tokens = part
      .replace(/\*{0,2}\(Direct Routing\)\*{0,2}/, "")
      .split(/\s+/)
      .filter(Boolean);
    return { name: tokens[0] ?? "", ips: tokens.slice(1), directRouting };
  });
}

function squeeze(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}

function emptyStatus(): AgentStatus {
  return {
    kubeProxyReplacement: null,
    devices: [],
    socketLb: null,
    socketLbCoverage: null,
    attachMode: null,
    routing: null,
    tunnelProtocol: null,
    deviceMode: null,
    ciliumVersion: null,
    kubernetesVersion: null,
    masquerading: null,
    nodePort: null,
    fields: {},
    lines: {},
  };
}

/** `cilium-dbg status` and `status --verbose` (text). */
export function parseStatus(input: string): AgentStatus {
  const st = emptyStatus();
  let inDetails = false;
  let matched = 0;
  const lines = contentLines(input);
  for (const line of lines) {
    if (/^KubeProxyReplacement Details:\s*$/.test(line.text)) {
      inDetails = true;
      matched++;
      continue;
    }
    if (inDetails && /^\s/.test(line.text)) {
      const d = DETAIL.exec(line.text);
      if (!d) continue;
      const key = (d[1] as string).trim();
      const value = d[2] as string;
      st.fields[`KubeProxyReplacement Details/${key}`] = value;
      st.lines[`KubeProxyReplacement Details/${key}`] = line.no;
      if (key === "Status" && !st.kubeProxyReplacement)
        st.kubeProxyReplacement = value.split(/\s+/)[0] ?? null;
      if (key === "Socket LB") st.socketLb = value;
      if (key === "Socket LB Coverage") st.socketLbCoverage = value;
      if (key === "Devices" && st.devices.length === 0) st.devices = parseDevices(value);
      if (key === "NodePort") st.nodePort = squeeze(value);
      matched++;
      continue;
    }
    inDetails = false;
    const m = TOP.exec(line.text);
    if (!m) continue; // tables under a heading (controllers, cluster health) are not key: value
    matched++;
    const key = m[1] as string;
    const value = m[2] as string;
    st.fields[key] = value.trim();
    st.lines[key] = line.no;
    switch (key) {
      case "KubeProxyReplacement": {
        const kpr = /^(\S+)\s*(\[.*\])?\s*$/.exec(value.trim());
        st.kubeProxyReplacement = kpr?.[1] ?? value.trim();
        if (kpr?.[2]) st.devices = parseDevices(kpr[2]);
        break;
      }
      case "Routing": {
        st.routing = squeeze(value);
        const t = /Tunnel \[(\w+)\]/.exec(value);
        st.tunnelProtocol = t ? (t[1] as string) : null;
        break;
      }
      case "Attach Mode":
        st.attachMode = squeeze(value);
        break;
      case "Device Mode":
        st.deviceMode = squeeze(value);
        break;
      case "Cilium": {
        const v = /^\S+\s+(\d+\.\d+\.\d+\S*)/.exec(value.trim());
        st.ciliumVersion = v ? (v[1] as string) : null;
        break;
      }
      case "Kubernetes": {
        const v = /\((v[^)]+)\)/.exec(value);
        st.kubernetesVersion = v ? (v[1] as string) : null;
        break;
      }
      case "Masquerading":
        st.masquerading = squeeze(value);
        break;
    }
  }
  if (matched === 0) {
    const first = lines[0];
    throw new ParseError(FORMAT, first?.no ?? 1, first?.text ?? "", "no `Key: value` status line found");
  }
  return st;
}

type Json = Record<string, unknown>;

function obj(v: unknown): Json {
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {};
}

/** `cilium-dbg status -o json` (models.StatusResponse). Booleans are omitempty: missing means false. */
export function parseStatusJson(input: string): AgentStatus {
  const doc = obj(parseJsonText("status-json", input));
  if (Object.keys(doc).length === 0) {
    throw new ParseError("status-json", 1, input.split("\n")[0] ?? "", "expected a StatusResponse object");
  }
  const st = emptyStatus();
  const kpr = obj(doc["kube-proxy-replacement"]);
  const features = obj(kpr.features);
  if (typeof kpr.mode === "string") st.kubeProxyReplacement = kpr.mode;
  const devList = Array.isArray(kpr.deviceList) ? (kpr.deviceList as Json[]) : [];
  const direct = typeof kpr.directRoutingDevice === "string" ? kpr.directRoutingDevice : null;
  st.devices = devList.map((d) => ({
    name: String(d.name ?? ""),
    ips: (Array.isArray(d.ip) ? (d.ip as string[]) : []).filter((ip) => ip !== ""),
    directRouting: d.name === direct,
  }));
  if (Object.keys(kpr).length > 0) {
    const sock = obj(features.socketLB);
    const enabled = sock.enabled === true;
    st.socketLb = enabled ? "Enabled" : "Disabled";
    // as the text form prints it (pkg/client/client.go): "Full" unless hostns-only, whether or not socket LB is on
    st.socketLbCoverage = features.bpfSocketLBHostnsOnly === true ? "Hostns-only" : "Full";
    const np = obj(features.nodePort);
    st.nodePort = np.enabled === true ? `Enabled (Range: ${np.portMin}-${np.portMax})` : "Disabled";
  }
  const attach = doc["attach-mode"];
  if (typeof attach === "string")
    st.attachMode = attach === "tcx" ? "TCX" : attach === "tc" ? "Legacy TC" : attach;
  const routing = obj(doc.routing);
  if (Object.keys(routing).length > 0) {
    const inter = String(routing["inter-host-routing-mode"] ?? "");
    const tunnel =
      typeof routing["tunnel-protocol"] === "string" ? (routing["tunnel-protocol"] as string) : null;
    st.tunnelProtocol = inter === "Tunnel" ? tunnel : null;
    const net = inter === "Tunnel" && tunnel ? `Tunnel [${tunnel}]` : inter;
    st.routing = `Network: ${net} Host: ${String(routing["intra-host-routing-mode"] ?? "")}`;
  }
  const cilium = obj(doc.cilium);
  const ver = /(\d+\.\d+\.\d+\S*)/.exec(String(cilium.msg ?? ""));
  st.ciliumVersion = ver ? (ver[1] as string) : null;
  const k8s = obj(doc.kubernetes);
  const kv = /\((v[^)]+)\)/.exec(String(k8s.msg ?? ""));
  st.kubernetesVersion = kv ? (kv[1] as string) : null;
  return st;
}
