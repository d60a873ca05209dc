import { join } from "node:path";
import { writeMeta } from "../helpers/bundle.ts";
import { UserError } from "../helpers/errors.ts";
import { DEFAULT_KUBECTL_TIMEOUT_MS } from "../helpers/exec/cluster.ts";
import { mustRun } from "../helpers/exec/types.ts";
import { podStates, whyNotReady } from "../helpers/observe/pod-status.ts";
import { pollUntil } from "../helpers/poll.ts";
import type { Mode } from "../helpers/properties/expectation.ts";
import { IMAGES } from "../manifests/images.ts";
import { acquireLease } from "./lease.ts";
import {
  clusterVersions,
  gateContext,
  type Host,
  type Provisioned,
  type ProvisionOptions,
  recordBaseline,
  sh,
} from "./lifecycle.ts";
import { checkBinaries } from "./prereq.ts";
import { makeProfile, runNamespace, runNamespaceName } from "./profile.ts";
import { agentsOk } from "./readiness.ts";

/** The existing-cluster provider: a cluster someone else made, checked and described, never changed. */
type Kubectl = (argv: string[]) => Promise<{ stdout: string }>;

/** Named deadline: every node-shell Pod Running (an image pull on a slow link included). */
export const NODE_SHELL_DEADLINE_MS = 180_000;

/** The node-shell Pods' labels: what the leftover inventory looks for in every namespace. */
export const NODE_SHELL_LABELS = {
  "app.kubernetes.io/part-of": "cilium-datapath-conformance",
  "app.kubernetes.io/component": "node-shell",
};

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
export async function provisionExisting(o: ProvisionOptions, h: Host): Promise<Provisioned> {
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
      timeoutMs: DEFAULT_KUBECTL_TIMEOUT_MS,
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
        timeoutMs: DEFAULT_KUBECTL_TIMEOUT_MS,
      });
    });
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
    await pollUntil({
      what: `${nodes.length} node-shell Pods Running in ${ns}`,
      deadlineMs: NODE_SHELL_DEADLINE_MS,
      intervalMs: 2000,
      probe: async () =>
        podStates(JSON.parse((await kubectl(["-n", ns, "get", "pods", "-o", "json"])).stdout)).filter((x) =>
          x.name.startsWith("node-shell-"),
        ),
      done: (ps) => ps.length === nodes.length && ps.every((x) => x.phase === "Running" && !x.deleting),
      // each Pod that is not Running with why: ImagePullBackOff and the image, Pending and the scheduler's reason
      show: (ps) =>
        `${ps.filter((x) => x.phase === "Running").length}/${nodes.length} Running` +
        (ps.some((x) => x.phase !== "Running")
          ? `; ${ps
              .filter((x) => x.phase !== "Running")
              .map(whyNotReady)
              .join("; ")}`
          : ""),
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
