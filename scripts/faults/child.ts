/**
 * The run a driver watches: a child process in its own process group (so a signal can go to all of it, as a
 * terminal's Ctrl-C does, and what is left of it afterwards can be listed), its output line by line with when
 * each line came, teed to a log file and to our own output.
 */
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { groupPsArgv, runningInGroup } from "../../helpers/exec/process-group.ts";
import type { Executor } from "../../helpers/exec/types.ts";

export interface RunningChild {
  pid: number;
  lines: { at: number; text: string }[];
  onLine(fn: (text: string, at: number) => void): void;
  exited: Promise<{ code: number | null; signal: string | null; at: number }>;
  /** A signal to the main process or to the whole process group; a process already gone is not an error. */
  kill(sig: NodeJS.Signals, to: "main" | "group"): void;
}

export function startChild(o: {
  argv: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  logFile: string;
  echo?: (s: string) => void;
  now?: () => number;
}): RunningChild {
  const now = o.now ?? Date.now;
  const child = spawn(o.argv[0] as string, o.argv.slice(1), {
    cwd: o.cwd,
    env: o.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const log = createWriteStream(o.logFile);
  const lines: { at: number; text: string }[] = [];
  const listeners: ((text: string, at: number) => void)[] = [];
  const feed = (stream: NodeJS.ReadableStream | null) => {
    let rest = "";
    stream?.on("data", (d: Buffer) => {
      const text = rest + d.toString();
      const parts = text.split("\n");
      rest = parts.pop() ?? "";
      for (const p of parts) {
        const at = now();
        lines.push({ at, text: p });
        log.write(`${p}\n`);
        o.echo?.(`${p}\n`);
        for (const fn of listeners) fn(p, at);
      }
    });
  };
  feed(child.stdout);
  feed(child.stderr);
  const exited = new Promise<{ code: number | null; signal: string | null; at: number }>((resolve) => {
    child.on("exit", (code, signal) => {
      const at = now();
      // let the pipes drain before the log closes
      setTimeout(() => {
        log.end();
        resolve({ code, signal, at });
      }, 200);
    });
    child.on("error", (err) => {
      log.write(`could not start ${o.argv[0]}: ${err.message}\n`);
      log.end();
      resolve({ code: null, signal: null, at: now() });
    });
  });
  const pid = child.pid ?? -1;
  return {
    pid,
    lines,
    onLine: (fn) => void listeners.push(fn),
    exited,
    kill: (sig, to) => {
      try {
        process.kill(to === "group" ? -pid : pid, sig);
      } catch {
        // gone already
      }
    },
  };
}

/** Processes still running in a process group, as `PID ARGS` (helpers/exec/process-group.ts). */
export async function groupProcesses(exec: Executor, pgid: number): Promise<string[]> {
  const r = await exec.run({ target: { kind: "local" }, argv: groupPsArgv(pgid), timeoutMs: 10_000 });
  return runningInGroup(r.stdout);
}

/** Waits (polling, bounded) until the group is empty; returns what is still there at the deadline. */
export async function groupGone(exec: Executor, pgid: number, ms = 15_000): Promise<string[]> {
  const t0 = Date.now();
  for (;;) {
    const left = await groupProcesses(exec, pgid);
    if (left.length === 0 || Date.now() - t0 >= ms) return left;
    await new Promise((r) => setTimeout(r, 500));
  }
}
