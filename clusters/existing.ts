import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeMeta } from "../helpers/bundle/write.ts";
import { UserError } from "../helpers/errors.ts";
import { itemsOf } from "../helpers/exec/api-argv.ts";
import { DEFAULT_KUBECTL_TIMEOUT_MS } from "../helpers/exec/cluster.ts";
import type { Executor } from "../helpers/exec/types.ts";
import { ExecError, type ExecResult } from "../helpers/exec/types.ts";
import { podStates, whyNotReady } from "../helpers/observe/pod-status.ts";
import { DeadlineError } from "../helpers/poll.ts";
import type { Mode } from "../helpers/properties/expectation.ts";
import { IMAGES } from "../manifests/images.ts";
import {
  clusterVersions,
  gateContext,
  type Host,
  interruptible,
  type Provisioned,
  type ProvisionOptions,
  recordBaseline,
  sh,
} from "./host.ts";
import { once } from "./interrupt.ts";
import { acquireLease, joinLease } from "./lease.ts";
import {
  IDENTITY_GC_DEFAULTS,
  type IdentityGc,
  identityExpiry,
  identityGcConfig,
  parseRunIdentities,
} from "./leftovers.ts";
import { checkBinaries } from "./prereq.ts";
import { makeProfile, runNamespace, runNamespaceName } from "./profile.ts";
import { agentsOk, watchGate } from "./readiness.ts";
import { assertRunnableCilium, neverRunHere } from "./versions.ts";

/** The existing-cluster provider: a cluster someone else made, checked and described, never changed. */
type Kubectl = (argv: string[]) => Promise<{ stdout: string }>;

/** Named deadline: every node-shell Pod Running (an image pull on a slow link included). */
export const NODE_SHELL_DEADLINE_MS = 180_000;

/** The node-shell Pods' labels: what the leftover inventory looks for in every namespace. */
export const NODE_SHELL_LABELS = {
  "app.kubernetes.io/part-of": "cilium-datapath-conformance",
  "app.kubernetes.io/component": "node-shell",
};

/**
 * The client outside the nodes an existing cluster may have (issue 42: the upgrade's nested runs judge what a fresh
 * install judges, the NodePort and traffic-policy probes from outside included): `OUTSIDE_CONTAINER` names a
 * running container on the nodes' network, which the run uses as it is and never stops. Unset: none, and the
 * properties that need one are skipped with that reason. Set to a container that does not run: refused in one line.
 */
export async function outsideContainer(h: Host, log: (l: string) => void): Promise<string | null> {
  const name = process.env.OUTSIDE_CONTAINER?.trim();
  if (!name) return null;
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name))
    throw new UserError(`OUTSIDE_CONTAINER ${JSON.stringify(name)} is not a container name`);
  const r = await h.exec.run({
    target: { kind: "local" },
    argv: ["docker", "inspect", "-f", "{{.State.Running}}", name],
    timeoutMs: 60_000,
  });
  if (r.exitCode !== 0 || r.stdout.trim() !== "true")
    throw new UserError(
      `OUTSIDE_CONTAINER ${name}: no running container of that name (docker inspect: ${(r.stderr || r.stdout).trim().split("\n")[0] ?? ""})`,
    );
  log(`the client outside the nodes: container ${name} (OUTSIDE_CONTAINER)`);
  return name;
}

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

/** Named deadline: the run namespace gone after its deletion (its Pods' grace periods included). */
export const NAMESPACE_GONE_DEADLINE_MS = 180_000;

/** `kubectl get namespace NS -o json` → what still holds it (phase, the conditions that say why). */
export function namespaceState(json: unknown): string {
  const n = json as {
    status?: { phase?: string; conditions?: { type?: string; status?: string; message?: string }[] };
  };
  const why = (n.status?.conditions ?? [])
    .filter((c) => c.status === "True")
    .map((c) => `${c.type}: ${c.message ?? ""}`.trim());
  return `${n.status?.phase ?? "(no phase)"}${why.length > 0 ? `; ${why.join("; ")}` : ""}`;
}

/**
 * What the existing provider's teardown found, written into the run's bundle as teardown.json: whether the
 * namespace went within its deadline, and what Cilium still owns for the run's Pods with when it goes.
 */
export interface TeardownReport {
  namespace: string;
  namespaceGone: boolean;
  /** The namespace's last state when it was not gone in time. */
  namespaceLast?: string;
  waitedS: number;
  leaseReleased: boolean;
  ciliumOwned: { kind: string; name: string; expires: string; earliest: string; latest: string }[];
  identityGc: IdentityGc;
  source: string;
}

