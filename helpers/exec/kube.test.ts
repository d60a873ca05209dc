import type { V1Pod, V1Status } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { exitCodeFromStatus, type KubeApi, KubeExecutor } from "./kube.ts";

describe("exec status channel", () => {
  it("Success is 0, NonZeroExitCode carries the code, anything else is a lost status", () => {
    expect(exitCodeFromStatus({ status: "Success" })).toBe(0);
    expect(
      exitCodeFromStatus({
        status: "Failure",
        reason: "NonZeroExitCode",
        details: { causes: [{ reason: "ExitCode", message: "7" }] },
      }),
    ).toBe(7);
    expect(exitCodeFromStatus({ status: "Failure", message: "container not found" })).toBeNull();
    expect(exitCodeFromStatus(undefined)).toBeNull();
  });
});

describe("KubeExecutor against a scripted API", () => {
  const pod = (name: string, extra: Partial<V1Pod["metadata"]> = {}, phase = "Running"): V1Pod => ({
    metadata: { name, ...extra },
    status: { phase },
  });

  function scripted(pods: () => V1Pod[], onExec: (argv: string[], fire: (s: V1Status) => void) => void) {
    const execs: string[] = [];
    let closed = 0;
    const api: KubeApi = {
      listPods: async () => pods(),
      readPod: async (_ns, name) => ({ metadata: { name }, spec: { containers: [{ name: "c" }] } }),
      exec: async (_ns, podName, _c, argv, out, _err, _stdin, onStatus) => {
        execs.push(`${podName}: ${argv.join(" ")}`);
        onExec(argv, (s) => {
          out.write("ok\n");
          onStatus(s);
        });
        return { close: () => void closed++, on: () => undefined };
      },
    };
    return { api, execs, closed: () => closed };
  }

  it("re-resolves the agent Pod after a rollout, and skips Pods being deleted", async () => {
    let current = [pod("cilium-old")];
    const s = scripted(
      () => current,
      (_a, fire) => fire({ status: "Success" }),
    );
    const k = new KubeExecutor(undefined, undefined, s.api);
    await k.run({ target: { kind: "agent", node: "n1" }, argv: ["cilium-dbg", "status"] });
    // helm upgrade: the old Pod terminates, a new one runs
    current = [pod("cilium-old", { deletionTimestamp: new Date() }), pod("cilium-new")];
    await k.run({ target: { kind: "agent", node: "n1" }, argv: ["cilium-dbg", "status"] });
    expect(s.execs).toEqual(["cilium-old: cilium-dbg status", "cilium-new: cilium-dbg status"]);
    current = [pod("cilium-new", {}, "Pending")];
    await expect(k.agentPod("n1")).rejects.toThrow("no running cilium agent Pod on node n1");
  });

  it("times out, closes the socket and names the command that hung", async () => {
    const s = scripted(
      () => [pod("cilium-a")],
      () => {}, // never answers
    );
    const k = new KubeExecutor(undefined, undefined, s.api);
    const r = await k.run({ target: { kind: "agent", node: "n1" }, argv: ["sleep", "999"], timeoutMs: 50 });
    expect(r.exitCode).toBeNull();
    expect(r.stderr).toContain("timed out after 50 ms: cilium-a/cilium-agent: sleep 999");
    expect(s.closed()).toBe(1);
  });
});
