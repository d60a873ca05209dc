// One file over 450 lines: provisioning's phases, gates and teardown tested against one in-memory host
/**
 * Provisioning orchestration with a host WRITTEN BY US for the test: local commands and the cluster are
 * answered in memory, so the order of phases, the readiness gates, the evidence written and — above all —
 * teardown on failure are checked without a cluster.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ExecRequest, ExecResult, Executor } from "../helpers/exec/types.ts";
import * as PODS from "../helpers/observe/pod-status.fixtures.ts";
import type { Host } from "./host.ts";
import { Interrupted } from "./interrupt.ts";
import { provision } from "./lifecycle.ts";

const ok = (stdout = ""): ExecResult => ({ stdout, stderr: "", exitCode: 0, durationMs: 1 });
const json = (v: unknown) => ok(JSON.stringify(v));

/**
 * The cluster's API as the gates read it, WRITTEN BY US: Cilium 1.20.2 started on three nodes. A watch keeps the
 * api target's contract (helpers/exec/api.ts): the answer when its condition holds, else exit 1 at its deadline.
 */
function apiAnswer(req: ExecRequest): ExecResult | null {
  if (req.target.kind !== "api") return null;
  const [verb, resource, name] = req.argv;
  const nodes = ["cdc-kpr-control-plane", "cdc-kpr-worker", "cdc-kpr-worker2"];
  const answers: Record<string, unknown> = {
    nodes: {
      items: nodes.map((n) => ({
        metadata: { name: n },
        status: {
          conditions: [{ type: "Ready", status: "True" }],
          nodeInfo: { kernelVersion: "6.17.0-1018-azure", kubeletVersion: "v1.35.0" },
        },
      })),
    },
    daemonset: {
      metadata: { name: "cilium", generation: 1 },
      status: { observedGeneration: 1, desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberReady: 0 },
    },
    deployment: {
      metadata: { name: "cilium-operator", generation: 1 },
      status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1 },
    },
    pods: {
      items: nodes.map((n, i) => ({
        metadata: { name: `cilium-${i}` },
        spec: {
          nodeName: n,
          containers: [{ name: "cilium-agent", image: "quay.io/cilium/cilium:v1.20.2@sha256:x" }],
        },
        status: {
          phase: "Running",
          startTime: new Date(Date.now() - 30_000).toISOString(),
          containerStatuses: [{ name: "cilium-agent", state: { running: {} } }],
        },
      })),
    },
    service: { metadata: { name }, spec: { clusterIP: "10.96.0.10" } },
  };
  const answer = answers[resource ?? ""];
  if (answer === undefined) throw new Error(`fake cluster: api ${req.argv.join(" ")}`);
  if (verb === "watch" && req.watch && !req.watch.until(answer))
    return {
      stdout: JSON.stringify(answer),
      stderr: "timed out after 300 s waiting for it\n",
      exitCode: 1,
      durationMs: 1,
    };
  return json(answer);
}

