/** The iptables topic's record (lab step 1). */
import type { RecordDecls } from "../../helpers/records/catalogue.ts";

/** Lab step 1: iptables-save on the node. */
export interface IptablesRecord {
  cluster_ip: string;
  kube_svc_lines: number;
  cluster_ip_lines: number;
  cilium_lines: number;
  kube_proxy_replacement: string;
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    iptables: IptablesRecord;
  }
}

export const records = {
  iptables: {
    file: "iptables.json",
    example: (mode) => ({
      cluster_ip: "10.96.44.2",
      kube_svc_lines: mode === "kpr" ? 0 : 9,
      cluster_ip_lines: mode === "kpr" ? 0 : 2,
      cilium_lines: 41,
      kube_proxy_replacement: mode === "kpr" ? "True" : "False",
    }),
  },
} satisfies RecordDecls;
