/** The vxlan topic's record (notebook §8). */
import type { RecordDecls } from "../../helpers/records/catalogue.ts";

/** Notebook §8: inner addresses of VXLAN packets carrying a Pod's query. */
export interface VxlanRecord {
  cluster_ip: string;
  backend: string;
  packets: number;
  inner_destinations: string[];
  /**
   * Native routing (no tunnel): what left the client's node for the backend, captured on the device the route to
   * the backend names — the queries' destinations as they crossed the wire, and how many tunnel packets
   * (UDP 8472) went with them. Absent in tunnel mode and in bundles recorded before it was observed.
   */
  wire?: {
    device: string;
    /** Query packets (UDP to port 53) on that device. */
    packets: number;
    encapsulated: number;
    destinations: string[];
  };
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    vxlan: VxlanRecord;
  }
}

export const records = {
  vxlan: {
    file: "vxlan.json",
    example: () => ({
      cluster_ip: "10.96.0.10",
      backend: "10.244.2.3:53",
      packets: 4,
      inner_destinations: ["10.244.2.3:53"],
    }),
  },
} satisfies RecordDecls;