function fakeHost(
  opts: {
    helmFails?: boolean;
    existing?: string[];
    missingImages?: string[];
    /** another run holds the Lease (live) */
    leaseHeldBy?: string;
    /** kind create fails as when another run created the same cluster at the same moment */
    createRaces?: boolean;
    /** called at each sleep (a fake clock's tick) */
    onSleep?: () => void;
    /** each `kind create cluster` takes this long (ms, a real timer) */
    createMs?: number;
    /** helm fails for this context only */
    helmFailsFor?: string;
  } = {},
) {
  let exporting = 0;
  let mostExporting = 0;
  let creating = 0;
  let mostCreating = 0;
  /** the configuration each `kind create cluster` read: its path and text at that moment */
  const kindConfigs: { path: string; text: string }[] = [];
  const local: string[] = [];
  const cluster: string[] = [];
  const exec: Executor = {
    run: async (req: ExecRequest) => {
      const cmd = req.argv.join(" ");
      local.push(cmd);
      if (cmd.startsWith("docker info")) return ok("28.2.2\n");
      if (cmd.startsWith("docker image inspect "))
        return (opts.missingImages ?? []).includes(req.argv[3] ?? "")
          ? { stdout: "", stderr: "No such image", exitCode: 1, durationMs: 1 }
          : ok("[]");
      if (cmd.startsWith("kind load docker-image")) return ok();
      if (cmd === "kind get clusters") return ok(`${(opts.existing ?? []).join("\n")}\n`);
      if (cmd.startsWith("kind create cluster") && opts.createRaces)
        return {
          stdout: "",
          stderr:
            'ERROR: failed to create cluster: node(s) already exist for a cluster with the name "cdc-kpr"\n',
          exitCode: 1,
          durationMs: 1,
        };
      if (cmd.startsWith("kind create cluster")) {
        const path = req.argv[req.argv.indexOf("--config") + 1] ?? "";
        kindConfigs.push({ path, text: readFileSync(path, "utf8") });
        mostCreating = Math.max(mostCreating, ++creating);
        if (opts.createMs) await new Promise((r) => setTimeout(r, opts.createMs));
        creating--;
        return ok();
      }
      if (cmd.startsWith("kind delete cluster")) return ok();
      if (cmd.startsWith("kind export kubeconfig")) {
        mostExporting = Math.max(mostExporting, ++exporting);
        await new Promise((r) => setTimeout(r, 20));
        exporting--;
        return ok();
      }
      if (cmd.startsWith("helm upgrade --install cilium")) {
        return opts.helmFails || (opts.helmFailsFor && cmd.includes(`--kube-context ${opts.helmFailsFor} `))
          ? {
              stdout: "",
              stderr: "Error: INSTALLATION FAILED: context deadline exceeded\n",
              exitCode: 1,
              durationMs: 1,
            }
          : ok();
      }
      throw new Error(`fake host: ${cmd}`);
    },
  };
  const holders = new Map<string, string | null>();
  const clusterFor = (context: string): Executor => ({
    run: async (req: ExecRequest) => {
      let leaseHolder = holders.has(context) ? (holders.get(context) ?? null) : (opts.leaseHeldBy ?? null);
      const take = (h: string | null) => {
        leaseHolder = h;
        holders.set(context, h);
      };
      const cmd = `${req.target.kind} ${req.argv.join(" ")}`;
      cluster.push(cmd);
      const api = apiAnswer(req);
      if (api) return api;
      if (cmd === "kubectl -n default get lease cilium-datapath-conformance -o json")
        return leaseHolder
          ? json({
              spec: {
                holderIdentity: leaseHolder,
                renewTime: new Date().toISOString(),
                leaseDurationSeconds: 600,
              },
            })
          : { stdout: "", stderr: "NotFound", exitCode: 1, durationMs: 1 };
      if (cmd === "kubectl create -f -" && leaseHolder)
        return { stdout: "", stderr: "Error from server (AlreadyExists)", exitCode: 1, durationMs: 1 };
      if (cmd === "kubectl create -f -") {
        take((JSON.parse(req.stdin ?? "{}") as { spec: { holderIdentity: string } }).spec.holderIdentity);
        return ok();
      }
      if (cmd.startsWith("kubectl delete --raw /apis/coordination.k8s.io/v1/namespaces/default/leases/")) {
        take(null);
        return ok();
      }
      // the gates' restart of Pods still waiting for a network: none here
      if (cmd === "kubectl get pods -A -o json") return json({ items: [] });
      // CoreDNS's readiness probe every second (coredns.ts)
      if (cmd.startsWith("kubectl -n kube-system patch deployment coredns --type=json")) return ok();
      if (cmd === "agent cilium-dbg status --brief") return ok("OK\n");
      if (cmd === "agent cilium-dbg status")
        return ok(
          "KubeProxyReplacement:    True   [eth0    172.18.0.3 (Direct Routing)]\nCilium:                  Ok   1.20.2 (v1.20.2-abc)\nAttach Mode:             TCX\n",
        );
      if (cmd === "agent cilium-dbg service list -o json") {
        return json([
          {
            spec: {
              id: 2,
              "frontend-address": { ip: "10.96.0.10", port: 53, protocol: "UDP", scope: "external" },
              flags: { type: "ClusterIP" },
              "backend-addresses": [{ ip: "10.244.0.5", port: 53, state: "active" }],
            },
          },
        ]);
      }
      throw new Error(`fake cluster: ${cmd}`);
    },
  });
  const host: Host = {
    exec,
    cluster: (context) => clusterFor(context),
    sleep: async () => opts.onSleep?.(),
    outside: async () => null,
  };
  return {
    host,
    local,
    cluster,
    mostExporting: () => mostExporting,
    mostCreating: () => mostCreating,
    kindConfigs,
    holders,
  };
}

