import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { stringify } from "yaml";
import { readMeta } from "../helpers/bundle/read.ts";
import { writeMeta } from "../helpers/bundle/write.ts";
import { allOrFirstFailure, serialized } from "../helpers/concurrent.ts";
import { UserError } from "../helpers/errors.ts";
import { labCacheDir, portableText, portableUpgrade } from "../helpers/exec/portable.ts";
import type { Mode } from "../helpers/properties/expectation.ts";
import { coreDnsProbeEverySecond } from "./coredns.ts";
import { formatOverridden } from "./datapath-profiles.ts";
import { provisionExisting } from "./existing.ts";
import {
  type ClusterTarget,
  clusterVersions,
  gateContext,
  type Host,
  interruptible,
  type Provisioned,
  type ProvisionOptions,
  realHost,
  recordBaseline,
  sh,
} from "./host.ts";
import { once } from "./interrupt.ts";
import { labEnabled, labPath, readLab } from "./lab.ts";
import { acquireLease } from "./lease.ts";
import { checkBinaries, dockerReachable } from "./prereq.ts";
import {
  assertRunnable,
  ciliumInstallArgv,
  kindCreateArgv,
  loadArgv,
  makeProfile,
  NODE_TOOLS_PREFIX,
  nodeToolsArgv,
  type Profile,
} from "./profile.ts";
import { ciliumReady } from "./readiness.ts";
import { planUpgrade } from "./upgrade-plan.ts";
import { KIND, neverRunHere } from "./versions.ts";

