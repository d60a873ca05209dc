/**
 * The readiness gates after Cilium is installed: what the suite needs, each as soon as it holds, the
 * independent ones at once —
 * - every node Ready (watched);
 * - the operator's Deployment available (watched);
 * - the agents: the DaemonSet has created a Pod of its newest template on every node it schedules (watched: not
 *   numberReady, which follows the agent's readinessProbe, period 30 s in the chart, and lags the agent's own
 *   readiness by up to that), each of them running its cilium-agent container with the expected Cilium version
 *   (watched), then `cilium-dbg status --brief` OK in each (polled every second, all agents at once), then the
 *   kube-dns ClusterIP in every agent's service list (polled every second).
 * Beside "Cilium ready" they record a reference measured in the same run: per agent, the time from its Pod's
 * start (status.startTime) to its first `status --brief` OK — the agents' own start.
 */
import { allOrFirstFailure } from "../helpers/concurrent.ts";
import { type ApiQuery, apiGet, itemsOf } from "../helpers/exec/api-argv.ts";
import { type WatchOptions, watchCall } from "../helpers/exec/api-watch.ts";
import { API_READ_TIMEOUT_MS } from "../helpers/exec/kube.ts";
import type { Executor } from "../helpers/exec/types.ts";
import { mustRun } from "../helpers/exec/types.ts";
import { podState, whyNotReady } from "../helpers/observe/pod-status.ts";
import { parseEndpoint } from "../helpers/parse/address.ts";
import { parseServiceListJson } from "../helpers/parse/service-list-json.ts";
import { pollUntil } from "../helpers/poll.ts";
import { abortableSleep, interruptibleExecutor } from "./interrupt.ts";

export interface GateContext {
  exec: Executor;
  log(line: string): void;
  sleep(ms: number): Promise<void>;
  /** The wall clock the agents' own start is read on (ms since the epoch); Date.now when absent. */
  clock?(): number;
}

type Json = Record<string, unknown>;
const o = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});
const n = (v: unknown, d = 0) => (typeof v === "number" ? v : d);

/** How often the gates on agent commands ask (a cilium-dbg exec per agent each time). */
export const GATE_POLL_MS = 1000;

/**
 * Named deadlines of the readiness gates. READY_DEADLINE_S raises the Cilium-start gates (agents scheduled and
 * running, nodes Ready, operator available, agents OK) for slow machines: the agents compile the datapath at
 * start, three at once on two cores in the offline lab, where it defaults to 900 s.
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
  get operator() {
    return startDeadline();
  },
  get agentsOk() {
    return startDeadline();
  },
  /**
   * kube-dns gets backends once CoreDNS's Pods have endpoints, which waits for each agent's first compile of
   * the endpoint programs: on the lab's dual-stack kpr cluster (two clusters' agents compiling on two cores) that
   * took 3 min 20 s (2026-12-05), past the 2 min this gate had; it is a start gate like those above.
   */
  get kubeDns() {
    return Math.max(120_000, startDeadline());
  },
};

/** A read through the API (`api get`), its answer. */
async function apiGetJson(g: GateContext, q: ApiQuery): Promise<Json> {
  const r = await mustRun(g.exec, {
    target: { kind: "api" },
    argv: apiGet(q),
    timeoutMs: API_READ_TIMEOUT_MS,
  });
  return o(JSON.parse(r.stdout));
}

/** A gate by watching (`api watch`): the answer once `done` holds; at the deadline DeadlineError with the last. */
export async function watchGate(g: GateContext, w: WatchOptions): Promise<Json> {
  return (await watchCall(g.exec, w, { progress: g.log })).json;
}

const ready = (item: Json) =>
  (o(item.status).conditions as Json[] | undefined)?.some((c) => c.type === "Ready" && c.status === "True") ??
  false;
const nameOf = (item: Json) => String(o(item.metadata).name ?? "");

/** Every node Ready (they stay NotReady until the CNI runs); their names, sorted. */
export async function nodesReady(g: GateContext): Promise<string[]> {
  const list = await watchGate(g, {
    resource: "nodes",
    until: "every node Ready",
    what: "every node Ready (they stay NotReady until the CNI runs)",
    deadlineMs: GATE_DEADLINES.nodesReady,
    done: (a) => itemsOf(a).length > 0 && itemsOf(a).every(ready),
    show: (a) =>
      itemsOf(a)
        .map((x) => `${nameOf(x)}=${ready(x) ? "Ready" : "NotReady"}`)
        .join(", ") || "no nodes",
  });
  return itemsOf(list).map(nameOf).sort();
}

