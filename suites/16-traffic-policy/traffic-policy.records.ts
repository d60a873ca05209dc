/** The traffic-policy topic's record. */

import type { RecordDecls } from "../../helpers/records/catalogue.ts";
import type { EdgeSite, Probe } from "../../helpers/records/types.ts";
import { exampleOk as ok, exampleProbe as probe, EXAMPLE_SITE as site } from "../surface.ts";

/** Ours (issue 34): externalTrafficPolicy and internalTrafficPolicy Local, Cluster beside them. */
export interface TrafficPolicyRecord extends EdgeSite {
  /** edge-local's NodePort and health-check node port; edge-cluster's NodePort. */
  local_node_port: number;
  health_port: number;
  cluster_node_port: number;
  /** The outside client's own address (what the backend sees when the source is kept); null: no outside client. */
  outside_ip: string | null;
  local_np_edge: Probe | null;
  local_np_far: Probe | null;
  cluster_np_far: Probe | null;
  /** The health-check node port on each node, from a node's host namespace: HTTP status and localEndpoints. */
  health_edge: Probe | null;
  health_far: Probe | null;
  /** edge-local's LoadBalancer address (or null without a pool) from a Pod on the far node. */
  local_lb_ip: string | null;
  local_lb_from_pod_far: Probe | null;
  /** The far node's own NodePort of edge-local, from its host namespace. */
  local_np_from_node_far: Probe | null;
  /** `<far_ip>:<local_node_port>` in the far node's LB map: slots per scope (null: no entry). */
  local_np_slots: { external: number | null; internal: number | null } | null;
  /** edge-itp (internalTrafficPolicy Local) from a Pod on each node. */
  itp_from_pod_near: Probe | null;
  itp_from_pod_far: Probe | null;
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    trafficPolicy: TrafficPolicyRecord;
  }
}

export const records = {
  trafficPolicy: {
    file: "traffic-policy.json",
    example: (mode) => {
      const kpr = mode === "kpr";
      return {
        ...site,
        local_node_port: 30782,
        health_port: 30783,
        cluster_node_port: 30784,
        outside_ip: "172.31.100.5",
        local_np_edge: probe(
          "outside",
          "http://172.31.100.4:30782/clientip",
          "HTTP 200",
          "172.31.100.5:41822",
        ),
        local_np_far: probe("outside", "http://172.31.100.3:30782/clientip", kpr ? "REFUSED" : "TIMEOUT"),
        cluster_np_far: probe(
          "outside",
          "http://172.31.100.3:30784/clientip",
          "HTTP 200",
          "172.31.100.3:52110",
        ),
        health_edge: probe(
          "node cdc-control-plane",
          "http://172.31.100.4:30783/",
          "HTTP 200",
          '"localEndpoints": 2,',
        ),
        health_far: probe(
          "node cdc-control-plane",
          "http://172.31.100.3:30783/",
          "HTTP 503",
          '"localEndpoints": 0,',
        ),
        local_lb_ip: "172.31.100.242",
        local_lb_from_pod_far: ok("pod far", "http://172.31.100.242/hostname"),
        local_np_from_node_far: ok("node cdc-worker", "http://172.31.100.3:30782/hostname"),
        local_np_slots: kpr ? { external: 0, internal: 2 } : null,
        itp_from_pod_near: ok("pod near", "http://10.96.7.7/hostname"),
        itp_from_pod_far: probe("pod far", "http://10.96.7.7/hostname", kpr ? "UNREACHABLE" : "REFUSED"),
      };
    },
  },
} satisfies RecordDecls;