const bin = mkdtempSync(join(tmpdir(), "dpc-lifecycle-bin-"));
const results = mkdtempSync(join(tmpdir(), "dpc-lifecycle-results-"));
const path = process.env.PATH;
beforeAll(() => {
  for (const b of ["docker", "kind", "helm", "kubectl"]) {
    writeFileSync(join(bin, b), "#!/bin/sh\nexit 0\n");
    chmodSync(join(bin, b), 0o755);
  }
  process.env.PATH = `${bin}:${path}`;
});
afterEach(() => {
  process.env.PATH = `${bin}:${path}`;
});
afterAll(() => {
  process.env.PATH = path;
  rmSync(bin, { recursive: true, force: true });
  rmSync(results, { recursive: true, force: true });
});

const options = (runId: string, keep = false) => ({
  provider: "kind" as const,
  modes: ["kpr" as const],
  runId,
  resultsDir: results,
  keep,
  preload: false,
  log: () => {},
});

describe("provisioning kind", () => {
  it("creates, installs, passes the gates, takes the Lease, writes bundle.json; teardown deletes the cluster", async () => {
    const f = fakeHost();
    const p = await provision(options("r1"), f.host);
    expect(f.local.slice(0, 4).map((c) => c.split(" ").slice(0, 3).join(" "))).toEqual([
      "docker info --format",
      "kind get clusters",
      "kind create cluster",
      "helm upgrade --install",
    ]);
    expect(p.targets).toEqual([
      expect.objectContaining({
        mode: "kpr",
        ciliumMinor: "1.20",
        context: "kind-cdc-kpr",
        nodeShell: "docker",
      }),
    ]);
    expect(f.cluster).toContain("agent cilium-dbg status --brief");
    // kind read its configuration from a folder of its own; the bundle keeps the same text (no lab store here)
    const [read] = f.kindConfigs;
    expect(read?.path.startsWith(join(results, "r1"))).toBe(false);
    expect(readFileSync(join(results, "r1", "kpr", "kind-config.yaml"), "utf8")).toBe(read?.text);
    const meta = JSON.parse(readFileSync(join(results, "r1", "kpr", "bundle.json"), "utf8"));
    expect(meta).toMatchObject({
      mode: "kpr",
      cilium: "1.20.2",
      kernel: "6.17.0-1018-azure",
      kubernetes: "v1.35.0",
      attachMode: "TCX",
      origin: "recorded",
    });
    expect(Object.keys(meta.phases)).toEqual([
      "create cluster",
      "install Cilium",
      "Cilium ready",
      "agents' own start (max)",
      "drop baseline",
    ]);
    // each agent's Pod started 30 s before its first OK here
    expect(meta.phases["agents' own start (max)"]).toBeGreaterThanOrEqual(30);
    expect(meta.phases["agents' own start (max)"]).toBeLessThan(32);
    expect(Object.keys(meta.agentStarts)).toEqual([
      "cdc-kpr-control-plane",
      "cdc-kpr-worker",
      "cdc-kpr-worker2",
    ]);
    expect(existsSync(join(results, "r1", "kpr", "cilium-values.yaml"))).toBe(true);
    await p.teardown();
    expect(f.cluster.at(-1)).toContain(
      "delete --raw /apis/coordination.k8s.io/v1/namespaces/default/leases/",
    );
    expect(f.local.at(-1)).toBe("kind delete cluster --name cdc-kpr");
  });

  it("a failing helm install fails with the command's error, and the cluster is deleted anyway", async () => {
    const f = fakeHost({ helmFails: true });
    await expect(provision(options("r2"), f.host)).rejects.toThrow(
      /helm upgrade --install cilium .* exited 1: Error: INSTALLATION FAILED/,
    );
    expect(f.local.at(-1)).toBe("kind delete cluster --name cdc-kpr");
  });

  it("KEEP_CLUSTER: a kept cluster is reused by name and not deleted", async () => {
    const f = fakeHost({ existing: ["cdc-kpr"] });
    const p = await provision(options("r3", true), f.host);
    expect(f.local.some((c) => c.startsWith("kind create cluster"))).toBe(false);
    await p.teardown();
    expect(f.local.some((c) => c.startsWith("kind delete"))).toBe(false);
  });

  it("PRELOAD_IMAGES: a missing image fails before the cluster is created; present ones are loaded before the install", async () => {
    const missing = fakeHost({ missingImages: ["quay.io/cilium/cilium:v1.20.2"] });
    await expect(provision({ ...options("r5"), preload: true }, missing.host)).rejects.toThrow(
      /^PRELOAD_IMAGES=1: docker has no quay.io\/cilium\/cilium:v1.20.2; pull them first/,
    );
    expect(missing.local.some((c) => c.startsWith("kind create cluster"))).toBe(false);
    const f = fakeHost();
    const p = await provision({ ...options("r6"), preload: true }, f.host);
    const order = f.local
      .filter((c) => /^(kind create|kind load|helm upgrade)/.test(c))
      .map((c) => c.slice(0, 11));
    expect(order).toEqual(["kind create", "kind load d", "helm upgrad"]);
    expect(f.local.find((c) => c.startsWith("kind load"))).toContain(
      "quay.io/cilium/operator-generic:v1.20.2",
    );
    await p.teardown();
  });

  it("a Lease another run holds: the run stops before installing, naming the holder, and leaves that run's cluster", async () => {
    const lines: string[] = [];
    const f = fakeHost({ existing: ["cdc-kpr"], leaseHeldBy: "run-b" });
    await expect(provision({ ...options("r7"), log: (l) => lines.push(l) }, f.host)).rejects.toThrow(
      /^another run \(run-b\) holds Lease default\/cilium-datapath-conformance until/,
    );
    expect(f.local.some((c) => c.startsWith("helm"))).toBe(false);
    expect(f.local.some((c) => c.startsWith("kind delete"))).toBe(false);
    expect(lines).toContain(
      "not deleting cluster cdc-kpr: this run neither created it nor held its Lease (another run's)",
    );
  });

  it("two runs creating the same cluster at once: the one whose create lost does not delete the other's", async () => {
    const f = fakeHost({ createRaces: true });
    await expect(provision(options("r8"), f.host)).rejects.toThrow(/node\(s\) already exist/);
    expect(f.local.some((c) => c.startsWith("kind delete"))).toBe(false);
  });

  it("SIGINT while provisioning: the next step is interrupted, the cluster deleted and the Lease released", async () => {
    const ac = new AbortController();
    const f = fakeHost();
    const exec = f.host.exec;
    f.host.exec = {
      run: async (req) => {
        const r = await exec.run(req);
        // the signal arrives while helm installs Cilium
        if (req.argv[0] === "helm") ac.abort(new Interrupted("SIGINT"));
        return r;
      },
    };
    await expect(provision({ ...options("r9"), signal: ac.signal }, f.host)).rejects.toThrow(
      "interrupted by SIGINT: the run stops and tears down what it created",
    );
    expect(f.cluster.some((c) => c.startsWith("agent"))).toBe(false);
    expect(f.cluster.at(-1)).toContain("delete --raw");
    expect(f.local.at(-1)).toBe("kind delete cluster --name cdc-kpr");
  });

  it("KEEP_CLUSTER=1 says in one line which clusters it keeps and how to delete them", async () => {
    const lines: string[] = [];
    const f = fakeHost();
    const p = await provision({ ...options("r10", true), log: (l) => lines.push(l) }, f.host);
    await p.teardown();
    await p.teardown();
    expect(lines.filter((l) => l.startsWith("KEEP_CLUSTER=1"))).toEqual([
      "KEEP_CLUSTER=1: keeping cdc-kpr (context kind-cdc-kpr); the next run reuses them by name, delete with: kind delete cluster --name cdc-kpr",
    ]);
    expect(f.local.some((c) => c.startsWith("kind delete"))).toBe(false);
  });

  it("a missing prerequisite fails before anything runs", async () => {
    process.env.PATH = "/nonexistent";
    const f = fakeHost();
    await expect(provision(options("r4"), f.host)).rejects.toThrow(
      /^CLUSTER_PROVIDER=kind needs docker, kind, helm, kubectl on PATH/,
    );
    expect(f.local).toEqual([]);
  });
});