/** The operator's Deployment at its newest generation, every replica updated and available. */
export function operatorAvailable(dep: Json): boolean {
  const m = o(dep.metadata);
  const s = o(dep.status);
  return (
    n(s.observedGeneration) >= n(m.generation) &&
    n(s.updatedReplicas) >= 1 &&
    n(s.replicas) === n(s.updatedReplicas) &&
    n(s.availableReplicas) >= n(s.updatedReplicas)
  );
}

export async function operatorReady(g: GateContext): Promise<void> {
  await watchGate(g, {
    resource: "deployment",
    name: "cilium-operator",
    namespace: "kube-system",
    until: "available",
    what: "Deployment kube-system/cilium-operator available",
    deadlineMs: GATE_DEADLINES.operator,
    done: operatorAvailable,
    show: (d) => {
      const s = o(d.status);
      return `operator ${n(s.availableReplicas)}/${n(s.replicas)} available (${n(s.updatedReplicas)} updated, generation ${n(s.observedGeneration)}/${n(o(d.metadata).generation)})`;
    },
  });
}

/**
 * The DaemonSet has observed its newest generation and created a Pod of that template on every node it
 * schedules (updated = desired): what the controller did, not yet whether the agents are ready. Its desired
 * count.
 */
export function agentsScheduled(ds: Json): number | null {
  const m = o(ds.metadata);
  const s = o(ds.status);
  const desired = n(s.desiredNumberScheduled, -1);
  return n(s.observedGeneration) >= n(m.generation) && desired > 0 && n(s.updatedNumberScheduled) === desired
    ? desired
    : null;
}

/** Whether an image is of Cilium `version` (`…:v1.19.7`, `…:v1.19.7@sha256:…`, the lab's `…:v1.19.7-src`). */
export function imageIsVersion(image: string, version: string): boolean {
  const v = version.replace(/^v/, "").replace(/\./g, "\\.");
  return new RegExp(`:v?${v}(?![0-9.])`).test(image);
}

export interface AgentPod {
  pod: string;
  node: string;
  /** The Pod's status.startTime: when its kubelet took it up. */
  startTime: string | null;
  image: string;
  running: boolean;
}

export function agentPods(list: Json): AgentPod[] {
  return itemsOf(list)
    .filter((p) => !o(p.metadata).deletionTimestamp)
    .map((p) => {
      const spec = o(p.spec);
      const status = o(p.status);
      const container = (Array.isArray(spec.containers) ? (spec.containers as Json[]) : []).find(
        (c) => c.name === "cilium-agent",
      );
      const st = (Array.isArray(status.containerStatuses) ? (status.containerStatuses as Json[]) : []).find(
        (c) => c.name === "cilium-agent",
      );
      return {
        pod: nameOf(p),
        node: String(spec.nodeName ?? ""),
        startTime: typeof status.startTime === "string" ? status.startTime : null,
        image: String(container?.image ?? ""),
        running: status.phase === "Running" && o(st?.state).running !== undefined,
      };
    })
    .sort((a, b) => a.node.localeCompare(b.node));
}

/** Every agent Pod of the newest template started: its cilium-agent container running the expected version. */
export async function agentsRunning(g: GateContext, version: string): Promise<AgentPod[]> {
  const ds = await watchGate(g, {
    resource: "daemonset",
    name: "cilium",
    namespace: "kube-system",
    until: "a Pod of its newest template on every node",
    what: "DaemonSet kube-system/cilium to create a Pod of its newest template on every node",
    deadlineMs: GATE_DEADLINES.rollout,
    done: (d) => agentsScheduled(d) !== null,
    show: (d) => {
      const s = o(d.status);
      return `${n(s.updatedNumberScheduled)}/${n(s.desiredNumberScheduled, -1)} updated, generation ${n(s.observedGeneration)}/${n(o(d.metadata).generation)}`;
    },
  });
  const desired = agentsScheduled(ds) as number;
  const good = (p: AgentPod) => p.running && imageIsVersion(p.image, version);
  const list = await watchGate(g, {
    resource: "pods",
    namespace: "kube-system",
    selector: "k8s-app=cilium",
    until: `${desired} agents running Cilium ${version}`,
    what: `${desired} cilium agents running Cilium ${version}`,
    deadlineMs: GATE_DEADLINES.rollout,
    done: (a) => {
      const ps = agentPods(a);
      return ps.length === desired && ps.every(good);
    },
    show: (a) => {
      const ps = agentPods(a);
      const why = itemsOf(a)
        .filter((p) => !o(p.metadata).deletionTimestamp)
        .flatMap((p) => {
          const ap = agentPods({ items: [p] })[0] as AgentPod;
          if (good(ap)) return [];
          if (ap.running) return [`${ap.pod}: image ${ap.image}, not Cilium ${version}`];
          return [whyNotReady(podState(p))];
        });
      return `${ps.filter(good).length}/${desired} running Cilium ${version}${why.length ? `; ${why.slice(0, 4).join("; ")}` : ""}`;
    },
  });
  return agentPods(list);
}

