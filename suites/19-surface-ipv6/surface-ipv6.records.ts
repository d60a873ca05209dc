/** The surface-ipv6 topic's record. */

import type { RecordDecls } from "../../helpers/records/catalogue.ts";
import type { EdgeSite, Probe } from "../../helpers/records/types.ts";
import {
  exampleNowhere as nowhere,
  exampleOk as ok,
  exampleProbe as probe,
  EXAMPLE_SITE as site,
} from "../surface.ts";

/**
 * Ours (issue 34): the Service surface's IPv6 family on a dual-stack cluster (the surface-ipv6 topic), single-stack
 * IPv6 Services in front of edge's Pods. Every address field is null where the run had no IPv6 range of ours.
 */
export interface SurfaceIpv6Record extends EdgeSite {
  /** The IPv6 InternalIPs of the edge node and of the far node. */
  edge_ip6: string;
  far_ip6: string;
  /** Our IPv6 pool's range (`start-stop`), or null when the run had no IPv6 range of ours. */
  pool6: string | null;
  /** edge6-lb's address; its backend slots (external scope) and `[addr]:0/ANY` entry in the far node's LB map. */
  lb6_ip: string | null;
  lb6_slots: number | null;
  lb6_wildcard: boolean | null;
  /** ip6tables-save lines on the far node with `-d <lb6_ip>/128` (kube-proxy's `loadbalancer IP` rule). */
  lb6_rules: number | null;
  lb6_from_pod_near: Probe | null;
  lb6_from_pod_far: Probe | null;
  lb6_from_node: Probe | null;
  /** edge6-local's address (externalTrafficPolicy Local), reached from a Pod on the far node. */
  local6_ip: string | null;
  local6_from_pod_far: Probe | null;
  /** The far node's IPv6 Local NodePort (`[far_ip6]:30788`): backend slots per scope; null when it has no entry. */
  local6_np_slots: { external: number | null; internal: number | null } | null;
  /** edge6-ext's externalIP and a Pod's request to it. */
  ext6_ip: string | null;
  ext6_from_pod: Probe | null;
  /** The backends that answered a series of new connections from one Pod to edge6-sticky (ClientIP affinity). */
  sticky6_from_pod: string[];
  /** hostPort 8090 at the edge node's IPv6 address, from a Pod on the far node. */
  hostport6_from_pod: Probe | null;
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    surfaceIpv6: SurfaceIpv6Record;
  }
}

export const records = {
  surfaceIpv6: {
    file: "surface-ipv6.json",
    example: (mode) => {
      const kpr = mode === "kpr";
      return {
        ...site,
        edge_ip6: "fd00:ca1d:101::4",
        far_ip6: "fd00:ca1d:101::3",
        pool6: "fd00:ca1d:101::f0-fd00:ca1d:101::f7",
        lb6_ip: "fd00:ca1d:101::f0",
        lb6_slots: kpr ? 2 : 0,
        lb6_wildcard: kpr,
        lb6_rules: kpr ? 0 : 1,
        lb6_from_pod_near: ok("pod near", "http://[fd00:ca1d:101::f0]:80/hostname"),
        lb6_from_pod_far: ok("pod far", "http://[fd00:ca1d:101::f0]:80/hostname"),
        lb6_from_node: ok("node cdc-worker", "http://[fd00:ca1d:101::f0]:80/hostname"),
        local6_ip: "fd00:ca1d:101::f1",
        local6_from_pod_far: ok("pod far", "http://[fd00:ca1d:101::f1]:80/hostname"),
        local6_np_slots: kpr ? { external: 0, internal: 2 } : null,
        ext6_ip: "fd00:ca1d:101::f8",
        ext6_from_pod: kpr
          ? nowhere("pod far", "http://[fd00:ca1d:101::f8]:80/hostname")
          : ok("pod far", "http://[fd00:ca1d:101::f8]:80/hostname"),
        sticky6_from_pod: Array(8).fill("edge-6d9f-b"),
        hostport6_from_pod: kpr
          ? ok("pod far", "http://[fd00:ca1d:101::4]:8090/hostname", "edge6-hostport")
          : probe("pod far", "http://[fd00:ca1d:101::4]:8090/hostname", "REFUSED"),
      };
    },
  },
} satisfies RecordDecls;
