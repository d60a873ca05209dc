import { appendFileSync, mkdirSync } from "node:fs";
import { join, relative } from "node:path";
import type { CallRecordJson } from "../bundle/schema.ts";
import { type PathRoots, portableArgv, portableText } from "./portable.ts";
import { RAW_COMPRESS_OVER, writeRawFile } from "./raw-file.ts";
import { callKey, type ExecRequest, type ExecResult, type Executor, targetKey } from "./types.ts";

/** One line of `calls/<topic>.jsonl` in an evidence bundle. */
/** One line of calls/<topic>.jsonl: its fields and caps are its schema's (helpers/bundle/schema.ts CALL_RECORD). */
export type CallRecord = CallRecordJson;

function slug(argv: string[]): string {
  return argv
    .join("-")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/-+/g, "-")
    .slice(0, 60);
}

/** Wraps an executor and writes every call (command, stdout, stderr, exit code, time) into the bundle. */
export class RecordingExecutor implements Executor {
  private seq = 0;
  private lastAt: number | null = null;
  constructor(
    private readonly inner: Executor,
    private readonly bundleDir: string,
    private readonly topic: string,
    /** Stamps `at` (the end of each call); the bundle maker passes a simulated clock. */
    private readonly clock: () => number = Date.now,
    /** Folders whose paths a command names by `$BUNDLE/…` / `$LAB_CACHE/…` in the bundle (portable.ts). */
    private readonly roots: PathRoots = { bundle: bundleDir },
  ) {
    mkdirSync(join(bundleDir, "calls"), { recursive: true });
    mkdirSync(join(bundleDir, "raw", topic), { recursive: true });
  }

  async run(req: ExecRequest): Promise<ExecResult> {
    const result = await this.inner.run(req);
    this.seq++;
    // the command as the bundle keeps it: no folder of this machine in it (a replay elsewhere matches it)
    const argv = portableArgv(req.argv, this.roots);
    const base = join("raw", this.topic, `${String(this.seq).padStart(3, "0")}-${slug(argv)}`);
    const stdoutFile = relative(
      this.bundleDir,
      writeRawFile(join(this.bundleDir, `${base}.txt`), result.stdout),
    );
    const stdin =
      req.stdin === undefined
        ? {}
        : Buffer.byteLength(req.stdin) > RAW_COMPRESS_OVER
          ? {
              stdinFile: relative(
                this.bundleDir,
                writeRawFile(join(this.bundleDir, `${base}.stdin.txt`), req.stdin),
              ),
            }
          : { stdin: req.stdin };
    // the time is stamped once, to the millisecond the bundle keeps: a replay reads back the very same value
    const at = new Date(this.clock()).toISOString();
    const atMs = Date.parse(at);
    this.lastAt = atMs;
    const rec: CallRecord = {
      seq: this.seq,
      key: callKey({ ...req, argv }),
      target: targetKey(req.target),
      argv,
      ...stdin,
      exitCode: result.exitCode,
      durationMs: Math.round(result.durationMs),
      at,
      stdoutFile,
      stderr: portableText(result.stderr, this.roots),
    };
    appendFileSync(join(this.bundleDir, "calls", `${this.topic}.jsonl`), `${JSON.stringify(rec)}\n`);
    return { ...result, recorded: { topic: this.topic, seq: this.seq, stdoutFile, at: atMs } };
  }

  /** The recorded end time of the last call (ms since the epoch), as the bundle holds it; null before any. */
  recordedAt(): number | null {
    return this.lastAt;
  }

  close(): Promise<void> {
    return this.inner.close?.() ?? Promise.resolve();
  }
}
