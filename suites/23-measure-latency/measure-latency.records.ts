/** The measure-latency topic's record: its type is the measurement machinery's (helpers/measure/records.ts), read by `summary`. */
import type { MeasureLatencyRecord } from "../../helpers/measure/records.ts";
import type { RecordDecls } from "../../helpers/records/catalogue.ts";

declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    latency: MeasureLatencyRecord;
  }
}

export const records = {
  latency: {
    file: "measure-latency.json",
    measurements: (latency) => ({ latency }),
    example: (mode) => ({
      events: [],
      map_p50_ms: 420,
      map_p90_ms: 1300,
      kube_proxy_p50_ms: mode === "kpr" ? null : 800,
      kube_proxy_p90_ms: mode === "kpr" ? null : 2100,
      ghost_seconds: [0.001, 0.002],
      ghost_p50_s: 0.001,
      ghost_p90_s: 0.002,
      ghost_exit_codes: [7],
      no_backend_response: "reject",
    }),
  },
} satisfies RecordDecls;
