import { ParseError } from "../errors.ts";
import { contentLines, fail, mayBeCut, parseJsonText } from "./lines.ts";

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
/** `Key:   value` at the left margin; a key's words are one space apart (a table's header has wider gaps). */
const TOP = /^([A-Za-z][A-Za-z0-9/()-]*(?: [A-Za-z0-9/()-]+)*):\s+(.*)$/;
/** `  Status:   True`, `  - NodePort:   Enabled (…)` under KubeProxyReplacement Details → key and value. */
function detail(text: string): { key: string; value: string } | null {
  const colon = text.indexOf(":");
  if (colon < 0) return null;
  const key = text.slice(0, colon).trim().replace(/^- */, "");
  if (key === "") return null;
  return { key, value: text.slice(colon + 1).trim() };
}
/** Headings: their items follow on indented lines, so a value on the heading's own line is an item joined to it. */
const HEADINGS = new Set(["Allocated addresses", "KubeProxyReplacement Details"]);
/** Values some keys always have: anything after them is the next line, joined. */
const SHAPES: Record<string, RegExp> = {
  "Controller Status": /^\d+\/\d+ healthy$/,
  "Global Identity Range": /^min \d+, max \d+$/,
};

/**
 * A value that holds the next line: a `Key:` padded to the value column (`Disabled   Kubernetes:     Ok`), or a
 * heading's colon at its end (`… Metrics: DisabledKubeProxyReplacement Details:`).
 */
function joined(key: string, value: string): boolean {
  if (/[A-Za-z0-9)\]]: {2,}\S/.test(value) || /[A-Za-z]:$/.test(value)) return true;
  // an elision mark (`...`) glued to the end: the excerpt's next line
  if (/(?:\.{3}|…)$/.test(value)) return true;
  // the header of a table under a key (Controller Status, Cluster health, BPF Maps: `Name   Last success …`)
  if (/Name {2,}[A-Z]/.test(value)) return true;
  if (HEADINGS.has(key) && value !== "") return true;
  const shape = SHAPES[key];
  return shape !== undefined && !shape.test(value);
}

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
  const lines = contentLines(FORMAT, input);
  for (const line of lines) {
    if (/^KubeProxyReplacement Details:$/.test(line.text)) {
      inDetails = true;
      matched++;
      mayBeCut(line);
      continue;
    }
    if (inDetails && /^\s/.test(line.text)) {
      const d = detail(line.text);
      if (!d) continue;
      const { key, value } = d;
      // a list item (`- service.cilium.io/node`) has no colon: one that has is the next line's, joined
      if (joined(key, value) || key.includes("."))
        fail(FORMAT, line, "a second `Key: value` in the value: two lines joined?");
      mayBeCut(line);
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
    if (!m) {
      // indented: a heading's items or table rows (addresses, controllers, cluster health); at the left margin
      // only `Key: value` lines, headings and a table's header (`Name   IP   Node …`)
      if (
        /^\s/.test(line.text) ||
        /^Name {2,}\S/.test(line.text) ||
        /^[A-Za-z][A-Za-z0-9/()-]*(?: [A-Za-z0-9/()-]+)*:$/.test(line.text)
      )
        continue;
      fail(FORMAT, line, "no `Key: value` on this line, nor a heading or a table header");
    }
    matched++;
    const key = m[1] as string;
    const value = m[2] as string;
    if (joined(key, value.trim()))
      fail(FORMAT, line, "a second `Key: value` in the value: two lines joined?");
    if (key in st.fields) fail(FORMAT, line, `${key} twice`);
    mayBeCut(line);
    st.fields[key] = value.trim();
    st.lines[key] = line.no;
    switch (key) {
      case "KubeProxyReplacement": {
        const kpr = /^(\S+)(?:\s+(\[.*\]))?$/.exec(value.trim());
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
