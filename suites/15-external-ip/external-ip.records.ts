/** The external-ip topic's record. */

import type { RecordDecls } from "../../helpers/records/catalogue.ts";
import type { EdgeSite, Probe } from "../../helpers/records/types.ts";
import { exampleNowhere as nowhere, exampleOk as ok, EXAMPLE_SITE as site } from "../surface.ts";

/** Ours (issue 34): a ClusterIP Service with an externalIP from our range. */
export interface ExternalIpRecord extends EdgeSite {
  /** edge-ext's externalIP (null: no range of ours), its slots in the far node's LB map, kube-proxy's rules naming it. */
  external_ip: string | null;
  ext_slots: number | null;
  ext_rules: number | null;
  ext_from_pod: Probe | null;
  ext_from_node: Probe | null;
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    externalIp: ExternalIpRecord;
  }
}

export const records = {
  externalIp: {
    file: "external-ip.json",
    example: (mode) => {
      const kpr = mode === "kpr";
      return {
        ...site,
        external_ip: "172.31.100.248",
        ext_slots: 2,
        ext_rules: kpr ? 0 : 1,
        ext_from_pod: kpr
          ? nowhere("pod far", "http://172.31.100.248/hostname")
          : ok("pod far", "http://172.31.100.248/hostname"),
        ext_from_node: kpr
          ? nowhere("node cdc-worker", "http://172.31.100.248/hostname")
          : ok("node cdc-worker", "http://172.31.100.248/hostname", "edge-6d9f-b"),
      };
    },
  },
} satisfies RecordDecls;