describe("provisioning both modes at once (MODES_CONCURRENT=1)", () => {
  const both = (runId: string, extra: Record<string, unknown> = {}) => ({
    ...options(runId),
    modes: ["kpr" as const, "kube-proxy" as const],
    concurrent: true,
    ...extra,
  });

  it("creates both clusters at once, each with its own kubeconfig, exported into yours one at a time; targets in mode order", async () => {
    const lines: string[] = [];
    const f = fakeHost({ createMs: 150 });
    const p = await provision(both("c1", { log: (l: string) => lines.push(l) }), f.host);
    // the two creates ran at once
    expect(f.mostCreating()).toBe(2);
    const creates = f.local.filter((c) => c.startsWith("kind create cluster"));
    expect(creates).toHaveLength(2);
    for (const c of creates) expect(c).toMatch(/ --kubeconfig \/\S+\/dpc-kind-kubeconfig-\w+\/config$/);
    expect(f.local.filter((c) => c.startsWith("kind export kubeconfig")).sort()).toEqual([
      "kind export kubeconfig --name cdc-kp",
      "kind export kubeconfig --name cdc-kpr",
    ]);
    expect(f.mostExporting()).toBe(1);
    expect(p.targets.map((t) => t.mode)).toEqual(["kpr", "kube-proxy"]);
    // every line says its mode
    expect(
      lines
        .filter((l) => l.includes("create cluster: "))
        .map((l) => l.slice(0, 20))
        .sort(),
    ).toEqual(["[kind] [kpr] create ", "[kind] [kube-proxy] "]);
    await p.teardown();
    expect(f.local.filter((c) => c.startsWith("kind delete")).sort()).toEqual([
      "kind delete cluster --name cdc-kp",
      "kind delete cluster --name cdc-kpr",
    ]);
    expect([...f.holders.values()]).toEqual([null, null]);
  });

  it("one mode failing stops the other; both clusters are deleted and both Leases released, and its failure is the one reported", async () => {
    const f = fakeHost({ helmFailsFor: "kind-cdc-kp" });
    await expect(provision(both("c2"), f.host)).rejects.toThrow(
      /helm upgrade --install cilium .*kind-cdc-kp .* exited 1: Error: INSTALLATION FAILED/,
    );
    expect(f.local.filter((c) => c.startsWith("kind delete")).sort()).toEqual([
      "kind delete cluster --name cdc-kp",
      "kind delete cluster --name cdc-kpr",
    ]);
    expect([...f.holders.values()]).toEqual([null, null]);
  });

  it("SIGINT while both are created: both creates end, both clusters are deleted, the run says it was interrupted", async () => {
    const ac = new AbortController();
    const f = fakeHost({ createMs: 100 });
    setTimeout(() => ac.abort(new Interrupted("SIGINT")), 30);
    await expect(provision(both("c3", { signal: ac.signal }), f.host)).rejects.toThrow(
      "interrupted by SIGINT: the run stops and tears down what it created",
    );
    expect(f.local.some((c) => c.startsWith("helm"))).toBe(false);
    expect(f.local.filter((c) => c.startsWith("kind delete")).sort()).toEqual([
      "kind delete cluster --name cdc-kp",
      "kind delete cluster --name cdc-kpr",
    ]);
  });

  it("without MODES_CONCURRENT the modes go one after the other, with kind writing your kubeconfig itself", async () => {
    const f = fakeHost({ createMs: 100 });
    const p = await provision({ ...both("c4"), concurrent: false }, f.host);
    expect(f.mostCreating()).toBe(1);
    expect(f.local.filter((c) => c.startsWith("kind create")).every((c) => !c.includes("--kubeconfig"))).toBe(
      true,
    );
    expect(f.local.some((c) => c.startsWith("kind export"))).toBe(false);
    await p.teardown();
  });
});