/** existing: the current (or given) context, never created or deleted; only the run's namespace and Lease are. */
export async function provisionExisting(o: ProvisionOptions, plain: Host): Promise<Provisioned> {
  checkBinaries("existing");
  if (process.env.CONFORMANCE_EXISTING_OK !== "1") {
    throw new UserError(
      "CLUSTER_PROVIDER=existing runs workloads and privileged node shells in your current cluster; set CONFORMANCE_EXISTING_OK=1 to allow it",
    );
  }
  // provisioning works through `h` (interrupted by SIGINT/SIGTERM); the teardown through `plain`
  const h = interruptible(plain, o.signal);
  const context = o.context ?? (await sh(h, ["kubectl", "config", "current-context"])).trim();
  // a namespace name is a DNS-1123 label: run ids such as the workflow's `…-1.20` are sanitised
  const ns = runNamespaceName(o.runId);
  const kubectlOn =
    (host: Host) =>
    (argv: string[], stdin?: string): Promise<ExecResult> =>
      host.exec.run({
        target: { kind: "local" },
        argv: ["kubectl", "--context", context, ...argv],
        timeoutMs: DEFAULT_KUBECTL_TIMEOUT_MS,
        ...(stdin !== undefined ? { stdin } : {}),
      });
  const kubectl = async (argv: string[], stdin?: string) => {
    const req = { target: { kind: "local" as const }, argv: ["kubectl", "--context", context, ...argv] };
    const r = await kubectlOn(h)(argv, stdin);
    if (r.exitCode !== 0) throw new ExecError(req, r);
    return r;
  };
  const plainKubectl = kubectlOn(plain);
  let bundleDir: string | undefined;
  let namespaceMade = false;
  // what was taken is released on every path, the namespace first (its Pods go), then the Lease
  let releaseLease: (() => Promise<void>) | undefined;
  const teardown = once(async () => {
    const t0 = performance.now();
    const report: TeardownReport = {
      namespace: ns,
      namespaceGone: !namespaceMade,
      waitedS: 0,
      leaseReleased: false,
      ciliumOwned: [],
      identityGc: IDENTITY_GC_DEFAULTS,
      source:
        "Cilium v1.19.7 operator/identitygc (cell.go defaults, crd_gc.go gc, heartbeat.go isAlive); chart values operator.identityGCInterval, operator.identityHeartbeatTimeout",
    };
    if (namespaceMade) {
      o.log(
        `deleting namespace ${ns} (with its node-shell Pods and workloads); the cluster itself is left as it was`,
      );
      await plainKubectl(["delete", "namespace", ns, "--wait=false", "--ignore-not-found"]);
      const gone = await waitNamespaceGone(plain.cluster(context), ns, o.log, plain.now);
      report.namespaceGone = gone.gone;
      report.waitedS = Math.round(gone.waitedMs / 100) / 10;
      if (!gone.gone) report.namespaceLast = gone.last;
    }
    if (releaseLease) {
      await releaseLease().catch(() => {});
      report.leaseReleased = true;
    }
    if (namespaceMade) {
      const owned = await ciliumOwned(plainKubectl, ns, new Date());
      report.ciliumOwned = owned.items;
      report.identityGc = owned.gc;
      if (owned.items.length === 0) o.log(`Cilium owns nothing left for ${ns}`);
      else
        o.log(
          `left to Cilium: ${owned.items.length} CiliumIdentity object(s) of ${ns}'s Pods (${owned.items.map((i) => i.name).join(", ")}): ${owned.items[0]?.expires}`,
        );
      if (bundleDir) writeFileSync(join(bundleDir, "teardown.json"), `${JSON.stringify(report, null, 2)}\n`);
    }
    o.log(
      `teardown of ${ns}: ${report.namespaceGone ? `namespace gone after ${report.waitedS} s` : `namespace NOT gone after ${report.waitedS} s (${report.namespaceLast})`}, Lease ${report.leaseReleased ? "released" : "not held"} (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
    );
  });
  // a run its caller started on its own cluster (the upgrade's nested runs) shares the caller's Lease
  const heldBy = process.env.CONFORMANCE_LEASE_HELD_BY;
  releaseLease = heldBy
    ? await joinLease(plain.cluster(context), heldBy)
    : await acquireLease(plain.cluster(context), o.runId, {
        waitMs: o.leaseWaitMs ?? 0,
        log: o.log,
        sleep: h.sleep,
      });
  try {
    // Pod Security Admission: the node shells and the capture Pod are privileged, hostNetwork and hostPID;
    // a Baseline or Restricted default would reject them (labels set at creation, before any Pod)
    try {
      await kubectl(["create", "-f", "-"], JSON.stringify(runNamespace(ns, o.runId)));
      namespaceMade = true;
    } catch (err) {
      // refused outright: nothing was made; any other end (a timeout, an interrupt) may have made it
      if (!/forbidden|Forbidden|Invalid|AlreadyExists/.test(err instanceof Error ? err.message : ""))
        namespaceMade = true;
      throw err;
    }
    const nodes = await ciliumNodes(kubectl);
    for (const node of nodes) {
      const pod = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: `node-shell-${node}`, namespace: ns, labels: NODE_SHELL_LABELS },
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
    // watched through the API: one call, done when the last of them runs
    const shells = (a: unknown) => podStates(a).filter((x) => x.name.startsWith("node-shell-"));
    await watchGate(
      { exec: h.cluster(context), log: o.log, sleep: h.sleep },
      {
        resource: "pods",
        namespace: ns,
        selector: "app.kubernetes.io/component=node-shell",
        until: `${nodes.length} node-shell Pods Running`,
        what: `${nodes.length} node-shell Pods Running in ${ns}`,
        deadlineMs: NODE_SHELL_DEADLINE_MS,
        done: (a) => {
          const ps = shells(a);
          return ps.length === nodes.length && ps.every((x) => x.phase === "Running" && !x.deleting);
        },
        // each Pod that is not Running with why: ImagePullBackOff and the image, Pending and the scheduler's reason
        show: (a) => {
          const ps = shells(a);
          return (
            `${ps.filter((x) => x.phase === "Running").length}/${nodes.length} Running` +
            (ps.some((x) => x.phase !== "Running")
              ? `; ${ps
                  .filter((x) => x.phase !== "Running")
                  .map(whyNotReady)
                  .join("; ")}`
              : "")
          );
        },
      },
    );
    const p = makeProfile({ provider: "existing", mode: "kpr", existingContext: context });
    const g = gateContext(h, p, o.log);
    await agentsOk(g, nodes);
    const v = await clusterVersions(g, nodes);
    const mode: Mode = v.kpr === "True" ? "kpr" : "kube-proxy";
    if (o.modes.length === 1 && o.modes[0] !== mode)
      throw new UserError(
        `CONFORMANCE_MODE=${o.modes[0]} but the cluster's agents report KubeProxyReplacement ${v.kpr} (mode ${mode})`,
      );
    o.log(`mode ${mode}: the agents report KubeProxyReplacement ${v.kpr} (Cilium ${v.cilium ?? "?"})`);
    // a minor older than every declared one is refused here, in one line (a newer one runs on assumed expectations)
    if (v.cilium) assertRunnableCilium(v.cilium);
    const minor = /^(\d+\.\d+)/.exec(v.cilium ?? "")?.[1] ?? "";
    const never = neverRunHere(v.cilium ?? "?", v.kubernetes ?? undefined);
    for (const l of never) o.log(l);
    const dir = join(o.resultsDir, o.runId, mode);
    bundleDir = dir;
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
      namespace: ns,
      phases: {},
      ...(never.length > 0 ? { neverRunHere: never } : {}),
    });
    await recordBaseline(g, nodes, dir);
    const outside = await outsideContainer(h, o.log);
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
          ...(outside ? { outsideContainer: outside } : {}),
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

type Kubectl2 = (argv: string[]) => Promise<ExecResult>;

/**
 * Watches until the namespace is gone (one `api watch` call), to NAMESPACE_GONE_DEADLINE_MS, showing its phase
 * and the conditions that hold it (NamespaceContentRemaining: Some resources are remaining: pods. has 2 resource
 * instances; NamespaceFinalizersRemaining…). Never throws: the teardown goes on and reports.
 */
export async function waitNamespaceGone(
  exec: Executor,
  ns: string,
  log: (line: string) => void,
  now: () => number = () => performance.now(),
): Promise<{ gone: boolean; waitedMs: number; last: string }> {
  const t0 = now();
  try {
    await watchGate(
      { exec, log, sleep: async () => {} },
      {
        resource: "namespace",
        name: ns,
        until: "gone",
        what: `namespace ${ns} gone`,
        deadlineMs: NAMESPACE_GONE_DEADLINE_MS,
        done: (a) => itemsOf(a).length === 0,
        show: (a) => {
          const [n] = itemsOf(a);
          return n ? namespaceState(n) : "gone";
        },
      },
    );
    return { gone: true, waitedMs: now() - t0, last: "gone" };
  } catch (err) {
    const last = err instanceof DeadlineError ? err.last : err instanceof Error ? err.message : String(err);
    log(`namespace ${ns} is not gone after ${Math.round((now() - t0) / 1000)} s: ${last}`);
    return { gone: false, waitedMs: now() - t0, last };
  }
}

/** The CiliumIdentity objects of the run's Pods, with when cilium-operator collects them. */
async function ciliumOwned(
  kubectl: Kubectl2,
  ns: string,
  goneAt: Date,
): Promise<{ items: TeardownReport["ciliumOwned"]; gc: IdentityGc }> {
  const cm = await kubectl(["-n", "kube-system", "get", "configmap", "cilium-config", "-o", "json"]);
  const gc = cm.exitCode === 0 ? identityGcConfig(JSON.parse(cm.stdout)) : IDENTITY_GC_DEFAULTS;
  const r = await kubectl([
    "get",
    "ciliumidentities.cilium.io",
    "-l",
    `io.kubernetes.pod.namespace=${ns}`,
    "-o",
    "json",
  ]);
  if (r.exitCode !== 0) return { items: [], gc };
  const items = parseRunIdentities(JSON.parse(r.stdout)).map((id) => {
    const e = identityExpiry(id, gc, goneAt);
    return {
      kind: "CiliumIdentity",
      name: id.name,
      expires: e.text,
      earliest: e.earliest.toISOString(),
      latest: e.latest.toISOString(),
    };
  });
  return { items, gc };
}
