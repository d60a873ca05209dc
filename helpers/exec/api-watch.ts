/**
 * One `api watch` call and what its answer means, for every wait that watches (the readiness gates, the
 * topics' waits): on a cluster it lists then watches until `done` holds, recorded (and replayed) as ONE call
 * whose output is the list at the moment the condition held.
 */
import { DeadlineError } from "../poll.ts";
import { type ApiQuery, apiWatch } from "./api-argv.ts";
import { ExecError, type ExecRequest, type ExecResult, type Executor } from "./types.ts";

type Json = Record<string, unknown>;
const o = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});

export interface WatchOptions extends ApiQuery {
  /** What it waits for, in a few words: the recorded call's `--until`. */
  until: string;
  /** What it waits for, in a sentence (the deadline error's). */
  what: string;
  deadlineMs: number;
  /** The condition, on the answer: the object list (or the object a named watch asks for). */
  done(answer: Json): boolean;
  /** The answer in a few words: progress lines and the deadline error show it. */
  show(answer: Json): string;
}

/**
 * Runs the watch: its answer and the call's result once `done` holds. Otherwise it throws, in this order: the
 * error `stopped(last)` gives (a replay whose recordings ran out), DeadlineError at the deadline with the last
 * answer (or "no answer" and the call's last stderr line), or ExecError naming the call (no permission,
 * interrupted).
 */
export async function watchCall(
  exec: Executor,
  w: WatchOptions,
  opts: { progress?: (line: string) => void; stopped?: (last: string) => Error | null } = {},
): Promise<{ json: Json; result: ExecResult }> {
  const req: ExecRequest = {
    target: { kind: "api" },
    argv: apiWatch(w),
    timeoutMs: w.deadlineMs,
    watch: {
      until: (a) => w.done(o(a)),
      show: (a) => w.show(o(a)),
      ...(opts.progress ? { progress: opts.progress } : {}),
    },
  };
  const r = await exec.run(req);
  let json: Json = {};
  try {
    json = r.stdout.trim() ? o(JSON.parse(r.stdout)) : {};
  } catch {
    // no JSON: judged as no answer below
  }
  const answered = r.stdout.trim() !== "";
  if (answered && w.done(json)) return { json, result: r };
  const last = answered ? w.show(json) : `no answer (${r.stderr.trim().split("\n").pop() ?? ""})`;
  const stopped = opts.stopped?.(last);
  if (stopped) throw stopped;
  if (r.exitCode === 0 || /^timed out after /.test(r.stderr.trim()))
    throw new DeadlineError(w.what, w.deadlineMs, last);
  throw new ExecError(req, r);
}
