import type { ClusterTarget } from "../clusters/host.ts";
import { UserError } from "../helpers/errors.ts";

export type RunState =
  | { kind: "skip"; reason: string }
  | { kind: "replay"; bundles: string[]; outDir: string }
  | {
      kind: "cluster";
      runId: string;
      targets: ClusterTarget[];
      /** MODES_CONCURRENT=1: each topic is observed in every mode at once. */
      concurrent?: boolean;
    };

/** The cluster project's topics in a run, in file order, and whether a test-name filter may skip some. */
export interface RunTopics {
  topics: string[];
  filtered: boolean;
}

declare module "vitest" {
  export interface ProvidedContext {
    runState: RunState;
    /**
     * The cluster project's topics in this run, in file order (suites/sequencer.ts, from the spec files vitest
     * runs), and whether a test-name filter may leave some of them unobserved.
     */
    topicsInRun: RunTopics;
  }
}

export type { ClusterTarget };

/**
 * Whether this run asked for clusters without naming a provider: `npm run test:conformance`, or vitest with
 * `--project conformance`. `npm test` (and a plain `vitest run`) never creates a cluster unless CLUSTER_PROVIDER
 * names one: the conformance specs are then skipped, saying how to run them.
 */
export function asksForClusters(env: NodeJS.ProcessEnv, argv: readonly string[]): boolean {
  if (env.npm_lifecycle_event === "test:conformance") return true;
  return argv.some(
    (a, i) => a === "--project=conformance" || (a === "--project" && argv[i + 1] === "conformance"),
  );
}

/**
 * Whether this vitest run may create or use a cluster (a provider named, or clusters asked for): the cluster
 * project then runs topics in several workers (vitest.config.ts); otherwise its specs only say why they skip.
 */
export function clusterRun(env: NodeJS.ProcessEnv, argv: readonly string[]): boolean {
  const p = env.CLUSTER_PROVIDER;
  if (p === "none" || p === "replay") return false;
  return Boolean(p) || asksForClusters(env, argv);
}

/**
 * Workers of the cluster project: the most topics a run observes at once in a mode — four, as many as the
 * declared schedule makes ready together once config is done (iptables, ghost, kube-dns, host-routing;
 * suites/schedule.ts) — or CONFORMANCE_WORKERS (1: one topic at a time, as before issue 27).
 */
export function conformanceWorkers(v: string | undefined): number {
  if (v === undefined || v === "") return 4;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 16)
    throw new UserError(`CONFORMANCE_WORKERS=${v}: a whole number of workers from 1 to 16`);
  return n;
}
