/**
 * Record sets WRITTEN BY US, shaped after the lab's and the notebook's values, for testing judges: one that
 * satisfies every kpr expectation and one for kube-proxy mode, made of every topic's example (each declared beside
 * its record, in the topic's folder: `<name>.records.ts`). Not observations.
 */
import { exampleRecords } from "../helpers/records/catalogue.ts";
import type { RecordSet } from "../helpers/records/types.ts";
import { RECORDS } from "./topics.ts";

export function kprRecords(): RecordSet {
  return exampleRecords(RECORDS, "kpr");
}

export function kubeProxyRecords(): RecordSet {
  return exampleRecords(RECORDS, "kube-proxy");
}
