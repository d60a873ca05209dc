import { describe, expect, it } from "vitest";
import { ExecError, stderrSummary } from "./types.ts";

/** WRITTEN BY US from the stderr of a failed `kind create cluster` on the lab (run rec-120b, 2026-12-03), shortened. */
const KIND_FAILED = [
  'Creating cluster "cdc-kp" ...',
  " ✗ Starting control-plane 🕹️",
  'Deleted nodes: ["cdc-kp-worker" "cdc-kp-control-plane" "cdc-kp-worker2"]',
  'ERROR: failed to create cluster: failed to init node with kubeadm: command "docker exec --privileged cdc-kp-control-plane kubeadm init --config=/kind/kubeadm.conf --skip-token-print --v=6" failed with error: exit status 1',
  '[certs] Generating "ca" certificate and key',
  "error: error execution phase wait-control-plane: cannot obtain client without bootstrap: could not bootstrap the admin user in file admin.conf: unable to create ClusterRoleBinding",
  "k8s.io/kubernetes/cmd/kubeadm/app/cmd/phases/workflow.(*Runner).Run.func1",
  "\truntime/proc.go:290",
  "runtime.goexit",
  "\truntime/asm_amd64.s:1771",
].join("\n");

describe("a failed command's message", () => {
  it("names its error lines, not the stack trace below them", () => {
    const s = stderrSummary(KIND_FAILED);
    expect(s).toMatch(/^ERROR: failed to create cluster: failed to init node with kubeadm/);
    expect(s).toContain(" | error: error execution phase wait-control-plane");
    expect(s).not.toContain("runtime.goexit");
    const e = new ExecError(
      { target: { kind: "local" }, argv: ["kind", "create", "cluster"] },
      { stdout: "", stderr: KIND_FAILED, exitCode: 1, durationMs: 1 },
    );
    expect(e.message).toMatch(/^local: `kind create cluster` exited 1: ERROR: failed to create cluster/);
  });

  it("without an error line: the last three lines; one error line once; long lines cut", () => {
    expect(stderrSummary("a\nb\n\nc\nd\n")).toBe("b | c | d");
    expect(stderrSummary("x\nError: boom\ny")).toBe("Error: boom");
    expect(stderrSummary(`error: ${"z".repeat(500)}`)).toHaveLength(400);
    expect(stderrSummary("")).toBe("");
  });
});
