import { existsSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { readBaseline } from "../helpers/baseline.ts";
import { type BundleMeta, bundleTopics, findBundles, readMeta, readRecords } from "../helpers/bundle/read.ts";
import { withBundleLock, writeMeta } from "../helpers/bundle/write.ts";
import { ApiExecutor } from "../helpers/exec/api.ts";
import { ClusterExecutor } from "../helpers/exec/cluster.ts";
import { KubeExecutor } from "../helpers/exec/kube.ts";
import { RecordingExecutor } from "../helpers/exec/record.ts";
import type { Executor } from "../helpers/exec/types.ts";
import { nothingSpent, type RunContext, realSleep } from "../helpers/observe/context.ts";
import { replayContext } from "../helpers/observe/replay-context.ts";
import { terminal } from "../helpers/output.ts";
import type { Mode } from "../helpers/properties/expectation.ts";
import type { RecordSet } from "../helpers/records/types.ts";
import { RECORDED_FAILURES } from "./recorded-failures.ts";
import type { RunState } from "./run-state.ts";
import { Turns, turnsDir } from "./schedule.ts";
import { RECORDS } from "./topics.ts";

export const SUITES_DIR = resolve(import.meta.dirname);

/** The golden reference of a shipped bundle (suites/golden/): its name, `/` as `-`. */
export const goldenFile = (name: string) => `${name.replaceAll("/", "-")}.check.json`;

/** A shipped bundle's name: its folder under suites/bundles/ (`upgrade-1.19-1.20/kpr`), else its own folder. */
export function bundleName(dir: string): string {
  const r = relative(BUNDLES_ROOT, resolve(dir));
  return r && !r.startsWith("..") ? r : basename(dir);
}
export const BUNDLES_ROOT = join(SUITES_DIR, "bundles");

/**
 * Every recorded bundle this repository ships: each folder under suites/bundles/ that holds a bundle.json
 * (`<minor>/<mode>`, `<minor>/drop-<mode>`, `upgrade-<from>-<to>/<mode>`, `existing/<mode>`, …), in path order.
 */
export const SHIPPED_BUNDLES = findBundles(BUNDLES_ROOT);

/** One mode to run a topic against: how to get a context, where its evidence goes. */
export interface ModeTarget {
  mode: Mode;
  ciliumMinor: string;
  /** Shown in test names: `[replay kpr-upgrade]` (the bundle's folder), `[kind]`, … */
  label: string;
  /** What ran: versions, kernel, attach mode (bundle.json). */
  meta(): BundleMeta;
  /** Adds a phase timing (seconds) to the run's bundle.json; a replay leaves its bundle untouched. */
  recordPhase(name: string, seconds: number): void;
  /**
   * Whether this target has the topic at all: a replayed bundle holds only the topics it recorded (a partial
   * bundle, e.g. the drop profile's, holds two), and a topic it does not hold gets no tests there.
   */
  holds(topic: string): boolean;
  /** A replayed bundle's recorded failure of this property, kept on purpose (suites/recorded-failures.ts): why. */
  recordedFailure?(id: string): string | null;
  /** Why a topic it holds cannot run here (a run without an upgrade leg), or null. */
  skipReason(topic: string): string | null;
  context(topic: string): { ctx: RunContext; outDir: string; close: () => Promise<void> };
  /** A cluster run's turns in this mode: topics observed at once wait here for those they follow. */
  turns?: Turns;
}

/**
 * One progress line of a run, as the log shows it (issue 45): the bundle's folder name, a version from its
 * bundle.json or a cluster's answer in it are shown, never obeyed (a worker's own writes reach the log past
 * every vitest reporter, so this is their only guard).
 */
export function progressLine(label: string, mode: string, line: string): string {
  return `${terminal`[${label}] [${mode}] ${line}`}\n`;
}

function logger(label: string, mode: Mode, topic: string) {
  return (line: string) => process.stdout.write(progressLine(label, mode, `${topic}: ${line}`));
}

export function replayTargets(bundles: string[], outRoot: string): ModeTarget[] {
  return bundles.map((dir) => {
    const meta = readMeta(dir);
    const topics = bundleTopics(dir);
    return {
      mode: meta.mode,
      ciliumMinor: meta.ciliumMinor,
      label: `replay ${bundleName(dir)}`,
      recordedFailure: (id) => RECORDED_FAILURES[bundleName(dir)]?.[id] ?? null,
      meta: () => meta,
      recordPhase: () => {},
      holds: (topic) => topics.includes(topic),
      skipReason: () => null,
      context: (topic) => {
        const ctx = replayContext(dir, meta, topic, {
          log: logger(`replay ${bundleName(dir)}`, meta.mode, topic),
          earlierRecords: () => readRecords(dir, RECORDS),
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
    turns: new Turns(turnsDir(state.runId, `${t.provider}-${t.mode}`)),
    meta: () => readMeta(t.bundleDir),
    holds: () => true,
    recordPhase: (name, seconds) =>
      withBundleLock(t.bundleDir, () => {
        const meta = readMeta(t.bundleDir);
        writeMeta(t.bundleDir, {
          ...meta,
          phases: { ...meta.phases, [name]: Math.round(seconds * 10) / 10 },
        });
      }),
    skipReason: (topic) =>
      (topic === "upgrade" || topic === "restart") && !t.upgrade
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
        undefined,
        ApiExecutor.forContext(t.context, t.kubeconfig),
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
        provider: t.provider,
        namespace: t.namespace,
        replay: false,
        log: logger(t.provider, t.mode, topic),
        sleep: realSleep,
        runStartedAt: readMeta(t.bundleDir).createdAt,
        kubeContext: t.context,
        bundleDir: t.bundleDir,
        ...(t.upgrade ? { upgrade: t.upgrade } : {}),
        earlierRecords: (): RecordSet => withBundleLock(t.bundleDir, () => readRecords(t.bundleDir, RECORDS)),
        baselineMetrics: () => readBaseline(t.bundleDir),
      };
      return { ctx, outDir: t.bundleDir, close: () => exec.close() };
    },
  }));
}

/**
 * The targets a topic's spec runs against: those that hold it. When none does (replaying only partial bundles
 * without it), `none` says which were replayed, for the topic's one skipped test.
 */
export function topicTargets(
  all: ModeTarget[],
  topic: string,
): { holding: ModeTarget[]; none: string | null } {
  const holding = all.filter((t) => t.holds(topic));
  return {
    holding,
    none:
      holding.length > 0
        ? null
        : `none of the ${all.length} bundles replayed (${all.map((t) => t.label).join(", ")}) recorded ${topic}`,
  };
}

/**
 * The shipped bundles the replay project replays under `npm test` (issue 27: the test run in a minute): the
 * harness end to end on one bundle of each kind, while `check` (helpers/check.test.ts, stored-verdicts, golden,
 * evidence) re-judges every shipped bundle through the same observers. Left to `check` alone, with the kind the
 * cover keeps:
 * - a rollback leg's nested run (`upgrade-*\/<mode>/after-rollback`): an existing-provider run on the rolled-back
 *   cluster, like the upgrade leg's `after-upgrade` beside it, which is replayed (the existing provider with the
 *   config topic: `existing/<mode>` predates that topic);
 * - an existing-provider run on a profile's kept cluster (`profiles/<p>/existing-<mode>`): that profile's own
 *   lab run of the same cluster is replayed;
 * - an older upgrade path (`upgrade-1.18-1.19/*` beside `upgrade-1.19-1.20/*`): the newest path is replayed.
 * A bundle so left out comes back when it holds a topic × mode × provider no kept bundle holds (the existing
 * provider's only run of the ipv6 topic is on the dual-stack profile's cluster).
 * REPLAY_BUNDLES=all replays every one (the workflow's offline job on the current Node LTS does).
 */
export function replayCover(bundles: readonly string[]): string[] {
  const kept = keptForReplay(bundles);
  const kinds = (b: string) => {
    const meta = readMeta(b);
    return bundleTopics(b).map((t) => `${t} ${meta.mode} ${meta.provider}`);
  };
  const covered = new Set(kept.flatMap(kinds));
  const back = new Set<string>();
  for (const b of bundles) {
    if (kept.includes(b)) continue;
    const adds = kinds(b).filter((k) => !covered.has(k));
    if (adds.length === 0) continue;
    back.add(b);
    for (const k of adds) covered.add(k);
  }
  return bundles.filter((b) => kept.includes(b) || back.has(b));
}

function keptForReplay(bundles: readonly string[]): string[] {
  const names = bundles.map((b) => [b, bundleName(b)] as const);
  const path = (n: string) => /^upgrade-(\d+)\.(\d+)-(\d+)\.(\d+)\//.exec(n);
  const newest = names
    .map(([, n]) => path(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[3]) * 1000 + Number(m[4]))
    .reduce((a, b) => Math.max(a, b), 0);
  return names
    .filter(([, n]) => {
      if (/\/after-rollback$/.test(n)) return false;
      if (/^profiles\/[^/]+\/existing-/.test(n)) return false;
      const up = path(n);
      return !up || Number(up[3]) * 1000 + Number(up[4]) === newest;
    })
    .map(([b]) => b);
}

/**
 * Bundles named by BUNDLE (comma-separated), else the shipped ones: under the replay project, their cover
 * (`replayCover`) unless REPLAY_BUNDLES=all.
 */
export function bundlesFromEnv(): string[] {
  const named = process.env.BUNDLE?.split(",")
    .map((b) => resolve(b.trim()))
    .filter(Boolean);
  const shipped =
    process.env.VITEST_PROJECT_REPLAY === "1" && process.env.REPLAY_BUNDLES !== "all"
      ? replayCover(SHIPPED_BUNDLES)
      : SHIPPED_BUNDLES;
  const list = named && named.length > 0 ? named : shipped;
  for (const b of list)
    if (!existsSync(join(b, "bundle.json")))
      throw new Error(`BUNDLE ${b} is not an evidence bundle (no bundle.json)`);
  return list;
}
