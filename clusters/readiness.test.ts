/**
 * The readiness gates: their conditions on the objects as the API serves them, and the gates run together
 * against a fake API server on loopback WRITTEN BY US (the real api target watches it) with agents scripted
 * here: each gate reacts to the change it waits for, the independent ones run at once, a failing one stops the
 * others, and the agents' own start is measured from each Pod's start to its first `status --brief` OK.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ApiExecutor, kubeConfigHttp } from "../helpers/exec/api.ts";
import { loadKubeConfig } from "../helpers/exec/kube.ts";
import type { ExecRequest, ExecResult, Executor } from "../helpers/exec/types.ts";
import * as F from "../helpers/observe/pod-status.fixtures.ts";
import { FakeApiServer } from "../helpers/testing/fake-api-server.ts";
import {
  agentPods,
  agentsScheduled,
  ciliumReady,
  type GateContext,
  imageIsVersion,
  operatorAvailable,
  restartUnmanagedPods,
} from "./readiness.ts";

type Json = Record<string, unknown>;

describe("the gates' conditions", () => {
  const ds = (generation: number, observed: number, desired: number, updated: number) => ({
    metadata: { generation },
    status: {
      observedGeneration: observed,
      desiredNumberScheduled: desired,
      updatedNumberScheduled: updated,
      numberReady: 0,
    },
  });

  it("agents scheduled: the DaemonSet observed its newest generation and made a Pod of it on every node; readiness not needed", () => {
    expect(agentsScheduled(ds(2, 2, 3, 3))).toBe(3);
    // the status still describes the old template (a kept cluster re-installed): not yet
    expect(agentsScheduled(ds(3, 2, 3, 3))).toBeNull();
    expect(agentsScheduled(ds(2, 2, 3, 2))).toBeNull();
    expect(agentsScheduled(ds(1, 1, 0, 0))).toBeNull();
  });

  it("operator available at its newest generation, with no old replica left", () => {
    const dep = (g: number, o: number, r: number, u: number, a: number) => ({
      metadata: { generation: g },
      status: { observedGeneration: o, replicas: r, updatedReplicas: u, availableReplicas: a },
    });
    expect(operatorAvailable(dep(2, 2, 1, 1, 1))).toBe(true);
    expect(operatorAvailable(dep(3, 2, 1, 1, 1))).toBe(false);
    expect(operatorAvailable(dep(2, 2, 2, 1, 1))).toBe(false);
    expect(operatorAvailable(dep(2, 2, 1, 1, 0))).toBe(false);
  });

  it("an agent image of the expected version: tag, digest, the lab's -src tag; never another patch", () => {
    expect(imageIsVersion("quay.io/cilium/cilium:v1.20.1@sha256:abc", "1.20.1")).toBe(true);
    expect(imageIsVersion("localhost/lab/cilium:v1.19.7-src", "1.19.7")).toBe(true);
    expect(imageIsVersion("quay.io/cilium/cilium:v1.20.10", "1.20.1")).toBe(false);
    expect(imageIsVersion("quay.io/cilium/cilium:v1.19.6", "1.19.7")).toBe(false);
  });

  it("agent Pods: those being deleted do not count; running means the cilium-agent container runs", () => {
    const ps = agentPods({
      items: [
        agent("cilium-a", "n1", "v1.19.7", true),
        {
          ...agent("cilium-old", "n2", "v1.19.6", true),
          metadata: { name: "cilium-old", deletionTimestamp: "x" },
        },
        agent("cilium-b", "n2", "v1.19.7", false),
      ],
    });
    expect(ps.map((p) => [p.pod, p.node, p.running])).toEqual([
      ["cilium-a", "n1", true],
      ["cilium-b", "n2", false],
    ]);
  });
});

/** An agent Pod as the API serves it (trimmed to what the gates read), WRITTEN BY US. */
function agent(
  name: string,
  node: string,
  tag: string,
  running: boolean,
  startTime = "2026-12-03T10:00:00Z",
): Json {
  return {
    metadata: { name, namespace: "kube-system", labels: { "k8s-app": "cilium" } },
    spec: {
      nodeName: node,
      containers: [{ name: "cilium-agent", image: `localhost/lab/cilium:${tag}-src` }],
    },
    status: {
      phase: running ? "Running" : "Pending",
      startTime,
      containerStatuses: [
        {
          name: "cilium-agent",
          ready: false,
          state: running ? { running: { startedAt: startTime } } : { waiting: { reason: "PodInitializing" } },
        },
      ],
    },
  };
}

