/** The service-map topic's record (lab step 2), rebuilt by the scale topic after it scales web. */
import type { U64 } from "../../helpers/parse/u64.ts";
import type { RecordDecls } from "../../helpers/records/catalogue.ts";

/** Lab step 2: the web ClusterIP in the agent's service list and BPF LB map. */
export interface SvcRecord {
  /** A number (the lab's); int64 in the agent's model, so past 2^53 the printed decimal, exactly. */
  service_id: U64;
  frontend: string;
  backends: string[];
  backend_pods: string[];
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    svc: SvcRecord;
  }
}

/** web's backends in the examples, before and after the scale topic scales it 2→4. */
export const EXAMPLE_WEB = ["10.244.1.7:8080", "10.244.2.9:8080"];
export const EXAMPLE_SCALED = [...EXAMPLE_WEB, "10.244.1.8:8080", "10.244.2.10:8080"];

export const records = {
  svc: {
    file: "svc.json",
    example: () => ({
      service_id: 12,
      frontend: "10.96.44.2:80",
      backends: EXAMPLE_WEB,
      backend_pods: ["web-7d9-a", "web-7d9-b"],
    }),
  },
} satisfies RecordDecls;
