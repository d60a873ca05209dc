import type { DatapathRecord, Evidenced, RecordSet } from "./types.ts";

/** Merges partial datapath records (fields and evidence) from several topics. */
export function mergeDatapath(parts: (Evidenced<DatapathRecord> | undefined)[]): Evidenced<DatapathRecord> {
  const out: Evidenced<DatapathRecord> = { record: {}, evidence: {} };
  for (const p of parts) {
    if (!p) continue;
    Object.assign(out.record, p.record);
    Object.assign(out.evidence, p.evidence);
  }
  return out;
}

/** Merges topic outputs: later records replace earlier ones; datapath fields are merged. */
export function mergeRecordSets(sets: RecordSet[]): RecordSet {
  const out: RecordSet = {};
  for (const s of sets) Object.assign(out, { ...s, datapath: mergeDatapath([out.datapath, s.datapath]) });
  if (Object.keys(out.datapath?.record ?? {}).length === 0) delete out.datapath;
  return out;
}