describe("provisioning an existing cluster", () => {
  // main's vitest shares one module graph per worker: what a test sets in process.env it puts back
  const existingOk = process.env.CONFORMANCE_EXISTING_OK;
  afterAll(() => {
    if (existingOk === undefined) delete process.env.CONFORMANCE_EXISTING_OK;
    else process.env.CONFORMANCE_EXISTING_OK = existingOk;
  });
  /**
   * An existing cluster answering kubectl and the agents (written by us). `shells` is what the node-shell Pods
   * look like; the namespace is Terminating for `terminatingPolls` reads after its deletion, then gone.
   */
  function existingHost(
    opts: {
      namespaceFails?: boolean;
      nodes?: string[];
      shells?: "running" | "image-pull-backoff";
      terminatingPolls?: number;
      identities?: unknown[];
    } = {},
  ) {
    const local: { cmd: string; stdin?: string }[] = [];
    let leaseHolder: string | null = null;
    let clock = 0;
    let nsDeleted = false;
    let terminating = opts.terminatingPolls ?? 0;
    const nodes = opts.nodes ?? [];
    const watched: string[] = [];
    const cluster: Executor = {
      run: async (req) => {
        const cmd = `${req.target.kind} ${req.argv.join(" ")}`;
        if (req.target.kind === "api") watched.push(cmd);
        if (cmd === "kubectl create -f -") {
          leaseHolder = (JSON.parse(req.stdin ?? "{}") as { spec: { holderIdentity: string } }).spec
            .holderIdentity;
          return ok();
        }
        if (cmd.includes("get lease"))
          return leaseHolder
            ? json({ metadata: { uid: "u1", resourceVersion: "1" }, spec: { holderIdentity: leaseHolder } })
            : { stdout: "", stderr: "Error from server (NotFound)", exitCode: 1, durationMs: 1 };
        if (cmd.startsWith("kubectl delete --raw")) {
          leaseHolder = null;
          return ok();
        }
        // the gates' restart of Pods still waiting for a network: none here
        if (cmd === "kubectl get pods -A -o json") return json({ items: [] });
        if (cmd.startsWith("kubectl -n kube-system patch deployment coredns --type=json")) return ok();
        if (cmd === "agent cilium-dbg status --brief") return ok("OK\n");
        if (req.target.kind === "api" && req.argv[0] === "watch" && req.watch) {
          // the api target's contract on a fake clock: every answer in turn until the condition holds, else
          // the last one at the deadline (exit 1), saying it still waits on the way
          const w = req.watch;
          const states = watchStates(req.argv);
          const deadline = clock + (req.timeoutMs ?? 0);
          for (let i = 0; ; i++) {
            const answer = states(i);
            if (w.until(answer)) return json(answer);
            if (clock >= deadline) {
              return {
                stdout: JSON.stringify(answer),
                stderr: `timed out after ${Math.round((req.timeoutMs ?? 0) / 1000)} s waiting for it\n`,
                exitCode: 1,
                durationMs: 1,
              };
            }
            if (i === 0) w.progress?.(`still waiting for ${req.argv.at(-1)} (0 s; last: ${w.show(answer)})`);
            clock += 2000;
          }
        }
        if (cmd === "api get nodes")
          return json({
            items: nodes.map((name) => ({
              metadata: { name },
              status: { nodeInfo: { kernelVersion: "6.8.0", kubeletVersion: "v1.35.5" } },
            })),
          });
        if (cmd === "agent cilium-dbg status")
          return ok(
            "KubeProxyReplacement:    True   [eth0 172.31.100.2]\nCilium:                  Ok   1.19.7 (v1.19.7-abc)\nAttach Mode:             TCX\nCluster health:          3/3 reachable\n",
          );
        if (cmd === "agent cilium-dbg metrics list -o json") return ok("[]");
        throw new Error(`fake cluster: ${cmd}`);
      },
    };
    /** What the cluster answers a watch with, the i-th time it changes. */
    const watchStates =
      (argv: string[]) =>
      (i: number): unknown => {
        if (argv[1] === "pods") return { items: nodes.map(shell) };
        if (argv[1] === "namespace")
          return nsDeleted && i >= terminating
            ? { kind: "NamespaceList", items: [] }
            : {
                status: {
                  phase: "Terminating",
                  conditions: [
                    {
                      type: "NamespaceContentRemaining",
                      status: "True",
                      message: "Some resources are remaining: pods. has 2 resource instances",
                    },
                  ],
                },
              };
        throw new Error(`fake cluster: api ${argv.join(" ")}`);
      };
    const shell = (node: string) => {
      const F = opts.shells === "image-pull-backoff" ? PODS.imagePullBackOff : PODS.ready;
      return { ...F, metadata: { ...F.metadata, name: `node-shell-${node}` } };
    };
    const exec: Executor = {
      run: async (req) => {
        const cmd = req.argv.join(" ");
        local.push({ cmd, ...(req.stdin !== undefined ? { stdin: req.stdin } : {}) });
        const k = "kubectl --context ctx";
        if (cmd === `${k} create -f -` && opts.namespaceFails)
          return { stdout: "", stderr: 'namespaces "x" is forbidden', exitCode: 1, durationMs: 1 };
        if (cmd === `${k} create -f -` || cmd === `${k} apply -f -`) return ok();
        if (cmd.startsWith(`${k} get nodes`))
          return json({ items: nodes.map((name) => ({ metadata: { name } })) });
        if (cmd.startsWith(`${k} -n kube-system get pods`))
          return json({ items: nodes.map((nodeName) => ({ spec: { nodeName } })) });
        if (/ -n cca-dp-[a-z0-9-]+ get pods -o json$/.test(cmd)) return json({ items: nodes.map(shell) });
        if (cmd.startsWith(`${k} delete namespace`)) {
          nsDeleted = true;
          return ok();
        }
        if (cmd.startsWith(`${k} get namespace `)) {
          if (nsDeleted && terminating-- <= 0)
            return {
              stdout: "",
              stderr: 'Error from server (NotFound): namespaces "x" not found',
              exitCode: 1,
              durationMs: 1,
            };
          return json({
            status: {
              phase: "Terminating",
              conditions: [
                {
                  type: "NamespaceContentRemaining",
                  status: "True",
                  message: "Some resources are remaining: pods. has 2 resource instances",
                },
              ],
            },
          });
        }
        if (cmd.startsWith(`${k} -n kube-system get configmap cilium-config`))
          return json({ data: { "identity-gc-interval": "15m0s", "identity-heartbeat-timeout": "30m0s" } });
        if (cmd.startsWith(`${k} get ciliumidentities.cilium.io`))
          return json({ items: opts.identities ?? [] });
        throw new Error(`fake host: ${cmd}`);
      },
    };
    const host: Host = {
      exec,
      cluster: () => cluster,
      sleep: async (ms) => {
        clock += ms;
      },
      now: () => clock,
      outside: async () => null,
    };
    return { host, local, watched, holder: () => leaseHolder };
  }
  const existing = (runId: string, log: (l: string) => void = () => {}) => ({
    ...options(runId),
    provider: "existing" as const,
    context: "ctx",
    log,
  });

  it("creates a DNS-1123 run namespace labelled privileged for Pod Security Admission; releases all on failure", async () => {
    process.env.CONFORMANCE_EXISTING_OK = "1";
    const f = existingHost({});
    await expect(provision(existing("run-KPR-1.20"), f.host)).rejects.toThrow(
      "no Linux node of this cluster runs a Cilium agent",
    );
    const ns = JSON.parse(f.local.find((c) => c.cmd.endsWith("create -f -"))?.stdin ?? "{}") as {
      metadata: { name: string; labels: Record<string, string> };
    };
    expect(ns.metadata.name).toBe("cca-dp-run-kpr-1-20");
    expect(ns.metadata.labels["pod-security.kubernetes.io/enforce"]).toBe("privileged");
    expect(f.local.map((c) => c.cmd)).toContain(
      "kubectl --context ctx delete namespace cca-dp-run-kpr-1-20 --wait=false --ignore-not-found",
    );
    expect(f.holder()).toBeNull();
  });

  it("a namespace that cannot be created leaves no Lease behind (and deletes nothing)", async () => {
    process.env.CONFORMANCE_EXISTING_OK = "1";
    const f = existingHost({ namespaceFails: true });
    await expect(provision(existing("r2"), f.host)).rejects.toThrow("forbidden");
    expect(f.holder()).toBeNull();
    expect(f.local.some((c) => c.cmd.includes("delete namespace"))).toBe(false);
  });

  it("node shells that cannot pull their image: the wait names ImagePullBackOff and the image; everything is removed", async () => {
    process.env.CONFORMANCE_EXISTING_OK = "1";
    const lines: string[] = [];
    const f = existingHost({ nodes: ["w1", "w2"], shells: "image-pull-backoff" });
    await expect(
      provision(
        existing("r3", (l) => lines.push(l)),
        f.host,
      ),
    ).rejects.toThrow(
      /^timed out after 180 s waiting for 2 node-shell Pods Running in cca-dp-r3; last observation: 0\/2 Running; node-shell-w1: Pending, container shell ImagePullBackOff \(image docker\.io\/nicolaka\/netshoot:v0\.13\): Back-off pulling image/,
    );
    expect(
      lines.some((l) => /still waiting .*node-shell-w2: Pending, container shell ImagePullBackOff/.test(l)),
    ).toBe(true);
    expect(f.holder()).toBeNull();
    expect(lines.at(-1)).toMatch(/^teardown of cca-dp-r3: namespace gone after 0 s, Lease released/);
  });

  it("teardown waits for the namespace to go, then reports what Cilium still owns and when it goes (teardown.json)", async () => {
    process.env.CONFORMANCE_EXISTING_OK = "1";
    const lines: string[] = [];
    const identity = (name: string) => ({
      metadata: {
        name,
        labels: { "io.kubernetes.pod.namespace": "cca-dp-r4" },
        creationTimestamp: "2026-12-02T10:00:00Z",
      },
    });
    const f = existingHost({
      nodes: ["w1", "w2"],
      shells: "running",
      terminatingPolls: 3,
      identities: [identity("4242"), identity("4343")],
    });
    const p = await provision(
      existing("r4", (l) => lines.push(l)),
      f.host,
    );
    expect(p.targets[0]).toMatchObject({ mode: "kpr", namespace: "cca-dp-r4", nodeShell: "pod" });
    expect(lines).toContain("mode kpr: the agents report KubeProxyReplacement True (Cilium 1.19.7)");
    const shell = JSON.parse(f.local.find((c) => c.cmd.endsWith("apply -f -"))?.stdin ?? "{}") as {
      metadata: { labels: Record<string, string> };
    };
    expect(shell.metadata.labels["app.kubernetes.io/component"]).toBe("node-shell");
    await p.teardown();
    await p.teardown();
    expect(f.local.filter((c) => c.cmd.includes("delete namespace"))).toHaveLength(1);
    // one watch until it was gone (three changes, two fake seconds apart), not a poll
    expect(f.watched.filter((c) => c === "api watch namespace cca-dp-r4 --until gone")).toHaveLength(1);
    expect(f.holder()).toBeNull();
    expect(lines.find((l) => l.startsWith("left to Cilium"))).toMatch(
      /^left to Cilium: 2 CiliumIdentity object\(s\) of cca-dp-r4's Pods \(4242, 4343\): collected by cilium-operator between \d\d:\d\d and \d\d:\d\d UTC \(identity GC every 15 min, heartbeat timeout 30 min, from cilium-config\)$/,
    );
    expect(lines.at(-1)).toMatch(/^teardown of cca-dp-r4: namespace gone after 6 s, Lease released/);
    const report = JSON.parse(readFileSync(join(results, "r4", "kpr", "teardown.json"), "utf8"));
    expect(report).toMatchObject({ namespace: "cca-dp-r4", namespaceGone: true, leaseReleased: true });
    expect(report.ciliumOwned.map((x: { name: string }) => x.name)).toEqual(["4242", "4343"]);
  });

  it("a namespace that does not go within its deadline is reported with what holds it", async () => {
    process.env.CONFORMANCE_EXISTING_OK = "1";
    const lines: string[] = [];
    const f = existingHost({ nodes: ["w1"], shells: "running", terminatingPolls: 10_000 });
    const p = await provision(
      existing("r5", (l) => lines.push(l)),
      f.host,
    );
    await p.teardown();
    expect(lines).toContain(
      "namespace cca-dp-r5 is not gone after 180 s: Terminating; NamespaceContentRemaining: Some resources are remaining: pods. has 2 resource instances",
    );
    expect(lines.at(-1)).toMatch(
      /^teardown of cca-dp-r5: namespace NOT gone after 180 s \(Terminating; NamespaceContentRemaining/,
    );
    expect(f.holder()).toBeNull();
  });
});
