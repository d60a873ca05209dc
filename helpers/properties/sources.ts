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
  "the opt-in drop profile (NO_BACKEND_RESPONSE=drop) makes per-packet LB (kube-proxy mode) drop the SYN, so the probe times out by design; measure.ghost-drop-timeout judges it";

/**
 * Where the drop profile changes what a client sees: per-packet LB only. With socket LB (kpr) the
 * connect() hook refuses a Service without backends whatever serviceNoBackendResponse says: Cilium 1.19.7's
 * bpf_sock.c returns -EHOSTUNREACH when `svc->count == 0` under enable-no-service-endpoints-routable
 * (default true), a flag the drop profile does not touch.
 */
export function dropProfileWaits(r: RecordView, mode: "kpr" | "kube-proxy"): boolean {
  return mode === "kube-proxy" && dropProfile(r);
}

/** True when the agent ran with serviceNoBackendResponse=drop (the opt-in profile). */
export function dropProfile(r: RecordView): boolean {
  const g = r.set.ghost?.record.no_backend_response ?? r.set.latency?.record.no_backend_response;
  return g === "drop";
}

export const sameSet = (a: string[], b: string[]) =>
  JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
export const ipOf = (addr: string) =>
  addr.startsWith("[") ? addr.slice(1, addr.indexOf("]")) : addr.slice(0, addr.lastIndexOf(":"));