/** Images to load (lab, or PRELOAD_IMAGES=1) that the local Docker lacks: one line saying how to get them. */
async function checkLoadImages(h: Host, p: Profile): Promise<void> {
  const wanted = [...(p.lab ? [p.lab.nodeImage] : []), ...(p.load ?? [])];
  const missing: string[] = [];
  for (const image of wanted) {
    const r = await h.exec.run({
      target: { kind: "local" },
      argv: ["docker", "image", "inspect", image],
      timeoutMs: 60_000,
    });
    if (r.exitCode !== 0) missing.push(image);
  }
  if (missing.length === 0) return;
  throw new UserError(
    p.lab
      ? `LAB_IMAGES=1: docker has no ${missing.join(", ")}; build them with: npx datapath-conformance lab images${p.lab.declared ? "" : ` cilium-${p.cilium.version} image-cilium-${p.cilium.version} (or lab run --cilium ${p.cilium.version}, which builds and runs it)`}`
      : `PRELOAD_IMAGES=1: docker has no ${missing.join(", ")}; pull them first (docker pull ${missing.join(" && docker pull ")})`,
  );
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

async function clusterExists(h: Host, p: Profile): Promise<boolean> {
  if (p.provider === "kind")
    return (await sh(h, ["kind", "get", "clusters"])).split("\n").includes(p.cluster);
  const list = JSON.parse(await sh(h, ["k3d", "cluster", "list", "-o", "json"])) as { name: string }[];
  return list.some((c) => c.name === p.cluster);
}

/**
 * Creates the profile's cluster, or reuses one of that name (kept by an earlier run with KEEP_CLUSTER=1, or
 * another run's). `created` is called before the create command runs: a create that is interrupted half-way
 * leaves nodes this run must delete. A create that fails because another run created the same cluster at the
 * same moment is not ours, and `created` is taken back.
 */
async function createCluster(
  h: Host,
  p: Profile,
  dir: string,
  log: (l: string) => void,
  created: (ours: boolean) => void,
  /** Clusters created at once: their kubeconfig written one at a time (kind gives up on a held lock). */
  inTurn?: <T>(fn: () => Promise<T>) => Promise<T>,
): Promise<void> {
  if (await clusterExists(h, p)) {
    log(`reusing the existing cluster ${p.cluster} (kept by an earlier run with KEEP_CLUSTER=1)`);
    return;
  }
  created(true);
  try {
    if (p.provider === "kind") {
      // kind reads the configuration from a folder of its own; the bundle's copy names no folder of this machine
      // (the lab's node store as $LAB_CACHE/…, helpers/exec/portable.ts)
      const conf = mkdtempSync(join(tmpdir(), "dpc-kind-config-"));
      try {
        const text = stringify(p.kindConfig);
        const cfg = join(conf, "kind-config.yaml");
        writeFileSync(cfg, text);
        writeFileSync(
          join(dir, "kind-config.yaml"),
          portableText(text, { bundle: dir, labCache: labCacheDir() }),
        );
        if (inTurn) {
          // its own kubeconfig (credentials: never in the bundle), then exported into yours in turn
          const own = mkdtempSync(join(tmpdir(), "dpc-kind-kubeconfig-"));
          try {
            await sh(h, [...kindCreateArgv(p, cfg), "--kubeconfig", join(own, "config")]);
            await inTurn(() => sh(h, ["kind", "export", "kubeconfig", "--name", p.cluster]));
          } finally {
            rmSync(own, { recursive: true, force: true });
          }
        } else await sh(h, kindCreateArgv(p, cfg));
      } finally {
        rmSync(conf, { recursive: true, force: true });
      }
    } else if (inTurn) await inTurn(() => sh(h, ["k3d", ...(p.k3dArgs ?? [])]));
    else await sh(h, ["k3d", ...(p.k3dArgs ?? [])]);
  } catch (err) {
    if (/already exist/i.test(err instanceof Error ? err.message : "")) created(false);
    throw err;
  }
}

async function installCilium(h: Host, p: Profile, dir: string): Promise<void> {
  const values = join(dir, "cilium-values.yaml");
  writeFileSync(values, stringify(p.helmValues));
  await sh(h, ciliumInstallArgv(p, values));
}

/**
 * k3d: one tools container per node, joined to the node's network and PID namespaces. The rancher/k3s image
 * is FROM scratch with k3s-root's busybox (ash, no bash, no ss applet, wget without HTTPS instead of curl),
 * so node probes run here instead; they see the node's sockets, routes and iptables rules.
 */
export async function startNodeTools(
  h: Host,
  nodes: string[],
  log: (l: string) => void,
): Promise<() => Promise<void>> {
  const names = nodes.map((n) => `${NODE_TOOLS_PREFIX}${n}`);
  const stop = async () => {
    await h.exec.run({
      target: { kind: "local" },
      argv: ["docker", "rm", "-f", ...names],
      timeoutMs: 120_000,
    });
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

/**
 * kind / k3d: create (or reuse) one cluster per mode, take the run's Lease on it (before anything is installed,
 * so a second run waits or stops there), install Cilium, wait for the readiness gates. Teardown deletes only
 * the clusters this run created or held the Lease of, never another run's.
 */
async function provisionLocal(o: ProvisionOptions, plain: Host): Promise<Provisioned> {
  // provisioning works through `h` (interrupted by SIGINT/SIGTERM); teardown through `plain`
  const h = interruptible(plain, o.signal);
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
  const owned = new Set<Profile>();
  const concurrent = o.concurrent === true && o.modes.length > 1;
  // kind writes the kubeconfig under a lock file and gives up when another kind holds it (kind issue 1425):
  // clusters created at once each write their own file, and are exported into yours one at a time
  const exportInTurn = serialized();
  /** One mode: its cluster, Lease, Cilium, gates, bundle.json and baseline; `h` ends its calls on abort. */
  const provisionMode = async (mode: Mode, h: Host): Promise<void> => {
    const p = makeProfile({
      provider: o.provider,
      mode,
      ...(o.cilium ? { cilium: o.cilium } : {}),
      preload: o.preload,
      ...(o.noBackendResponse ? { noBackendResponse: o.noBackendResponse } : {}),
      ...(lab ? { lab } : {}),
      ...(o.datapath ? { datapath: o.datapath } : {}),
      ...(o.userValues ? { userValues: o.userValues } : {}),
    });
    // a profile this kernel cannot run (netkit, ipvs) is refused in one line before anything is created
    assertRunnable(p);
    // a version the suite has never run is allowed, and said first
    for (const l of neverRunHere(
      p.cilium.version,
      p.lab || p.provider !== "kind" ? undefined : KIND.nodeKubernetes,
    ))
      o.log(`[${o.provider}] [${mode}] ${l}`);
    if (p.userValues)
      o.log(`[${o.provider}] [${mode}] ${formatOverridden(p.userValues.file, p.userValues.overridden)}`);
    await checkLoadImages(h, p);
    profiles.push(p);
    const dir = join(o.resultsDir, o.runId, mode);
    const upgrade = o.upgradeTo
      ? planUpgrade(p, o.upgradeTo, join(dir, "cilium-values.yaml"), lab, o.rollback ?? false)
      : undefined;
    mkdirSync(dir, { recursive: true });
    const log = (l: string) => o.log(`[${o.provider}] [${mode}] ${l}`);
    const phases: Record<string, number> = {};
    await timed(phases, "create cluster", log, () =>
      createCluster(
        h,
        p,
        dir,
        log,
        (ours) => (ours ? owned.add(p) : owned.delete(p)),
        concurrent ? exportInTurn : undefined,
      ),
    );
    // the Lease is taken and released through the plain host (its release must run after an interrupt);
    // waiting for it (LEASE_WAIT_S) ends on an interrupt
    cleanups.push(
      await acquireLease(plain.cluster(p.context), o.runId, {
        waitMs: o.leaseWaitMs ?? 0,
        log,
        sleep: h.sleep,
      }),
    );
    owned.add(p);
    const load = loadArgv(p);
    if (load) await timed(phases, "load images", log, () => sh(h, load));
    await timed(phases, "install Cilium", log, () => installCilium(h, p, dir));
    const g = gateContext(h, p, log);
    const ready = await timed(phases, "Cilium ready", log, async () => {
      // its new Pods wait for the agents like the others, and are restarted with them (coredns.ts)
      await coreDnsProbeEverySecond(g);
      return ciliumReady(g, p.cilium.version);
    });
    const nodes = ready.nodes;
    // the reference "Cilium ready" is read against, measured in the same run (npm run bench)
    if (ready.agentsOwnStartMax !== null) phases["agents' own start (max)"] = ready.agentsOwnStartMax;
    log(
      `agents' own start (Pod start → first status OK): ${Object.entries(ready.agents)
        .map(([node, a]) => `${node} ${a.seconds ?? "?"} s`)
        .join(", ")}`,
    );
    const v = await clusterVersions(g, nodes);
    const expected = mode === "kpr" ? "True" : "False";
    if (v.kpr !== expected)
      log(`warning: the agent reports KubeProxyReplacement ${v.kpr}, the profile asked for ${expected}`);
    const outside = await h.outside(p, log);
    if (outside) cleanups.push(outside.stop);
    if (p.provider === "k3d") cleanups.push(await startNodeTools(plain, nodes, log));
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
      agentStarts: ready.agents,
      kubeContext: p.context,
      ...(neverRunHere(v.cilium ?? p.cilium.version, v.kubernetes ?? undefined).length > 0
        ? { neverRunHere: neverRunHere(v.cilium ?? p.cilium.version, v.kubernetes ?? undefined) }
        : {}),
      ...(p.datapath ? { datapathProfile: p.datapath.name } : {}),
      ...(p.userValues
        ? { userValues: { file: basename(p.userValues.file), overridden: p.userValues.overridden } }
        : {}),
      // bundle.json names no folder of this machine: the values file by its place in the bundle, the lab's
      // chart under $LAB_CACHE (helpers/exec/portable.ts)
      ...(upgrade ? { upgrade: portableUpgrade(upgrade, { bundle: dir, labCache: lab?.cache }) } : {}),
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
    await timed(phases, "drop baseline", log, () => recordBaseline(g, nodes, dir));
    writeMeta(dir, { ...readMeta(dir), phases });
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
      ...(lab ? { labCache: lab.cache } : {}),
      ...(upgrade ? { upgrade } : {}),
    });
  };
  try {
    if (concurrent) {
      o.log(
        `[${o.provider}] MODES_CONCURRENT=1: provisioning ${o.modes.join(" and ")} at once (each line says its mode)`,
      );
      // a mode that fails stops the other; every mode has ended before the teardown below starts
      await allOrFirstFailure(
        o.modes.map((mode) => (signal) => provisionMode(mode, interruptible(plain, signal))),
        o.signal,
      );
    } else for (const mode of o.modes) await provisionMode(mode, h);
  } catch (err) {
    await teardownLocal(o, plain, profiles, cleanups, owned);
    throw err;
  }
  const teardown = once(() => teardownLocal(o, plain, profiles, cleanups, owned));
  // in the modes' order, however they finished
  targets.sort((a, b) => o.modes.indexOf(a.mode) - o.modes.indexOf(b.mode));
  return { targets, teardown };
}

async function teardownLocal(
  o: ProvisionOptions,
  h: Host,
  profiles: Profile[],
  cleanups: (() => Promise<void>)[],
  owned: Set<Profile>,
): Promise<void> {
  for (const c of cleanups.splice(0)) await c().catch(() => {});
  for (const p of profiles.filter((x) => !owned.has(x)))
    o.log(
      `not deleting cluster ${p.cluster}: this run neither created it nor held its Lease (another run's)`,
    );
  const ours = profiles.filter((x) => owned.has(x));
  if (ours.length === 0) return;
  if (o.keep) {
    o.log(
      `KEEP_CLUSTER=1: keeping ${ours.map((p) => `${p.cluster} (context ${p.context})`).join(", ")}; the next run reuses them by name, delete with: ${ours.map((p) => (p.provider === "kind" ? `kind delete cluster --name ${p.cluster}` : `k3d cluster delete ${p.cluster}`)).join(" && ")}`,
    );
    return;
  }
  for (const p of ours) {
    o.log(`deleting cluster ${p.cluster}`);
    const argv =
      p.provider === "kind"
        ? ["kind", "delete", "cluster", "--name", p.cluster]
        : ["k3d", "cluster", "delete", p.cluster];
    const r = await h.exec.run({ target: { kind: "local" }, argv, timeoutMs: 300_000 });
    if (r.exitCode !== 0) o.log(`could not delete ${p.cluster}: ${r.stderr.trim().split("\n").pop()}`);
  }
}

export async function provision(o: ProvisionOptions, h: Host = realHost()): Promise<Provisioned> {
  if (o.provider === "existing") return provisionExisting(o, h);
  if (o.provider === "kind" || o.provider === "k3d") return provisionLocal(o, h);
  throw new UserError(`provider ${o.provider} does not provision clusters`);
}

export { planUpgrade } from "./upgrade-plan.ts";
