import type { LbList, LbService } from "../parse/bpf-lb-list.ts";
import { linesContaining } from "../parse/iptables-save.ts";
import type { AgentService, ServiceList } from "../parse/service-list.ts";
import type { AgentStatus } from "../parse/status.ts";

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

export function podsByIp(pods: PodRef[]): Map<string, string> {
  return new Map(pods.map((p) => [p.ip, p.name]));
}

export function ipOf(address: string): string {
  return address.startsWith("[")
    ? address.slice(1, address.indexOf("]"))
    : address.slice(0, address.lastIndexOf(":"));
}

export const statusLine = (st: AgentStatus, key: string): string[] =>
  st.fields[key] !== undefined ? [`${key}: ${st.fields[key]}`] : [];

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

export function lbRow(s: LbService, slot: number): string {
  const b = s.backends.find((x) => x.slot === slot);
  return `${s.frontend}${s.protocol ? `/${s.protocol}` : ""} (${slot})  ${b?.address ?? "?"} (${s.revNat}) (${slot})`;
}
