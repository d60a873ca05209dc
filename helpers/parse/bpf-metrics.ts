/**
 * `cilium-dbg bpf metrics list -o json`: the datapath's own counters, read from the pinned BPF metrics map
 * (so they survive an agent restart): one object per reason, direction and the BPF source line that counted.
 *   [{"reason":"Policy denied","direction":"ingress","packets":3,"bytes":222,"line":1411,"file":"bpf_lxc.c"}]
 * Reasons below 130 in Cilium's table (pkg/monitor/api/drop.go) are forwards ("Success", "Interface…") or
 * socket-LB events; the others are drops.
 */
import { parseJsonText } from "./lines.ts";
import { type U64, u64 } from "./u64.ts";

export interface BpfMetric {
  reason: string;
  direction: string;
  /** Exact as printed (a 64-bit counter). */
  packets: U64;
  bytes: U64;
  line: number;
  file: string;
}

export function parseBpfMetrics(text: string): BpfMetric[] {
  // an empty map prints "No entries found." on stderr and nothing on stdout
  if (text.trim() === "") return [];
  // the counters are 64-bit: read as the decimal strings they were printed as, before JSON.parse rounds them
  const exact = text.replace(/"(packets|bytes)":\s*(\d+)/g, '"$1":"$2"');
  const rows = parseJsonText("cilium-dbg bpf metrics list -o json", exact);
  if (!Array.isArray(rows)) throw new Error("cilium-dbg bpf metrics list -o json: expected a JSON array");
  return rows.map((r: Record<string, unknown>, i) => {
    if (typeof r.reason !== "string" || typeof r.direction !== "string")
      throw new Error(`cilium-dbg bpf metrics list -o json: entry ${i} has no reason or direction`);
    return {
      reason: r.reason,
      direction: r.direction,
      packets: u64(String(r.packets ?? "0")),
      bytes: u64(String(r.bytes ?? "0")),
      line: Number(r.line ?? 0),
      file: String(r.file ?? ""),
    };
  });
}

/** A forward or socket-LB event rather than a drop. */
export const isForward = (m: Pick<BpfMetric, "reason">): boolean =>
  m.reason === "Success" ||
  m.reason.startsWith("Interface") ||
  m.reason.startsWith("LB, sock cgroup") ||
  m.reason.startsWith("LB: sock cgroup");

export interface DropDelta {
  reason: string;
  direction: string;
  file: string;
  line: number;
  packets: U64;
}

/**
 * Drops counted between two reads of the map: per reason, direction and source line, the packets added (a
 * counter lower after than before was reset: a new map, so all of it counts).
 */
export function dropDeltas(before: BpfMetric[], after: BpfMetric[]): DropDelta[] {
  const key = (m: BpfMetric) => `${m.reason}\u0000${m.direction}\u0000${m.file}\u0000${m.line}`;
  const was = new Map(before.map((m) => [key(m), BigInt(m.packets)] as const));
  const out: (DropDelta & { n: bigint })[] = [];
  for (const m of after) {
    if (isForward(m)) continue;
    const now = BigInt(m.packets);
    const then = was.get(key(m)) ?? 0n;
    const added = now >= then ? now - then : now;
    if (added > 0n)
      out.push({
        reason: m.reason,
        direction: m.direction,
        file: m.file,
        line: m.line,
        packets: u64(added.toString()),
        n: added,
      });
  }
  return out
    .sort((a, b) => (b.n > a.n ? 1 : b.n < a.n ? -1 : a.reason.localeCompare(b.reason)))
    .map(({ n: _n, ...d }) => d);
}
