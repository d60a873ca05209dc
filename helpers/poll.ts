/** A wait that reached its deadline: names what it waited for and the last thing it saw. */
export class DeadlineError extends Error {
  constructor(
    readonly what: string,
    readonly deadlineMs: number,
    readonly last: string,
  ) {
    super(
      `timed out after ${(deadlineMs / 1000).toFixed(0)} s waiting for ${what}; last observation: ${last}`,
    );
    this.name = "DeadlineError";
  }
}

/**
 * A replayed wait that can show nothing new: the bundle's recordings of its probe ran out before the
 * condition held. It ends the wait at once with the last observation (on a cluster the wait went on: the
 * recording either met the condition later, which a replay would have served, or timed out).
 */
export class ReplayExhausted extends Error {
  /** No retry can make a new recording appear. */
  readonly permanent = true;
  constructor(
    readonly what: string,
    readonly key: string | null,
    readonly last: string,
  ) {
    super(
      `the bundle's recordings${key ? ` of ${key}` : ""} ran out while waiting for ${what}; last observation: ${last}`,
    );
    this.name = "ReplayExhausted";
  }
}

/** How many replayed calls were served after their recordings ran out, and the latest one's key. */
export type Spent = () => { count: number; key: string | null };

export interface PollOptions<T> {
  /** What is awaited, in words ("4 backend slots for 10.96.44.2:80"). */
  what: string;
  deadlineMs: number;
  intervalMs: number;
  probe: () => Promise<T>;
  done: (value: T) => boolean;
  /** How an observation is shown in progress lines and in the timeout error. */
  show: (value: T) => string;
  /** Waits between probes; replay passes a no-op so a recorded poll runs at once. */
  sleep?: (ms: number) => Promise<void>;
  /** Progress: called when a wait is still waiting (every `progressEveryMs`). */
  progress?: (line: string) => void;
  progressEveryMs?: number;
  now?: () => number;
  /** Replay: recordings served after they ran out; a probe that needed one ends the wait (ReplayExhausted). */
  spent?: Spent;
}

const realSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Polls `probe` until `done`, or until the named deadline; keeps the last observation (and the last
 * error a probe threw) for the error message. No fixed sleeps: the first probe runs at once.
 */
export async function pollUntil<T>(
  o: PollOptions<T>,
): Promise<{ value: T; attempts: number; elapsedMs: number; exhausted?: true }> {
  const now = o.now ?? (() => performance.now());
  const sleep = o.sleep ?? realSleep;
  const start = now();
  let lastShown = "(no observation yet)";
  let lastProgress = start;
  let attempts = 0;
  for (;;) {
    attempts++;
    const spentBefore = o.spent?.().count ?? 0;
    let observed: { value: T } | null = null;
    try {
      const value = await o.probe();
      if (o.done(value)) return { value, attempts, elapsedMs: now() - start };
      lastShown = o.show(value);
      observed = { value };
    } catch (err) {
      // an error that no later attempt can clear (a replayed bundle that never recorded the call) ends the poll
      if (err instanceof Error && (err as { permanent?: boolean }).permanent === true) throw err;
      lastShown = `error: ${err instanceof Error ? err.message : String(err)}`;
    }
    const spent = o.spent?.();
    if (spent && spent.count > spentBefore) {
      // a replay whose recordings never met the condition (a run cut short, or a bundle edited by hand): the
      // last recorded observation is what the cluster showed, so the topic goes on with it and the properties
      // are judged on it (expected vs observed), never "could not be observed" for a wait that a bundle
      // contradicts. Without an observation (the probe failed) nothing can be judged: the wait ends here.
      if (observed) {
        o.progress?.(
          `the bundle's recordings${spent.key ? ` of ${spent.key}` : ""} ran out while waiting for ${o.what}: judging the last observation (${lastShown})`,
        );
        return { value: observed.value, attempts, elapsedMs: now() - start, exhausted: true };
      }
      throw new ReplayExhausted(o.what, spent.key, lastShown);
    }
    const elapsed = now() - start;
    if (elapsed >= o.deadlineMs) throw new DeadlineError(o.what, o.deadlineMs, lastShown);
    if (o.progress && now() - lastProgress >= (o.progressEveryMs ?? 10_000)) {
      lastProgress = now();
      o.progress(
        `still waiting for ${o.what} (${(elapsed / 1000).toFixed(0)} s of ${(o.deadlineMs / 1000).toFixed(0)} s; last: ${lastShown})`,
      );
    }
    await sleep(Math.min(o.intervalMs, Math.max(0, o.deadlineMs - elapsed)));
  }
}
