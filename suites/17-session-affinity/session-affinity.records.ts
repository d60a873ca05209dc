/** The session-affinity topic's record. */

import type { RecordDecls } from "../../helpers/records/catalogue.ts";
import type { EdgeSite } from "../../helpers/records/types.ts";
import { EXAMPLE_SITE as site } from "../surface.ts";

/** Ours (issue 34): sessionAffinity ClientIP beside a Service without it. */
export interface SessionAffinityRecord extends EdgeSite {
  /** The backends that answered each series of new connections (GET /hostname), in order. */
  sticky_from_pod: string[];
  sticky_from_node: string[];
  loose_from_pod: string[];
  /** The sticky frontend's flags in the far node's LB map (null: no entry). */
  sticky_flags: string[] | null;
  /** iptables-save lines with `-m recent` naming edge-sticky (kube-proxy's affinity rules). */
  recent_rules: number;
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    sessionAffinity: SessionAffinityRecord;
  }
}

export const records = {
  sessionAffinity: {
    file: "session-affinity.json",
    example: (mode) => ({
      ...site,
      sticky_from_pod: Array(8).fill("edge-6d9f-b"),
      sticky_from_node: Array(8).fill("edge-6d9f-a"),
      loose_from_pod: ["edge-6d9f-a", "edge-6d9f-b", ...Array(10).fill("edge-6d9f-a")],
      sticky_flags: ["ClusterIP", "sessionAffinity", "non-routable"],
      recent_rules: mode === "kpr" ? 0 : 4,
    }),
  },
} satisfies RecordDecls;