const fake = new FakeApiServer();
beforeAll(() => fake.start());
afterAll(() => fake.stop());
beforeEach(() => fake.reset());
const saved = process.env.READY_DEADLINE_S;
afterEach(() => {
  if (saved === undefined) delete process.env.READY_DEADLINE_S;
  else process.env.READY_DEADLINE_S = saved;
});

const NODES = ["n1", "n2", "n3"];
const P = {
  nodes: "/api/v1/nodes",
  ds: "/apis/apps/v1/namespaces/kube-system/daemonsets",
  dep: "/apis/apps/v1/namespaces/kube-system/deployments",
  pods: "/api/v1/namespaces/kube-system/pods",
  svc: "/api/v1/namespaces/kube-system/services",
};
const node = (name: string, ready: boolean) => ({
  metadata: { name },
  status: { conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
});
const daemonset = (updated: number) => ({
  metadata: { name: "cilium", namespace: "kube-system", generation: 1 },
  status: {
    observedGeneration: 1,
    desiredNumberScheduled: 3,
    updatedNumberScheduled: updated,
    numberReady: 0,
  },
});
const operator = (available: number) => ({
  metadata: { name: "cilium-operator", namespace: "kube-system", generation: 1 },
  status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: available },
});

/** The cluster before Cilium has started: nodes NotReady, the DaemonSet's Pods not made yet. */
function notStarted(): void {
  for (const n of NODES) fake.put(P.nodes, node(n, false));
  fake.put(P.ds, daemonset(0));
  fake.put(P.dep, operator(0));
  fake.put(P.svc, {
    metadata: { name: "kube-dns", namespace: "kube-system" },
    spec: { clusterIP: "10.96.0.10" },
  });
}

/** Every namespace's Pods, as `kubectl get pods -A -o json` answers (none unless a test puts some). */
let allPods: unknown[] = [];
const deleted = new Set<unknown>();
const gone = new Set<unknown>();

/** Agents scripted: `status --brief` OK from okAt[node] on (ms since the epoch), kube-dns in their lists. */
function gates(okAt: Record<string, number>, lines: string[] = []) {
  const calls: string[] = [];
  const api = new ApiExecutor(kubeConfigHttp(loadKubeConfig("fake", fake.kubeconfig)));
  const exec: Executor = {
    run: async (req: ExecRequest): Promise<ExecResult> => {
      if (req.target.kind === "api") return api.run(req);
      if (req.target.kind === "kubectl") {
        calls.push(`kubectl ${req.argv.join(" ")}`);
        if (req.argv[0] === "get") {
          const list = JSON.stringify({ items: allPods });
          // a deleted Pod is listed once more after its deletion (terminating), then gone
          allPods = allPods.filter((p) => !gone.has(p));
          for (const p of allPods) if (deleted.has(p)) gone.add(p);
          return { stdout: list, stderr: "", exitCode: 0, durationMs: 1 };
        }
        const [, ns, , , name] = req.argv;
        for (const p of allPods) {
          const m = (p as { metadata: { namespace: string; name: string } }).metadata;
          if (m.namespace === ns && m.name === name) {
            deleted.add(p);
            // its sandbox came up between the list and the deletion: it terminates with an address
            if (name === "coredns-a") (p as { status: { podIP?: string } }).status.podIP = "10.244.0.9";
          }
        }
        return { stdout: "", stderr: "", exitCode: 0, durationMs: 1 };
      }
      if (req.target.kind !== "agent") throw new Error(`scripted agents: ${req.target.kind}`);
      calls.push(`${req.target.node} ${req.argv.join(" ")}`);
      const ok = Date.now() >= (okAt[req.target.node] ?? Number.POSITIVE_INFINITY);
      if (req.argv.join(" ") === "cilium-dbg status --brief")
        return ok
          ? { stdout: "OK\n", stderr: "", exitCode: 0, durationMs: 1 }
          : { stdout: "", stderr: "Error: unable to reach agent\n", exitCode: 1, durationMs: 1 };
      return {
        stdout: JSON.stringify([
          {
            spec: {
              id: 1,
              "frontend-address": { ip: "10.96.0.10", port: 53, protocol: "UDP", scope: "external" },
              flags: { type: "ClusterIP" },
              "backend-addresses": [{ ip: "10.244.0.5", port: 53, state: "active" }],
            },
          },
        ]),
        stderr: "",
        exitCode: 0,
        durationMs: 1,
      };
    },
  };
  const g: GateContext = {
    exec,
    log: (l) => lines.push(l),
    // the agents are asked every second on a cluster; here every 20 ms
    sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 20))),
  };
  return { g, calls };
}

