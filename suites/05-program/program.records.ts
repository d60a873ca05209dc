/** The program topic's record (lab step 5). */
import type { RecordDecls } from "../../helpers/records/catalogue.ts";

/** Lab step 5: the program and policy map on the holder's host-side device. */
export interface ProgRecord {
  endpoint_id: number;
  interface: string;
  ifindex: number;
  attach: string;
  program: string;
  policy_map: string;
  tc_filter_lines: number;
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    prog: ProgRecord;
  }
}

export const records = {
  prog: {
    file: "prog.json",
    example: () => ({
      endpoint_id: 1234,
      interface: "lxc0a1b2c3d4e5f",
      ifindex: 17,
      attach: "tcx/ingress",
      program: "cil_from_container",
      policy_map: "cilium_policy_v3_01234",
      tc_filter_lines: 0,
    }),
  },
} satisfies RecordDecls;
