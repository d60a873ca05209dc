import type { Executor } from "../helpers/exec/types.ts";
import { mustRun } from "../helpers/exec/types.ts";
import { type PodState, podStates, whyNotReady } from "../helpers/observe/pod-status.ts";
import { parseServiceListJson } from "../helpers/parse/service-list-json.ts";
import { pollUntil } from "../helpers/poll.ts";

export interface GateContext {
  exec: Executor;
  log(line: string): void;
  sleep(ms: number): Promise<void>;
}

type Json = Record<string, unknown>;
const o = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});

async function json(g: GateContext, argv: string[]): Promise<Json> {
  return o(
    JSON.parse(
      (await mustRun(g.exec, { target: { kind: "kubectl" }, argv: [...argv, "-o", "json"] })).stdout,
    ),
  );
}

/**
 * Named deadlines of the readiness gates. READY_DEADLINE_S raises the three Cilium-start gates (rollout,
 * nodes Ready, agents OK) for slow machines: the agents compile the datapath at start, three at once on two
 * cores in the offline lab, where it defaults to 900 s.
 */
const startDeadline = (): number => {
  const s = Number(process.env.READY_DEADLINE_S ?? (process.env.LAB_IMAGES === "1" ? 900 : 300));
  return Number.isFinite(s) && s > 0 ? s * 1000 : 300_000;
};
export const GATE_DEADLINES = {
  get rollout() {
    return startDeadline();
  },
  get nodesReady() {
    return startDeadline();
  },
  get agentsOk() {
    return startDeadline();
  },
  kubeDns: 120_000,
};

export interface RolloutState {
  ds: {
    generation: number;
    observed: number;
    desired: number;
    updated: number;
    available: number;
    ready: number;
  };
  op: { generation: number; observed: number; replicas: number; updated: number; available: number };
}

export function rolloutState(ds: Json, dep: Json): RolloutState {
  const n = (v: unknown, d = 0) => (typeof v === "number" ? v : d);
  const dsm = o(ds.metadata);
  const dss = o(ds.status);
  const opm = o(dep.metadata);
  const ops = o(dep.status);
  return {
    ds: {
      generation: n(dsm.generation),
      observed: n(dss.observedGeneration),
      desired: n(dss.desiredNumberScheduled, -1),
      updated: n(dss.updatedNumberScheduled),
      available: n(dss.numberAvailable),
      ready: n(dss.numberReady),
    },
    op: {
      generation: n(opm.generation),
      observed: n(ops.observedGeneration),
      replicas: n(ops.replicas),
      updated: n(ops.updatedReplicas),
      available: n(ops.availableReplicas),
    },
  };
}

/**
 * What `kubectl rollout status` waits for: the controller has observed the newest generation (otherwise
 * the status describes the old spec, e.g. a kept cluster re-installed with another Cilium), every Pod is
 * updated and available, and the Deployment has no old replicas left.
 */
export function rolloutDone(s: RolloutState): boolean {
  const ds =
    s.ds.observed >= s.ds.generation &&
    s.ds.desired > 0 &&
    s.ds.updated === s.ds.desired &&
    s.ds.available === s.ds.desired &&
    s.ds.ready === s.ds.desired;
  const op =
    s.op.observed >= s.op.generation &&
    s.op.updated >= 1 &&
    s.op.replicas === s.op.updated &&
    s.op.available >= s.op.updated;
  return ds && op;
}

/**
 * DaemonSet cilium rolled out and Deployment cilium-operator available, both at their newest generation. While
 * it is not, the agent and operator Pods that are not ready are named with why (an image that cannot be pulled,
 * an init container in a crash loop, a Pod the scheduler cannot place).
 */
