/** The ghost topic's record (lab step 7). */
import type { RecordView } from "../../helpers/properties/types.ts";
import type { RecordDecls } from "../../helpers/records/catalogue.ts";

/** Lab step 7: a Service with no backends. */
export interface GhostRecord {
  cluster_ip: string;
  backends: number;
  curl_exit: number;
  seconds: number;
  no_backend_response: string;
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    ghost: GhostRecord;
  }
}

export const records = {
  ghost: {
    file: "ghost.json",
    example: (mode) => ({
      cluster_ip: "10.96.44.3",
      backends: 0,
      curl_exit: 7,
      seconds: mode === "kpr" ? 0.004 : 0.002,
      no_backend_response: "reject",
    }),
  },
} satisfies RecordDecls;

/** Why a property skips under the drop profile (ghost, measure-latency). */
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
