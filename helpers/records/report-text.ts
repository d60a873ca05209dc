import { RecordError } from "./common.ts";
import type { ReportRecord } from "./types.ts";

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
