import { homedir } from "node:os";
import { isAbsolute, join, relative, resolve } from "node:path";
import type { UpgradePlan } from "../observe/context.ts";

/**
 * A bundle names no folder of the machine that recorded it: a path under the bundle is written relative to it
 * (`$BUNDLE/…` inside a recorded command), a path under the offline lab's cache by name (`$LAB_CACHE/…`). A
 * replay on another machine resolves them against its own bundle folder and lab cache.
 */
export const BUNDLE_TOKEN = "$BUNDLE";
export const LAB_CACHE_TOKEN = "$LAB_CACHE";
/** This checkout (a script of the suite a call runs, e.g. the upgrade's nested run): `$SUITE/…`. */
export const SUITE_TOKEN = "$SUITE";
export const SUITE_ROOT = resolve(import.meta.dirname, "..", "..");

/** The folders a recording's paths are relative to. */
export interface PathRoots {
  bundle: string;
  labCache?: string;
}

/** The offline lab's cache folder: `LAB_CACHE`, else ~/.cache/datapath-conformance/lab. */
export function labCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.LAB_CACHE ?? join(homedir(), ".cache", "datapath-conformance", "lab");
}

function under(root: string | undefined, path: string): string | null {
  if (!root || !isAbsolute(path)) return null;
  // a root given relative to the working folder (`check suites/bundles/…`) is compared as the folder it names
  const rel = relative(resolve(root), path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel)) ? rel : null;
}

/** An absolute path under a root as `$BUNDLE/…` / `$LAB_CACHE/…`; any other word unchanged. */
export function portableWord(word: string, roots: PathRoots): string {
  const lab = under(roots.labCache, word);
  if (lab !== null) return lab === "" ? LAB_CACHE_TOKEN : `${LAB_CACHE_TOKEN}/${lab}`;
  const b = under(roots.bundle, word);
  if (b !== null) return b === "" ? BUNDLE_TOKEN : `${BUNDLE_TOKEN}/${b}`;
  // after the bundle: a run's bundle folder (results/…) is inside the checkout too
  const s = under(SUITE_ROOT, word);
  if (s !== null && s !== "") return `${SUITE_TOKEN}/${s}`;
  return word;
}

/**
 * Free text a call printed (its stderr) as a bundle records it: a folder of this machine named in it becomes its
 * token, as in a command (the upgrade's nested run prints the checkout it runs in: vitest's `RUN v4 /work/…`).
 */
export function portableText(text: string, roots: PathRoots): string {
  const named: [string | undefined, string][] = [
    [roots.labCache, LAB_CACHE_TOKEN],
    [roots.bundle, BUNDLE_TOKEN],
    [SUITE_ROOT, SUITE_TOKEN],
  ];
  let out = text;
  for (const [root, token] of named) {
    if (!root) continue;
    const path = resolve(root).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    out = out.replace(new RegExp(`${path}(?![A-Za-z0-9._-])`, "g"), token);
  }
  return out;
}

/** A command as a bundle records it: no folder of this machine in it. */
export function portableArgv(argv: string[], roots: PathRoots): string[] {
  return argv.map((w) => portableWord(w, roots));
}

/**
 * `$BUNDLE/…`, `$LAB_CACHE/…` or a bundle-relative path → this machine's path (a bundle path absolute, so it maps
 * back to `$BUNDLE/…` whatever folder the bundle was named from); an absolute path stays.
 */
export function resolvePortable(
  path: string,
  roots: PathRoots,
  relativeTo: "bundle" | "none" = "none",
): string {
  if (path === BUNDLE_TOKEN || path.startsWith(`${BUNDLE_TOKEN}/`))
    return resolve(roots.bundle, `.${path.slice(BUNDLE_TOKEN.length)}`);
  if (path === LAB_CACHE_TOKEN || path.startsWith(`${LAB_CACHE_TOKEN}/`))
    return roots.labCache ? join(roots.labCache, path.slice(LAB_CACHE_TOKEN.length)) : path;
  if (path.startsWith(`${SUITE_TOKEN}/`)) return join(SUITE_ROOT, path.slice(SUITE_TOKEN.length));
  if (relativeTo === "bundle" && !isAbsolute(path)) return resolve(roots.bundle, path);
  return path;
}

/**
 * The upgrade leg as bundle.json keeps it: the values file relative to the bundle (it is written there), the
 * lab's chart by name under `$LAB_CACHE`.
 */
export function portableUpgrade(plan: UpgradePlan, roots: PathRoots): UpgradePlan {
  const values = under(roots.bundle, plan.valuesFile);
  return {
    ...plan,
    valuesFile: values ?? portableWord(plan.valuesFile, roots),
    ...(plan.lab ? { lab: { ...plan.lab, chart: portableWord(plan.lab.chart, roots) } } : {}),
  };
}

/** bundle.json's upgrade leg with this machine's paths (a bundle from before portable paths keeps its own). */
export function resolveUpgrade(plan: UpgradePlan, roots: PathRoots): UpgradePlan {
  return {
    ...plan,
    valuesFile: resolvePortable(plan.valuesFile, roots, "bundle"),
    ...(plan.lab ? { lab: { ...plan.lab, chart: resolvePortable(plan.lab.chart, roots) } } : {}),
  };
}