describe("ciliumReady against a fake API server", () => {
  it("each gate reacts to what it waits for; the agents' own start runs from each Pod's start to its first OK", async () => {
    notStarted();
    const t0 = Date.now();
    const start = new Date(t0 - 5000).toISOString().replace(/\.\d+Z$/, "Z");
    const okAt = { n1: t0 + 200, n2: t0 + 250, n3: t0 + 300 };
    // the controller makes the Pods, they start, the CNI config makes the nodes Ready, the operator comes up: one
    // step after the other, each timer set by the step before. Three timers of 50, 100 and 150 ms set at once do
    // not always fire in that order: when the loop was blocked past them (a loaded full run), Node ran them by
    // the lists their durations share with other files' timers, and the Pods' start ran before their creation,
    // which then put them back to PodInitializing for good (the fake API server's request log showed it)
    const steps = [
      () => {
        fake.put(P.ds, daemonset(3));
        for (const [i, n] of NODES.entries())
          fake.put(P.pods, agent(`cilium-${i}`, n, "v1.19.7", false, start));
      },
      () => {
        for (const [i, n] of NODES.entries())
          fake.put(P.pods, agent(`cilium-${i}`, n, "v1.19.7", true, start));
      },
      () => {
        for (const n of NODES) fake.put(P.nodes, node(n, true));
        fake.put(P.dep, operator(1));
      },
    ];
    const next = () => {
      const step = steps.shift();
      if (!step) return;
      step();
      setTimeout(next, 50);
    };
    setTimeout(next, 50);
    // a gate that stalls ends at a deadline of its own, naming what it waited for and its last observation,
    // before the test's 20 s (it once stalled past them under a loaded full run, saying nothing)
    process.env.READY_DEADLINE_S = "12";
    const lines: string[] = [];
    const { g } = gates(okAt, lines);
    const r = await ciliumReady(g, "1.19.7").catch((err: unknown) => {
      throw new Error(
        `${err instanceof Error ? err.message : String(err)}\nthe gates said:\n${lines.join("\n")}\nthe fake API server was asked:\n${fake.requests.join("\n")}`,
      );
    });
    const returned = Date.now();
    expect(r.nodes).toEqual(NODES);
    expect(Object.keys(r.agents)).toEqual(NODES);
    const n3 = r.agents.n3;
    expect(n3?.pod).toBe("cilium-2");
    expect(n3?.podStart).toBe(start);
    // its first OK came once the agent answered OK and before the gate returned (not a bound in ms: on a
    // busy machine the gates before it may take seconds), its Pod started 5 s (to the second) before t0
    const firstOk = Date.parse(n3?.firstOk ?? "");
    expect(firstOk).toBeGreaterThanOrEqual(okAt.n3);
    expect(firstOk).toBeLessThanOrEqual(returned);
    expect(n3?.seconds).toBe(Math.round((firstOk - Date.parse(start)) / 100) / 10);
    expect(r.agentsOwnStartMax).toBe(Math.max(...Object.values(r.agents).map((a) => a.seconds ?? 0)));
    // watches, not polls: a handful of API requests in all
    expect(fake.requests.length).toBeLessThan(15);
  });

  it("an agent still running the old version keeps the gate waiting; the deadline error names it", async () => {
    process.env.READY_DEADLINE_S = "0.4";
    notStarted();
    fake.put(P.ds, daemonset(3));
    for (const n of NODES) fake.put(P.nodes, node(n, true));
    fake.put(P.dep, operator(1));
    fake.put(P.pods, agent("cilium-a", "n1", "v1.19.7", true));
    fake.put(P.pods, agent("cilium-b", "n2", "v1.19.6", true));
    fake.put(P.pods, {
      ...F.initCrashLoop,
      metadata: { ...F.initCrashLoop.metadata, labels: { "k8s-app": "cilium" } },
    });
    const lines: string[] = [];
    const { g } = gates({}, lines);
    await expect(ciliumReady(g, "1.19.7")).rejects.toThrow(
      /^timed out after 0 s waiting for 3 cilium agents running Cilium 1\.19\.7; last observation: 1\/3 running Cilium 1\.19\.7; cilium-b: image localhost\/lab\/cilium:v1\.19\.6-src, not Cilium 1\.19\.7; cilium-x7k2p: Pending, init container mount-cgroup CrashLoopBackOff/,
    );
  });

  it("a gate that fails stops the others, and its failure is the one reported", async () => {
    process.env.READY_DEADLINE_S = "0.3";
    notStarted();
    // agents and operator up at once; the nodes never become Ready
    fake.put(P.ds, daemonset(3));
    fake.put(P.dep, operator(1));
    for (const [i, n] of NODES.entries()) fake.put(P.pods, agent(`cilium-${i}`, n, "v1.19.7", true));
    const { g, calls } = gates({});
    await expect(ciliumReady(g, "1.19.7")).rejects.toThrow(
      /^timed out after 0 s waiting for every node Ready .*last observation: n1=NotReady, n2=NotReady, n3=NotReady$/,
    );
    // the agents' gate (never OK here) was stopped with it: no agent is asked after the failure
    const asked = calls.length;
    await new Promise((r) => setTimeout(r, 150));
    expect(calls.length).toBe(asked);
  });
});

