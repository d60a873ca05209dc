/**
 * What a property's expectation depends on in the live datapath configuration (issue 25). Every property says
 * it: `"none"`, or the settings its declared expectation assumes and, per other value the suite models, the
 * expectation there. A setting the suite does not model makes the property not applicable, naming the setting:
 * never a failure, never a pass.
 *
 * The values are those of the run's configuration record (helpers/records/datapath-config.ts), observed by the
 * config topic: a value the run could not read, or a bundle recorded before the config topic, leaves the
 * declared expectation in force and the verdict says what was assumed.
 */
import type { Mode, ModeExpectation } from "./expectation.ts";

/** The settings that decide the datapath, as the configuration record names them. */
export const CONFIG_KEYS = [
  "routing",
  "tunnelProtocol",
  "hostRouting",
  "masquerading",
  "socketLB",
  "lbMode",
  "lbAlgorithm",
  "deviceMode",
  "kubeProxy",
  "ipFamilies",
] as const;
export type ConfigKey = (typeof CONFIG_KEYS)[number];

/**
 * The run's configuration as plain values: `"native"`, `"hostns-only"`, `"ipv4+ipv6"` (families joined by +);
 * null where the run could not read the setting, or where it does not apply (no tunnel protocol in native
 * routing).
 */
export type ConfigValues = Record<ConfigKey, string | null>;

/** Settings by their values: each key's value must be one of those listed. */
export type ConfigMatch = Partial<Record<ConfigKey, readonly string[]>>;

/** Another configuration the suite models, with its own expectation per mode and its own claim. */
export interface ConfigCase {
  when: ConfigMatch;
  /** The expectation in that configuration; a mode left out is not modelled there (not applicable). */
  expect: Partial<Record<Mode, ModeExpectation>>;
  /** The claim as it holds in that configuration, in plain words. */
  claim: string;
  /** Where it comes from: Cilium's docs or code (file, function), a PR. */
  why: string;
}

export interface ConfigDependence {
  /**
   * Per mode, the values the property's `expect` assumes (the suite's default configuration is among them): a
   * run whose setting has another value, and no case covers it, is not applicable.
   */
  assumes: Partial<Record<Mode, ConfigMatch>>;
  /** Other configurations the suite models, first match wins. */
  cases?: readonly ConfigCase[];
}

/** `"none"`: the property's expectation does not depend on the configuration (it says why in its `why`). */
export type PropertyConfig = "none" | ConfigDependence;

export type ConfigResolution =
  | { kind: "declared"; assumed: string | null }
  | { kind: "case"; case: ConfigCase; expect: ModeExpectation; settings: string }
  | { kind: "na"; reason: string };

const shown = (m: ConfigMatch) =>
  Object.entries(m)
    .map(([k, vs]) => `${k} ${(vs as string[]).join("/")}`)
    .join(", ");

function matches(m: ConfigMatch, c: ConfigValues): boolean {
  return Object.entries(m).every(([k, vs]) => {
    const v = c[k as ConfigKey];
    return v !== null && (vs as string[]).includes(v);
  });
}

/**
 * Which expectation a property has in this configuration: its declared one (`declared`, with what was assumed
 * where the configuration is unknown), a modelled case, or not applicable naming the setting.
 */
export function resolveConfig(
  dep: PropertyConfig,
  mode: Mode,
  config: ConfigValues | null,
): ConfigResolution {
  if (dep === "none") return { kind: "declared", assumed: null };
  const assumes = dep.assumes[mode] ?? {};
  if (!config)
    return {
      kind: "declared",
      assumed: Object.keys(assumes).length
        ? `configuration not recorded (a bundle older than the config topic): assumed ${shown(assumes)}`
        : null,
    };
  for (const c of dep.cases ?? []) {
    if (!matches(c.when, config)) continue;
    const e = c.expect[mode];
    if (!e) return { kind: "na", reason: `not modelled in this mode with ${settingsOf(c.when, config)}` };
    return { kind: "case", case: c, expect: e, settings: settingsOf(c.when, config) };
  }
  const unknown: string[] = [];
  for (const [k, vs] of Object.entries(assumes)) {
    const v = config[k as ConfigKey];
    if (v === null) {
      unknown.push(k);
      continue;
    }
    if (!(vs as string[]).includes(v))
      return {
        kind: "na",
        reason: `not modelled for ${k} ${v} (the expectation assumes ${k} ${(vs as string[]).join("/")})`,
      };
  }
  return {
    kind: "declared",
    assumed: unknown.length
      ? `the run could not read ${unknown.join(", ")}: assumed ${shown(Object.fromEntries(unknown.map((k) => [k, assumes[k as ConfigKey] as string[]])))}`
      : null,
  };
}

function settingsOf(m: ConfigMatch, c: ConfigValues): string {
  return Object.keys(m)
    .map((k) => `${k} ${c[k as ConfigKey]}`)
    .join(", ");
}

/** The settings a property depends on, for the table and `plan`: "none", or "routing, socketLB". */
export function dependsOn(dep: PropertyConfig): ConfigKey[] {
  if (dep === "none") return [];
  const keys = new Set<ConfigKey>();
  for (const m of Object.values(dep.assumes)) for (const k of Object.keys(m ?? {})) keys.add(k as ConfigKey);
  for (const c of dep.cases ?? []) for (const k of Object.keys(c.when)) keys.add(k as ConfigKey);
  return CONFIG_KEYS.filter((k) => keys.has(k));
}
