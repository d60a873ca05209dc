/** The translation topic's record (notebook §6–7). */
import type { U64 } from "../../helpers/parse/u64.ts";
import type { RecordDecls } from "../../helpers/records/catalogue.ts";

/** Notebook §6–7: iptables counters for host-originated vs Pod-originated queries. */
export interface TranslationRecord {
  rule: string | null;
  host_queries: number;
  host_answers: number;
  /** iptables counters are 64-bit: exact numbers, or the printed decimal past 2^53 (helpers/parse/u64.ts). */
  host_packets_before: U64 | null;
  host_packets_after: U64 | null;
  pod_queries: number;
  pod_answers: number;
  pod_packets_before: U64 | null;
  pod_packets_after: U64 | null;
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    translation: TranslationRecord;
  }
}

export const records = {
  translation: {
    file: "translation.json",
    example: (mode) =>
      mode === "kpr"
        ? {
            rule: null,
            host_queries: 10,
            host_answers: 10,
            host_packets_before: null,
            host_packets_after: null,
            pod_queries: 5,
            pod_answers: 5,
            pod_packets_before: null,
            pod_packets_after: null,
          }
        : {
            rule: "kube-system/kube-dns:dns cluster IP",
            host_queries: 10,
            host_answers: 10,
            host_packets_before: 0,
            host_packets_after: 10,
            pod_queries: 5,
            pod_answers: 5,
            pod_packets_before: 10,
            pod_packets_after: 10,
          },
  },
} satisfies RecordDecls;