describe("restartUnmanagedPods (Cilium's 'restart unmanaged Pods' after install)", () => {
  it("deletes the Pods still waiting for a network that a controller brings back, and no other", async () => {
    // every namespace's Pods as the API server lists them right after the agents came up (WRITTEN BY US)
    const pod = (
      ns: string,
      name: string,
      extra: { ip?: string; phase: string; host?: boolean; owned?: boolean },
    ) => ({
      metadata: {
        name,
        namespace: ns,
        ...(extra.owned === false ? {} : { ownerReferences: [{ kind: "ReplicaSet", name: `${name}-rs` }] }),
      },
      spec: extra.host ? { hostNetwork: true } : {},
      status: { phase: extra.phase, ...(extra.ip ? { podIP: extra.ip } : {}) },
    });
    allPods = [];
    for (const p of [
      pod("kube-system", "coredns-a", { phase: "Pending" }),
      pod("kube-system", "coredns-b", { phase: "Running", ip: "10.244.0.7" }),
      pod("kube-system", "cilium-envoy-x", { phase: "Pending", host: true }),
      pod("local-path-storage", "local-path-provisioner-c", { phase: "Pending" }),
      pod("default", "bare", { phase: "Pending", owned: false }),
    ])
      allPods.push(p);
    const lines: string[] = [];
    const { g, calls } = gates({}, lines);
    // it waits until the deleted Pods are gone, and names the address one got meanwhile (the kube-dns gate waits
    // for the agents to drop it)
    expect(await restartUnmanagedPods(g)).toEqual({
      names: ["kube-system/coredns-a", "local-path-storage/local-path-provisioner-c"],
      ips: ["10.244.0.9"],
    });
    allPods = [];
    expect(calls.slice(0, 3)).toEqual([
      "kubectl get pods -A -o json",
      "kubectl -n kube-system delete pod coredns-a --grace-period=0 --force --wait=false",
      "kubectl -n local-path-storage delete pod local-path-provisioner-c --grace-period=0 --force --wait=false",
    ]);
    expect(calls.slice(3).every((c) => c === "kubectl get pods -A -o json")).toBe(true);
    expect(lines.join("\n")).toMatch(/restarted 2 Pod\(s\) still waiting for a network/);
  });
});
