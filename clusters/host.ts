/**
 * What provisioning acts through and hands on, below the lifecycle and the existing provider: the host's
 * commands (`Host`, `sh`), the options and the result of a provisioning, what a spec gets per mode
 * (`ClusterTarget`), and the steps both providers share once a cluster answers (gates' context, versions,
 * the drop baseline). Imports nothing of lifecycle.ts or existing.ts, so neither imports the other's caller.
 */

import { writeBaseline } from "../helpers/baseline.ts";
import { ApiExecutor } from "../helpers/exec/api.ts";
import { apiGet } from "../helpers/exec/api-argv.ts";
import { ClusterExecutor } from "../helpers/exec/cluster.ts";
import { API_READ_TIMEOUT_MS, KubeExecutor, withDeadline } from "../helpers/exec/kube.ts";
import { LocalExecutor } from "../helpers/exec/local.ts";
import { type Executor, mustRun } from "../helpers/exec/types.ts";
import type { UpgradePlan } from "../helpers/observe/context.ts";
import { realSleep } from "../helpers/observe/context.ts";
import { parseStatus } from "../helpers/parse/status.ts";
import type { Mode } from "../helpers/properties/expectation.ts";
import { IMAGES } from "../manifests/images.ts";
import type { DatapathProfileName } from "./datapath-profiles.ts";
import { abortableSleep, interruptibleExecutor, reasonOf } from "./interrupt.ts";
import type { Lab } from "./lab.ts";
import { OUTSIDE_LABEL } from "./leftovers.ts";
import type { Profile, Provider } from "./profile.ts";
import type { GateContext } from "./readiness.ts";

/** What the conformance project's global setup hands to the specs (through vitest's provide/inject). */
export interface ClusterTarget {
  mode: Mode;
  ciliumMinor: string;
  provider: string;
  context: string;
  kubeconfig?: string;
  namespace: string;
  /**
   * kind: `docker exec` into the node container; k3d: into a tools container joined to the node's network and
   * PID namespaces, named `nodeShellPrefix + node` (k3s nodes are FROM scratch with busybox: no bash, curl or
   * ss); existing: node-shell Pods in `nodeShellNamespace`.
   */
  nodeShell: "docker" | "pod";
  nodeShellPrefix?: string;
  nodeShellNamespace?: string;
  outsideContainer?: string;
  bundleDir: string;
  /** The offline lab's cache, when the run uses it: recorded commands name its paths `$LAB_CACHE/…`. */
  labCache?: string;
  /** Set when UPGRADE_TO asks for the upgrade leg: where the chart values are and what to upgrade to. */
  upgrade?: UpgradePlan;
}

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
  /** DATAPATH_PROFILE: a datapath profile beside the mode (clusters/datapath-profiles.ts; kind and k3d). */
  datapath?: DatapathProfileName;
  /** CILIUM_VALUES=FILE: the user's Helm values, merged under the suite's (kind and k3d). */
  userValues?: { file: string; values: Record<string, unknown> };
  /** UPGRADE_TO: the next minor (or a patch of it) to upgrade to in the upgrade leg. */
  upgradeTo?: string;
  /** ROLLBACK=1: after the upgrade, back to the installed version with `helm rollback`. */
  rollback?: boolean;
  /** LAB_IMAGES=1: the offline lab's images (kind only); read from the environment when not given. */
  lab?: Lab;
  /** Aborted on SIGINT/SIGTERM: every provisioning command and wait ends, then what was made is torn down. */
  signal?: AbortSignal;
  /** LEASE_WAIT_S: how long to wait for another run's Lease (0: fail at once naming the holder). */
  leaseWaitMs?: number;
  /** MODES_CONCURRENT=1: provision every mode's cluster at once (kind, k3d). */
  concurrent?: boolean;
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
  /** The clock waits run on (ms); performance.now when absent. Tests with a fake sleep pass a fake clock. */
  now?(): number;
  outside(p: Profile, log: (l: string) => void): Promise<{ name: string; stop: () => Promise<void> } | null>;
}

/** Every local command of provisioning and teardown ends by this deadline unless it names its own. */
export const HOST_COMMAND_TIMEOUT_MS = 600_000;

/** An executor that gives calls without a deadline `ms`. */
export function withDefaultDeadline(inner: Executor, ms: number): Executor {
  return {
    run: (req) => inner.run(req.timeoutMs === undefined ? { ...req, timeoutMs: ms } : req),
    ...(inner.close ? { close: () => inner.close?.() ?? Promise.resolve() } : {}),
  };
}

export function realHost(): Host {
  return {
    exec: withDefaultDeadline(new LocalExecutor(), HOST_COMMAND_TIMEOUT_MS),
    cluster: (context) =>
      new ClusterExecutor(
        { context, nodeShell: { kind: "docker", containerOf: (n) => n } },
        new KubeExecutor(context || undefined),
        undefined,
        ApiExecutor.forContext(context || undefined),
      ),
    sleep: realSleep,
    outside: outsideClient,
  };
}

