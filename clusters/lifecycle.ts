import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { writeBaseline } from "../helpers/baseline.ts";
import { writeMeta } from "../helpers/bundle.ts";
import { UserError } from "../helpers/errors.ts";
import { ClusterExecutor } from "../helpers/exec/cluster.ts";
import { KubeExecutor } from "../helpers/exec/kube.ts";
import { LocalExecutor } from "../helpers/exec/local.ts";
import { type Executor, mustRun } from "../helpers/exec/types.ts";
import { realSleep, type UpgradePlan } from "../helpers/observe/context.ts";
import { parseStatus } from "../helpers/parse/status.ts";
import { pollUntil } from "../helpers/poll.ts";
import type { Mode } from "../helpers/properties/expectation.ts";
import { IMAGES } from "../manifests/images.ts";
import type { ClusterTarget } from "../suites/run-state.ts";
import { type Lab, labCilium, labEnabled, labPath, labProfile, readLab } from "./lab.ts";
import { acquireLease } from "./lease.ts";
import { checkBinaries, dockerReachable } from "./prereq.ts";
import {
  ciliumInstallArgv,
  kindCreateArgv,
  loadArgv,
  makeProfile,
  NODE_TOOLS_PREFIX,
  nodeToolsArgv,
  type Profile,
  type Provider,
  runNamespace,
  runNamespaceName,
} from "./profile.ts";
import { agentsOk, ciliumRolledOut, type GateContext, kubeDnsProgrammed, nodesReady } from "./readiness.ts";
import { resolveCilium } from "./versions.ts";

export interface ProvisionOptions {
  provider: Provider;
  modes: Mode[];
  cilium?: string;
  runId: string;
  resultsDir: string;
  keep: boolean;
  preload: boolean;
  log(line: string): void;
  /** existing only: the kubectl context (default: current). */
  context?: string;
  /** NO_BACKEND_RESPONSE=drop: the opt-in profile. */
  noBackendResponse?: "reject" | "drop";
  /** UPGRADE_TO: the next minor (or a patch of it) to upgrade to in the upgrade leg. */
  upgradeTo?: string;
  /** LAB_IMAGES=1: the offline lab's images (kind only); read from the environment when not given. */
  lab?: Lab;
}

/** Images to load (lab, or PRELOAD_IMAGES=1) that the local Docker lacks: one line saying how to get them. */
async function checkLoadImages(h: Host, p: Profile): Promise<void> {
  const wanted = [...(p.lab ? [p.lab.nodeImage] : []), ...(p.load ?? [])];
  const missing: string[] = [];
  for (const image of wanted) {
    const r = await h.exec.run({ target: { kind: "local" }, argv: ["docker", "image", "inspect", image] });
    if (r.exitCode !== 0) missing.push(image);
  }
  if (missing.length === 0) return;
  throw new UserError(
    p.lab
      ? `LAB_IMAGES=1: docker has no ${missing.join(", ")}; build them with: npx datapath-conformance lab images`
      : `PRELOAD_IMAGES=1: docker has no ${missing.join(", ")}; pull them first (docker pull ${missing.join(" && docker pull ")})`,
  );
}

/**
 * The upgrade leg: to the next minor (the path Cilium's upgrade guide and CI take, clusters.md §6), or to a
 * newer patch of the same minor (a patch upgrade: the offline lab builds 1.19 only).
 */
