import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BundleFault, readBundleJsonText } from "./bundle/files.ts";

/**
 * What the agents said when the run began (right after the readiness gates), kept in the bundle as
 * `baseline/metrics-<node>.json`: the invariants count drops over the run, not since the agents started.
 */
export function writeBaseline(bundleDir: string, metricsByNode: Record<string, string>): void {
  const dir = join(bundleDir, "baseline");
  mkdirSync(dir, { recursive: true });
  for (const [node, text] of Object.entries(metricsByNode))
    writeFileSync(join(dir, `metrics-${node}.json`), text);
}

/** The agents' `metrics list -o json` at the run's start, by node; null for a bundle recorded without it. */
export function readBaseline(bundleDir: string): Record<string, string> | null {
  const dir = join(bundleDir, "baseline");
  if (!existsSync(dir)) return null;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    throw new BundleFault(
      bundleDir,
      "baseline/",
      `not a folder that can be listed (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  const out: Record<string, string> = {};
  for (const f of names) {
    const m = /^metrics-(.+)\.json$/.exec(f);
    // inside the bundle and within the cap, as every file a bundle holds (helpers/bundle/files.ts)
    const text = m ? readBundleJsonText(bundleDir, `baseline/${f}`) : null;
    if (m && text !== null) out[m[1] as string] = text;
  }
  return Object.keys(out).length > 0 ? out : null;
}
