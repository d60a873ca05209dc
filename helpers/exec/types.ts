/**
 * Every command the suite runs goes through one Executor, whatever reaches the target: a local process,
 * `docker exec` into a node container, an exec into a Pod through the Kubernetes API, or a recorded
 * bundle. Recording wraps any executor; replay serves a bundle back.
 */
export type Target =
  /** A process on this machine (optionally inside a network namespace the suite created). */
  | { kind: "local"; netns?: string }
  /** `kubectl …` against the run's cluster context. */
  | { kind: "kubectl" }
  /**
   * A request to the Kubernetes API made in this process (helpers/exec/api.ts): its argv is a short
   * pseudo-command saying what was asked (`get pods -n cca-dp -l app=web`, `watch … --until 2 ready`,
   * `bulk-apply --server-side -f -`), its stdout the API's answer as JSON.
   */
  | { kind: "api" }
  /** The cilium-agent container of the agent Pod on `node`. */
  | { kind: "agent"; node: string }
  /** A shell on the node itself (host namespaces): docker exec for kind/k3d, a node-shell Pod otherwise. */
  | { kind: "node"; node: string }
  /** A container of a Pod. */
  | { kind: "pod"; namespace: string; pod: string; container?: string }
  /** A client outside the nodes (a container on the cluster's docker network). */
  | { kind: "outside" };

export interface ExecRequest {
  target: Target;
  argv: string[];
  stdin?: string;
  timeoutMs?: number;
  /**
   * Ends the call early when the run is interrupted (SIGINT/SIGTERM while provisioning): the process is killed,
   * the exec closed, and the result says `interrupted`. Never recorded (not part of the call's key).
   */
  signal?: AbortSignal;
  /**
   * An `api` watch only: the condition it waits for (its argv's `--until` says it in words). Never recorded
   * (not part of the call's key): a replay serves the recorded answer and the caller judges it again.
   */
  watch?: WatchCondition;
}

/** What an `api` watch waits for, as functions of its answer (the object list, or the one object named). */
export interface WatchCondition {
  until(answer: unknown): boolean;
  /** An answer in a few words: progress lines and the deadline error show it. */
  show(answer: unknown): string;
  /** Called while it waits (every ~10 s), saying what for and what it saw last. */
  progress?(line: string): void;
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  /** null when the exit status was lost (e.g. an exec stream that ended without a status). */
  exitCode: number | null;
  durationMs: number;
  /**
   * Where the call is in an evidence bundle, when it was recorded or replayed: its topic, its sequence number
   * in calls/<topic>.jsonl, its stdout file (relative to the bundle) and the recorded end time (ms since the
   * epoch). Evidence quotes lines at these places; measurements take their times from `at`.
   */
  recorded?: { topic: string; seq: number; stdoutFile: string; at: number };
}

export interface Executor {
  run(req: ExecRequest): Promise<ExecResult>;
  close?(): Promise<void>;
}

export function targetKey(t: Target): string {
  switch (t.kind) {
    case "local":
      return t.netns ? `local@${t.netns}` : "local";
    case "kubectl":
    case "api":
    case "outside":
      return t.kind;
    case "agent":
    case "node":
      return `${t.kind}/${t.node}`;
    case "pod":
      return `pod/${t.namespace}/${t.pod}${t.container ? `/${t.container}` : ""}`;
  }
}

/** The key replay matches calls on: where, and the exact argv. */
export function callKey(req: ExecRequest): string {
  return `${targetKey(req.target)} ${JSON.stringify(req.argv)}`;
}

/**
 * What a failed command's stderr says, in one line: its error lines (the first and the last, as `kind create`
 * prints `ERROR: failed to create cluster: …` at the top and kubeadm's `error: error execution phase …` near the
 * end, above a Go stack trace), else its last three lines. Each line at most 400 characters.
 */
export function stderrSummary(stderr: string): string {
  const lines = stderr
    .trim()
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const cut = (l: string) => (l.length > 400 ? `${l.slice(0, 399)}…` : l);
  const errors = lines.filter((l) => /^(error|fatal|panic)\b[:\s]/i.test(l));
  if (errors.length > 0)
    return [...new Set([errors[0] as string, errors.at(-1) as string])].map(cut).join(" | ");
  return lines.slice(-3).map(cut).join(" | ");
}

/** A command that exited non-zero (or lost its status), with everything needed to explain it. */
export class ExecError extends Error {
  constructor(
    readonly req: ExecRequest,
    readonly result: ExecResult,
  ) {
    const err = stderrSummary(result.stderr);
    super(
      `${targetKey(req.target)}: \`${req.argv.join(" ")}\` exited ${result.exitCode ?? "(status lost)"}${err ? `: ${err}` : ""}`,
    );
    this.name = "ExecError";
  }
}

/** Runs and insists on exit 0. */
export async function mustRun(exec: Executor, req: ExecRequest): Promise<ExecResult> {
  const r = await exec.run(req);
  if (r.exitCode !== 0) throw new ExecError(req, r);
  return r;
}