export function planUpgrade(p: Profile, upgradeTo: string, valuesFile: string, lab?: Lab): UpgradePlan {
  const to = lab ? labCilium(lab, upgradeTo) : resolveCilium(upgradeTo);
  const [maj, min] = p.cilium.minor.split(".").map(Number);
  const next = `${maj}.${(min ?? 0) + 1}`;
  const patchOf = (v: string) => Number(v.split(".")[2] ?? -1);
  const patchUpgrade = to.minor === p.cilium.minor && patchOf(to.version) > patchOf(p.cilium.version);
  if (to.minor !== next && !patchUpgrade) {
    throw new UserError(
      `UPGRADE_TO=${upgradeTo}: Cilium supports upgrades to a newer patch of the same minor or to the next minor only; from ${p.cilium.version} that is a ${p.cilium.minor}.x above it or ${next}`,
    );
  }
  const v = p.helmValues as {
    kubeProxyReplacement?: boolean;
    k8sServiceHost?: string;
    k8sServicePort?: number;
  };
  return {
    fromMinor: p.cilium.minor,
    to: to.version,
    toMinor: to.minor,
    valuesFile,
    ...(v.kubeProxyReplacement && v.k8sServiceHost
      ? { k8sServiceHost: v.k8sServiceHost, k8sServicePort: v.k8sServicePort ?? 6443 }
      : {}),
    ...(lab && p.lab ? { lab: labUpgrade(lab, p.cluster, to.version) } : {}),
  };
}

/** The lab's side of an upgrade to `version`: its chart, its images to load, and the values naming them. */
function labUpgrade(lab: Lab, cluster: string, version: string): NonNullable<UpgradePlan["lab"]> {
  const lp = labProfile(lab, version);
  return {
    chart: lp.chart,
    cluster,
    load: lp.load,
    set: [
      `image.override=${lp.ciliumImage}`,
      `operator.image.override=${lp.operatorImage}`,
      `preflight.image.override=${lp.ciliumImage}`,
      "preflight.image.pullPolicy=Never",
      "envoy.enabled=false",
    ],
  };
}

export interface Provisioned {
  targets: ClusterTarget[];
  teardown(): Promise<void>;
}

/**
 * What provisioning acts through: local commands (kind, k3d, helm, kubectl, docker), an executor for the
 * new cluster (kubectl and agents), waits, and the client outside the nodes. Tests pass their own.
 */
export interface Host {
  exec: Executor;
  cluster(context: string): Executor;
  sleep(ms: number): Promise<void>;
  outside(p: Profile, log: (l: string) => void): Promise<{ name: string; stop: () => Promise<void> } | null>;
}

export function realHost(): Host {
  return {
    exec: new LocalExecutor(),
    cluster: (context) =>
      new ClusterExecutor(
        { context, nodeShell: { kind: "docker", containerOf: (n) => n } },
        new KubeExecutor(context || undefined),
      ),
    sleep: realSleep,
    outside: outsideClient,
  };
}

async function timed<T>(
  phases: Record<string, number>,
  name: string,
  log: (l: string) => void,
  fn: () => Promise<T>,
): Promise<T> {
  log(`${name}…`);
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    const s = (performance.now() - t0) / 1000;
    phases[name] = Math.round(s * 10) / 10;
    log(`${name}: ${s.toFixed(1)} s`);
  }
}

async function sh(h: Host, argv: string[], timeoutMs = 600_000): Promise<string> {
  return (await mustRun(h.exec, { target: { kind: "local" }, argv, timeoutMs })).stdout;
}

/**
 * The agents' metrics right after the gates (once cilium-health answers), into the bundle's baseline/: the
 * invariants count drops over the run. An agent that cannot answer is logged and the run goes on (the
 * invariants then say what they cover).
 */
