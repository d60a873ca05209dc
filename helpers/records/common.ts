import { canonicalEndpoint } from "../parse/address.ts";
import { type CtEntry, parseCtLine } from "../parse/bpf-ct-list.ts";
import type { LbList, LbService } from "../parse/bpf-lb-list.ts";
import type { EndpointSlices } from "../parse/endpointslice-json.ts";
import { linesContaining } from "../parse/iptables-save.ts";
import type { AgentService, ServiceList } from "../parse/service-list.ts";
import type { AgentStatus } from "../parse/status.ts";
import { derive, type EvidenceItem, type Quote, type RawText, type Read } from "./evidence.ts";
import type { NodeBackends } from "./types.ts";

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
  /** The lines that name it and its IP (a `get pods -o json` output), when it was read from one. */
  evidence?: EvidenceItem[];
}

/**
 * The lines mentioning an IP as a whole address (`10.96.0.1` does not match `10.96.0.10`), which is
 * what the lab's "lines containing that ClusterIP" means.
 */
export function linesWithAddress(text: string, ip: string): string[] {
  const boundary = new RegExp(`(^|[^0-9.])${ip.replace(/\./g, "\\.")}(?![0-9]|\\.[0-9])`);
  return linesContaining(text, ip).filter((l) => boundary.test(l));
}

export function podsByIp(pods: PodRef[]): Map<string, string> {
  return new Map(pods.map((p) => [p.ip, p.name]));
}

export function ipOf(address: string): string {
  return address.startsWith("[")
    ? address.slice(1, address.indexOf("]"))
    : address.slice(0, address.lastIndexOf(":"));
}

