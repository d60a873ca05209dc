/** The kube-dns topic's record (notebook §2). */
import type { RecordDecls } from "../../helpers/records/catalogue.ts";

/** Notebook §2: kube-dns EndpointSlice vs the agent's backends. */
export interface DnsRecord {
  cluster_ip: string;
  frontend: string;
  endpointslice_ready: string[];
  agent_backends: string[];
  /** kube-proxy's chain for kube-dns:dns on the node (KUBE-SERVICES, KUBE-SVC-*, KUBE-SEP-* DNAT lines); empty without kube-proxy. */
  kube_proxy_rules: string[];
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    dns: DnsRecord;
  }
}

export const records = {
  dns: {
    file: "dns.json",
    example: (mode) => ({
      cluster_ip: "10.96.0.10",
      frontend: "10.96.0.10:53",
      endpointslice_ready: ["10.244.1.3:53"],
      ...(mode === "kpr"
        ? { kube_proxy_rules: [], agent_backends: ["10.244.1.3:53"] }
        : {
            agent_backends: ["10.244.1.3:53"],
            kube_proxy_rules: [
              '-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU',
              '-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.1.3:53" -j KUBE-SEP-L5JRWRCR3OTUNAH5',
              '-A KUBE-SEP-L5JRWRCR3OTUNAH5 -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.1.3:53',
            ],
          }),
    }),
  },
} satisfies RecordDecls;
