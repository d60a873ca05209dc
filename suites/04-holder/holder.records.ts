/** The holder topic's record (lab step 4). */
import type { RecordDecls } from "../../helpers/records/catalogue.ts";

/** Lab step 4: the holder's connection seen from the app, the socket table and conntrack. */
export interface CtRecord {
  client: string;
  app_peer: string;
  socket_peer: string;
  backend: string;
  backend_pod: string;
  svc_entries: number;
  /**
   * "Full" / "Hostns-only" as `cilium-dbg status --verbose` prints it; Cilium prints "Full" even when socket LB
   * is disabled (pkg/client/client.go at v1.19.7), so this alone says nothing about socket LB. null only when
   * the line is absent.
   */
  socket_lb_coverage: string | null;
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    ct: CtRecord;
  }
}

export const records = {
  ct: {
    file: "ct.json",
    example: (mode) => ({
      client: "10.244.1.5:40404",
      app_peer: "10.96.44.2:80",
      socket_peer: mode === "kpr" ? "10.244.2.9:8080" : "10.96.44.2:80",
      backend: "10.244.2.9:8080",
      backend_pod: "web-7d9-b",
      svc_entries: mode === "kpr" ? 0 : 1,
      socket_lb_coverage: mode === "kpr" ? "Full" : null,
    }),
  },
} satisfies RecordDecls;
