/**
 * What the Service-surface topics share (issue 34: loadbalancer, external-ip, traffic-policy, session-affinity,
 * host-network and surface-ipv6): how a property observes one of their probes, and their examples' site and probes.
 */
import { answer } from "../helpers/properties/sources.ts";
import type { Observation, RecordView } from "../helpers/properties/types.ts";
import type { EdgeSite, LabRecords, Probe } from "../helpers/records/types.ts";

/** The records of the Service-surface topics: each a site (EdgeSite) and its probes. */
export type SurfaceRecord =
  | "loadbalancer"
  | "externalIp"
  | "trafficPolicy"
  | "sessionAffinity"
  | "hostNetwork"
  | "surfaceIpv6";

type ProbeField<K extends keyof LabRecords> = {
  [F in keyof LabRecords[K]]: LabRecords[K][F] extends Probe | null ? F : never;
}[keyof LabRecords[K]];

/**
 * The observation of one probe field of a Service-surface record: `answer` against the record's own backends (or
 * those given), with the probe's lines; a probe that could not run (no address range, no outside client) is a
 * skip with `none`.
 */
export function probeObservation<K extends SurfaceRecord>(
  r: RecordView,
  record: K,
  field: ProbeField<K>,
  none: string,
  backends?: readonly string[],
): Observation {
  const rec = r.get(record);
  const p = rec[field] as Probe | null;
  if (p === null) return { value: null, evidence: [], skip: none };
  return {
    value: answer(p, backends ?? rec.backends),
    evidence: [...r.evidence(record, field), ...r.evidence(record, "backends" as keyof LabRecords[K])],
  };
}

/** The examples' site (helpers/records/catalogue.ts): backends on cdc-worker2, client-far on cdc-worker. */
export const EXAMPLE_SITE: EdgeSite = {
  edge_node: "cdc-worker2",
  edge_ip: "172.31.100.4",
  far_node: "cdc-worker",
  far_ip: "172.31.100.3",
  backends: ["edge-6d9f-a", "edge-6d9f-b"],
};

/** An example probe: its exit code, HTTP status and time follow from `verdict`. */
export function exampleProbe(from: string, url: string, verdict: string, body: string | null = null): Probe {
  const http = /^HTTP (\d+)/.exec(verdict);
  return {
    from,
    url,
    exit: http ? 0 : verdict === "TIMEOUT" ? 28 : 7,
    verdict,
    http: http ? Number(http[1]) : null,
    errno: null,
    seconds: verdict === "TIMEOUT" ? 5.0 : 0.002,
    body,
  };
}

/** An example probe one of edge's backends answered. */
export const exampleOk = (from: string, url: string, body = "edge-6d9f-a") =>
  exampleProbe(from, url, "HTTP 200", body);
/** An example probe nothing answered (no route). */
export const exampleNowhere = (from: string, url: string) => exampleProbe(from, url, "UNREACHABLE");
