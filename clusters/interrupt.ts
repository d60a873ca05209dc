/**
 * SIGINT and SIGTERM during a run: what the run created is torn down before the process exits, and the exit
 * code says it was interrupted (128 + the signal's number: 130, 143).
 *
 * Why the process' own listeners are set aside: vitest 4.1's main process registers, when its logger is made
 * (before any global setup runs), `process.once("SIGINT"|"SIGTERM", onExit)`, where onExit restores the
 * terminal, sets `process.exitCode` and calls `process.exit()` 1 ms later
 * (node_modules/vitest/dist/chunks/cli-api.*.js, Logger.addCleanupListeners). A teardown that deletes a kind
 * cluster or a namespace takes seconds, so a handler merely added beside vitest's is cut off after 1 ms: the
 * cluster, the namespace, the node-shell Pods and the Lease stay. Our handler takes those listeners out and
 * calls them only after the teardown finished (vitest's terminal clean-up also runs on `exit`).
 */
import { UserError } from "../helpers/errors.ts";
import type { Executor } from "../helpers/exec/types.ts";

/** A second signal this soon after the first is the same interrupt delivered twice, not a request to force. */
export const DUPLICATE_SIGNAL_MS = 1000;

export const SIGNAL_NUMBERS: Record<"SIGINT" | "SIGTERM", number> = { SIGINT: 2, SIGTERM: 15 };
export type RunSignal = keyof typeof SIGNAL_NUMBERS;

/** What an interrupted provisioning step throws: one line, no stack. */
export class Interrupted extends UserError {
  constructor(readonly signal: string) {
    super(
      `interrupted by ${signal}: the run stops and tears down what it created`,
      128 + (SIGNAL_NUMBERS[signal as RunSignal] ?? 0),
    );
    this.name = "Interrupted";
  }
}

export const reasonOf = (signal: AbortSignal): Error =>
  signal.reason instanceof Error ? signal.reason : new Interrupted(String(signal.reason ?? "a signal"));

/** A sleep that ends early, rejecting, when `signal` aborts. */
export function abortableSleep(sleep: (ms: number) => Promise<void>, signal: AbortSignal) {
  return (ms: number): Promise<void> => {
    if (signal.aborted) return Promise.reject(reasonOf(signal));
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(reasonOf(signal));
      signal.addEventListener("abort", onAbort, { once: true });
      sleep(ms).then(
        () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        },
        (e: unknown) => {
          signal.removeEventListener("abort", onAbort);
          reject(e);
        },
      );
    });
  };
}

/** Every call carries `signal` (the process is killed or the exec closed on abort); none starts once aborted. */
export function interruptibleExecutor(e: Executor, signal: AbortSignal): Executor {
  return {
    run: (req) => (signal.aborted ? Promise.reject(reasonOf(signal)) : e.run({ ...req, signal })),
    ...(e.close ? { close: () => e.close?.() ?? Promise.resolve() } : {}),
  };
}

/** What the handler needs of the process (tests pass their own). */
export interface SignalProcess {
  listeners(sig: RunSignal): ((...args: unknown[]) => void)[];
  on(sig: RunSignal, fn: (sig: NodeJS.Signals) => void): unknown;
  removeListener(sig: RunSignal, fn: (...args: unknown[]) => void): unknown;
  exit(code: number): void;
  exitCode?: number | string | null | undefined;
}

export interface SignalTeardown {
  /** The first signal received, if any. */
  readonly received: RunSignal | null;
  /** Settles when the teardown started by a signal has finished (immediately when there was no signal). */
  readonly done: Promise<void>;
  /** Removes our handler and gives the set-aside listeners back (for tests and for a run that never signals). */
  dispose(): void;
}

/**
 * On the first SIGINT or SIGTERM: say so, call `onInterrupt` (abort provisioning, cancel the test run), run
 * `teardown` (idempotent: the same promise vitest awaits at the end of a normal run) to completion, then exit
 * with 128 + the signal's number. A second signal exits at once, saying the teardown did not finish — unless it
 * comes within DUPLICATE_SIGNAL_MS of the first (the terminal's and a wrapper's copy of one Ctrl-C).
 */
