/**
 * `npm run bench:check`: how long `check` takes on each shipped bundle (not a test; the figures go into the
 * README): re-judged in process (the first run, then the median of three), and the CLI as its own process
 * (`datapath-conformance check BUNDLE`, wall time: Node's and tsx's start included). The machine's load average
 * is printed with them, since a busy machine stretches every figure.
 */
import { spawnSync } from "node:child_process";
import { loadavg } from "node:os";
import { basename, join } from "node:path";
import { checkBundle } from "../helpers/check.ts";
import { SHIPPED_BUNDLES } from "../suites/environment.ts";
import { TOPICS } from "../suites/topics.ts";

const BIN = join(import.meta.dirname, "..", "bin", "datapath-conformance.mjs");
process.stdout.write(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}\n`,
);
process.stdout.write("bundle            first   median of 3   CLI (own process)\n");
for (const dir of SHIPPED_BUNDLES) {
  const run = async () => {
    const t0 = performance.now();
    await checkBundle(dir, TOPICS);
    return performance.now() - t0;
  };
  const first = await run();
  const times = [await run(), await run(), await run()].sort((a, b) => a - b);
  const t0 = performance.now();
  const cli = spawnSync(process.execPath, [BIN, "check", dir], { encoding: "utf8" });
  const wall = performance.now() - t0;
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  process.stdout.write(
    `${basename(dir).padEnd(16)}  ${s(first).padStart(6)}   ${s(times[1] as number).padStart(11)}   ${s(wall).padStart(8)} (exit ${cli.status})\n`,
  );
}