/** The status line of `key` (a `fields` key of parseStatus), quoted from the output it was parsed from. */
export function statusQuote(raw: RawText, st: AgentStatus, key: string): Quote[] {
  const n = st.lines[key];
  return n === undefined ? [] : [raw.quote(n)];
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

/** Whether a `bpf lb list` row is at `endpoint`, in whatever form either prints an IPv6 address. */
function atEndpoint(s: LbService, endpoint: string): boolean {
  return (
    s.frontend === endpoint || canonicalEndpoint(s.frontend) === (canonicalEndpoint(endpoint) ?? endpoint)
  );
}

export function findLbService(lb: LbList, frontend: string, protocol = "TCP"): LbService | null {
  return (
    lb.services.find(
      (s) =>
        atEndpoint(s, frontend) && s.scope === "external" && (s.protocol === null || s.protocol === protocol),
    ) ?? null
  );
}

/**
 * Lines of the agent's service list that show an entry: for `-o json` the members of its spec named (`id`,
 * `frontend-address`, …), for the text form its row.
 */
export function serviceQuotes(
  raw: RawText,
  s: AgentService,
  members: (string | (string | number)[])[] = ["id"],
): Quote[] {
  if (s.line !== undefined) return [raw.quote(s.line)];
  const at = s.path;
  if (!at) return [];
  return members
    .map((m) => raw.jsonQuote([...at, ...(Array.isArray(m) ? m : [m])]))
    .filter((q): q is Quote => q !== null);
}

/** The members that identify a Service entry: id, type, namespace/name, frontend address and port. */
export const SERVICE_ID_MEMBERS: (string | (string | number)[])[] = [
  "id",
  ["flags", "type"],
  ["flags", "namespace"],
  ["flags", "name"],
  ["frontend-address", "ip"],
  ["frontend-address", "port"],
];

/** A backend of the agent's service list, quoted (its `ip` line for `-o json`, its row for text). */
export function serviceBackendQuotes(raw: RawText, b: AgentService["backends"][number]): Quote[] {
  if (b.line !== undefined) return [raw.quote(b.line)];
  if (!b.path) return [];
  const q = raw.jsonQuote([...b.path, "ip"]);
  return q ? [q] : [];
}

/** The backend slots of a frontend (`ip:port`, external scope, TCP) in `bpf lb list`: 0 when it has no entry. */
export function slotCount(lb: LbList, frontend: string): number {
  return findLbService(lb, frontend)?.backends.length ?? 0;
}

/**
 * iptables-save (or ip6tables-save) lines with `-d <ip>/32` (`/128` for an IPv6 address), and `--dport <port>` when
 * one is given: kube-proxy's rules for an address (or one port of it); none for no address.
 */
export function ruleLines(raw: RawText, ip: string | null, port?: number): Quote[] {
  return ip
    ? raw.quotes(
        (l) =>
          l.includes(` -d ${ip}/${ip.includes(":") ? 128 : 32} `) &&
          (port === undefined || l.includes(` --dport ${port} `)),
      )
    : [];
}

/** A frontend's rows in `bpf lb list` but UDP's, by its endpoint in canonical form (IPv6 ones print bracketed). */
export function lbRowsAt(lb: LbList, endpoint: string): LbService[] {
  return lb.services.filter((s) => atEndpoint(s, endpoint) && s.protocol !== "UDP");
}

/** A frontend's backend slots per scope in `bpf lb list` (external, and internal for a two-scope Service); null when it has neither. */
export function lbScopes(
  lb: LbList,
  endpoint: string,
): { external: number | null; internal: number | null } | null {
  const rows = lbRowsAt(lb, endpoint);
  const of = (scope: "external" | "internal") => rows.find((s) => s.scope === scope)?.backends.length ?? null;
  return rows.length === 0 ? null : { external: of("external"), internal: of("internal") };
}

/**
 * Whether kube-proxy serves an address: its nat rule for it (`… -d <ip>/32 … "<svc> loadbalancer IP" / "external
 * IP" …`), not the REJECT it writes while the Service has no endpoints yet (`has no endpoints`).
 */
export function kubeProxyServes(raw: RawText, ip: string | null, port?: number): boolean {
  return ruleLines(raw, ip, port).some((q) => /"[^"]* (?:loadbalancer IP|external IP)"/.test(q.quote));
}

/** Whether kube-proxy DNATs a Service (`<ns>/<svc>:<port>`) to its endpoints: a KUBE-SEP rule of it exists. */
export function kubeProxyHasEndpoints(raw: RawText, service: string): boolean {
  return raw.lines.some((l) => l.includes(`"${service}`) && /-j KUBE-SEP-/.test(l));
}

/** The rows of a frontend in `bpf lb list`: slot 0 and every backend slot, quoted. */
export function lbRows(raw: RawText, s: LbService): Quote[] {
  const lines = [...(s.line !== null ? [s.line] : []), ...s.backends.map((b) => b.line)];
  return [...new Set(lines)].sort((a, b) => a - b).map((n) => raw.quote(n));
}

/** The backend rows of a frontend in `bpf lb list`, quoted. */
export function lbBackendRows(raw: RawText, s: LbService): Quote[] {
  return s.backends.map((b) => raw.quote(b.line));
}

/**
 * The lines behind an EndpointSlice's ready addresses (of the slices that have the port): per ready endpoint, its
 * address, its ready condition and the Pod it names (targetRef), quoted.
 */
export function readyEvidence(slices: Read<EndpointSlices>, port?: string | number): EvidenceItem[] {
  const raw = slices.raw;
  const out: EvidenceItem[] = [];
  slices.parsed.slices.forEach((s) => {
    const ports = s.ports.filter((p) => port === undefined || p.name === port || p.port === port);
    if (ports.length === 0) return;
    for (const e of s.endpoints) {
      if (!e.ready) continue;
      for (const path of [
        [...e.path, "addresses", 0],
        [...e.path, "conditions", "ready"],
        [...e.path, "targetRef", "name"],
      ]) {
        const q = raw.jsonQuote(path);
        if (q) out.push(q);
      }
    }
  });
  return out.length > 0 ? out : [derive("no ready endpoint", raw)];
}

/** The `bpf ct list` lines whose entry satisfies `pred`, quoted (each line is read again on its own). */
export function ctQuotes(raw: RawText, pred: (e: CtEntry) => boolean): Quote[] {
  return raw.quotes((l) => {
    if (l.trim() === "") return false;
    try {
      const e = parseCtLine(l.replace(/\s+$/, ""));
      return e !== null && pred(e);
    } catch {
      return false;
    }
  });
}

/** The Pods behind some backends, each by the lines that name it and give its IP (or why there is none). */
export function backendPods(
  backends: string[],
  pods: PodRef[],
): { names: string[]; evidence: EvidenceItem[] } {
  const byIp = podsByIp(pods);
  const names = backends.map((b) => byIp.get(ipOf(b)) ?? `<no pod with IP ${ipOf(b)}>`);
  const evidence = backends.flatMap((b) => {
    const p = pods.find((x) => x.ip === ipOf(b));
    if (p?.evidence && p.evidence.length > 0) return p.evidence;
    const listed = pods.flatMap((x) => x.evidence ?? []);
    return [derive(p ? `${p.name} has IP ${p.ip}` : `no listed Pod has IP ${ipOf(b)}`, listed)];
  });
  return { names, evidence };
}

/**
 * The first node whose view of a Service (`address (state)` rows from its service list) is not exactly `backends`
 * (address:port), each active; undefined when every node's is.
 */
export function viewNotAllActive(views: NodeBackends[], backends: string[]): NodeBackends | undefined {
  const want = backends
    .map((b) => `${b} (active)`)
    .sort()
    .join(", ");
  return views.find((v) => [...v.backends].sort().join(", ") !== want);
}
