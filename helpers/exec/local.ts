import { execa } from "execa";
import type { ExecRequest, ExecResult, Executor } from "./types.ts";

/** Runs argv on this machine; `local` targets with a netns run through `ip netns exec`. */
export class LocalExecutor implements Executor {
  constructor(private readonly prefix: (req: ExecRequest) => string[] = defaultPrefix) {}

  async run(req: ExecRequest): Promise<ExecResult> {
    const argv = [...this.prefix(req), ...req.argv];
    const t0 = performance.now();
    const r = await execa(argv[0] as string, argv.slice(1), {
      input: req.stdin,
      reject: false,
      timeout: req.timeoutMs,
      // a command that ignores SIGTERM at its deadline (or on an interrupt) is killed 2 s later
      forceKillAfterDelay: 2000,
      ...(req.signal ? { cancelSignal: req.signal } : {}),
      stripFinalNewline: false,
      encoding: "utf8",
    });
    const durationMs = performance.now() - t0;
    if (r.failed && r.exitCode === undefined) {
      const why = r.timedOut
        ? `timed out after ${req.timeoutMs} ms: \`${argv.join(" ")}\` gave no exit status and was killed`
        : r.isCanceled
          ? `interrupted: \`${argv.join(" ")}\` was killed because the run was stopped`
          : r.shortMessage;
      return {
        stdout: String(r.stdout ?? ""),
        stderr: `${String(r.stderr ?? "")}${why}\n`,
        exitCode: null,
        durationMs,
      };
    }
    return {
      stdout: String(r.stdout ?? ""),
      stderr: String(r.stderr ?? ""),
      exitCode: r.exitCode ?? null,
      durationMs,
    };
  }
}

function defaultPrefix(req: ExecRequest): string[] {
  if (req.target.kind === "local" && req.target.netns) return ["ip", "netns", "exec", req.target.netns];
  if (req.target.kind !== "local") throw new Error(`LocalExecutor cannot reach target ${req.target.kind}`);
  return [];
}
