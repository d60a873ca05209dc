/** The nodeport topic's record (lab step 6). */
import type { U64 } from "../../helpers/parse/u64.ts";
import type { RecordDecls } from "../../helpers/records/catalogue.ts";

/** Lab step 6: NodePort 30780 without a listening socket. */
export interface NodePortRecord {
  node_ip: string;
  node_port: number;
  http_code: number;
  iptables_lines: number;
  listen_sockets: number;
  /** The agent's entry number of 0.0.0.0:30780 NodePort; null when the agent has none (kube-proxy mode). */
  service_id: U64 | null;
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    nodeport: NodePortRecord;
  }
}

export const records = {
  nodeport: {
    file: "nodeport.json",
    example: (mode) => ({
      node_ip: "172.18.0.3",
      node_port: 30780,
      http_code: 200,
      iptables_lines: mode === "kpr" ? 0 : 2,
      listen_sockets: 0,
      service_id: mode === "kpr" ? 15 : null,
    }),
  },
} satisfies RecordDecls;
