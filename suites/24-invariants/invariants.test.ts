import { describe, expect, it } from "vitest";
import { nodeTransitions, systemRestarts } from "./invariants.topic.ts";

// Written by us in the shapes the Kubernetes API returns (a kind cluster whose API server was killed after the
// run began: its container ended, and the scheduler's with it; one worker went NotReady and came back).
const START = "2026-12-03T06:04:01.475Z";
const pods = {
  items: [
    {
      metadata: { name: "kube-apiserver-cdc-kpr-control-plane", creationTimestamp: "2026-12-03T06:02:33Z" },
      spec: { nodeName: "cdc-kpr-control-plane" },
      status: {
        containerStatuses: [
          {
            name: "kube-apiserver",
            restartCount: 1,
            lastState: {
              terminated: { exitCode: 0, finishedAt: "2026-12-03T06:05:16Z", reason: "Completed" },
            },
          },
        ],
      },
    },
    {
      metadata: { name: "coredns-7d764666f9-c9zcx", creationTimestamp: "2026-12-03T06:02:40Z" },
      spec: { nodeName: "cdc-kpr-worker" },
      status: {
        containerStatuses: [
          {
            name: "coredns",
            restartCount: 1,
            lastState: { terminated: { exitCode: 1, finishedAt: "2026-12-03T06:03:00Z", reason: "Error" } },
          },
        ],
      },
    },
    {
      metadata: { name: "cilium-x7k2p", creationTimestamp: "2026-12-03T06:06:00Z" },
      spec: { nodeName: "cdc-kpr-worker2" },
      status: { containerStatuses: [{ name: "cilium-agent", restartCount: 0, lastState: {} }] },
    },
  ],
};
const nodes = {
  items: [
    {
      metadata: { name: "cdc-kpr-worker" },
      status: { conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-12-03T06:05:40Z" }] },
    },
    {
      metadata: { name: "cdc-kpr-worker2" },
      status: { conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-12-03T06:02:10Z" }] },
    },
  ],
};

describe("what changed under the run", () => {
  it("every container that ended after the run began, whatever its name, and every Pod created after it", () => {
    expect(systemRestarts(pods, START).map((r) => `${r.fact.pod}: ${r.fact.why}`)).toEqual([
      "kube-apiserver-cdc-kpr-control-plane: kube-apiserver ended 2026-12-03T06:05:16Z (restart 1)",
      "cilium-x7k2p: created 2026-12-03T06:06:00Z, after the run began",
    ]);
    expect(systemRestarts(pods, START)[0]?.paths).toEqual([
      ["items", 0, "status", "containerStatuses", 0, "lastState", "terminated", "finishedAt"],
    ]);
  });

  it("a node whose Ready condition changed after the run began", () => {
    expect(nodeTransitions(nodes, START).map((t) => t.fact)).toEqual([
      { node: "cdc-kpr-worker", ready: "True", since: "2026-12-03T06:05:40Z" },
    ]);
    expect(nodeTransitions(nodes, "2026-12-03T07:00:00Z")).toEqual([]);
  });
});
