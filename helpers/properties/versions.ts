/**
 * The Cilium versions the expectations are declared for, and what any other version is judged against.
 *
 * clusters/lab/versions.env is the one source of versions (the lab's shell script sources it); this module is its
 * one reader in TypeScript (versionsEnv), in the lowest layer because the judge needs it: a verdict for a minor the
 * suite has not declared is judged against the newest declared minor's expectations and marked so (issue 38).
 * clusters/versions.ts, the lab, `--version` and the rest read it through here. It is read when first asked
 * for, not when a module is imported.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { versionParts } from "./expectation.ts";

/** `KEY=value` lines (a shell-sourced file: clusters/lab/versions.env). */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = /^\s*([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (!m?.[1]) continue;
    out[m[1]] = (m[2] ?? "").trim().replace(/^"(.*)"$/, "$1");
  }
  return out;
}

export const VERSIONS_FILE = join(import.meta.dirname, "..", "..", "clusters", "lab", "versions.env");
let parsed: Readonly<Record<string, string>> | null = null;
/** clusters/lab/versions.env, parsed (read once, when first asked for). */
export function versionsEnv(): Readonly<Record<string, string>> {
  parsed ??= parseEnvFile(readFileSync(VERSIONS_FILE, "utf8"));
  return parsed;
}

/** One value of versions.env; a key it does not have is an error naming it. */
export function versionValue(key: string): string {
  const v = versionsEnv()[key];
  if (!v) throw new Error(`clusters/lab/versions.env has no ${key}`);
  return v;
}

/** The Cilium patches the suite has run, newest first (versions.env CILIUM_VERSIONS): one per declared minor. */
export function declaredCilium(): readonly string[] {
  return (versionsEnv().CILIUM_VERSIONS ?? "").split(/\s+/).filter(Boolean);
}

/** "1.19.7" → "1.19"; anything that is no version stays as it is. */
export function minorOf(version: string): string {
  const p = versionParts(version);
  return p ? `${p[0]}.${p[1]}` : version;
}

const minorNumber = (minor: string) => Number(minor.split(".")[1]);
const majorNumber = (minor: string) => Number(minor.split(".")[0]);

/** The declared minors, oldest first. */
export function declaredMinors(declared: readonly string[] = declaredCilium()): string[] {
  return [...new Set(declared.map(minorOf))].sort((a, b) => minorNumber(a) - minorNumber(b));
}

/**
 * What a Cilium version is to the suite:
 * - declared: its minor is declared (the patch may be one the suite has never run: that minor's expectations);
 * - newer: a minor newer than every declared one, of the same major: it runs against the newest declared
 *   minor's expectations (`from`), as the suite holds them at the newest patch it has run of it (`as`), every
 *   verdict marked "assumed from <from>";
 * - older: older than every declared minor: refused where a run starts (nothing assumes a newer minor's
 *   expectations for an older one: they record behaviour added since);
 * - other-major: another major version: refused too;
 * - invalid: not a version.
 */
export type VersionStanding =
  | { kind: "declared"; minor: string }
  | { kind: "newer"; minor: string; from: string; as: string }
  | { kind: "older"; minor: string; oldest: string }
  | { kind: "other-major"; minor: string }
  | { kind: "invalid" };

export function versionStanding(
  version: string,
  declared: readonly string[] = declaredCilium(),
): VersionStanding {
  const p = versionParts(version);
  if (!p) return { kind: "invalid" };
  const minor = `${p[0]}.${p[1]}`;
  const minors = declaredMinors(declared);
  if (minors.includes(minor)) return { kind: "declared", minor };
  const newest = minors.at(-1);
  const oldest = minors[0];
  if (!newest || !oldest) return { kind: "invalid" };
  if (p[0] !== majorNumber(newest)) return { kind: "other-major", minor };
  if ((p[1] ?? 0) > minorNumber(newest)) {
    const as = declared.find((v) => minorOf(v) === newest) ?? newest;
    return { kind: "newer", minor, from: newest, as };
  }
  return { kind: "older", minor, oldest };
}

/**
 * The version a verdict's expectation is resolved for, and the minor it is assumed from when the version's own
 * minor is newer than every declared one (the newest declared minor's expectations, as of its newest run patch:
 * a known issue of that patch still counts, as a known issue).
 */
export function expectationBasis(
  cilium: string | undefined,
  declared: readonly string[] = declaredCilium(),
): { resolveAs: string | undefined; assumedFrom?: string } {
  if (cilium === undefined) return { resolveAs: undefined };
  const s = versionStanding(cilium, declared);
  return s.kind === "newer" ? { resolveAs: s.as, assumedFrom: s.from } : { resolveAs: cilium };
}

/** What the suite takes, said in every refusal. */
function validText(declared: readonly string[]): string {
  const minors = declaredMinors(declared);
  const newest = minors.at(-1) ?? "?";
  return `valid: ${minors.join(", ")}, a patch of one (e.g. ${declared[0] ?? "?"}), or a patch of a newer minor (its expectations assumed from ${newest})`;
}

/**
 * Why a Cilium version is refused, in one line; null when it runs. An older minor than every declared one is
 * refused: a newer minor's expectations record behaviour added since, so nothing assumes them for an older one,
 * and no expectation was ever checked against it.
 */
export function versionRefusal(
  version: string,
  declared: readonly string[] = declaredCilium(),
): string | null {
  const s = versionStanding(version, declared);
  if (s.kind === "older")
    return `Cilium ${version} is older than every minor the suite declares (oldest: ${s.oldest}): refused, since no expectation was checked against ${s.minor} and a newer minor's are not assumed for an older one (they record behaviour added since); ${validText(declared)}`;
  if (s.kind === "other-major")
    return `Cilium ${version} is of a major version the suite has never declared: refused, since expectations are assumed only for a newer minor of ${declaredMinors(declared).at(-1)?.split(".")[0]}.x; ${validText(declared)}`;
  if (s.kind === "invalid") return unsupportedVersion(version, declared);
  return null;
}

/** The refusal of what is no version at all ("latest", "1.19.x"), listing what is. */
export function unsupportedVersion(
  spec: string | undefined,
  declared: readonly string[] = declaredCilium(),
): string {
  return `unsupported Cilium version ${JSON.stringify(spec)}; ${validText(declared)}`;
}

/** "assumed from 1.20": the mark every verdict of an undeclared newer minor carries. */
export const assumedText = (from: string): string => `assumed from ${from}`;

/** The label of a property that did not hold under an assumed expectation (its own verdict, status `changed`). */
export const CHANGED_LABEL = "changed in the new minor — a regression or a new behaviour, to be declared";
/** The same as a heading. */
export const CHANGED_TITLE = `C${CHANGED_LABEL.slice(1)}`;
