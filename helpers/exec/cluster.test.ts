import { describe, expect, it } from "vitest";
import { ClusterExecutor, HarnessError } from "./cluster.ts";
import { DEFAULT_EXEC_TIMEOUT_MS } from "./kube.ts";
import type { ExecRequest, ExecResult, Executor } from "./types.ts";

/** A local executor written by us: answers every docker exec with the scripted result and keeps the requests. */
function scripted(result: Partial<ExecResult>): Executor & { seen: ExecRequest[] } {
  const seen: ExecRequest[] = [];
  return {
    seen,
    run: async (req) => {
      seen.push(req);
      return { stdout: "", stderr: "", exitCode: 0, durationMs: 1, ...result };
    },
  };
}

const pods: Executor = { run: async () => ({ stdout: "", stderr: "", exitCode: 0, durationMs: 1 }) };
const cluster = (local: Executor, prefix = "") =>
  new ClusterExecutor(
    { context: "kind-x", nodeShell: { kind: "docker", containerOf: (n) => `${prefix}${n}` } },
    pods,
    local,
  );

describe("node shells", () => {
  it("a command the node cannot run (exit 127, 126, executable not found) is a harness error, not an observation", async () => {
    for (const r of [
      { exitCode: 127, stderr: "sh: ss: not found\n" },
      { exitCode: 126, stderr: "permission denied\n" },
      {
        exitCode: 1,
        stderr:
          'OCI runtime exec failed: exec failed: unable to start container process: exec: "bash": executable file not found in $PATH: unknown\n',
      },
    ]) {
      const run = cluster(scripted(r)).run({
        target: { kind: "node", node: "k3d-a-server-0" },
        argv: ["ss", "-Htln"],
      });
      await expect(run).rejects.toBeInstanceOf(HarnessError);
      await expect(run).rejects.toThrow(
        /node shell on k3d-a-server-0 cannot run `ss -Htln`.*nothing was observed/,
      );
    }
  });

  it("an ordinary failure is an observation (curl's exit 7 stays a value)", async () => {
    const r = await cluster(scripted({ exitCode: 7, stderr: "curl: (7) Failed to connect\n" })).run({
      target: { kind: "node", node: "n1" },
      argv: ["curl", "-sS", "http://10.96.0.1"],
    });
    expect(r.exitCode).toBe(7);
  });

  it("k3d node probes go to the tools container (prefix), with a default deadline", async () => {
    const local = scripted({});
    await cluster(local, "cdc-tools-").run({
      target: { kind: "node", node: "k3d-a-agent-0" },
      argv: ["ss", "-Htln"],
    });
    expect(local.seen[0]?.argv).toEqual(["docker", "exec", "cdc-tools-k3d-a-agent-0", "ss", "-Htln"]);
    expect(local.seen[0]?.timeoutMs).toBe(DEFAULT_EXEC_TIMEOUT_MS);
  });
});
