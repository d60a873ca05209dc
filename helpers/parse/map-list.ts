import { contentLines, fail, mayBeCut, noteUnknown } from "./lines.ts";
import { type U64, u64 } from "./u64.ts";

export interface AgentMap {
  name: string;
  /** null where the agent prints `unknown` (maps it opens without a cache, e.g. cilium_metrics); Go int: exact past 2^53. */
  entries: U64 | null;
  errors: U64;
  cacheEnabled: boolean;
  /** 1-based line. */
  line: number;
  /** Columns after the known four (a newer agent's), kept as printed, and reported. */
  extra?: Record<string, string>;
}

export interface MapList {
  maps: AgentMap[];
}

const FORMAT = "map-list";
/** The header, whole: a header with anything after it is a header joined with the next line. */
const HEADER = /^Name\s+Num entries\s+Num errors\s+Cache enabled$/;
const ROW = /^(\S+)\s+(\d+|unknown)\s+(\d+)\s+(true|false)(?:\s+(\S.*))?$/;
/** A map name (`cilium_lb4_services_v2`, `cilium_policy_v2_00123`). */
const NAME = /^[A-Za-z0-9_.-]+$/;
/** A trailing column that is itself a row: two lines joined. */
const JOINED = /^\S+\s+(?:\d+|unknown)\s+\d+\s+(?:true|false)\b/;

/** `cilium-dbg map list`. */
export function parseMapList(input: string): MapList {
  const maps: AgentMap[] = [];
  for (const line of contentLines(FORMAT, input)) {
    if (HEADER.test(line.text)) continue;
    const m = ROW.exec(line.text);
    if (!m) fail(FORMAT, line, "expected `NAME  ENTRIES|unknown  ERRORS  true|false`");
    if (!NAME.test(m[1] as string)) fail(FORMAT, line, `${JSON.stringify(m[1])} is not a map name`);
    if (m[5] && JOINED.test(m[5])) fail(FORMAT, line, "a second row after the first: two lines joined?");
    if (m[5]) noteUnknown(line.no, "trailing column", m[5]);
    mayBeCut(line);
    maps.push({
      name: m[1] as string,
      entries: m[2] === "unknown" ? null : u64(m[2] as string),
      errors: u64(m[3] as string),
      cacheEnabled: m[4] === "true",
      line: line.no,
      ...(m[5] ? { extra: { trailing: m[5] } } : {}),
    });
  }
  return { maps };
}

const POLICY_MAP = /^cilium_policy_(?:v[23]_)?(\d{5,})$/;

/**
 * The endpoint a per-endpoint policy map belongs to: `cilium_policy_00123` / `cilium_policy_v2_00123` /
 * `cilium_policy_v3_00123` → 123.
 */
export function policyMapEndpoint(name: string): number | null {
  const m = POLICY_MAP.exec(name);
  return m ? Number(m[1]) : null;
}

/** Finds the policy map of one endpoint (either naming) in a map list. */
export function findPolicyMap(list: MapList, endpointId: number): AgentMap | null {
  return list.maps.find((m) => policyMapEndpoint(m.name) === endpointId) ?? null;
}

/**
 * The name Cilium gives an endpoint's policy map, zero-padded to 5 digits: `_v2_` from 1.17, `_v3_` from 1.20
 * (pkg/maps/policymap MapName: `cilium_policy_v2_` at v1.19.7, `cilium_policy_v3_` at v1.20.2; cilium PR 47080).
 */
export function policyMapName(endpointId: number, ciliumMinor: number): string {
  const id = String(endpointId).padStart(5, "0");
  if (ciliumMinor >= 20) return `cilium_policy_v3_${id}`;
  return ciliumMinor >= 17 ? `cilium_policy_v2_${id}` : `cilium_policy_${id}`;
}
