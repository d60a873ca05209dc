/** Each fault's commands against a scripted docker/kubectl (written by us): what it runs, on what, and when. */
import { describe, expect, it } from "vitest";
import type { ExecRequest, ExecResult } from "../../helpers/exec/types.ts";
import { groupProcesses } from "./child.ts";
import { clusterOf, FAULTS, type FaultContext, parseFault } from "./faults.ts";

function ctx(answers: Record<string, Partial<ExecResult>> = {}, over: Partial<FaultContext> = {}) {
  const calls: string[] = [];
  const signals: string[] = [];
  const c: FaultContext = {
    mode: "kube-proxy",
    cluster: clusterOf("kube-proxy"),
    context: "kind-cdc-kp",
    pauseS: 0.05,
    exec: {
      run: async (req: ExecRequest): Promise<ExecResult> => {
        const cmd = req.argv.join(" ");
        calls.push(cmd);
        const a = Object.entries(answers).find(([k]) => cmd.includes(k))?.[1] ?? {};
        return { stdout: "", stderr: "", exitCode: 0, durationMs: 1, ...a };
      },
    },
    sleep: async () => {},
    log: () => {},
    signal: (sig, to) => void signals.push(`${sig} ${to}`),
    ...over,
  };
  return { c, calls, signals };
}

describe("faults", () => {
  it("node-pause pauses the worker and unpauses it after the pause; the clean-up unpauses one still paused", async () => {
    const { c, calls } = ctx({ "inspect -f {{.State.Paused}}": { stdout: "true\n" } });
    const i = await FAULTS["node-pause"].inject(c);
    expect(i.what).toBe("paused node container cdc-kp-worker for 0.05 s");
    expect(calls).toEqual(["docker pause cdc-kp-worker"]);
    await new Promise((r) => setTimeout(r, 120));
    expect(calls).toEqual(["docker pause cdc-kp-worker", "docker unpause cdc-kp-worker"]);
    await i.cleanup?.();
    // unpaused once only
    expect(calls.filter((x) => x.includes("unpause"))).toHaveLength(1);
    const early = ctx({ "inspect -f {{.State.Paused}}": { stdout: "true\n" } }, { pauseS: 60 });
    const j = await FAULTS["node-pause"].inject(early.c);
    await j.cleanup?.();
    expect(early.calls).toEqual([
      "docker pause cdc-kp-worker",
      "docker inspect -f {{.State.Paused}} cdc-kp-worker",
      "docker unpause cdc-kp-worker",
    ]);
  });

  it("node-stop stops worker2 for good; apiserver-kill kills kube-apiserver in the control plane", async () => {
    const s = ctx();
    expect((await FAULTS["node-stop"].inject(s.c)).what).toBe(
      "stopped node container cdc-kp-worker2 for good",
    );
    expect(s.calls).toEqual(["docker stop cdc-kp-worker2"]);
    const a = ctx();
    await FAULTS["apiserver-kill"].inject(a.c);
    expect(a.calls).toEqual(["docker exec cdc-kp-control-plane pkill -x kube-apiserver"]);
  });

  it("outside-net finds the outside client by its label and disconnects it from the kind network", async () => {
    const o = ctx({ "docker ps -q": { stdout: "0123456789abcdef\n" } });
    expect((await FAULTS["outside-net"].inject(o.c)).what).toBe(
      "disconnected the outside client 0123456789ab from the kind network",
    );
    expect(o.calls).toEqual([
      "docker ps -q --filter label=cilium-datapath-conformance/outside-client=cdc-kp",
      "docker network disconnect --force kind 0123456789abcdef",
    ]);
    await expect(FAULTS["outside-net"].inject(ctx().c)).rejects.toThrow(
      "no outside client container (label cilium-datapath-conformance/outside-client=cdc-kp) is running",
    );
  });

  it("signals go to the group (SIGINT, as Ctrl-C) or the main process (SIGTERM), or where asked", async () => {
    const s = ctx();
    await FAULTS.sigint.inject(s.c);
    await FAULTS.sigterm.inject(s.c);
    await FAULTS.sigint.inject({ ...s.c, signalTo: "main" });
    expect(s.signals).toEqual(["SIGINT group", "SIGTERM main", "SIGINT main"]);
  });

  it("each fault's symptom matches what the suite prints for it, and not a plain wrong value", () => {
    const says: Record<string, string> = {
      "agent-delete":
        "holder could not be observed: exec into kube-system/cilium-x/cilium-agent ended without an exit status",
      "node-pause":
        "node/cdc-kpr-worker: `ss -Htln` exited 1: Error response from daemon: Container 12ab is paused, unpause the container before exec",
      "node-stop":
        "node/cdc-kpr-worker2: `iptables-save` exited 1: Error response from daemon: Container 12ab is not running",
      "apiserver-kill":
        "kubectl: `get pods` exited 1: The connection to the server 127.0.0.1:40123 was refused - did you specify the right host or port?",
      "outside-net": "nodeport.outside-http-200: expected 200, observed 000 (curl: (7) Failed to connect)",
    };
    for (const [f, msg] of Object.entries(says)) {
      expect(FAULTS[f as keyof typeof FAULTS].symptom?.test(msg), f).toBe(true);
      expect(FAULTS[f as keyof typeof FAULTS].symptom?.test("expected 4, observed 3"), f).toBe(false);
    }
    expect(() => parseFault("pause")).toThrow(/^--fault pause: valid: agent-delete, node-pause/);
  });
});

describe("the processes a run leaves in its group", () => {
  it("a zombie (exited, waiting for init to reap it) is not one of them; ps's own line is not either", async () => {
    const argvs: string[][] = [];
    const exec = {
      run: async (req: ExecRequest): Promise<ExecResult> => {
        argvs.push(req.argv);
        // ps's output as written by us, in the columns asked for
        const stdout = [
          "  4242 S    sleep 30",
          "  4243 Z    [sleep] <defunct>",
          "  4244 Zs   [node] <defunct>",
          "  4245 R    ps -o pid=,stat=,args= -g 4240",
          "",
        ].join("\n");
        return { stdout, stderr: "", exitCode: 0, durationMs: 1 };
      },
    };
    expect(await groupProcesses(exec, 4240)).toEqual(["4242 sleep 30"]);
    expect(argvs).toEqual([["ps", "-o", "pid=,stat=,args=", "-g", "4240"]]);
  });
});
