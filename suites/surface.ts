/**
 * What the Service-surface topics share (issue 34: loadbalancer, external-ip, traffic-policy, session-affinity,
 * host-network and surface-ipv6): how a property observes one of their probes, a series, a two-scope frontend or a
 * value read only where an address range was given; what their builders read of a LoadBalancer address in the LB
 * map and kube-proxy's rules, in either family (surface-ipv6 asks the IPv4 topics' questions of IPv6 Services);
 * and their examples' site and probes.
 */
import { canonicalEndpoint, formatEndpoint } from "../helpers/parse/address.ts";
import type { LbList } from "../helpers/parse/bpf-lb-list.ts";
import { answer } from "../helpers/properties/sources.ts";
import type { Observation, RecordView } from "../helpers/properties/types.ts";
import { findLbService, lbRows, ruleLines, slotCount } from "../helpers/records/common.ts";
import { derive, type EvidenceItem, type RawText, type Read } from "../helpers/records/evidence.ts";
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

type FieldOf<K extends keyof LabRecords, T> = {
  [F in keyof LabRecords[K]]: LabRecords[K][F] extends T ? F : never;
}[keyof LabRecords[K]];

/**
 * A value read only where the topic had an address range of its own (`guard` is null without one): the field
 * with its lines, or a skip with `none`.
 */
export function addressedObservation<K extends SurfaceRecord>(
  r: RecordView,
  record: K,
  guard: keyof LabRecords[K],
  field: keyof LabRecords[K],
  none: string,
): Observation {
  const v = r.get(record);
  if (v[guard] === null) return { value: null, evidence: [], skip: none };
  return { value: v[field], evidence: r.evidence(record, field) };
}

/** How many distinct backends answered a series (a failed request counts as its class, never as a backend). */
export function distinctAnswers<K extends SurfaceRecord>(
  r: RecordView,
  record: K,
  field: FieldOf<K, string[]>,
): Observation {
  const rec = r.get(record);
  const answers = rec[field] as string[];
  const failed = answers.filter((a) => !rec.backends.includes(a));
  return {
    value:
      failed.length > 0
        ? `${answers.length - failed.length} answered; ${failed.join(", ")}`
        : new Set(answers).size,
    evidence: r.evidence(record, field),
  };
}

type Scopes = { external: number | null; internal: number | null } | null;

/** A two-scope frontend's backend slots, as "external N, internal M", or "no entry". */
export function scopesObservation<K extends SurfaceRecord>(
  r: RecordView,
  record: K,
  field: FieldOf<K, Scopes>,
): Observation {
  const s = r.get(record)[field] as Scopes;
  return {
    value: s ? `external ${s.external ?? "none"}, internal ${s.internal ?? "none"}` : "no entry",
    evidence: r.evidence(record, field),
  };
}

/**
 * What a LoadBalancer address (port 80) is in the far node's LB map and kube-proxy's rules, in either family: its
 * backend slots, whether it has a `:0/ANY` wildcard entry, and the rules naming it (`-d <ip>/32` or `/128`), each
 * with the lines that say it. `service` names it in the evidence of an absence.
 */
export function lbAddressFacts(
  lbList: Read<LbList>,
  rules: RawText,
  ip: string | null,
  service: string,
): {
  slots: number;
  wildcard: boolean;
  rules: number;
  evidence: { slots: EvidenceItem[]; wildcard: EvidenceItem[]; rules: EvidenceItem[] };
} {
  const at = (port: number) => (ip === null ? `${ip}:${port}` : formatEndpoint(ip, port));
  const list = lbList.parsed;
  const row = ip === null ? null : findLbService(list, at(80));
  const wildcard =
    ip === null ? undefined : list.services.find((s) => canonicalEndpoint(s.frontend) === at(0));
  const lines = ruleLines(rules, ip);
  return {
    slots: ip === null ? 0 : slotCount(list, at(80)),
    wildcard: wildcard !== undefined,
    rules: lines.length,
    evidence: {
      slots: row
        ? lbRows(lbList.raw, row)
        : [derive(`no ${at(80)}/TCP entry (${service}) in bpf lb list`, lbList.raw)],
      wildcard: wildcard
        ? lbRows(lbList.raw, wildcard)
        : [derive(`no ${at(0)}/ANY entry in bpf lb list`, lbList.raw)],
      rules:
        lines.length > 0 ? lines : [derive(`no line names -d ${ip}/${ip?.includes(":") ? 128 : 32}`, rules)],
    },
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
