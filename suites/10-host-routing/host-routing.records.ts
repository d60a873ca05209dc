/** The host-routing topic's records (notebook §4 and §5). */
import type { RecordDecls } from "../../helpers/records/catalogue.ts";

/** Notebook §4: the ClusterIP is on no interface and has no dedicated route on the node. */
export interface ClusterIpHostRecord {
  cluster_ip: string;
  interfaces_with_ip: string[];
  routes_to_ip: string[];
}

/** Notebook §5: route to a Pod on another node. */
export interface RemoteRouteRecord {
  destination: string;
  dev: string | null;
  src: string | null;
  mtu: number | null;
  underlay_mtu: number | null;
  /** The route's gateway (`via`), and the device the route to another node leaves by (absent in older records). */
  via?: string | null;
  underlay_dev?: string | null;
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    clusterip: ClusterIpHostRecord;
    route: RemoteRouteRecord;
  }
}

export const records = {
  clusterip: {
    file: "clusterip.json",
    example: () => ({ cluster_ip: "10.96.0.10", interfaces_with_ip: [], routes_to_ip: [] }),
  },
  route: {
    file: "route.json",
    example: () => ({
      destination: "10.244.2.9",
      dev: "cilium_host",
      src: "10.244.1.1",
      mtu: 1450,
      underlay_mtu: 1500,
    }),
  },
} satisfies RecordDecls;
