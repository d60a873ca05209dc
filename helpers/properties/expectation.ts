/** The modes the suite runs: kube-proxy replacement without kube-proxy, and kube-proxy (iptables) + Cilium. */
export const MODES = ["kpr", "kube-proxy"] as const;
export type Mode = (typeof MODES)[number];

export const MODE_TITLES: Record<Mode, string> = {
  kpr: "kpr (kubeProxyReplacement=true, no kube-proxy)",
  "kube-proxy": "kube-proxy (iptables) + kubeProxyReplacement=false",
};

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

/** What a property expects of one value. */
export type ValueExpect =
  | { eq: Json }
  | { gte: number }
  | { lte: number }
  | { between: [number, number] }
  | { oneOf: Json[] }
  | { match: string };

/** What a property expects to observe. Serialisable, so the table can be printed as JSON too. */
export type Expect =
  | ValueExpect
  /** Every value of a non-empty list satisfies it (each probe, not their median). */
  | { each: ValueExpect }
  /** Not applicable in this mode/version: the verdict is a skip with this reason. */
  | { na: string };

/**
 * How a version's expectation departs from the default, and what kind of departure it is. Two kinds, never
 * confused: `behaviour` is the documented, intended way that version works (a renamed map, an entry added in a
 * minor) and a run that shows it passes; `known-issue` is a bug with an upstream reference (an errno lost, a
 * reply discarded): a run that shows it gets its own verdict, known issue, never a pass.
 */
export type Deviation =
  | {
      kind: "behaviour";
      expect: Expect;
      /** The version's own claim, in plain words: what holds for it (the general claim stays the property's). */
      claim: string;
      /** Where it comes from: the doc, the code (file, function) or the PR that made it so. */
      why: string;
    }
  | {
      kind: "known-issue";
      /** What the bug makes the run observe. */
      expect: Expect;
      /** What goes wrong on this version, in plain words. */
      claim: string;
      why: string;
      /** The upstream reference: the issue or PR that names the bug, and the fix when there is one. */
      upstream: string;
    };
export type DeviationKind = Deviation["kind"];

/** A patch range inside a minor where Cilium behaved differently (inclusive at both ends). */
export type PatchRange = Deviation & { from: string; to: string };

/**
 * An expectation that changes with the Cilium version: a patch range wins (when the full version is known),
 * then the minor, else `default` (the documented behaviour, the claim as the property states it).
 */
export interface ByVersion {
  default: Expect;
  byMinor?: Record<string, Deviation>;
  byPatch?: PatchRange[];
}

export type ModeExpectation = Expect | ByVersion;

export function isByVersion(e: ModeExpectation): e is ByVersion {
  return "default" in e;
}

/** "1.19.7" → [1, 19, 7]; "1.19" → [1, 19]; anything else → null. */
export function versionParts(v: string): number[] | null {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(v.trim());
  if (!m) return null;
  return m[3] === undefined ? [Number(m[1]), Number(m[2])] : [Number(m[1]), Number(m[2]), Number(m[3])];
}

