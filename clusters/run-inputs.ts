/**
 * What a cluster run is asked for, read by ONE parser for `plan`, `run` (cli/run.ts) and the conformance project's
 * setup (suites/global-setup.ts, which `npm run test:conformance` and `run` start): each input is a flag and, for
 * most, the environment variable the setup reads. A flag wins over its variable. So the three accept and refuse
 * the same inputs with the same line; `runEnv` turns the inputs into the environment `run` starts the conformance
 * project with, and parsing that environment gives the same inputs again (cli/run-inputs.test.ts proves both on
 * every input it tries).
 */
import { resolve as resolvePath } from "node:path";
import { UserError } from "../helpers/errors.ts";
import { MODES, type Mode } from "../helpers/properties/expectation.ts";
import { type Provider, parseMode, parseProvider } from "./choices.ts";
import {
  type DatapathProfileName,
  loadUserValues,
  PROFILES,
  parseDatapathProfile,
} from "./datapath-profiles.ts";
import { type Part, parsePart } from "./parts.ts";
import { RUN_INPUTS, type RunInput } from "./run-input-list.ts";
import { type CiliumVersion, neverRunHere, resolveCilium } from "./versions.ts";

export { RUN_INPUTS };

export interface RunInputs {
  provider: Provider;
  /** The mode asked for (existing and replay: the one the run must find there). */
  mode?: Mode;
  /** The modes a kind or k3d run installs: the one asked for, else the profile's, else both. */
  modes: Mode[];
  /** The Cilium version as given (kind and k3d), and as it resolves. */
  cilium?: string;
  version?: CiliumVersion;
  profile?: DatapathProfileName;
  /** The user's Helm values file, as given and as read. */
  values?: { file: string; values: Record<string, unknown> };
  upgradeTo?: string;
  rollback: boolean;
  keep: boolean;
  test?: string;
  skip?: string;
  /** One of a mode's two parts (clusters/parts.ts), or the whole run. */
  part?: Part;
  junit?: string;
  /** What the suite has never run among the asked versions, one line each. */
  notes: string[];
}

export type Flags = Record<string, string | boolean | readonly string[] | undefined>;

/** Where an input was given, as a line names it: `--cilium 1.19` or `CILIUM_VERSION=1.19`. */
function source(i: RunInput, flags: Flags, env: NodeJS.ProcessEnv): { given?: string; said: string } {
  const f = flags[i.flag];
  if (f !== undefined && f !== false)
    return typeof f === "string"
      ? { given: f, said: `--${i.flag} ${f}` }
      : { given: "1", said: `--${i.flag}` };
  const v = i.env ? env[i.env] : undefined;
  if (v === undefined || v === "") return { said: `--${i.flag}` };
  return { given: v, said: `${i.env}=${v}` };
}

const input = (flag: string) => RUN_INPUTS.find((i) => i.flag === flag) as RunInput;

/** A refusal of a value from the environment names the variable (`CILIUM_VERSION=banana: …`). */
function named<T>(said: string, given: string | undefined, f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof UserError && given !== undefined && !said.startsWith("--"))
      throw new UserError(`${said}: ${err.message}`);
    throw err;
  }
}

/** A regular expression of --test/--skip, refused in one line when it does not compile. */
function regex(said: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  try {
    new RegExp(v);
  } catch (err) {
    throw new UserError(`${said}: not a regular expression (${(err as Error).message})`);
  }
  return v;
}

/**
 * The run's inputs from the flags and the environment (a flag wins): validated, each refusal one line naming
 * where the value came from.
 */
