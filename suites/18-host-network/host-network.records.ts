/** The host-network topic's record. */

import type { RecordDecls } from "../../helpers/records/catalogue.ts";
import type { EdgeSite, Probe } from "../../helpers/records/types.ts";
import { exampleOk as ok, exampleProbe as probe, EXAMPLE_SITE as site } from "../surface.ts";

/** Ours (issue 34): a Pod's hostPort, and a Service whose backend uses the host network. */
export interface HostNetworkRecord extends EdgeSite {
  host_port: number;
  hostport_from_pod_far: Probe | null;
  hostport_from_node_edge: Probe | null;
  hostport_from_node_far: Probe | null;
  /** HostPort frontends on host_port in the edge node's LB map. */
  hostport_frontends: string[];
  /** The host-network backend's address (its node's InternalIP:port) and the node it runs on. */
  hostnet_backend: string;
  hostnet_node: string;
  /** edge-hostnet's slots in the LB map of the edge node. */
  hostnet_slots: string[];
  hostnet_from_pod_near: Probe | null;
  hostnet_from_pod_far: Probe | null;
  hostnet_from_node_edge: Probe | null;
  /** kube-proxy DNAT rules to the host-network backend. */
  hostnet_rules: number;
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    hostNetwork: HostNetworkRecord;
  }
}

export const records = {
  hostNetwork: {
    file: "host-network.json",
    example: (mode) => {
      const kpr = mode === "kpr";
      return {
        ...site,
        host_port: 8089,
        hostport_from_pod_far: kpr
          ? ok("pod far", "http://172.31.100.4:8089/hostname", "edge-hostport")
          : probe("pod far", "http://172.31.100.4:8089/hostname", "REFUSED"),
        hostport_from_node_edge: kpr
          ? ok("node cdc-worker2", "http://172.31.100.4:8089/hostname", "edge-hostport")
          : probe("node cdc-worker2", "http://172.31.100.4:8089/hostname", "REFUSED"),
        hostport_from_node_far: kpr
          ? ok("node cdc-worker", "http://172.31.100.4:8089/hostname", "edge-hostport")
          : probe("node cdc-worker", "http://172.31.100.4:8089/hostname", "REFUSED"),
        hostport_frontends: kpr ? ["0.0.0.0:8089", "172.31.100.4:8089"] : [],
        hostnet_backend: "172.31.100.3:18080",
        hostnet_node: "cdc-worker",
        hostnet_slots: ["172.31.100.3:18080"],
        hostnet_from_pod_near: ok("pod near", "http://10.96.8.8/hostname", "cdc-worker"),
        hostnet_from_pod_far: ok("pod far", "http://10.96.8.8/hostname", "cdc-worker"),
        hostnet_from_node_edge: ok("node cdc-worker2", "http://10.96.8.8/hostname", "cdc-worker"),
        hostnet_rules: kpr ? 0 : 1,
      };
    },
  },
} satisfies RecordDecls;
