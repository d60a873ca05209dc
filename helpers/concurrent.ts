/**
 * Independent work started at once, ending as one: every task runs with a signal; the first to fail aborts the
 * others (with that failure as the reason), all of them are awaited (nothing is left running behind the
 * caller's back, e.g. a teardown that starts while a sibling still provisions), and that first failure is what
 * is thrown — not the errors the abort caused in the others. A parent signal's abort (the run interrupted)
 * reaches every task, and its reason is what is thrown.
 */
export async function allOrFirstFailure<T>(
  tasks: ((signal: AbortSignal) => Promise<T>)[],
  parent?: AbortSignal,
): Promise<T[]> {
  const ac = new AbortController();
  const onParent = () => ac.abort(parent?.reason);
  if (parent?.aborted) onParent();
  else parent?.addEventListener("abort", onParent, { once: true });
  let first: { error: unknown } | null = null;
  try {
    const settled = await Promise.allSettled(
      tasks.map((t) =>
        Promise.resolve()
          .then(() => t(ac.signal))
          .catch((error: unknown) => {
            if (!first) {
              first = { error };
              ac.abort(error);
            }
            throw error;
          }),
      ),
    );
    // interrupted: the run's reason (`interrupted by SIGINT`) rather than what it made each task say
    if (parent?.aborted && parent.reason instanceof Error) throw parent.reason;
    if (first) throw (first as { error: unknown }).error;
    return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
  } finally {
    parent?.removeEventListener("abort", onParent);
  }
}

/** A turn-taker: `inTurn(fn)` runs `fn` after every earlier `fn` given to it has ended (failed or not). */
export function serialized(): <T>(fn: () => Promise<T>) => Promise<T> {
  let last: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>) => {
    const next = last.then(fn, fn);
    last = next.catch(() => {});
    return next;
  };
}
