import { describe, expect, it } from "vitest";
import { rolloutDone, rolloutState } from "./readiness.ts";

const ds = (generation: number, observed: number, updated = 3, available = 3) => ({
  metadata: { generation },
  status: {
    observedGeneration: observed,
    desiredNumberScheduled: 3,
    numberReady: 3,
    numberAvailable: available,
    updatedNumberScheduled: updated,
  },
});
const dep = (generation: number, observed: number, replicas = 1, updated = 1, available = 1) => ({
  metadata: { generation },
  status: { observedGeneration: observed, replicas, updatedReplicas: updated, availableReplicas: available },
});

describe("rollout gate (as kubectl rollout status)", () => {
  it("is done when both controllers observed the newest generation and every Pod is updated and available", () => {
    expect(rolloutDone(rolloutState(ds(2, 2), dep(2, 2)))).toBe(true);
  });

  it("is not done while the DaemonSet's status still describes the old generation (a kept cluster re-installed)", () => {
    // the old status says 3/3 updated: without observedGeneration this passed at once
    expect(rolloutDone(rolloutState(ds(3, 2), dep(2, 2)))).toBe(false);
    expect(rolloutDone(rolloutState(ds(2, 2), dep(3, 2)))).toBe(false);
  });

  it("is not done while Pods are not updated or not available, or the Deployment has old replicas", () => {
    expect(rolloutDone(rolloutState(ds(2, 2, 2), dep(2, 2)))).toBe(false);
    expect(rolloutDone(rolloutState(ds(2, 2, 3, 2), dep(2, 2)))).toBe(false);
    expect(rolloutDone(rolloutState(ds(2, 2), dep(2, 2, 2, 1, 1)))).toBe(false);
    expect(rolloutDone(rolloutState(ds(2, 2), dep(2, 2, 1, 1, 0)))).toBe(false);
  });
});

describe("rollout gate while it waits (scripted kubectl, written by us)", () => {
  it("names the agent Pods that are not ready and why, in progress lines and the timeout error", async () => {
    const { ciliumRolledOut } = await import("./readiness.ts");
    const F = await import("../helpers/observe/pod-status.fixtures.ts");
    const saved = process.env.READY_DEADLINE_S;
    process.env.READY_DEADLINE_S = "0.05";
    const calls: string[] = [];
    const lines: string[] = [];
    try {
      const err = await ciliumRolledOut({
        exec: {
          run: async (req) => {
            calls.push(req.argv.join(" "));
            const body = req.argv.includes("daemonset")
              ? ds(1, 1, 3, 2)
              : req.argv.includes("deployment")
                ? dep(1, 1)
                : { kind: "List", items: [F.initCrashLoop, F.ready] };
            return { stdout: JSON.stringify(body), stderr: "", exitCode: 0, durationMs: 1 };
          },
        },
        log: (l) => lines.push(l),
        sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 5))),
      }).catch((e: unknown) => e);
      expect(String(err)).toMatch(
        /DaemonSet kube-system\/cilium rolled out .* last observation: cilium 3\/3 ready \(3 updated, generation 1\/1\), operator 1\/1 available .*; cilium-x7k2p: Pending, init container mount-cgroup CrashLoopBackOff \(restarts 2, last exit 1 Error\)/,
      );
      expect(calls).toContain("-n kube-system get pods -o json");
    } finally {
      if (saved === undefined) delete process.env.READY_DEADLINE_S;
      else process.env.READY_DEADLINE_S = saved;
    }
  });
});
