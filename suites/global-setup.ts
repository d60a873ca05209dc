/**
 * Global setup of the `conformance` project: decides what the specs run against and provides it.
 * - CLUSTER_PROVIDER unset: under `npm test` (or a plain `vitest run`) no cluster, every spec skipped saying so;
 *   under `npm run test:conformance` (or `--project conformance`) kind when a Docker daemon answers and kind's
 *   tools are on PATH, otherwise every spec is skipped with the reason;
 * - CLUSTER_PROVIDER=kind|k3d|existing: prerequisites are checked first and a missing one fails in seconds;
 * - CLUSTER_PROVIDER=replay: BUNDLE (or the shipped bundles) are served back;
 * - CLUSTER_PROVIDER=none: every cluster spec is skipped with that reason, whatever this machine has (the
 *   offline CI: a runner with Docker and kind preinstalled must not create clusters behind its back).
 * Teardown always runs, also on SIGINT/SIGTERM (clusters/interrupt.ts: vitest's own handlers would exit 1 ms
 * after the signal, so ours sets them aside, tears down to completion, then exits 130/143; a second signal
 * exits at once); KEEP_CLUSTER=1 keeps kind/k3d clusters for the next run and says so. LEASE_WAIT_S waits for
 * another run's Lease instead of failing at once. Both modes' clusters are provisioned at once and each topic is
 * observed in both modes at once (suites/harness.ts); MODES_CONCURRENT=0 runs them one after the other.
 */

import { join, resolve } from "node:path";
import type { TestProject } from "vitest/node";
import type { Provisioned } from "../clusters/host.ts";
import { Interrupted, installSignalTeardown, once, stopTestRun } from "../clusters/interrupt.ts";
import { leaseWaitMs } from "../clusters/lease.ts";
import { provision } from "../clusters/lifecycle.ts";
import { checkBinaries, dockerReachable } from "../clusters/prereq.ts";
import { parseProvider } from "../clusters/profile.ts";
import { parseRunInputs } from "../clusters/run-inputs.ts";
import { readMeta } from "../helpers/bundle/read.ts";
import { withBundleLock, writeMeta } from "../helpers/bundle/write.ts";
import { UserError } from "../helpers/errors.ts";
import { LocalExecutor } from "../helpers/exec/local.ts";
import { ExecError } from "../helpers/exec/types.ts";
import { terminal } from "../helpers/output.ts";
import { DeadlineError } from "../helpers/poll.ts";
import { bundlesFromEnv } from "./environment.ts";
import { asksForClusters, type RunState } from "./run-state.ts";

export { asksForClusters };

import { removeTurns } from "./schedule.ts";

/** Where runs write their bundles: results/ in the checkout, or CONFORMANCE_RESULTS (a nested run's own folder). */
const RESULTS = process.env.CONFORMANCE_RESULTS
  ? resolve(process.env.CONFORMANCE_RESULTS)
  : join(import.meta.dirname, "..", "results");
const log = (line: string) => process.stdout.write(`${terminal`[conformance] ${line}`}\n`);

/**
 * Both modes' clusters provisioned at once, and each topic observed in both at once: the default, since it was
 * the faster order measured on the 2-core lab machine (both modes' wall: 446 s and 500 s at once for Cilium
 * 1.18.11 and 1.20.2, 640 s one after the other for 1.19.7; README "Speed"). MODES_CONCURRENT=0 runs the modes
 * one after the other (a machine short of memory, or output one mode at a time).
 */
export function modesConcurrent(env: NodeJS.ProcessEnv): boolean {
  const v = env.MODES_CONCURRENT;
  if (v === undefined || v === "" || v === "1") return true;
  if (v === "0") return false;
  throw new UserError(
    `MODES_CONCURRENT=${v}: valid values are 1 (both modes at once, the default) and 0 (one after the other)`,
  );
}

function parseNoBackendResponse(v: string): "reject" | "drop" {
  if (v !== "reject" && v !== "drop")
    throw new UserError(`NO_BACKEND_RESPONSE=${v}: valid values are reject (default) and drop`);
  return v;
}

export const NPM_TEST_NO_CLUSTER =
  "CLUSTER_PROVIDER is unset: `npm test` creates no cluster (CLUSTER_PROVIDER=kind|k3d|existing names one; `npm run test:conformance` uses kind when Docker and kind answer)";