function cmp(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Whether a full version (x.y.z) lies in the range; a bare minor never does (its patch is unknown). */
export function inPatchRange(version: string, r: Pick<PatchRange, "from" | "to">): boolean {
  const v = versionParts(version);
  const from = versionParts(r.from);
  const to = versionParts(r.to);
  if (!v || v.length < 3 || !from || !to) return false;
  return cmp(v, from) >= 0 && cmp(v, to) <= 0;
}

/** The expectation in force for a version, the deviation that put it there, and what the version is meant to do. */
export interface Resolved {
  expect: Expect;
  /** The deviation in force, with the versions it covers ("1.20.2", "1.19.0–1.19.3", "1.18"); null for the default. */
  deviation: (Deviation & { versions: string }) | null;
  /**
   * What the version is meant to do: for a known issue, the expectation without it (the minor's behaviour, or
   * the default); otherwise the expectation in force.
   */
  intended: Expect;
}

function minorOf(version: string): string {
  const parts = versionParts(version);
  return parts ? `${parts[0]}.${parts[1]}` : version;
}

/**
 * Resolves for a Cilium version: `1.19.7` (patch ranges apply) or `1.19` (minor only; a patch range then does
 * not apply, since the patch is unknown), or the default when none is given.
 */
export function resolveVersion(e: ModeExpectation, version?: string): Resolved {
  if (!isByVersion(e)) return { expect: e, deviation: null, intended: e };
  if (version === undefined) return { expect: e.default, deviation: null, intended: e.default };
  const minor = minorOf(version);
  const byMinor = e.byMinor?.[minor];
  const minorExpect = byMinor && byMinor.kind === "behaviour" ? byMinor.expect : e.default;
  const range = e.byPatch?.find((r) => inPatchRange(version, r));
  const dev: Resolved["deviation"] = range
    ? { ...range, versions: range.from === range.to ? range.from : `${range.from}–${range.to}` }
    : byMinor
      ? { ...byMinor, versions: minor }
      : null;
  if (!dev) return { expect: e.default, deviation: null, intended: e.default };
  return {
    expect: dev.expect,
    deviation: dev,
    intended: dev.kind === "known-issue" ? minorExpect : dev.expect,
  };
}

/** The expectation in force for a Cilium version (see resolveVersion). */
export function resolve(e: ModeExpectation, version?: string): Expect {
  return resolveVersion(e, version).expect;
}

/** Every deviation a mode's expectation declares, with the versions it covers. */
export function deviations(e: ModeExpectation): (Deviation & { versions: string })[] {
  if (!isByVersion(e)) return [];
  return [
    ...Object.entries(e.byMinor ?? {}).map(([minor, d]) => ({ ...d, versions: minor })),
    ...(e.byPatch ?? []).map((r) => ({ ...r, versions: r.from === r.to ? r.from : `${r.from}–${r.to}` })),
  ];
}

function show(v: Json): string {
  return typeof v === "string" ? v : JSON.stringify(v);
}

export function describeExpect(e: Expect): string {
  if ("each" in e) return `each ${describeExpect(e.each)}`;
  if ("eq" in e) return show(e.eq);
  if ("gte" in e) return `≥ ${e.gte}`;
  if ("lte" in e) return `≤ ${e.lte}`;
  if ("between" in e) return `${e.between[0]}–${e.between[1]}`;
  if ("oneOf" in e) return e.oneOf.map(show).join(" or ");
  if ("match" in e) return `/${e.match}/`;
  return `n/a (${e.na})`;
}

/** "≥ 1 (1.18: 0)", "EHOSTUNREACH (1.19.2–1.19.3: EPERM)" — the default with the versions that differ. */
export function describeModeExpectation(e: ModeExpectation): string {
  if (!isByVersion(e)) return describeExpect(e);
  const extra = deviations(e)
    .map(
      (d) => `${d.versions}: ${describeExpect(d.expect)}${d.kind === "known-issue" ? " (known issue)" : ""}`,
    )
    .join("; ");
  return extra ? `${describeExpect(e.default)} (${extra})` : describeExpect(e.default);
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A number, or a 64-bit value kept as its decimal past 2^53 (compared by magnitude; thresholds are small). */
function magnitude(v: unknown): number | null {
  if (typeof v === "number") return v;
  if (typeof v === "string" && /^-?\d+$/.test(v)) return Number(v);
  return null;
}

export function satisfies(e: Expect, observed: unknown): boolean {
  if ("each" in e)
    return Array.isArray(observed) && observed.length > 0 && observed.every((v) => satisfies(e.each, v));
  if ("eq" in e) return deepEqual(e.eq, observed);
  const n = magnitude(observed);
  if ("gte" in e) return n !== null && n >= e.gte;
  if ("lte" in e) return n !== null && n <= e.lte;
  if ("between" in e) return n !== null && n >= e.between[0] && n <= e.between[1];
  if ("oneOf" in e) return e.oneOf.some((x) => deepEqual(x, observed));
  if ("match" in e) return typeof observed === "string" && new RegExp(e.match).test(observed);
  return true;
}
