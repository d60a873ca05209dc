/**
 * The facts of a leg's failures, generated from the bundle (issue 42: a note that names a node, a window or an
 * address is generated or checked, never typed by hand): each failed request with its start (ISO), target, local
 * port and error, the address its SYN went to and the node that backend ran on (the run's own Pod listings), what
 * explains it on the client's side, where its packets were seen and whose loss the captures say it was; each
 * broken connection likewise. A bundle README's generated part and the gate's lines read the same records.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { readBundleRaw } from "../bundle/files.ts";
import type { UpgradeLeg } from "./types.ts";
import { connectionSurvived } from "./upgrade.ts";

/** Pod address → node, from every Pod listing (get or watch of Pods) a topic's calls returned. */
export function podNodes(dir: string, topic: string): Map<string, string> {
  const out = new Map<string, string>();
  let files: string[] = [];
  try {
    files = readdirSync(join(dir, "raw", topic)).filter((f) => /pods/.test(f));
  } catch {
    return out;
  }
  for (const f of files) {
    let text: string | null = null;
    try {
      text = readBundleRaw(dir, `raw/${topic}/${f}`);
    } catch {
      continue;
    }
    if (!text?.trimStart().startsWith("{")) continue;
    try {
      const list = JSON.parse(text) as {
        items?: { spec?: { nodeName?: string }; status?: { podIP?: string } }[];
      };
      for (const p of list.items ?? [])
        if (p.status?.podIP && p.spec?.nodeName) out.set(p.status.podIP, p.spec.nodeName);
    } catch {
      // a listing that is not JSON (a table): not a source of addresses
    }
  }
  return out;
}

/** The address and port a request's SYN went to, from the loop node's capture lines kept with the failure. */
export function synDestination(packets: string[], port: number | null | undefined): string | null {
  for (const l of packets) {
    const m = /\.(\d+) > (\d+\.\d+\.\d+\.\d+\.\d+): Flags \[S\]/.exec(l);
    if (m && Number(m[1]) === port) return (m[2] as string).replace(/\.(\d+)$/, ":$1");
  }
  return null;
}

/** One line per failed request and broken connection of a leg, every fact from the records and raw outputs. */
export function legFailureFacts(leg: UpgradeLeg, nodesByIp: Map<string, string>): string[] {
  const out: string[] = [];
  const head = `${leg.kind} ${leg.from} → ${leg.to}`;
  for (const f of leg.requests.failures) {
    let i = "?";
    let ms = "?";
    try {
      const o = JSON.parse(f.raw) as { i?: number; ms?: number };
      i = String(o.i ?? "?");
      ms = String(o.ms ?? "?");
    } catch {
      // a raw line that is not the loop's JSON: its index and duration stay unknown
    }
    const dst = synDestination(f.packets ?? [], f.port);
    const node = dst ? nodesByIp.get(dst.split(":")[0] as string) : undefined;
    out.push(
      [
        `${head}: request ${i} to ${f.to} started ${new Date(f.t).toISOString()}, local port ${f.port ?? "?"}, ${f.error} after ${ms} ms`,
        dst
          ? `its SYN went to ${dst}${node ? `, a backend on ${node}` : ""}`
          : "no SYN of it in the loop node's capture",
        f.stall ? `the client's own stall explains it (${f.stall})` : "no stall of the client explains it",
        ...(f.where ? [`on the loop's node: ${f.where}`] : []),
        f.attribution
          ? `on every node: ${f.attribution.kind}: ${f.attribution.why}`
          : leg.datapath_evidence
            ? "not read back from the captures"
            : "no capture of data packets on every node in this leg (recorded before them)",
      ].join("; "),
    );
  }
  for (const c of leg.connections.filter((x) => !connectionSurvived(x)))
    out.push(
      [
        `${head}: long-lived connection ${c.name} (${c.via}, from ${c.node}) broke${c.broke_at ? ` at ${c.broke_at}` : ""}: connection ${c.connection_before} → ${c.connection_after}, ${c.closed_events} close and ${c.error_events} error event(s), backend ${c.backend_before ?? "?"} → ${c.backend_after ?? "?"}`,
        c.lag_measured
          ? c.client_stall
            ? `the holder's own stall explains it (${c.client_stall})`
            : `the holder kept time (longest lag ${c.lag_max_ms ?? 0} ms)`
          : "the holder did not measure its lag (recorded before it did)",
        c.attribution
          ? `on every node: ${c.attribution.kind}: ${c.attribution.why}`
          : "no capture of data packets on every node in this leg (recorded before them)",
      ].join("; "),
    );
  return out;
}
