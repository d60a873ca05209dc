/** What property declarations share: where a claim comes from, and small readers of records. */
import type { DatapathFields } from "../records/types.ts";
import type { RecordView } from "./types.ts";

export const LAB = (step: number) => ({ doc: "lab" as const, where: `step ${step}` });
export const NB = (section: string) => ({ doc: "notebook" as const, where: section });
export const KN = (where: string) => ({ doc: "knowledge" as const, where });

/** A datapath field a property needs; absent means the topic that observes it did not run. */
export function dp<K extends keyof DatapathFields>(r: RecordView, field: K): DatapathFields[K] {
  const v = r.get("datapath")[field];
  if (v === undefined) throw new Error(`datapath.${field} was not collected`);
  return v as DatapathFields[K];
}

export const DROP_PROFILE =
  "the opt-in drop profile (NO_BACKEND_RESPONSE=drop) makes a Service without backends time out by design; measure.ghost-drop-timeout judges it";

/** True when the agent ran with serviceNoBackendResponse=drop (the opt-in profile). */
export function dropProfile(r: RecordView): boolean {
  const g = r.set.ghost?.record.no_backend_response ?? r.set.latency?.record.no_backend_response;
  return g === "drop";
}

export const sameSet = (a: string[], b: string[]) =>
  JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
export const ipOf = (addr: string) =>
  addr.startsWith("[") ? addr.slice(1, addr.indexOf("]")) : addr.slice(0, addr.lastIndexOf(":"));