/**
 * `cilium-dbg status --brief` OK in every agent, each asked every second, all at once: when each first said OK
 * (ms since the epoch, the gate's clock).
 */
export async function agentsOk(g: GateContext, nodes: string[]): Promise<Record<string, number>> {
  const clock = g.clock ?? Date.now;
  const firstOk: Record<string, number> = {};
  await Promise.all(
    nodes.map(async (node) => {
      await pollUntil({
        what: `cilium-dbg status --brief OK in the agent on ${node}`,
        deadlineMs: GATE_DEADLINES.agentsOk,
        intervalMs: GATE_POLL_MS,
        probe: async () => {
          const r = await g.exec.run({
            target: { kind: "agent", node },
            argv: ["cilium-dbg", "status", "--brief"],
          });
          return {
            ok: r.exitCode === 0 && r.stdout.trim() === "OK",
            said: (r.stdout || r.stderr).trim().split("\n")[0] ?? "",
          };
        },
        done: (r) => r.ok,
        show: (r) => r.said,
        sleep: g.sleep,
        progress: g.log,
      });
      firstOk[node] = clock();
    }),
  );
  return firstOk;
}

/**
 * The Pods that were waiting for a network when the agents came up (no Pod IP yet, not on the host's network, owned
 * by a controller that brings them back), deleted so that their controller creates them again at once: the kubelet
 * retries a Pod sandbox that failed for want of a CNI only after a back-off that grows to minutes, so CoreDNS,
 * created with the cluster, otherwise waits out the back-off after the CNI works (on the lab "Cilium ready" took
 * 38–84 s where the agents' own start was 24–39 s). cilium-cli's install does the same (`--restart-unmanaged-pods`,
 * on by default; Cilium's Helm guide: "Restart unmanaged Pods"). Only for a cluster the suite created: its caller is
 * the provider that installs Cilium. The Pods deleted, as "namespace/name".
 */
export async function restartUnmanagedPods(g: GateContext): Promise<{ names: string[]; ips: string[] }> {
  // every namespace's Pods (the api target asks one namespace at a time; kubectl lists them all)
  const listAll = async () =>
    itemsOf(
      JSON.parse(
        (await mustRun(g.exec, { target: { kind: "kubectl" }, argv: ["get", "pods", "-A", "-o", "json"] }))
          .stdout,
      ),
    );
  const key = (p: Json) => `${String(o(p.metadata).namespace)}/${nameOf(p)}`;
  const waiting = (await listAll()).filter((p) => {
    const spec = o(p.spec);
    const status = o(p.status);
    const owners = o(p.metadata).ownerReferences;
    return (
      spec.hostNetwork !== true &&
      !status.podIP &&
      status.phase === "Pending" &&
      Array.isArray(owners) &&
      owners.length > 0
    );
  });
  const names = waiting.map(key);
  if (names.length === 0) return { names, ips: [] };
  for (const p of waiting)
    await mustRun(g.exec, {
      target: { kind: "kubectl" },
      // at once: deleted gracefully, a Pod whose sandbox was being created started, became a terminating kube-dns
      // backend beside its successor and failed the DNS topics (two lab runs, not shipped; docs/speed.md)
      argv: [
        "-n",
        String(o(p.metadata).namespace),
        "delete",
        "pod",
        nameOf(p),
        "--grace-period=0",
        "--force",
        "--wait=false",
      ],
    });
  g.log(
    `restarted ${names.length} Pod(s) still waiting for a network, for their controllers to recreate at once: ${names.join(", ")}`,
  );
  // they leave the API at once; one that got an address first is waited for, its address kept for the kube-dns gate
  const ips = new Set<string>();
  await pollUntil({
    what: `the ${names.length} Pod(s) restarted without an address`,
    deadlineMs: GATE_DEADLINES.kubeDns,
    intervalMs: GATE_POLL_MS,
    probe: async () => {
      const left = (await listAll()).filter((p) => names.includes(key(p)) && o(p.status).podIP);
      for (const p of left) ips.add(String(o(p.status).podIP));
      return left.map(key);
    },
    done: (left) => left.length === 0,
    show: (left) => `still terminating with an address: ${left.join(", ")}`,
    sleep: g.sleep,
    progress: g.log,
  });
  return { names, ips: [...ips].sort() };
}

