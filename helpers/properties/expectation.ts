/** The modes the suite runs: kube-proxy replacement without kube-proxy, and kube-proxy (iptables) + Cilium. */
export const MODES = ["kpr", "kube-proxy"] as const;
export type Mode = (typeof MODES)[number];

export const MODE_TITLES: Record<Mode, string> = {
  kpr: "kpr (kubeProxyReplacement=true, no kube-proxy)",
  "kube-proxy": "kube-proxy (iptables) + kubeProxyReplacement=false",
};

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

/** What a property expects to observe. Serialisable, so the table can be printed as JSON too. */
export type Expect =
  | { eq: Json }
  | { gte: number }
  | { lte: number }
  | { between: [number, number] }
  | { oneOf: Json[] }
  | { match: string }
  /** Not applicable in this mode/version: the verdict is a skip with this reason. */
  | { na: string };

/** An expectation that changes with the Cilium minor: `byMinor` wins, else `default`. */
export interface ByMinor {
  default: Expect;
  byMinor: Record<string, Expect>;
}

export type ModeExpectation = Expect | ByMinor;

export function isByMinor(e: ModeExpectation): e is ByMinor {
  return "byMinor" in e;
}

/** The expectation in force for a Cilium minor (`1.19`), or the default when none is given. */
export function resolve(e: ModeExpectation, minor?: string): Expect {
  if (!isByMinor(e)) return e;
  return (minor !== undefined ? e.byMinor[minor] : undefined) ?? e.default;
}

function show(v: Json): string {
  return typeof v === "string" ? v : JSON.stringify(v);
}

export function describeExpect(e: Expect): string {
  if ("eq" in e) return show(e.eq);
  if ("gte" in e) return `≥ ${e.gte}`;
  if ("lte" in e) return `≤ ${e.lte}`;
  if ("between" in e) return `${e.between[0]}–${e.between[1]}`;
  if ("oneOf" in e) return e.oneOf.map(show).join(" or ");
  if ("match" in e) return `/${e.match}/`;
  return `n/a (${e.na})`;
}

/** "≥ 1 (1.18: 0)" — the default with the minors that differ. */
export function describeModeExpectation(e: ModeExpectation): string {
  if (!isByMinor(e)) return describeExpect(e);
  const extra = Object.entries(e.byMinor)
    .map(([minor, x]) => `${minor}: ${describeExpect(x)}`)
    .join("; ");
  return `${describeExpect(e.default)} (${extra})`;
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function satisfies(e: Expect, observed: unknown): boolean {
  if ("eq" in e) return deepEqual(e.eq, observed);
  if ("gte" in e) return typeof observed === "number" && observed >= e.gte;
  if ("lte" in e) return typeof observed === "number" && observed <= e.lte;
  if ("between" in e)
    return typeof observed === "number" && observed >= e.between[0] && observed <= e.between[1];
  if ("oneOf" in e) return e.oneOf.some((x) => deepEqual(x, observed));
  if ("match" in e) return typeof observed === "string" && new RegExp(e.match).test(observed);
  return true;
}
