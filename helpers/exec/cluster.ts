import { DEFAULT_API_TIMEOUT_MS } from "./api.ts";
import { DEFAULT_EXEC_TIMEOUT_MS } from "./kube.ts";

/**
 * kubectl's deadline when a call names none: kubectl itself waits forever on an API server that accepts the
 * connection and never answers (a paused control-plane container), so the process is killed at this deadline.
 */
export const DEFAULT_KUBECTL_TIMEOUT_MS = 120_000;
/** A local command a topic runs without a deadline of its own (helm passes its own, longer one). */
export const DEFAULT_LOCAL_TIMEOUT_MS = 600_000;

import { LocalExecutor } from "./local.ts";
import type { ExecRequest, ExecResult, Executor } from "./types.ts";

export interface ClusterAccess {
  /** kubectl context of the run's cluster. */
  context: string;
  kubeconfig?: string;
  /**
   * How a node shell is reached: a container with the node's network (the kind node itself, or for k3d a
   * tools container joined to the node's network and PID namespaces), or a node-shell Pod (existing clusters).
   */
  nodeShell:
    | { kind: "docker"; containerOf: (node: string) => string }
    | { kind: "pod"; namespace: string; podOf: (node: string) => string };
  /** A container on the cluster's docker network used as the client outside the nodes. */
  outsideContainer?: string;
}

/**
 * Routes each target to what reaches it: kubectl and docker exec run locally, agents and Pods go through
 * the Kubernetes API (`pods` executor), node shells through docker exec or an nsenter node-shell Pod, and
 * `api` requests to the API server in process (`api` executor: helpers/exec/api.ts).
 */
export class ClusterExecutor implements Executor {
  constructor(
    private readonly access: ClusterAccess,
    private readonly pods: Executor,
    private readonly local: Executor = new LocalExecutor(() => []),
    private readonly api?: Executor,
  ) {}

  async run(request: ExecRequest): Promise<ExecResult> {
    const t = request.target;
    // every call has a deadline: the one it names, or the default for its kind of target
    const req =
      request.timeoutMs === undefined
        ? {
            ...request,
            timeoutMs:
              t.kind === "kubectl"
                ? DEFAULT_KUBECTL_TIMEOUT_MS
                : t.kind === "local"
                  ? DEFAULT_LOCAL_TIMEOUT_MS
                  : t.kind === "api"
                    ? DEFAULT_API_TIMEOUT_MS
                    : DEFAULT_EXEC_TIMEOUT_MS,
          }
        : request;
    switch (t.kind) {
      case "local":
        return this.local.run(req);
      case "kubectl": {
        const cfg = this.access.kubeconfig ? ["--kubeconfig", this.access.kubeconfig] : [];
        return this.local.run({
          ...req,
          argv: ["kubectl", ...cfg, "--context", this.access.context, ...req.argv],
        });
      }
      case "api":
        if (!this.api) throw new Error(`no API client for cluster context ${this.access.context}`);
        return this.api.run(req);
      case "agent":
      case "pod":
        return this.pods.run(req);
      case "node": {
        const shell = this.access.nodeShell;
        if (shell.kind === "docker") {
          const interactive = req.stdin !== undefined ? ["-i"] : [];
          return harnessCheck(
            req,
            await this.local.run({
              ...req,
              target: { kind: "local" },
              argv: ["docker", "exec", ...interactive, shell.containerOf(t.node), ...req.argv],
            }),
          );
        }
        return harnessCheck(
          req,
          await this.pods.run({
            ...req,
            target: { kind: "pod", namespace: shell.namespace, pod: shell.podOf(t.node) },
            argv: ["nsenter", "-t", "1", "-m", "-u", "-i", "-n", "-p", "--", ...req.argv],
          }),
        );
      }
      case "outside": {
        if (!this.access.outsideContainer)
          throw new Error("no client container outside the nodes was started for this run");
        return this.local.run({
          ...req,
          target: { kind: "local" },
          argv: ["docker", "exec", this.access.outsideContainer, ...req.argv],
        });
      }
    }
  }

  async close(): Promise<void> {
    await this.api?.close?.();
    await this.pods.close?.();
  }
}

/**
 * A node shell that cannot run the command at all (exit 126/127, "executable file not found") has observed
 * nothing: that is an error of the harness, never a value a property may judge (e.g. "no listener").
 */
export class HarnessError extends Error {
  constructor(req: ExecRequest, r: ExecResult) {
    const why = r.stderr.trim().split("\n").pop() ?? "";
    super(
      `harness: the node shell on ${req.target.kind === "node" ? req.target.node : "?"} cannot run \`${req.argv.join(" ")}\` (exit ${r.exitCode}${why ? `: ${why}` : ""}); nothing was observed`,
    );
    this.name = "HarnessError";
  }
}

const NOT_RUNNABLE =
  /executable file not found|command not found|no such file or directory: unknown|OCI runtime exec failed/i;

export function harnessCheck(req: ExecRequest, r: ExecResult): ExecResult {
  if (r.exitCode === 126 || r.exitCode === 127 || NOT_RUNNABLE.test(r.stderr)) throw new HarnessError(req, r);
  return r;
}
