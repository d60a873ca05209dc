import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../errors.ts";
import { labCacheDir, type PathRoots, portableArgv } from "./portable.ts";
import { readRawFile } from "./raw-file.ts";
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
 */
export class ReplayExecutor implements Executor {
  private readonly byKey = new Map<string, CallRecord[]>();
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
    const file = join(bundleDir, "calls", `${topic}.jsonl`);
    if (!existsSync(file))
      throw new UserError(`bundle ${bundleDir} has no recorded calls for ${topic} (calls/${topic}.jsonl)`);
    const lines = readFileSync(file, "utf8").split("\n");
    lines.forEach((line, i) => {
      if (line.trim() === "") return;
      let rec: CallRecord;
      try {
        rec = JSON.parse(line) as CallRecord;
      } catch {
        throw new UserError(`calls/${topic}.jsonl: line ${i + 1} is not JSON`);
      }
      const list = this.byKey.get(rec.key) ?? [];
      list.push(rec);
      this.byKey.set(rec.key, list);
    });
  }

  async run(req: ExecRequest): Promise<ExecResult> {
    // matched as recorded: paths under the bundle or the lab's cache by name (portable.ts)
    const key = callKey({ ...req, argv: portableArgv(req.argv, this.roots) });
    const list = this.byKey.get(key);
    if (!list || list.length === 0) throw new NotRecorded(this.bundleDir, this.topic, key);
    const n = this.used.get(key) ?? 0;
    this.used.set(key, n + 1);
    if (n >= list.length) {
      this.spentCalls++;
      this.lastSpent = key;
    }
    const rec = list[Math.min(n, list.length - 1)] as CallRecord;
    const at = Date.parse(rec.at);
    this.lastAt = at;
    const stdoutPath = join(this.bundleDir, rec.stdoutFile);
    if (!existsSync(stdoutPath))
      throw new UserError(`bundle ${this.bundleDir}: ${rec.stdoutFile} is missing`);
    return {
      stdout: readRawFile(stdoutPath),
      stderr: rec.stderr,
      exitCode: rec.exitCode,
      durationMs: rec.durationMs,
      recorded: { topic: this.topic, seq: rec.seq, stdoutFile: rec.stdoutFile, at },
    };
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
