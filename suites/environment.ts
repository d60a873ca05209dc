import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { readBaseline } from "../helpers/baseline.ts";
import { type BundleMeta, bundleTopics, readMeta, readRecords, writeMeta } from "../helpers/bundle.ts";
import { ClusterExecutor } from "../helpers/exec/cluster.ts";
import { KubeExecutor } from "../helpers/exec/kube.ts";
import { RecordingExecutor } from "../helpers/exec/record.ts";
import type { Executor } from "../helpers/exec/types.ts";
import { nothingSpent, type RunContext, realSleep } from "../helpers/observe/context.ts";
import { replayContext } from "../helpers/observe/replay-context.ts";
import type { Mode } from "../helpers/properties/expectation.ts";
import type { RecordSet } from "../helpers/records/types.ts";
import type { RunState } from "./run-state.ts";

export const SUITES_DIR = resolve(import.meta.dirname);
export const SHIPPED_BUNDLES = [
  join(SUITES_DIR, "bundles", "kpr"),
  join(SUITES_DIR, "bundles", "kube-proxy"),
  // 1.19.6 with the upgrade leg to 1.19.7 (a patch upgrade)
  join(SUITES_DIR, "bundles", "kpr-upgrade"),
  // the opt-in drop profile: ghost and measure-latency only
  join(SUITES_DIR, "bundles", "drop-kpr"),
  join(SUITES_DIR, "bundles", "drop-kube-proxy"),
  // the first with a drop baseline (ghost and invariants only)
  join(SUITES_DIR, "bundles", "baseline-kpr"),
];

/** One mode to run a topic against: how to get a context, where its evidence goes. */
export interface ModeTarget {
  mode: Mode;
  ciliumMinor: string;
  /** Shown in test names: `[replay]`, `[kind]`, … */
  label: string;
  /** What ran: versions, kernel, attach mode (bundle.json). */
  meta(): BundleMeta;
  /** Adds a phase timing (seconds) to the run's bundle.json; a replay leaves its bundle untouched. */
  recordPhase(name: string, seconds: number): void;
  /** Why this topic cannot run here (a bundle without that topic), or null. */
  skipReason(topic: string): string | null;
  context(topic: string): { ctx: RunContext; outDir: string; close: () => Promise<void> };
}

function logger(label: string, mode: Mode, topic: string) {
  return (line: string) => process.stdout.write(`[${label}] [${mode}] ${topic}: ${line}\n`);
}

export function replayTargets(bundles: string[], outRoot: string): ModeTarget[] {
  return bundles.map((dir) => {
    const meta = readMeta(dir);
    const topics = bundleTopics(dir);
    return {
      mode: meta.mode,
      ciliumMinor: meta.ciliumMinor,
      label: "replay",
      meta: () => meta,
      recordPhase: () => {},
      skipReason: (topic) =>
        topics.includes(topic) ? null : `bundle ${dir} has no recorded calls for ${topic}`,
      context: (topic) => {
        const ctx = replayContext(dir, meta, topic, {
          log: logger("replay", meta.mode, topic),
          earlierRecords: () => readRecords(dir),
        });
        return { ctx, outDir: join(outRoot, meta.mode), close: async () => {} };
      },
    };
  });
}

export function clusterTargets(state: Extract<RunState, { kind: "cluster" }>): ModeTarget[] {
  return state.targets.map((t) => ({
    mode: t.mode,
    ciliumMinor: t.ciliumMinor,
    label: t.provider,
    meta: () => readMeta(t.bundleDir),
    recordPhase: (name, seconds) => {
      const meta = readMeta(t.bundleDir);
      writeMeta(t.bundleDir, { ...meta, phases: { ...meta.phases, [name]: Math.round(seconds * 10) / 10 } });
    },
    skipReason: (topic) =>
      topic === "upgrade" && !t.upgrade
        ? "no upgrade leg in this run: set UPGRADE_TO to the next minor (e.g. CILIUM_VERSION=1.19 UPGRADE_TO=1.20)"
        : null,
    context: (topic) => {
      const pods = new KubeExecutor(t.context, t.kubeconfig);
      const inner: Executor = new ClusterExecutor(
        {
          context: t.context,
          ...(t.kubeconfig ? { kubeconfig: t.kubeconfig } : {}),
          nodeShell:
            t.nodeShell === "docker"
              ? { kind: "docker", containerOf: (node) => `${t.nodeShellPrefix ?? ""}${node}` }
              : {
                  kind: "pod",
                  namespace: t.nodeShellNamespace ?? t.namespace,
                  podOf: (node) => `node-shell-${node}`,
                },
          ...(t.outsideContainer ? { outsideContainer: t.outsideContainer } : {}),
        },
        pods,
      );
      const exec = new RecordingExecutor(inner, t.bundleDir, topic, Date.now, {
        bundle: t.bundleDir,
        ...(t.labCache ? { labCache: t.labCache } : {}),
      });
      const ctx: RunContext = {
        exec,
        now: Date.now,
        recordedAt: () => exec.recordedAt() ?? Date.now(),
        spent: nothingSpent,
        mode: t.mode,
        ciliumMinor: t.ciliumMinor,
        namespace: t.namespace,
        replay: false,
        log: logger(t.provider, t.mode, topic),
        sleep: realSleep,
        runStartedAt: readMeta(t.bundleDir).createdAt,
        kubeContext: t.context,
        ...(t.upgrade ? { upgrade: t.upgrade } : {}),
        earlierRecords: (): RecordSet => readRecords(t.bundleDir),
        baselineMetrics: () => readBaseline(t.bundleDir),
      };
      return { ctx, outDir: t.bundleDir, close: () => exec.close() };
    },
  }));
}

/** Bundles named by BUNDLE (comma-separated), else the shipped ones. */
export function bundlesFromEnv(): string[] {
  const named = process.env.BUNDLE?.split(",")
    .map((b) => resolve(b.trim()))
    .filter(Boolean);
  const list = named && named.length > 0 ? named : SHIPPED_BUNDLES;
  for (const b of list)
    if (!existsSync(join(b, "bundle.json")))
      throw new Error(`BUNDLE ${b} is not an evidence bundle (no bundle.json)`);
  return list;
}
