import { contentLines, fail } from "./lines.ts";

export interface AgentMap {
  name: string;
  entries: number;
  errors: number;
  cacheEnabled: boolean;
}

export interface MapList {
  maps: AgentMap[];
}

const FORMAT = "map-list";
const HEADER = /^Name\s+Num entries\s+Num errors\s+Cache enabled$/;
const ROW = /^(\S+)\s+(\d+)\s+(\d+)\s+(true|false)$/;

/** `cilium-dbg map list`. */
export function parseMapList(input: string): MapList {
  const maps: AgentMap[] = [];
  for (const line of contentLines(input)) {
    if (HEADER.test(line.text)) continue;
    const m = ROW.exec(line.text);
    if (!m) fail(FORMAT, line, "expected `NAME  ENTRIES  ERRORS  true|false`");
    maps.push({
      name: m[1] as string,
      entries: Number(m[2]),
      errors: Number(m[3]),
      cacheEnabled: m[4] === "true",
    });
  }
  return { maps };
}

const POLICY_MAP = /^cilium_policy_(?:v2_)?(\d{5,})$/;

/** The endpoint a per-endpoint policy map belongs to: `cilium_policy_00123` / `cilium_policy_v2_00123` → 123. */
export function policyMapEndpoint(name: string): number | null {
  const m = POLICY_MAP.exec(name);
  return m ? Number(m[1]) : null;
}

/** Finds the policy map of one endpoint (either naming) in a map list. */
export function findPolicyMap(list: MapList, endpointId: number): AgentMap | null {
  return list.maps.find((m) => policyMapEndpoint(m.name) === endpointId) ?? null;
}

/** The name Cilium gives an endpoint's policy map: `_v2_` since 1.17, zero-padded to 5 digits. */
export function policyMapName(endpointId: number, ciliumMinor: number): string {
  const id = String(endpointId).padStart(5, "0");
  return ciliumMinor >= 17 ? `cilium_policy_v2_${id}` : `cilium_policy_${id}`;
}
