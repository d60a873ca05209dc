/** The report topic's record (lab step 8): report.txt, seven key=value lines. */

import type { RecordDecls } from "../../helpers/records/catalogue.ts";
import { RecordError } from "../../helpers/records/common.ts";

/** Lab step 8: the seven report.txt keys. */
export interface ReportRecord {
  kube_proxy_replacement: string;
  socket_lb_coverage: string | null;
  web_backends: number;
  holder_backend: string;
  holder_program: string;
  nodeport_iptables_lines: number;
  ghost_no_backend_response: string;
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    report: ReportRecord;
  }
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

export const records = {
  report: {
    file: "report.txt",
    text: { format: formatReport, parse: parseReport },
    example: (mode) => ({
      kube_proxy_replacement: mode === "kpr" ? "True" : "False",
      socket_lb_coverage: mode === "kpr" ? "Full" : null,
      web_backends: 4,
      holder_backend: "10.244.2.9:8080",
      holder_program: "cil_from_container",
      nodeport_iptables_lines: mode === "kpr" ? 0 : 2,
      ghost_no_backend_response: "reject",
    }),
  },
} satisfies RecordDecls;
