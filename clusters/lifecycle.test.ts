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
import { type Host, provision } from "./lifecycle.ts";

const ok = (stdout = ""): ExecResult => ({ stdout, stderr: "", exitCode: 0, durationMs: 1 });
const json = (v: unknown) => ok(JSON.stringify(v));

function fakeHost(opts: { helmFails?: boolean; existing?: string[]; missingImages?: string[] } = {}) {
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
      if (cmd.startsWith("kind create cluster") || cmd.startsWith("kind delete cluster")) return ok();
      if (cmd.startsWith("helm upgrade --install cilium")) {
        return opts.helmFails
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
  let leaseHolder: string | null = null;
  const clusterExec: Executor = {
    run: async (req: ExecRequest) => {
      const cmd = `${req.target.kind} ${req.argv.join(" ")}`;
      cluster.push(cmd);
      if (cmd === "kubectl -n kube-system get daemonset cilium -o json")
        return json({
          metadata: { generation: 1 },
          status: {
            observedGeneration: 1,
            desiredNumberScheduled: 3,
            numberReady: 3,
            numberAvailable: 3,
            updatedNumberScheduled: 3,
          },
        });
      if (cmd === "kubectl -n kube-system get deployment cilium-operator -o json")
        return json({
          metadata: { generation: 1 },
          status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1 },
        });
      if (cmd === "kubectl get nodes -o json") {
        return json({
          items: ["cdc-kpr-control-plane", "cdc-kpr-worker", "cdc-kpr-worker2"].map((name) => ({
            metadata: { name },
            status: {
              conditions: [{ type: "Ready", status: "True" }],
              nodeInfo: { kernelVersion: "6.17.0-1018-azure", kubeletVersion: "v1.35.0" },
            },
          })),
        });
      }
      if (cmd === "kubectl -n kube-system get service kube-dns -o json")
        return json({ spec: { clusterIP: "10.96.0.10" } });
      if (cmd === "kubectl -n default get lease cilium-datapath-conformance -o json")
        return leaseHolder
          ? json({ spec: { holderIdentity: leaseHolder } })
          : { stdout: "", stderr: "NotFound", exitCode: 1, durationMs: 1 };
      if (cmd === "kubectl create -f -") {
        leaseHolder = (JSON.parse(req.stdin ?? "{}") as { spec: { holderIdentity: string } }).spec
          .holderIdentity;
        return ok();
      }
      if (cmd.startsWith("kubectl -n default delete lease")) {
        leaseHolder = null;
        return ok();
      }
      if (cmd === "agent cilium-dbg status --brief") return ok("OK\n");
      if (cmd === "agent cilium-dbg status")
        return ok(
          "KubeProxyReplacement:    True   [eth0    172.18.0.3 (Direct Routing)]\nCilium:                  Ok   1.20.1 (v1.20.1-abc)\nAttach Mode:             TCX\n",
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
  };
  const host: Host = { exec, cluster: () => clusterExec, sleep: async () => {}, outside: async () => null };
  return { host, local, cluster };
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
    const meta = JSON.parse(readFileSync(join(results, "r1", "kpr", "bundle.json"), "utf8"));
    expect(meta).toMatchObject({
      mode: "kpr",
      cilium: "1.20.1",
      kernel: "6.17.0-1018-azure",
      kubernetes: "v1.35.0",
      attachMode: "TCX",
      origin: "recorded",
    });
    expect(Object.keys(meta.phases)).toEqual(["create cluster", "install Cilium", "Cilium ready"]);
    expect(existsSync(join(results, "r1", "kpr", "cilium-values.yaml"))).toBe(true);
    await p.teardown();
    expect(f.cluster.at(-1)).toContain("delete lease");
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
    const missing = fakeHost({ missingImages: ["quay.io/cilium/cilium:v1.20.1"] });
    await expect(provision({ ...options("r5"), preload: true }, missing.host)).rejects.toThrow(
      /^PRELOAD_IMAGES=1: docker has no quay.io\/cilium\/cilium:v1.20.1; pull them first/,
    );
    expect(missing.local.some((c) => c.startsWith("kind create cluster"))).toBe(false);
    const f = fakeHost();
    const p = await provision({ ...options("r6"), preload: true }, f.host);
    const order = f.local
      .filter((c) => /^(kind create|kind load|helm upgrade)/.test(c))
      .map((c) => c.slice(0, 11));
    expect(order).toEqual(["kind create", "kind load d", "helm upgrad"]);
    expect(f.local.find((c) => c.startsWith("kind load"))).toContain(
      "quay.io/cilium/operator-generic:v1.20.1",
    );
    await p.teardown();
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

describe("provisioning an existing cluster", () => {
  function existingHost(opts: { namespaceFails?: boolean }) {
    const local: { cmd: string; stdin?: string }[] = [];
    let leaseHolder: string | null = null;
    const lease: Executor = {
      run: async (req) => {
        const cmd = req.argv.join(" ");
        if (cmd === "create -f -") {
          leaseHolder = (JSON.parse(req.stdin ?? "{}") as { spec: { holderIdentity: string } }).spec
            .holderIdentity;
          return ok();
        }
        if (cmd.includes("get lease"))
          return leaseHolder
            ? json({ spec: { holderIdentity: leaseHolder } })
            : { stdout: "", stderr: "NotFound", exitCode: 1, durationMs: 1 };
        if (cmd.includes("delete lease")) {
          leaseHolder = null;
          return ok();
        }
        throw new Error(`fake lease: ${cmd}`);
      },
    };
    const exec: Executor = {
      run: async (req) => {
        const cmd = req.argv.join(" ");
        local.push({ cmd, ...(req.stdin !== undefined ? { stdin: req.stdin } : {}) });
        if (cmd === "kubectl --context ctx create -f -" && opts.namespaceFails)
          return { stdout: "", stderr: 'namespaces "x" is forbidden', exitCode: 1, durationMs: 1 };
        if (cmd === "kubectl --context ctx create -f -") return ok();
        if (cmd.startsWith("kubectl --context ctx get nodes")) return json({ items: [] });
        if (cmd.startsWith("kubectl --context ctx -n kube-system get pods")) return json({ items: [] });
        if (cmd.startsWith("kubectl --context ctx delete namespace")) return ok();
        throw new Error(`fake host: ${cmd}`);
      },
    };
    const host: Host = { exec, cluster: () => lease, sleep: async () => {}, outside: async () => null };
    return { host, local, holder: () => leaseHolder };
  }
  const existing = (runId: string) => ({ ...options(runId), provider: "existing" as const, context: "ctx" });

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
    expect(f.local.at(-1)?.cmd).toBe(
      "kubectl --context ctx delete namespace cca-dp-run-kpr-1-20 --wait=false",
    );
    expect(f.holder()).toBeNull();
  });

  it("a namespace that cannot be created leaves no Lease behind", async () => {
    process.env.CONFORMANCE_EXISTING_OK = "1";
    const f = existingHost({ namespaceFails: true });
    await expect(provision(existing("r2"), f.host)).rejects.toThrow("forbidden");
    expect(f.holder()).toBeNull();
  });
});
