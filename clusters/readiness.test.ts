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