async function recordBaseline(
  g: GateContext & { exec: Executor },
  nodes: string[],
  dir: string,
): Promise<void> {
  const metrics: Record<string, string> = {};
  for (const node of nodes) {
    try {
      // cilium-health starts after the agent reports ready, and reading the metrics asks it for its status:
      // asked too early, the agent logs `Error while getting cilium-health status` (seen on the lab cluster,
      // run lab-baseline). Wait until its status shows the health probe's result first.
      // at most 60 reads 3 s apart (a bounded count, so a host whose clock does not move still ends)
      let health = "";
      for (let attempt = 0; attempt < 60; attempt++) {
        const out = (await g.exec.run({ target: { kind: "agent", node }, argv: ["cilium-dbg", "status"] }))
          .stdout;
        health = out.split("\n").find((l) => l.startsWith("Cluster health:")) ?? "(no Cluster health line)";
        if (/^Cluster health:\s+\d+\/\d+ reachable/.test(health)) break;
        if (attempt === 59)
          g.log(
            `cilium-health on ${node} still not reporting after 3 min (last: ${health}); baseline taken anyway`,
          );
        await g.sleep(3000);
      }
      const r = await g.exec.run({
        target: { kind: "agent", node },
        argv: ["cilium-dbg", "metrics", "list", "-o", "json"],
      });
      if (r.exitCode === 0) metrics[node] = r.stdout;
    } catch (err) {
      g.log(
        `no drop baseline from the agent on ${node}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  if (Object.keys(metrics).length > 0) writeBaseline(dir, metrics);
}

function gateContext(h: Host, p: Profile, log: (l: string) => void): GateContext & { exec: Executor } {
  return { exec: h.cluster(p.context), log, sleep: h.sleep };
}

async function clusterExists(h: Host, p: Profile): Promise<boolean> {
  if (p.provider === "kind")
    return (await sh(h, ["kind", "get", "clusters"])).split("\n").includes(p.cluster);
  const list = JSON.parse(await sh(h, ["k3d", "cluster", "list", "-o", "json"])) as { name: string }[];
  return list.some((c) => c.name === p.cluster);
}

async function createCluster(h: Host, p: Profile, dir: string, log: (l: string) => void): Promise<void> {
  if (await clusterExists(h, p)) {
    log(`reusing the existing cluster ${p.cluster} (kept by an earlier run with KEEP_CLUSTER=1)`);
    return;
  }
  if (p.provider === "kind") {
    const cfg = join(dir, "kind-config.yaml");
    writeFileSync(cfg, stringify(p.kindConfig));
    await sh(h, kindCreateArgv(p, cfg));
  } else {
    await sh(h, ["k3d", ...(p.k3dArgs ?? [])]);
  }
}

async function installCilium(h: Host, p: Profile, dir: string): Promise<void> {
  const values = join(dir, "cilium-values.yaml");
  writeFileSync(values, stringify(p.helmValues));
  await sh(h, ciliumInstallArgv(p, values));
}

/** A curl container on the cluster's docker network: the NodePort client outside the nodes. */
async function outsideClient(
  p: Profile,
  log: (l: string) => void,
): Promise<{ name: string; stop: () => Promise<void> } | null> {
  try {
    const { GenericContainer } = await import("testcontainers");
    // kind puts its nodes on KIND_EXPERIMENTAL_DOCKER_NETWORK when set, on "kind" otherwise
    const network =
      p.provider === "kind" ? (process.env.KIND_EXPERIMENTAL_DOCKER_NETWORK ?? "kind") : `k3d-${p.cluster}`;
    const c = await new GenericContainer(IMAGES.curl)
      .withNetworkMode(network)
      .withEntrypoint(["sleep"])
      .withCommand(["3600"])
      .start();
    return { name: c.getName().replace(/^\//, ""), stop: async () => void (await c.stop()) };
  } catch (err) {
    log(
      `could not start a client outside the nodes: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`,
    );
    return null;
  }
}

async function clusterVersions(g: GateContext & { exec: Executor }, nodes: string[]) {
  const nodeList = JSON.parse(
    (await mustRun(g.exec, { target: { kind: "kubectl" }, argv: ["get", "nodes", "-o", "json"] })).stdout,
  ) as {
    items: { status: { nodeInfo: { kernelVersion: string; kubeletVersion: string } } }[];
  };
  const info = nodeList.items[0]?.status.nodeInfo;
  const status = parseStatus(
    (
      await mustRun(g.exec, {
        target: { kind: "agent", node: nodes[0] as string },
        argv: ["cilium-dbg", "status"],
      })
    ).stdout,
  );
  return {
    kernel: info?.kernelVersion ?? null,
    kubernetes: info?.kubeletVersion ?? null,
    cilium: status.ciliumVersion,
    kpr: status.kubeProxyReplacement,
    attachMode: status.attachMode,
  };
}

/**
 * k3d: one tools container per node, joined to the node's network and PID namespaces. The rancher/k3s image
 * is FROM scratch with k3s-root's busybox (ash, no bash, no ss applet, wget without HTTPS instead of curl),
 * so node probes run here instead; they see the node's sockets, routes and iptables rules.
 */
async function startNodeTools(
  h: Host,
  nodes: string[],
  log: (l: string) => void,
): Promise<() => Promise<void>> {
  const names = nodes.map((n) => `${NODE_TOOLS_PREFIX}${n}`);
  const stop = async () => {
    await h.exec.run({ target: { kind: "local" }, argv: ["docker", "rm", "-f", ...names] });
  };
  try {
    for (const node of nodes) {
      await sh(h, nodeToolsArgv(node));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  log(`node probes run in ${names.join(", ")} (tools containers in the nodes' network and PID namespaces)`);
  return stop;
}

/** kind / k3d: create (or reuse) one cluster per mode, install Cilium, wait for the readiness gates. */
async function provisionLocal(o: ProvisionOptions, h: Host): Promise<Provisioned> {
  const lab = o.lab ?? (labEnabled() ? readLab() : undefined);
  if (lab) {
    // kind, helm and kubectl as the lab built them; testcontainers' reaper image cannot be pulled here
    process.env.PATH = labPath(lab);
    process.env.TESTCONTAINERS_RYUK_DISABLED = "true";
  }
  checkBinaries(o.provider);
  const docker = await dockerReachable(h.exec);
  if (!docker.ok) throw new UserError(`CLUSTER_PROVIDER=${o.provider}: ${docker.why}`);
  const targets: ClusterTarget[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const profiles: Profile[] = [];
  try {
    for (const mode of o.modes) {
      const p = makeProfile({
        provider: o.provider,
        mode,
        ...(o.cilium ? { cilium: o.cilium } : {}),
        preload: o.preload,
        ...(o.noBackendResponse ? { noBackendResponse: o.noBackendResponse } : {}),
        ...(lab ? { lab } : {}),
      });
      await checkLoadImages(h, p);
      profiles.push(p);
      const dir = join(o.resultsDir, o.runId, mode);
      const upgrade = o.upgradeTo
        ? planUpgrade(p, o.upgradeTo, join(dir, "cilium-values.yaml"), lab)
        : undefined;
      mkdirSync(dir, { recursive: true });
      const log = (l: string) => o.log(`[${o.provider}] [${mode}] ${l}`);
      const phases: Record<string, number> = {};
      await timed(phases, "create cluster", log, () => createCluster(h, p, dir, log));
      const load = loadArgv(p);
      if (load) await timed(phases, "load images", log, () => sh(h, load));
      await timed(phases, "install Cilium", log, () => installCilium(h, p, dir));
      const g = gateContext(h, p, log);
      const nodes = await timed(phases, "Cilium ready", log, async () => {
        await ciliumRolledOut(g);
        const ns = await nodesReady(g);
        await agentsOk(g, ns);
        await kubeDnsProgrammed(g, ns);
        return ns;
      });
      cleanups.push(await acquireLease(g.exec, o.runId));
      const v = await clusterVersions(g, nodes);
      const expected = mode === "kpr" ? "True" : "False";
      if (v.kpr !== expected)
        log(`warning: the agent reports KubeProxyReplacement ${v.kpr}, the profile asked for ${expected}`);
      const outside = await h.outside(p, log);
      if (outside) cleanups.push(outside.stop);
      if (p.provider === "k3d") cleanups.push(await startNodeTools(h, nodes, log));
      writeMeta(dir, {
        format: 1,
        mode,
        cilium: v.cilium ?? p.cilium.version,
        ciliumMinor: p.cilium.minor,
        kubernetes: v.kubernetes,
        kernel: v.kernel,
        attachMode: v.attachMode,
        provider: o.provider,
        origin: "recorded",
        runId: o.runId,
        createdAt: new Date().toISOString(),
        phases,
        kubeContext: p.context,
        ...(upgrade ? { upgrade } : {}),
        ...(p.lab && lab
          ? {
              lab: {
                note: "offline lab: every image built on this machine from Go modules and Debian packages (clusters/lab/lab.sh)",
                ciliumImage: p.lab.ciliumImage,
                ciliumSource: `github.com/cilium/cilium v${p.cilium.version} (Go module)`,
                patch: p.lab.patch ?? "unknown",
                kubernetesSource: `k8s.io/kubernetes ${lab.kubernetes} (Go module)`,
                nodeImage: p.lab.nodeImage,
              },
            }
          : {}),
      });
      await recordBaseline(g, nodes, dir);
      targets.push({
        mode,
        ciliumMinor: p.cilium.minor,
        provider: o.provider,
        context: p.context,
        namespace: "cca-dp",
        nodeShell: "docker",
        ...(p.provider === "k3d" ? { nodeShellPrefix: NODE_TOOLS_PREFIX } : {}),
        ...(outside ? { outsideContainer: outside.name } : {}),
        bundleDir: dir,
        ...(upgrade ? { upgrade } : {}),
      });
    }
  } catch (err) {
    await teardownLocal(o, h, profiles, cleanups);
    throw err;
  }
  return { targets, teardown: () => teardownLocal(o, h, profiles, cleanups) };
}

async function teardownLocal(
  o: ProvisionOptions,
  h: Host,
  profiles: Profile[],
  cleanups: (() => Promise<void>)[],
): Promise<void> {
  for (const c of cleanups) await c().catch(() => {});
  if (o.keep) {
    o.log(
      `KEEP_CLUSTER=1: keeping ${profiles.map((p) => p.cluster).join(", ")} (the next run reuses them by name)`,
    );
    return;
  }
  for (const p of profiles) {
    o.log(`deleting cluster ${p.cluster}`);
    const argv =
      p.provider === "kind"
        ? ["kind", "delete", "cluster", "--name", p.cluster]
        : ["k3d", "cluster", "delete", p.cluster];
    const r = await h.exec.run({ target: { kind: "local" }, argv, timeoutMs: 300_000 });
    if (r.exitCode !== 0) o.log(`could not delete ${p.cluster}: ${r.stderr.trim().split("\n").pop()}`);
  }
}

type Kubectl = (argv: string[]) => Promise<{ stdout: string }>;

/** Linux nodes that run a Cilium agent: the only ones that get a node shell and an agent gate. */
export async function ciliumNodes(kubectl: Kubectl): Promise<string[]> {
  const linux = (
    JSON.parse((await kubectl(["get", "nodes", "-l", "kubernetes.io/os=linux", "-o", "json"])).stdout) as {
      items: { metadata: { name: string } }[];
    }
  ).items.map((n) => n.metadata.name);
  const agents = (
    JSON.parse(
      (await kubectl(["-n", "kube-system", "get", "pods", "-l", "k8s-app=cilium", "-o", "json"])).stdout,
    ) as { items: { spec?: { nodeName?: string } }[] }
  ).items.map((p) => p.spec?.nodeName);
  const nodes = linux.filter((n) => agents.includes(n));
  if (nodes.length === 0)
    throw new UserError(
      "no Linux node of this cluster runs a Cilium agent (kube-system pods -l k8s-app=cilium)",
    );
  return nodes;
}

/** existing: the current (or given) context, never created or deleted; only the run's namespace and Lease are. */
async function provisionExisting(o: ProvisionOptions, h: Host): Promise<Provisioned> {
  checkBinaries("existing");
  if (process.env.CONFORMANCE_EXISTING_OK !== "1") {
    throw new UserError(
      "CLUSTER_PROVIDER=existing runs workloads and privileged node shells in your current cluster; set CONFORMANCE_EXISTING_OK=1 to allow it",
    );
  }
  const context = o.context ?? (await sh(h, ["kubectl", "config", "current-context"])).trim();
  // a namespace name is a DNS-1123 label: run ids such as the workflow's `…-1.20` are sanitised
  const ns = runNamespaceName(o.runId);
  const kubectl = (argv: string[], stdin?: string) =>
    mustRun(h.exec, {
      target: { kind: "local" },
      argv: ["kubectl", "--context", context, ...argv],
      ...(stdin !== undefined ? { stdin } : {}),
    });
  // everything taken is released on every failure path, in reverse order
  const cleanups: (() => Promise<void>)[] = [];
  const teardown = async () => {
    o.log(`deleting namespace ${ns} and releasing the Lease (the cluster itself is left as it was)`);
    for (const c of cleanups.reverse()) await c().catch(() => {});
  };
  cleanups.push(await acquireLease(h.cluster(context), o.runId));
  try {
    // Pod Security Admission: the node shells and the capture Pod are privileged, hostNetwork and hostPID;
    // a Baseline or Restricted default would reject them (labels set at creation, before any Pod)
    await kubectl(["create", "-f", "-"], JSON.stringify(runNamespace(ns, o.runId)));
    cleanups.push(async () => {
      await h.exec.run({
        target: { kind: "local" },
        argv: ["kubectl", "--context", context, "delete", "namespace", ns, "--wait=false"],
      });
    });
    const nodes = await ciliumNodes(kubectl);
    for (const node of nodes) {
      const pod = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: `node-shell-${node}`, namespace: ns },
        spec: {
          nodeName: node,
          hostNetwork: true,
          hostPID: true,
          tolerations: [{ operator: "Exists" }],
          containers: [
            {
              name: "shell",
              image: IMAGES.netshoot,
              command: ["sleep", "86400"],
              securityContext: { privileged: true },
            },
          ],
        },
      };
      await kubectl(["apply", "-f", "-"], JSON.stringify(pod));
    }
    await pollUntil({
      what: `${nodes.length} node-shell Pods Running in ${ns}`,
      deadlineMs: 180_000,
      intervalMs: 2000,
      probe: async () =>
        (
          JSON.parse((await kubectl(["-n", ns, "get", "pods", "-o", "json"])).stdout) as {
            items: { status: { phase?: string } }[];
          }
        ).items.filter((x) => x.status.phase === "Running").length,
      done: (n) => n === nodes.length,
      show: (n) => `${n}/${nodes.length} Running`,
      sleep: h.sleep,
      progress: o.log,
    });
    const p = makeProfile({ provider: "existing", mode: "kpr", existingContext: context });
    const g = gateContext(h, p, o.log);
    await agentsOk(g, nodes);
    const v = await clusterVersions(g, nodes);
    const mode: Mode = v.kpr === "True" ? "kpr" : "kube-proxy";
    if (o.modes.length === 1 && o.modes[0] !== mode)
      throw new UserError(
        `CONFORMANCE_MODE=${o.modes[0]} but the cluster's agents report KubeProxyReplacement ${v.kpr} (mode ${mode})`,
      );
    const minor = /^(\d+\.\d+)/.exec(v.cilium ?? "")?.[1] ?? "";
    const dir = join(o.resultsDir, o.runId, mode);
    writeMeta(dir, {
      format: 1,
      mode,
      cilium: v.cilium ?? "",
      ciliumMinor: minor,
      kubernetes: v.kubernetes,
      kernel: v.kernel,
      attachMode: v.attachMode,
      provider: "existing",
      origin: "recorded",
      runId: o.runId,
      createdAt: new Date().toISOString(),
      phases: {},
    });
    await recordBaseline(g, nodes, dir);
    return {
      targets: [
        {
          mode,
          ciliumMinor: minor,
          provider: "existing",
          context,
          namespace: ns,
          nodeShell: "pod",
          nodeShellNamespace: ns,
          bundleDir: dir,
        },
      ],
      teardown,
    };
  } catch (err) {
    await teardown();
    throw err;
  }
}

export async function provision(o: ProvisionOptions, h: Host = realHost()): Promise<Provisioned> {
  if (o.provider === "existing") return provisionExisting(o, h);
  if (o.provider === "kind" || o.provider === "k3d") return provisionLocal(o, h);
  throw new UserError(`provider ${o.provider} does not provision clusters`);
}