export async function ciliumRolledOut(g: GateContext): Promise<void> {
  await pollUntil({
    what: "DaemonSet kube-system/cilium rolled out and Deployment cilium-operator available",
    deadlineMs: GATE_DEADLINES.rollout,
    intervalMs: 3000,
    probe: async () => {
      const s = rolloutState(
        await json(g, ["-n", "kube-system", "get", "daemonset", "cilium"]),
        await json(g, ["-n", "kube-system", "get", "deployment", "cilium-operator"]),
      );
      if (rolloutDone(s)) return { s, pods: [] as PodState[] };
      // read only while waiting: the Pods of both (names cilium-… and cilium-operator-…)
      const pods = podStates(await json(g, ["-n", "kube-system", "get", "pods"])).filter((p) =>
        /^cilium-(operator-)?[a-z0-9]+(-[a-z0-9]+)?$/.test(p.name),
      );
      return { s, pods };
    },
    done: ({ s }) => rolloutDone(s),
    show: ({ s, pods }) =>
      `cilium ${s.ds.ready}/${s.ds.desired} ready (${s.ds.updated} updated, generation ${s.ds.observed}/${s.ds.generation}), ` +
      `operator ${s.op.available}/${s.op.replicas} available (${s.op.updated} updated, generation ${s.op.observed}/${s.op.generation})` +
      (pods.some((p) => !p.ready)
        ? `; ${pods
            .filter((p) => !p.ready)
            .slice(0, 4)
            .map(whyNotReady)
            .join("; ")}`
        : ""),
    sleep: g.sleep,
    progress: g.log,
  });
}

export async function nodesReady(g: GateContext): Promise<string[]> {
  const { value } = await pollUntil({
    what: "every node Ready (they stay NotReady until the CNI runs)",
    deadlineMs: GATE_DEADLINES.nodesReady,
    intervalMs: 3000,
    probe: async () =>
      ((await json(g, ["get", "nodes"])).items as Json[]).map((n) => ({
        name: String(o(n.metadata).name),
        ready: ((o(n.status).conditions ?? []) as Json[]).some(
          (c) => c.type === "Ready" && c.status === "True",
        ),
      })),
    done: (ns) => ns.length > 0 && ns.every((n) => n.ready),
    show: (ns) => ns.map((n) => `${n.name}=${n.ready ? "Ready" : "NotReady"}`).join(", "),
    sleep: g.sleep,
    progress: g.log,
  });
  return value.map((n) => n.name);
}

/** `cilium-dbg status --brief` prints OK in every agent. */
export async function agentsOk(g: GateContext, nodes: string[]): Promise<void> {
  await pollUntil({
    what: `cilium-dbg status --brief OK on ${nodes.length} agents`,
    deadlineMs: GATE_DEADLINES.agentsOk,
    intervalMs: 3000,
    probe: async () =>
      Promise.all(
        nodes.map(async (node) => {
          const r = await g.exec.run({
            target: { kind: "agent", node },
            argv: ["cilium-dbg", "status", "--brief"],
          });
          return {
            node,
            ok: r.exitCode === 0 && r.stdout.trim() === "OK",
            said: (r.stdout || r.stderr).trim().split("\n")[0] ?? "",
          };
        }),
      ),
    done: (rs) => rs.every((r) => r.ok),
    show: (rs) => rs.map((r) => `${r.node}: ${r.said}`).join("; "),
    sleep: g.sleep,
    progress: g.log,
  });
}

/** Every agent's service list holds the kube-dns ClusterIP (the LB map is programmed). */
export async function kubeDnsProgrammed(g: GateContext, nodes: string[]): Promise<void> {
  const svc = await json(g, ["-n", "kube-system", "get", "service", "kube-dns"]);
  const ip = String(o(svc.spec).clusterIP ?? "");
  await pollUntil({
    what: `kube-dns ${ip}:53 in every agent's service list`,
    deadlineMs: GATE_DEADLINES.kubeDns,
    intervalMs: 2000,
    probe: async () =>
      Promise.all(
        nodes.map(async (node) => {
          const r = await mustRun(g.exec, {
            target: { kind: "agent", node },
            argv: ["cilium-dbg", "service", "list", "-o", "json"],
          });
          return {
            node,
            has: parseServiceListJson(r.stdout).services.some(
              (s) => s.frontend === `${ip}:53` && s.backends.length > 0,
            ),
          };
        }),
      ),
    done: (rs) => rs.every((r) => r.has),
    show: (rs) =>
      rs
        .filter((r) => !r.has)
        .map((r) => `${r.node} lacks it`)
        .join(", ") || "all have it",
    sleep: g.sleep,
    progress: g.log,
  });
}
