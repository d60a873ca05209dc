import { readBaseline } from "../baseline.ts";
import type { BundleMeta } from "../bundle/read.ts";
import { labCacheDir, resolveUpgrade } from "../exec/portable.ts";
import { ReplayExecutor } from "../exec/replay.ts";
import type { RecordSet } from "../records/types.ts";
import { noSleep, type RunContext } from "./context.ts";

/** The context a topic runs in when its calls are served back from a bundle (specs in replay, and `check`). */
export function replayContext(
  dir: string,
  meta: BundleMeta,
  topic: string,
  opts: { log: (line: string) => void; earlierRecords: () => RecordSet },
): RunContext {
  const roots = { bundle: dir, labCache: labCacheDir() };
  const exec = new ReplayExecutor(dir, topic, roots);
  return {
    exec,
    now: () => exec.now(),
    recordedAt: () => exec.now(),
    spent: () => exec.spent(),
    mode: meta.mode,
    ciliumMinor: meta.ciliumMinor,
    provider: meta.provider,
    namespace: meta.namespace ?? "cca-dp",
    replay: true,
    log: opts.log,
    sleep: noSleep,
    runStartedAt: meta.createdAt,
    bundleDir: dir,
    ...(meta.upgrade ? { upgrade: resolveUpgrade(meta.upgrade, roots) } : {}),
    ...(meta.kubeContext ? { kubeContext: meta.kubeContext } : {}),
    earlierRecords: opts.earlierRecords,
    baselineMetrics: () => readBaseline(dir),
  };
}
