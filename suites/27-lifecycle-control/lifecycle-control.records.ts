/** The lifecycle-control topic's record: a node cut from the API server while a backend is deleted. */
import type { RecordDecls } from "../../helpers/records/catalogue.ts";
import type { EdgeSite, Probe } from "../../helpers/records/types.ts";
import { EXAMPLE_SITE, exampleOk } from "../surface.ts";

export interface LifecycleControlRecord extends EdgeSite {
  /** The far node cut from the API server: the lc-cut backend deleted meanwhile, the far node's slots during and after. */
  cut_node: string | null;
  cut_deleted: string | null;
  cut_slots_during: string[];
  cut_slots_after: string[];
  cut_remaining: string[];
  cut_probes: Probe[];
}

declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    lifecycleControl: LifecycleControlRecord;
  }
}

/** The record as the declarations expect it (written by us, not an observation): nothing stale. */
function lifecycleControlExample(): LifecycleControlRecord {
  const ok = exampleOk("pod far", "http://10.96.30.32/hostname", "lc-cut-b");
  return {
    ...EXAMPLE_SITE,
    cut_node: "cdc-worker",
    cut_deleted: "10.244.2.40:8080",
    cut_slots_during: ["10.244.2.40:8080", "10.244.2.41:8080"],
    cut_slots_after: ["10.244.2.41:8080"],
    cut_remaining: ["10.244.2.41:8080"],
    cut_probes: [ok, ok, ok, ok],
  };
}

/** The record this topic builds: its file in a bundle and its example. */
export const records = {
  lifecycleControl: { file: "lifecycle-control.json", example: () => lifecycleControlExample() },
} satisfies RecordDecls;
