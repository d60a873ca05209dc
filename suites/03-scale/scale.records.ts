/** The scale topic's record (lab step 3). */

import type { RecordDecls } from "../../helpers/records/catalogue.ts";
import { EXAMPLE_SCALED } from "../02-service-map/service-map.records.ts";

/** Lab step 3: after scaling web 2→4. */
export interface ScaleRecord {
  backends: string[];
  new_backends: string[];
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    scale: ScaleRecord;
  }
}

export const records = {
  scale: {
    file: "scale.json",
    example: () => ({ backends: EXAMPLE_SCALED, new_backends: EXAMPLE_SCALED.slice(2) }),
  },
} satisfies RecordDecls;
