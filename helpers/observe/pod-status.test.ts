import { describe, expect, it } from "vitest";
import * as F from "./pod-status.fixtures.ts";
import { describePods, lastWarnings, podState, podStates, whyNotReady } from "./pod-status.ts";

describe("a Pod's state from its JSON (fixtures written by us)", () => {
  it("ImagePullBackOff names the image and the kubelet's message", () => {
    const p = podState(F.imagePullBackOff);
    expect(p).toMatchObject({ name: "node-shell-worker", phase: "Pending", ready: false, node: "worker" });
    expect(p.containers[0]).toMatchObject({ name: "shell", state: "waiting", reason: "ImagePullBackOff" });
    expect(whyNotReady(p)).toMatch(
      /^node-shell-worker: Pending, container shell ImagePullBackOff \(image docker\.io\/nicolaka\/netshoot:v0\.13\): Back-off pulling image "docker\.io\/nicolaka\/netshoot:v0\.13"/,
    );
  });

  it("ErrImagePull and ErrImageNeverPull name the image too", () => {
    expect(whyNotReady(podState(F.errImagePull))).toContain(
      "container shell ErrImagePull (image docker.io/nicolaka/netshoot:v0.13): failed to pull",
    );
    expect(whyNotReady(podState(F.errImageNeverPull))).toBe(
      'web-5d9c7b9f8-abcde: Pending, container web ErrImageNeverPull (image localhost/lab/agnhost:2.52): Container image "localhost/lab/agnhost:2.52" is not present with pull policy of Never',
    );
  });

  it("an unscheduled Pod gives the PodScheduled condition's reason and the scheduler's message", () => {
    const why = whyNotReady(podState(F.unschedulable));
    expect(why).toMatch(
      /^holder: Pending, not scheduled: Unschedulable: 0\/3 nodes are available: 1 node\(s\)/,
    );
    // long messages are clipped to one bounded line
    expect(why.length).toBeLessThan(220);
  });

  it("ContainerCreating, a crash loop with its last exit, an init container's crash loop", () => {
    expect(whyNotReady(podState(F.containerCreating))).toBe(
      "probe: Pending, container probe ContainerCreating",
    );
    expect(whyNotReady(podState(F.crashLoop))).toBe(
      "holder-crash: Running, container holder CrashLoopBackOff (restarts 4, last exit 1 Error): back-off 1m20s restarting failed container=holder pod=holder-crash_cca-dp-run1(uid-holder-crash)",
    );
    // the init container that holds the Pod is named, not the app container's PodInitializing
    expect(whyNotReady(podState(F.initCrashLoop))).toMatch(
      /^cilium-x7k2p: Pending, init container mount-cgroup CrashLoopBackOff \(restarts 2, last exit 1 Error\): back-off 20s/,
    );
  });

  it("running but not ready, ready, terminating, evicted, just created", () => {
    expect(whyNotReady(podState(F.runningNotReady))).toBe(
      "web-5d9c7b9f8-fghij: Running, container web running, not ready",
    );
    expect(podState(F.ready).ready).toBe(true);
    expect(whyNotReady(podState(F.ready))).toBe("web-5d9c7b9f8-klmno: Running, Ready");
    const t = podState(F.terminating);
    expect(t).toMatchObject({ ready: false, deleting: true });
    expect(whyNotReady(t)).toMatch(/^web-5d9c7b9f8-pqrst: Terminating/);
    expect(whyNotReady(podState(F.evicted))).toMatch(
      /^dns-client: Failed, Evicted: The node was low on resource: ephemeral-storage\. .*; container dns-client terminated ContainerStatusUnknown \(exit 137\)/,
    );
    expect(whyNotReady(podState(F.justCreated))).toBe("capture: Pending, not scheduled yet");
  });

  it("a list: how many are ready, then each Pod that is not, bounded", () => {
    const list = { kind: "List", items: [F.ready, F.imagePullBackOff, F.errImagePull] };
    const ps = podStates(list);
    expect(ps.map((p) => p.name)).toEqual(["web-5d9c7b9f8-klmno", "node-shell-worker", "node-shell-worker2"]);
    const d = describePods(ps, { want: 3 });
    expect(d).toMatch(
      /^1\/3 ready; node-shell-worker: Pending, container shell ImagePullBackOff .*; node-shell-worker2: Pending, container shell ErrImagePull/,
    );
    expect(describePods(ps, { max: 1 })).toMatch(/; and 1 more not ready$/);
    expect(describePods([], { none: "no Pods match app=web" })).toBe("no Pods match app=web");
    expect(describePods(podStates({ items: [F.ready] }), { want: 2 })).toBe("1/2 ready (1 Pods)");
    expect(podStates(F.ready)).toHaveLength(1);
  });

  it("the last Warning event per Pod (Normal events ignored)", () => {
    const w = lastWarnings(F.events);
    expect(w.get("node-shell-worker")).toMatchObject({
      reason: "Failed",
      message: "Error: ImagePullBackOff",
      count: 5,
    });
    expect(w.get("holder")).toMatchObject({ reason: "FailedScheduling" });
    expect([...w.keys()].sort()).toEqual(["holder", "node-shell-worker"]);
  });
});
