/** The restart topic's record: its legs (helpers/records/types.ts UpgradeLeg) under load. */

import type { RecordDecls } from "../../helpers/records/catalogue.ts";
import type { UpgradeLeg } from "../../helpers/records/types.ts";
import { EXAMPLE_LEG } from "../29-upgrade/upgrade.records.ts";

/** Ours (issue 35): the agents restarted on one version under the same load as the upgrade's legs. */
export interface RestartRecord {
  version: string;
  legs: UpgradeLeg[];
  loop_total: number;
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    restart: RestartRecord;
  }
}

export const records = {
  restart: {
    file: "restart.json",
    legs: (r) => ({ legs: r.legs }),
    example: () => ({
      version: "1.19.7",
      loop_total: 900,
      legs: [
        {
          ...EXAMPLE_LEG,
          kind: "restart",
          from: "1.19.7",
          to: "1.19.7",
          unexpected_drops: [],
          error_lines: [],
          agents_after: {
            "cdc-kpr-worker": { version: "1.19.7", ok: true, line: "Cilium:   Ok   1.19.7" },
          },
        },
      ],
    }),
  },
} satisfies RecordDecls;