/** Every agent's service list holds the kube-dns ClusterIP with backends (the LB map is programmed). */
export async function kubeDnsProgrammed(g: GateContext, nodes: string[], gone: string[] = []): Promise<void> {
  const svc = await apiGetJson(g, { resource: "service", name: "kube-dns", namespace: "kube-system" });
  const ip = String(o(svc.spec).clusterIP ?? "");
  await pollUntil({
    what: `kube-dns ${ip}:53 in every agent's service list`,
    deadlineMs: GATE_DEADLINES.kubeDns,
    intervalMs: GATE_POLL_MS,
    probe: async () =>
      Promise.all(
        nodes.map(async (node) => {
          const r = await mustRun(g.exec, {
            target: { kind: "agent", node },
            argv: ["cilium-dbg", "service", "list", "-o", "json"],
          });
          const entry = parseServiceListJson(r.stdout).services.find((s) => s.frontend === `${ip}:53`);
          // a restarted CoreDNS Pod's address (restartUnmanagedPods) must have left it
          const stale = (entry?.backends ?? [])
            .map((b) => parseEndpoint(b.address)?.ip ?? b.address)
            .filter((a) => gone.includes(a));
          return {
            node,
            listed: entry !== undefined,
            has: (entry?.backends.length ?? 0) > 0 && stale.length === 0,
            stale,
          };
        }),
      ),
    done: (rs) => rs.every((r) => r.has),
    show: (rs) =>
      rs
        .filter((r) => !r.has)
        .map(
          (r) =>
            `${r.node} ${r.stale.length > 0 ? `still lists the restarted Pods' ${r.stale.join(", ")}` : r.listed ? "lists it without backends (CoreDNS not ready yet)" : "lacks it"}`,
        )
        .join(", ") || "all have it",
    sleep: g.sleep,
    progress: g.log,
  });
}

/** One agent's own start: from its Pod's start to its first `status --brief` OK. */
export interface AgentStart {
  pod: string;
  podStart: string | null;
  firstOk: string;
  /** null when the Pod had no startTime yet. */
  seconds: number | null;
}

export interface CiliumReadiness {
  nodes: string[];
  agents: Record<string, AgentStart>;
  /** The slowest agent's own start (s): the reference "Cilium ready" is read against. */
  agentsOwnStartMax: number | null;
}

/**
 * Every gate the suite needs, the independent ones at once (a failing one stops the others, and its failure is
 * what is reported): nodes Ready ∥ operator available ∥ (agents running the expected version → each agent OK
 * → the Pods still waiting for a network restarted → kube-dns in every agent's service list).
 */
export async function ciliumReady(g: GateContext, version: string): Promise<CiliumReadiness> {
  const gate = (signal: AbortSignal): GateContext => ({
    ...g,
    exec: interruptibleExecutor(g.exec, signal),
    sleep: abortableSleep(g.sleep, signal),
  });
  const [nodes, , agents] = await allOrFirstFailure<unknown>([
    (s) => nodesReady(gate(s)),
    (s) => operatorReady(gate(s)),
    async (s) => {
      const gg = gate(s);
      const pods = await agentsRunning(gg, version);
      const ok = await agentsOk(
        gg,
        pods.map((p) => p.node),
      );
      const restarted = await restartUnmanagedPods(gg);
      await kubeDnsProgrammed(
        gg,
        pods.map((p) => p.node),
        restarted.ips,
      );
      return Object.fromEntries(
        pods.map((p): [string, AgentStart] => {
          const at = ok[p.node] as number;
          const start = p.startTime ? Date.parse(p.startTime) : Number.NaN;
          return [
            p.node,
            {
              pod: p.pod,
              podStart: p.startTime,
              firstOk: new Date(at).toISOString(),
              seconds: Number.isFinite(start) ? Math.round((at - start) / 100) / 10 : null,
            },
          ];
        }),
      );
    },
  ]);
  const starts = agents as Record<string, AgentStart>;
  const secs = Object.values(starts)
    .map((a) => a.seconds)
    .filter((x): x is number => x !== null);
  return {
    nodes: nodes as string[],
    agents: starts,
    agentsOwnStartMax: secs.length > 0 ? Math.max(...secs) : null,
  };
}
