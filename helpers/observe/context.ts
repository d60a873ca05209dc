import type { UpgradePlanJson } from "../bundle/schema.ts";
import type { Executor } from "../exec/types.ts";
import { type PollOptions, pollUntil, type Spent } from "../poll.ts";
import type { Mode } from "../properties/expectation.ts";
import type { RecordSet } from "../records/types.ts";

/** Named deadlines (ms) for every wait of a run; no wait sleeps a fixed time. */
export const DEADLINES = {
  podsReady: 180_000,
  /** Backend slots following an EndpointSlice (Kubernetes' own e2e allows 30 s of endpoint lag). */
  mapConverged: 30_000,
  holderConnected: 60_000,
  nodePortAnswers: 30_000,
} as const;

/** The upgrade leg of a run: from the installed minor to the next one, along Cilium's documented path. */
/** The upgrade leg a run was asked for (UPGRADE_TO): its fields and caps are bundle.json's schema's. */
export type UpgradePlan = UpgradePlanJson;

export interface RunContext {
  exec: Executor;
  mode: Mode;
  /** The Cilium minor expectations resolve against, e.g. "1.20". */
  ciliumMinor: string;
  /**
   * The provider the run's cluster came from (`kind`, `k3d`, `existing`; bundle.json's in a replay): what the
   * Service-surface topics may assume about the nodes' network (a range of ours for LoadBalancer addresses).
   */
  provider?: string;
  /** The run's namespace: `cca-dp`, suffixed with the run id when runs share a cluster. */
  namespace: string;
  /** True when the executor replays a bundle: waits do not sleep. */
  replay: boolean;
  log(line: string): void;
  sleep(ms: number): Promise<void>;
  /**
   * The clock waits run on (ms since the epoch): the wall clock on a cluster; in a replay, the recorded time
   * of the last call served. Measurements do not read it: they take `recordedAt()`.
   */
  now(): number;
  /**
   * The recorded end time of the last call (ms since the epoch, to the millisecond the bundle keeps): what
   * measured latencies are computed from, on a cluster and in a replay alike, so a replay reproduces them
   * exactly. On a cluster before any call, the wall clock.
   */
  recordedAt(): number;
  /** Replay: calls served after their recordings ran out (a wait then ends at once); always 0 on a cluster. */
  spent: Spent;
  /** The upgrade leg, when this run has one (cluster runs with UPGRADE_TO). */
  upgrade?: UpgradePlan;
  /**
   * The run's evidence bundle (on a cluster: the one being written; in a replay: the one replayed). A topic
   * names a folder inside it in a command (the upgrade's nested runs); the recording writes it as `$BUNDLE/…`.
   */
  bundleDir?: string;
  /** kubectl context (for helm), when there is a cluster. */
  kubeContext?: string;
  /** When the run started (ISO time): agent logs are read from then on. */
  runStartedAt: string;
  /** Records written by earlier topics of the same run (report.txt compares against them). */
  earlierRecords(): RecordSet;
  /** The agents' metrics when the run began, by node (helpers/baseline.ts); null when not recorded. */
  baselineMetrics?(): Record<string, string> | null;
}

export const realSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
export const nothingSpent: Spent = () => ({ count: 0, key: null });

/**
 * `pollUntil` on the run's clock, sleep and progress lines: in a replay it does not sleep, and a probe whose
 * recordings ran out ends the wait at once with the last observation (ReplayExhausted names it).
 */
export function waitFor<T>(
  ctx: RunContext,
  o: Omit<PollOptions<T>, "sleep" | "now" | "spent">,
): ReturnType<typeof pollUntil<T>> {
  return pollUntil({ progress: ctx.log, ...o, sleep: ctx.sleep, now: ctx.now, spent: ctx.spent });
}
/**
 * A wait that may end unmet: polls until `done` or until `deadlineMs` has passed on the run's clock, and returns
 * the last observation either way (`met` says which), so what the datapath showed is judged, not "could not be
 * observed". Decided on `ctx.now()`, the recorded time in a replay, so a replay ends where the run did.
 */
export async function waitSettled<T>(
  ctx: RunContext,
  o: Omit<PollOptions<T>, "sleep" | "now" | "spent">,
): Promise<{ value: T; met: boolean }> {
  const start = ctx.now();
  const { value } = await waitFor(ctx, {
    ...o,
    deadlineMs: o.deadlineMs + 60_000,
    done: (v) => o.done(v) || ctx.now() - start >= o.deadlineMs,
  });
  const met = o.done(value);
  if (!met)
    ctx.log(`gave up waiting for ${o.what} after ${(o.deadlineMs / 1000).toFixed(0)} s: ${o.show(value)}`);
  return { value, met };
}
/** Replay's sleep: no time passes, but the event loop turns (a wait that spun would still let timers fire). */
export const noSleep = () => new Promise<void>((r) => setImmediate(r));
