/** The measure-scale topic's record: its type is the measurement machinery's (helpers/measure/records.ts), read by `summary`. */
import type { MeasureScaleRecord } from "../../helpers/measure/records.ts";
import type { RecordDecls } from "../../helpers/records/catalogue.ts";

declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    scaling: MeasureScaleRecord;
  }
}

export const records = {
  scaling: {
    file: "measure-scale.json",
    measurements: (scaling) => ({ scaling }),
    example: (mode) => {
      const kpr = mode === "kpr";
      return {
        endpoints_per_service: 4,
        points: [
          {
            services: 1,
            endpoints: 4,
            kube_proxy_lines: kpr ? 0 : 14,
            lb_entries: { n1: 6 },
            programmed_ms: 900,
          },
          {
            services: 50,
            endpoints: 200,
            kube_proxy_lines: kpr ? 0 : 700,
            lb_entries: { n1: 300 },
            programmed_ms: kpr ? 1800 : 2100,
          },
          {
            services: 200,
            endpoints: 800,
            kube_proxy_lines: kpr ? 0 : 2800,
            lb_entries: { n1: 1200 },
            programmed_ms: kpr ? 4100 : 6300,
          },
        ],
        kube_proxy_per_service: kpr ? 0 : 14,
        kube_proxy_r2: 1,
        lb_per_service: 6,
        lb_r2: 1,
      };
    },
  },
} satisfies RecordDecls;
