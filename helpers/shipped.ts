/**
 * The shipped bundles a run is compared with by default (issue 38): a run on a version with no shipped bundle of
 * its own (a patch the suite has never run, a minor it has not declared) is compared, property by property,
 * with the shipped bundle of the nearest declared version in the same mode and datapath profile — the fresh
 * installs under suites/bundles/<minor>/<mode> and suites/bundles/profiles/<profile>/<mode>.
 */
import { existsSync, readdirSync, realpathSync } from "node:fs";
import { join, relative } from "node:path";
import { type BundleMeta, readMeta } from "./bundle/read.ts";
import { MODES, type Mode, versionParts } from "./properties/expectation.ts";
import { declaredCilium, versionStanding } from "./properties/versions.ts";

export const SHIPPED_ROOT = join(import.meta.dirname, "..", "suites", "bundles");

export interface ShippedBundle {
  dir: string;
  cilium: string;
  mode: Mode;
  /** Its datapath profile (bundle.json datapathProfile); null: the suite's default. */
  profile: string | null;
}

const listDirs = (dir: string): string[] => {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
};

/** The shipped fresh installs: <minor>/<mode> and profiles/<profile>/<mode>, each as its bundle.json says. */
export function shippedBundles(root: string = SHIPPED_ROOT): ShippedBundle[] {
  const places = [
    ...listDirs(root)
      .filter((d) => /^\d+\.\d+$/.test(d))
      .map((d) => join(root, d)),
    ...listDirs(join(root, "profiles")).map((p) => join(root, "profiles", p)),
  ];
  return places.flatMap((place) =>
    MODES.map((mode) => join(place, mode))
      .filter((dir) => existsSync(join(dir, "bundle.json")))
      .map((dir) => {
        const meta = readMeta(dir);
        return { dir, cilium: meta.cilium, mode: meta.mode, profile: meta.datapathProfile ?? null };
      }),
  );
}

/** A path under the working directory as a user would type it, any other in full. */
function shown(p: string): string {
  const r = relative(process.cwd(), p);
  return r && !r.startsWith("..") ? r : p;
}

/** How far two versions are apart: minors first, then patches (1.20.2 is nearer to 1.21.0 than 1.19.7). */
function distance(a: string, b: string): [number, number] {
  const x = versionParts(a) ?? [0, 0, 0];
  const y = versionParts(b) ?? [0, 0, 0];
  return [Math.abs((x[1] ?? 0) - (y[1] ?? 0)), Math.abs((x[2] ?? 0) - (y[2] ?? 0))];
}

export interface NearestShipped {
  dir: string;
  cilium: string;
  /** One line: what it is and why it was chosen. */
  why: string;
}

/**
 * The shipped bundle a bundle is compared with by default: the nearest declared version of the same mode and
 * profile, when no shipped bundle of its own version is there (and it is no upgrade, which has its own gate,
 * nor a shipped bundle itself); null otherwise.
 */
export function nearestShipped(
  dir: string,
  meta: BundleMeta = readMeta(dir),
  root: string = SHIPPED_ROOT,
  declared: readonly string[] = declaredCilium(),
): NearestShipped | null {
  if (meta.upgrade) return null;
  const real = (p: string) => (existsSync(p) ? realpathSync(p) : p);
  const inRoot = relative(real(root), real(dir));
  if (inRoot !== "" && !inRoot.startsWith("..")) return null;
  const profile = meta.datapathProfile ?? null;
  const same = shippedBundles(root).filter((s) => s.mode === meta.mode && s.profile === profile);
  const version = meta.cilium.split(" ")[0] ?? meta.cilium;
  if (same.some((s) => s.cilium.split(" ")[0] === version)) return null;
  const candidates = same.filter((s) => versionStanding(s.cilium, declared).kind === "declared");
  const [best] = candidates.sort((a, b) => {
    const [da, pa] = distance(a.cilium, version);
    const [db, pb] = distance(b.cilium, version);
    return da - db || pa - pb;
  });
  if (!best) return null;
  const standing = versionStanding(version, declared);
  const what =
    standing.kind === "newer"
      ? `Cilium ${version} is of a minor the suite has not declared`
      : `the suite ships no bundle of Cilium ${version}`;
  return {
    dir: best.dir,
    cilium: best.cilium,
    why: `${what}: compared with the shipped bundle of the nearest declared version, ${shown(best.dir)} (${meta.mode}${profile ? `, profile ${profile}` : ""}, Cilium ${best.cilium})`,
  };
}
