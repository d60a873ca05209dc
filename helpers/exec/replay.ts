import { BundleFault, readBundleRaw, shown } from "../bundle/files.ts";
import { readCalls } from "../bundle/read.ts";
import { UserError } from "../errors.ts";
import { kubectlEquivalent, parseApiArgv } from "./api-argv.ts";
import { labCacheDir, type PathRoots, portableArgv } from "./portable.ts";
import type { CallRecord } from "./record.ts";
import { callKey, type ExecRequest, type ExecResult, type Executor } from "./types.ts";

/** A call the bundle never recorded (e.g. a step added after the bundle was made). */
export class NotRecorded extends UserError {
  /** No retry can make a recording appear: polls stop at once (helpers/poll.ts). */
  readonly permanent = true;
  constructor(
    readonly bundleDir: string,
    readonly topic: string,
    readonly key: string,
  ) {
    super(`bundle ${bundleDir} (${topic}) has no recording of ${key}`);
  }
}

/**
 * Serves a bundle's recorded calls back. Calls are matched by target and exact argv; the n-th identical
 * call gets the n-th recording (so polls and before/after reads replay in order), and the last
 * recording repeats once they run out (counted: `spent()`, so a wait ends instead of spinning on it). A call
 * never recorded is an error naming it.
 *
 * A bundle recorded before the `api` target ran the same reads as `kubectl … -o json` (and applies and
 * deletes through kubectl): an `api` call it has no recording of is answered from the kubectl command the
 * suite ran for the same question then (api-argv.ts `kubectlEquivalent`), at that call's place, so older
 * bundles still replay and `check` still re-judges them. A watch there was a poll: it is served the poll's
 * recordings in order until one meets the watch's condition, as the poll would have stopped.
 */
export class ReplayExecutor implements Executor {
  private readonly byKey = new Map<string, CallRecord[]>();
  /** Each call record's line in calls/<topic>.jsonl, for messages. */
  private readonly files = new Map<CallRecord, string>();
  private readonly used = new Map<string, number>();
  private lastAt: number | null = null;
  private spentCalls = 0;
  private lastSpent: string | null = null;

  private readonly roots: PathRoots;

  constructor(
    private readonly bundleDir: string,
    readonly topic: string,
    roots?: PathRoots,
  ) {
    this.roots = roots ?? { bundle: bundleDir, labCache: labCacheDir() };
    const calls = readCalls(bundleDir, topic);
    if (!calls)
      throw new UserError(`bundle ${bundleDir} has no recorded calls for ${topic} (calls/${topic}.jsonl)`);
    for (const { rec, at } of calls) {
      this.files.set(rec, at);
      const list = this.byKey.get(rec.key) ?? [];
      list.push(rec);
      this.byKey.set(rec.key, list);
    }
  }

  /** The first bundle fault a served call met (a wait may have caught it): `check` fails the bundle with it. */
  fault: BundleFault | null = null;

  async run(req: ExecRequest): Promise<ExecResult> {
    // matched as recorded: paths under the bundle or the lab's cache by name (portable.ts)
    const key = callKey({ ...req, argv: portableArgv(req.argv, this.roots) });
    if (!this.byKey.get(key)?.length && req.target.kind === "api") return this.fromKubectl(req, key);
    return this.serve(key);
  }

  /** The next recording of `key` (the last one again once they ran out, counted as spent). */
  private serve(key: string, asked = key): ExecResult {
    const list = this.byKey.get(key);
    if (!list || list.length === 0) throw new NotRecorded(this.bundleDir, this.topic, asked);
    const n = this.used.get(key) ?? 0;
    this.used.set(key, n + 1);
    if (n >= list.length) {
      this.spentCalls++;
      this.lastSpent = key;
    }
    const rec = list[Math.min(n, list.length - 1)] as CallRecord;
    const at = Date.parse(rec.at);
    this.lastAt = at;
    let stdout: string | null;
    try {
      stdout = readBundleRaw(this.bundleDir, rec.stdoutFile);
    } catch (err) {
      if (err instanceof BundleFault) this.fault ??= err;
      throw err;
    }
    if (stdout === null) {
      this.fault ??= new BundleFault(
        this.bundleDir,
        this.files.get(rec) ?? `calls/${this.topic}.jsonl`,
        `stdoutFile ${shown(rec.stdoutFile)} is not in the bundle`,
      );
      throw this.fault;
    }
    return {
      stdout,
      stderr: rec.stderr,
      exitCode: rec.exitCode,
      durationMs: rec.durationMs,
      recorded: { topic: this.topic, seq: rec.seq, stdoutFile: rec.stdoutFile, at },
    };
  }

  private hasNext(key: string): boolean {
    return (this.used.get(key) ?? 0) < (this.byKey.get(key)?.length ?? 0);
  }

  /** An `api` call answered from the kubectl command an older bundle recorded for the same question. */
  private fromKubectl(req: ExecRequest, apiKey: string): ExecResult {
    const call = parseApiArgv(req.argv);
    const key = callKey({ target: { kind: "kubectl" }, argv: kubectlEquivalent(call) });
    if (!this.byKey.get(key)?.length)
      throw new NotRecorded(this.bundleDir, this.topic, `${apiKey} (nor, as older bundles ran it, ${key})`);
    if (call.verb !== "watch" || !req.watch) return this.serve(key, apiKey);
    // the poll's recordings in order, until one meets the condition; when none does, the last one, counted as
    // spent (the poll would have asked again): the wait ends with it instead of waiting for nothing
    const meets = (r: ExecResult) => {
      try {
        return r.exitCode === 0 && req.watch?.until(JSON.parse(r.stdout)) === true;
      } catch {
        return false; // a failed read of the poll (its stderr says why): the poll went on
      }
    };
    for (;;) {
      const beyond = !this.hasNext(key);
      const r = this.serve(key, apiKey);
      if (meets(r) || beyond) return r;
      if (!this.hasNext(key)) {
        this.spentCalls++;
        this.lastSpent = key;
        return r;
      }
    }
  }

  /** Calls served after their recordings ran out (the last one repeated), and the key of the latest. */
  spent(): { count: number; key: string | null } {
    return { count: this.spentCalls, key: this.lastSpent };
  }

  /** The recorded end time of the last call served (ms since the epoch); 0 before any call. */
  now(): number {
    return this.lastAt ?? 0;
  }

  /** Keys recorded but never asked for: a spec that stopped observing something shows up here. */
  unused(): string[] {
    return [...this.byKey.keys()].filter((k) => !this.used.has(k));
  }
}
