import { dropDeltas, parseBpfMetrics } from "../parse/bpf-metrics.ts";
import { parseStatus } from "../parse/status.ts";
import { statusQuote } from "../records/common.ts";
import { type Quote, RawText } from "../records/evidence.ts";
import type { NodeDrop, UpgradeLeg } from "../records/types.ts";
import { ciliumDbgRaw } from "./agent.ts";
import { apiJsonRaw, type NodeInfo, watchUntil } from "./cluster.ts";
import { type RunContext, waitFor } from "./context.ts";
import { onNode } from "./node.ts";

type Counts = Record<string, number | undefined>;
const status = (o: Record<string, unknown>): Counts => (o.status ?? {}) as Counts;
const generation = (o: Record<string, unknown>): number =>
  ((o.metadata ?? {}) as { generation?: number }).generation ?? 1;

/**
 * The DaemonSet and the operator's Deployment rolled out, by watching both (as `kubectl rollout status`: the
 * newest generation observed, every Pod updated and ready, no old replica left).
 */
export async function rolledOut(ctx: RunContext, ds: string, dep: string, deadlineMs: number): Promise<void> {
  await Promise.all([
    watchUntil(ctx, {
      resource: "daemonset",
      name: ds,
      namespace: "kube-system",
      until: "rolled out",
      what: `DaemonSet ${ds} rolled out`,
      deadlineMs,
      done: (d) => {
        const s = status(d);
        return (
          (s.observedGeneration ?? 0) >= generation(d) &&
          s.desiredNumberScheduled !== undefined &&
          s.updatedNumberScheduled === s.desiredNumberScheduled &&
          s.numberReady === s.desiredNumberScheduled &&
          (s.numberUnavailable ?? 0) === 0
        );
      },
      show: (d) => {
        const s = status(d);
        return `agents ${s.updatedNumberScheduled ?? 0} updated, ${s.numberReady ?? 0} ready of ${s.desiredNumberScheduled ?? "?"}`;
      },
    }),
    watchUntil(ctx, {
      resource: "deployment",
      name: dep,
      namespace: "kube-system",
      until: "rolled out",
      what: `Deployment ${dep} rolled out`,
      deadlineMs,
      done: (d) => {
        const s = status(d);
        return (
          (s.observedGeneration ?? 0) >= generation(d) &&
          (s.updatedReplicas ?? 0) >= 1 &&
          s.updatedReplicas === s.availableReplicas &&
          s.replicas === s.updatedReplicas
        );
      },
      show: (d) => {
        const s = status(d);
        return `operator ${s.updatedReplicas ?? 0} updated, ${s.availableReplicas ?? 0} available`;
      },
    }),
  ]);
}

export interface AgentVersion {
  version: string;
  ok: boolean;
  line: string;
  quote: Quote | null;
}

/** Every agent Pod of the DaemonSet rolled out, each running `version` and reporting OK. */
export async function waitAgents(
  ctx: RunContext,
  nodeList: NodeInfo[],
  version: string,
): Promise<Record<string, AgentVersion>> {
  await rolledOut(ctx, "cilium", "cilium-operator", 900_000);
  const agents: Record<string, AgentVersion> = {};
  for (const n of nodeList) {
    const { value } = await waitFor(ctx, {
      what: `the agent on ${n.name} to run Cilium ${version} and report OK`,
      deadlineMs: 600_000,
      intervalMs: 1000,
      probe: async () => {
        const raw = await ciliumDbgRaw(ctx, n.name, ["status"]);
        const st = parseStatus(raw.text);
        const quote = statusQuote(raw, st, "Cilium")[0] ?? null;
        const line = quote?.quote.trim() ?? "(no Cilium line)";
        return {
          version: (st.ciliumVersion ?? "").split(" ")[0] ?? "",
          ok: /^Cilium:\s+Ok\b/.test(line),
          line,
          quote,
        };
      },
      done: (s) => s.ok && s.version === version,
      show: (s) => s.line,
    });
    agents[n.name] = value;
  }
  return agents;
}

/** Each node's reading of its BPF metrics map, by node name. */
export type BpfMetrics = Map<string, { raw: RawText; parsed: ReturnType<typeof parseBpfMetrics> }>;

/** Every node's pinned BPF metrics map (the datapath's drop counters, kept across agent restarts). */
export async function bpfMetrics(ctx: RunContext, nodeList: NodeInfo[]): Promise<BpfMetrics> {
  const out: BpfMetrics = new Map();
  for (const n of nodeList) {
    const raw = await ciliumDbgRaw(ctx, n.name, ["bpf", "metrics", "list", "-o", "json"]);
    out.set(n.name, { raw, parsed: parseBpfMetrics(raw.text) });
  }
  return out;
}

/** What each node dropped between two readings of its counters, in the nodes' order. */
export function nodeDrops(nodes: NodeInfo[], before: BpfMetrics, after: BpfMetrics): NodeDrop[] {
  return nodes.flatMap((n) =>
    dropDeltas(before.get(n.name)?.parsed ?? [], after.get(n.name)?.parsed ?? []).map((d) => ({
      node: n.name,
      ...d,
    })),
  );
}

/** A drop as evidence says it: `N × reason (direction, file:line)`. */
export function dropText(d: NodeDrop): string {
  return `${d.packets} × ${d.reason} (${d.direction}, ${d.file}:${d.line})`;
}

/** The map names pinned in the tc globals on a node, per-endpoint numbers folded (`cilium_policy_v2_<id>`), sorted. */
export function foldMapNames(ls: string): string[] {
  const names = ls
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => /^[A-Za-z0-9_]+$/.test(l))
    .map((l) => l.replace(/_\d{3,}$/, "_<id>"));
  return [...new Set(names)].sort();
}

/** Each node's pinned maps (the node's /sys/fs/bpf/tc/globals). */
export async function pinnedMaps(ctx: RunContext, nodeList: NodeInfo[]): Promise<Map<string, RawText>> {
  const out = new Map<string, RawText>();
  for (const n of nodeList)
    out.set(n.name, RawText.stdout(await onNode(ctx, n.name, ["ls", "-1", "/sys/fs/bpf/tc/globals"])));
  return out;
}

/** When each node's agent Pod (the new one, after a rollout) started and became ready, from the API. */
export async function agentRestarts(
  ctx: RunContext,
): Promise<{ restarts: UpgradeLeg["agent_restarts"]; raw: RawText; pods: Record<string, string> }> {
  const { json, raw } = await apiJsonRaw(ctx, {
    resource: "pods",
    namespace: "kube-system",
    selector: "k8s-app=cilium",
  });
  const list = json as {
    items?: {
      metadata?: { name?: string };
      spec?: { nodeName?: string };
      status?: {
        containerStatuses?: { name?: string; state?: { running?: { startedAt?: string } } }[];
        conditions?: { type?: string; status?: string; lastTransitionTime?: string }[];
      };
    }[];
  };
  const restarts: UpgradeLeg["agent_restarts"] = {};
  const podsByNode: Record<string, string> = {};
  for (const p of list.items ?? []) {
    const node = p.spec?.nodeName;
    if (!node) continue;
    const agent = p.status?.containerStatuses?.find((c) => c.name === "cilium-agent");
    const ready = p.status?.conditions?.find((c) => c.type === "Ready" && c.status === "True");
    restarts[node] = {
      pod: p.metadata?.name ?? "?",
      started: agent?.state?.running?.startedAt ?? null,
      ready: ready?.lastTransitionTime ?? null,
    };
    podsByNode[node] = p.metadata?.name ?? "?";
  }
  return { restarts, raw, pods: podsByNode };
}