export async function sh(h: Host, argv: string[], timeoutMs = HOST_COMMAND_TIMEOUT_MS): Promise<string> {
  return (await mustRun(h.exec, { target: { kind: "local" }, argv, timeoutMs })).stdout;
}

/** How long the baseline waits for cilium-health per agent before it reads the metrics anyway. */
export const BASELINE_HEALTH_DEADLINE_MS = 180_000;

/**
 * The agents' metrics right after the gates (once cilium-health answers), into the bundle's baseline/: the
 * invariants count drops over the run. An agent that cannot answer is logged and the run goes on (the
 * invariants then say what they cover).
 */
export async function recordBaseline(
  g: GateContext & { exec: Executor },
  nodes: string[],
  dir: string,
): Promise<void> {
  const metrics: Record<string, string> = {};
  // every agent at once: each waits for its own cilium-health
  await Promise.all(
    nodes.map(async (node) => {
      try {
        // cilium-health starts after the agent reports ready, and reading the metrics asks it for its status:
        // asked too early, the agent logs `Error while getting cilium-health status` (seen on the lab cluster,
        // run lab-baseline). Wait until its status shows the health probe's result first.
        // at most 60 reads 3 s apart (a bounded count, so a host whose clock does not move still ends), and no
        // longer than BASELINE_HEALTH_DEADLINE_MS (each read may take its own deadline on a node that hangs)
        let health = "";
        const t0 = performance.now();
        for (let attempt = 0; attempt < 60; attempt++) {
          const out = (await g.exec.run({ target: { kind: "agent", node }, argv: ["cilium-dbg", "status"] }))
            .stdout;
          health = out.split("\n").find((l) => l.startsWith("Cluster health:")) ?? "(no Cluster health line)";
          if (/^Cluster health:\s+\d+\/\d+ reachable/.test(health)) break;
          if (attempt === 59 || performance.now() - t0 > BASELINE_HEALTH_DEADLINE_MS) {
            g.log(
              `cilium-health on ${node} still not reporting after ${Math.round((performance.now() - t0) / 1000)} s (last: ${health}); baseline taken anyway`,
            );
            break;
          }
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
    }),
  );
  if (Object.keys(metrics).length > 0) writeBaseline(dir, metrics);
}

export function gateContext(h: Host, p: Profile, log: (l: string) => void): GateContext & { exec: Executor } {
  return { exec: h.cluster(p.context), log, sleep: h.sleep };
}

/** A curl container on the cluster's docker network: the NodePort client outside the nodes. */
export async function outsideClient(
  p: Profile,
  log: (l: string) => void,
): Promise<{ name: string; stop: () => Promise<void> } | null> {
  try {
    const { GenericContainer } = await import("testcontainers");
    // kind puts its nodes on KIND_EXPERIMENTAL_DOCKER_NETWORK when set (the profile's network, or yours), on "kind" otherwise
    const network =
      p.provider === "kind"
        ? (p.dockerNetwork ?? process.env.KIND_EXPERIMENTAL_DOCKER_NETWORK ?? "kind")
        : `k3d-${p.cluster}`;
    const c = await new GenericContainer(IMAGES.curl)
      .withNetworkMode(network)
      // found by this label in the leftover inventory and by the fault driver (outside-net)
      .withLabels({ [OUTSIDE_LABEL]: p.cluster })
      // NET_ADMIN in its own network namespace: the lifecycle topic routes our LoadBalancer addresses via a node
      .withAddedCapabilities("NET_ADMIN")
      .withEntrypoint(["sleep"])
      .withCommand(["3600"])
      .start();
    const name = c.getName().replace(/^\//, "");
    return {
      name,
      // testcontainers stops and removes it; a daemon that does not answer must not hold the teardown
      stop: async () =>
        void (await withDeadline(c.stop(), 120_000, `from docker stopping the outside client ${name}`)),
    };
  } catch (err) {
    log(
      `could not start a client outside the nodes: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`,
    );
    return null;
  }
}

export async function clusterVersions(g: GateContext & { exec: Executor }, nodes: string[]) {
  const nodeList = JSON.parse(
    (
      await mustRun(g.exec, {
        target: { kind: "api" },
        argv: apiGet({ resource: "nodes" }),
        timeoutMs: API_READ_TIMEOUT_MS,
      })
    ).stdout,
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
 * The host provisioning works through while it creates things: each of its commands and waits ends as soon as
 * the run is interrupted. Teardown uses the plain host, so it still runs after the interrupt.
 */
export function interruptible(h: Host, signal: AbortSignal | undefined): Host {
  if (!signal) return h;
  return {
    exec: interruptibleExecutor(h.exec, signal),
    cluster: (context) => interruptibleExecutor(h.cluster(context), signal),
    sleep: abortableSleep(h.sleep, signal),
    ...(h.now ? { now: h.now } : {}),
    outside: async (p, log) => {
      if (signal.aborted) throw reasonOf(signal);
      return h.outside(p, log);
    },
  };
}