export function installSignalTeardown(o: {
  teardown: () => Promise<void>;
  onInterrupt?: (sig: RunSignal) => void;
  log: (line: string) => void;
  proc?: SignalProcess;
}): SignalTeardown {
  const proc: SignalProcess = o.proc ?? (process as unknown as SignalProcess);
  const signals: RunSignal[] = ["SIGINT", "SIGTERM"];
  const setAside = new Map<RunSignal, ((...args: unknown[]) => void)[]>();
  let received: RunSignal | null = null;
  let receivedAt = 0;
  let finish: () => void = () => {};
  const done = new Promise<void>((r) => {
    finish = r;
  });
  const handler = (sig: NodeJS.Signals) => {
    const s = sig as RunSignal;
    const code = 128 + SIGNAL_NUMBERS[s];
    if (received && performance.now() - receivedAt < DUPLICATE_SIGNAL_MS) {
      // the terminal's Ctrl-C reaches the whole process group, and a wrapper (npm, a CI runner) may forward the
      // same signal once more: that is not a request to give up on the teardown
      o.log(
        `${s} again within ${DUPLICATE_SIGNAL_MS / 1000} s of ${received}: taken as the same interrupt (send it again later to exit at once)`,
      );
      return;
    }
    if (received) {
      o.log(
        `${s} again: exiting now (exit ${code}); the teardown did not finish, so what this run created may be left`,
      );
      proc.exit(code);
      return;
    }
    received = s;
    receivedAt = performance.now();
    proc.exitCode = code;
    const t0 = performance.now();
    o.log(`${s}: tearing down what this run created before exiting (send ${s} again to exit at once)`);
    try {
      o.onInterrupt?.(s);
    } catch {
      // cancelling the test run is best effort; the teardown below is what matters
    }
    o.teardown()
      .catch((err: unknown) =>
        o.log(`teardown after ${s} failed: ${err instanceof Error ? err.message : String(err)}`),
      )
      .finally(() => {
        o.log(
          `${s}: teardown finished in ${((performance.now() - t0) / 1000).toFixed(1)} s; exiting with ${code}`,
        );
        finish();
        // vitest's own listeners (terminal clean-up) run now, then we exit with the signal's code
        for (const fn of setAside.get(s) ?? []) {
          try {
            fn(s, SIGNAL_NUMBERS[s]);
          } catch {
            // a listener that throws must not keep the process alive
          }
        }
        proc.exit(code);
      });
  };
  for (const s of signals) {
    const others = proc.listeners(s);
    setAside.set(s, others);
    for (const fn of others) proc.removeListener(s, fn);
    proc.on(s, handler);
  }
  return {
    get received() {
      return received;
    },
    get done() {
      return received ? done : Promise.resolve();
    },
    dispose() {
      for (const s of signals) {
        proc.removeListener(s, handler as (...args: unknown[]) => void);
        for (const fn of setAside.get(s) ?? []) proc.on(s, fn as (sig: NodeJS.Signals) => void);
      }
    },
  };
}

/**
 * Stops vitest's test run at once: no further spec starts, and the running ones' workers are stopped (their
 * commands against a cluster that is being torn down would only fail, and a worker left running would outlive
 * the main process until its test ended). vitest 4.1's pool cancels gracefully on the first cancel and stops
 * the workers when a cancel comes while one is under way (its "Ctrl-C twice" path: ProcessPool.cancel, force).
 */
export function stopTestRun(
  vitest: { cancelCurrentRun(reason: never): Promise<void> },
  sig: RunSignal,
): void {
  const reason = `interrupted by ${sig}` as never;
  vitest.cancelCurrentRun(reason).catch(() => {});
  vitest.cancelCurrentRun(reason).catch(() => {});
}

/** Runs `fn` once; every later call gets the first call's promise (a teardown that two paths may start). */
export function once(fn: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | undefined;
  return () => {
    p ??= fn();
    return p;
  };
}