export function parseRunInputs(flags: Flags, env: NodeJS.ProcessEnv): RunInputs {
  const at = (flag: string) => source(input(flag), flags, env);
  const bool = (flag: string) => {
    const s = at(flag);
    if (s.given === undefined || s.given === "0") return false;
    if (s.given !== "1") throw new UserError(`${s.said}: valid values are 1 and 0`);
    return true;
  };
  const pr = at("provider");
  const provider = named(pr.said, pr.given, () => parseProvider(pr.given));
  const m = at("mode");
  const mode = m.given === undefined ? undefined : named(m.said, m.given, () => parseMode(m.given, m.said));
  const c = at("cilium");
  const p = at("profile");
  const profile = named(p.said, p.given, () => parseDatapathProfile(p.given));
  const reads = provider === "existing" || provider === "replay";
  const from = provider === "existing" ? "the cluster's agents run" : "the bundle recorded";
  if (reads && c.given !== undefined)
    throw new UserError(
      `${c.said.split(/[ =]/)[0]} does not apply to provider ${provider}: the version is the one ${from}`,
    );
  if (reads && profile !== undefined)
    throw new UserError(
      `${p.said.split(/[ =]/)[0]} does not apply to provider ${provider}: the datapath is the one ${provider === "existing" ? "the cluster runs" : "the bundle recorded"}`,
    );
  if (profile && mode && !PROFILES[profile].modes.includes(mode))
    throw new UserError(
      `datapath profile ${profile} applies to ${PROFILES[profile].modes.join(" and ")} only (not ${mode})`,
    );
  const version = reads ? undefined : named(c.said, c.given, () => resolveCilium(c.given));
  const modes: Mode[] = mode ? [mode] : profile ? [...PROFILES[profile].modes] : [...MODES];
  const vf = at("values").given;
  const u = at("upgrade-to");
  const rollback = bool("rollback");
  if (rollback && u.given === undefined)
    throw new UserError(
      "ROLLBACK=1 (--rollback) rolls back after the upgrade leg: give --upgrade-to (UPGRADE_TO) too, e.g. --cilium 1.19 --upgrade-to 1.20 --rollback",
    );
  const upgrade = u.given === undefined ? undefined : upgradeTarget(version, u.given, u.said);
  const junit = at("junit").given;
  const test = regex(at("test").said, at("test").given);
  const skip = regex(at("skip").said, at("skip").given);
  const pa = at("part");
  const part = pa.given === undefined ? undefined : parsePart(pa.given, pa.said);
  return {
    provider,
    ...(mode ? { mode } : {}),
    modes,
    ...(c.given !== undefined ? { cilium: c.given } : {}),
    ...(version ? { version } : {}),
    ...(profile ? { profile } : {}),
    ...(vf ? { values: { file: vf, values: loadUserValues(vf) } } : {}),
    ...(u.given !== undefined ? { upgradeTo: u.given } : {}),
    rollback,
    keep: bool("keep"),
    ...(test !== undefined ? { test } : {}),
    ...(skip !== undefined ? { skip } : {}),
    ...(part !== undefined ? { part } : {}),
    ...(junit ? { junit } : {}),
    notes: [
      ...(version ? neverRunHere(version.version) : []),
      ...(upgrade ? neverRunHere(upgrade.version).map((l) => `upgrade target: ${l}`) : []),
    ],
  };
}

/**
 * The upgrade target, checked as the upgrade leg checks it (clusters/upgrade-plan.ts): a newer patch of the
 * installed minor or the next minor.
 */
function upgradeTarget(from: CiliumVersion | undefined, to: string, said: string): CiliumVersion {
  const target = named(said, to, () => resolveCilium(to));
  if (!from) return target;
  const [maj, min] = from.minor.split(".").map(Number);
  const next = `${maj}.${(min ?? 0) + 1}`;
  const patchOf = (v: string) => Number(v.split(".")[2] ?? -1);
  const patchUp = target.minor === from.minor && patchOf(target.version) > patchOf(from.version);
  if (target.minor !== next && !patchUp)
    throw new UserError(
      `${said}: Cilium supports upgrades to a newer patch of the same minor or to the next minor only; from ${from.version} that is a ${from.minor}.x above it or ${next}`,
    );
  return target;
}

/**
 * The environment the conformance project is started with for these inputs: every variable of RUN_INPUTS set,
 * or empty when not asked for (so nothing of the caller's environment disagrees with what was parsed).
 */
export function runEnv(i: RunInputs): Record<string, string> {
  return {
    CLUSTER_PROVIDER: i.provider,
    CONFORMANCE_MODE: i.mode ?? "",
    CILIUM_VERSION: i.cilium ?? "",
    DATAPATH_PROFILE: i.profile ?? "",
    CILIUM_VALUES: i.values ? resolvePath(i.values.file) : "",
    UPGRADE_TO: i.upgradeTo ?? "",
    ROLLBACK: i.rollback ? "1" : "",
    CONFORMANCE_JUNIT: i.junit ? resolvePath(i.junit) : "",
    KEEP_CLUSTER: i.keep ? "1" : "",
  };
}

/**
 * vitest's test-name filter for --test and --skip: one pattern (vitest takes one), `--skip` as a negative
 * lookahead over the whole name.
 */
export function testNamePattern(i: Pick<RunInputs, "test" | "skip">): string | undefined {
  if (i.test === undefined && i.skip === undefined) return undefined;
  const skip = i.skip !== undefined ? `(?!.*(?:${i.skip}))` : "";
  const test = i.test !== undefined ? `(?=.*(?:${i.test}))` : "";
  return `^${skip}${test}`;
}
