/** The lifecycle-operator topic's record: LB-IPAM's addresses around a cilium-operator restart. */
import type { RecordDecls } from "../../helpers/records/catalogue.ts";
import type { EdgeSite } from "../../helpers/records/types.ts";
import { EXAMPLE_SITE } from "../surface.ts";

export interface LifecycleOperatorRecord extends EdgeSite {
  /** LoadBalancer addresses by Service before and after cilium-operator was restarted; null without a range of ours. */
  lb_before: Record<string, string[]> | null;
  lb_after: Record<string, string[]> | null;
  /** How many addresses the sharing key holds (lc-sk-a, -b, -c). */
  sharing_addresses: number | null;
}

declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    lifecycleOperator: LifecycleOperatorRecord;
  }
}

/** The record as the declarations expect it (written by us, not an observation): nothing moved. */
function lifecycleOperatorExample(): LifecycleOperatorRecord {
  const lb = { "lc-sk-a": ["172.31.100.245"], "lc-sk-b": ["172.31.100.246"], "lc-sk-c": ["172.31.100.245"] };
  return { ...EXAMPLE_SITE, lb_before: lb, lb_after: lb, sharing_addresses: 2 };
}

/** The record this topic builds: its file in a bundle and its example. */
export const records = {
  lifecycleOperator: { file: "lifecycle-operator.json", example: () => lifecycleOperatorExample() },
} satisfies RecordDecls;
