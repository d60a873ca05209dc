import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

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
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir)) {
    const m = /^metrics-(.+)\.json$/.exec(f);
    if (m) out[m[1] as string] = readFileSync(join(dir, f), "utf8");
  }
  return Object.keys(out).length > 0 ? out : null;
}