export async function decide(
  signal: AbortSignal,
  env: NodeJS.ProcessEnv = process.env,
  argv: readonly string[] = process.argv,
): Promise<{ state: RunState; provisioned?: Provisioned }> {
  if (!env.CLUSTER_PROVIDER && !asksForClusters(env, argv))
    return { state: { kind: "skip", reason: NPM_TEST_NO_CLUSTER } };
  if (env.CLUSTER_PROVIDER === "replay")
    return {
      state: { kind: "replay", bundles: bundlesFromEnv(), outDir: join(RESULTS, `replay-${Date.now()}`) },
    };
  if (env.CLUSTER_PROVIDER === "none")
    return {
      state: {
        kind: "skip",
        reason:
          "CLUSTER_PROVIDER=none: cluster specs are off for this run (set CLUSTER_PROVIDER=kind|k3d|existing to run them)",
      },
    };
  let provider = env.CLUSTER_PROVIDER ? parseProvider(env.CLUSTER_PROVIDER) : null;
  if (!provider) {
    const docker = await dockerReachable(new LocalExecutor(), 5000);
    if (!docker.ok) {
      return {
        state: {
          kind: "skip",
          reason: `no cluster: CLUSTER_PROVIDER is unset and ${docker.why}; set CLUSTER_PROVIDER=kind|k3d|existing, or replay a bundle with CLUSTER_PROVIDER=replay`,
        },
      };
    }
    // unset means "whatever this machine can do": a daemon without kind's tools is a skip, not a failure
    // (CLUSTER_PROVIDER=kind asked for explicitly still fails fast on a missing tool)
    try {
      checkBinaries("kind");
    } catch (err) {
      return {
        state: {
          kind: "skip",
          reason: `no cluster: CLUSTER_PROVIDER is unset and ${docker.why} answers, but ${err instanceof Error ? err.message : String(err)}`,
        },
      };
    }
    provider = "kind";
    log(`CLUSTER_PROVIDER unset and ${docker.why} answers: using kind`);
  }
  // what the run is asked for, through the parser `plan` and `run` use (clusters/run-inputs.ts): what they refuse,
  // the run refuses in the same line (a profile outside its modes, ROLLBACK without UPGRADE_TO, an upgrade target
  // Cilium does not upgrade to, a version that is not one), before anything is provisioned
  const inputs = parseRunInputs({}, { ...env, CLUSTER_PROVIDER: provider });
  // unique per invocation, so two runs on one machine (e.g. one per mode) never share a results folder
  const runId =
    env.RUN_ID ??
    `${new Date().toISOString().replace(/[-:]/g, "").replace(/\..*/, "").toLowerCase()}-${process.pid}`;
  const provisioned = await provision({
    provider,
    modes: inputs.modes,
    ...(inputs.cilium !== undefined ? { cilium: inputs.cilium } : {}),
    runId,
    resultsDir: RESULTS,
    keep: inputs.keep,
    preload: env.PRELOAD_IMAGES === "1",
    ...(inputs.upgradeTo !== undefined ? { upgradeTo: inputs.upgradeTo } : {}),
    ...(inputs.rollback ? { rollback: true } : {}),
    ...(env.NO_BACKEND_RESPONSE
      ? { noBackendResponse: parseNoBackendResponse(env.NO_BACKEND_RESPONSE) }
      : {}),
    ...(inputs.profile ? { datapath: inputs.profile } : {}),
    ...(inputs.values ? { userValues: inputs.values } : {}),
    leaseWaitMs: leaseWaitMs(env.LEASE_WAIT_S),
    concurrent: modesConcurrent(env),
    signal,
    log,
  });
  return {
    state: { kind: "cluster", runId, targets: provisioned.targets, concurrent: modesConcurrent(env) },
    provisioned,
  };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const interrupt = new AbortController();
  let provisioned: Provisioned | undefined;
  let provisioning: Promise<unknown> = Promise.resolve();
  let cluster: { state: Extract<RunState, { kind: "cluster" }>; specsFrom: number } | undefined;
  // one teardown for every path (the end of the run, a failed setup, SIGINT/SIGTERM): the same promise to all.
  // After a signal during provisioning it first lets provisioning end (its failure path removes what it made)
  const teardown = once(async () => {
    await provisioning.catch(() => {});
    if (cluster) {
      // the specs' wall time (topics observed at once: less than the sum of their own times), then the
      // run's turn markers (suites/schedule.ts)
      const seconds = Math.round((Date.now() - cluster.specsFrom) / 100) / 10;
      for (const t of cluster.state.targets)
        withBundleLock(t.bundleDir, () => {
          const meta = readMeta(t.bundleDir);
          writeMeta(t.bundleDir, { ...meta, phases: { ...meta.phases, "specs (wall)": seconds } });
        });
      removeTurns(cluster.state.runId);
    }
    await provisioned?.teardown();
  });
  installSignalTeardown({
    teardown,
    log,
    onInterrupt: (sig) => {
      interrupt.abort(new Interrupted(sig));
      // no further spec starts and the running one's worker stops (the cluster is going away)
      stopTestRun(project.vitest, sig);
    },
  });
  try {
    provisioning = decide(interrupt.signal);
    const decided = (await provisioning) as Awaited<ReturnType<typeof decide>>;
    provisioned = decided.provisioned;
    if (decided.state.kind === "skip") log(`every conformance spec is skipped: ${decided.state.reason}`);
    project.provide("runState", decided.state);
    if (decided.state.kind === "cluster") cluster = { state: decided.state, specsFrom: Date.now() };
  } catch (err) {
    await teardown();
    if (err instanceof UserError || err instanceof DeadlineError || err instanceof ExecError) {
      // one line, no stack: what is missing or wrong, the named wait that ran out with its last observation,
      // or the command that failed with its error lines (vitest prints an error's stack frames below its
      // message; this one has none). Anything else is a defect of ours and keeps its stack.
      const line = new Error(err.message);
      line.name = err.name;
      line.stack = `${err.name}: ${err.message}`;
      throw line;
    }
    throw err;
  }
  return teardown;
}
