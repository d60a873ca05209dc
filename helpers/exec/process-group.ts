/**
 * The processes of a process group, as `ps` lists them: what a run left running after its main process exited.
 * One that has exited and waits to be reaped (a zombie: its parent gone, init reaps it, on some machines only
 * every 2 s) is not running, and `ps`'s own line is not one of them. Read by the fault driver (through its
 * executor) and the interrupt tests (directly).
 */

/** The `ps` command that lists a process group's processes, with their state. */
export function groupPsArgv(pgid: number): string[] {
  return ["ps", "-o", "pid=,stat=,args=", "-g", String(pgid)];
}

/** `ps`'s output (of groupPsArgv) → each process still running, as `PID ARGS`. */
export function runningInGroup(psOutput: string): string[] {
  return psOutput
    .split("\n")
    .map((l) => /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null && !(m[2] as string).startsWith("Z"))
    .map((m) => `${m[1]} ${m[3]}`)
    .filter((l) => !/\bps -o pid=,stat=,args= -g\b/.test(l));
}
