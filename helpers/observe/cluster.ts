import { type ApiQuery, apiGet } from "../exec/api-argv.ts";
import { type WatchOptions, watchCall } from "../exec/api-watch.ts";
import { API_READ_TIMEOUT_MS } from "../exec/kube.ts";
import { mustRun } from "../exec/types.ts";
import { ReplayExhausted } from "../poll.ts";
import type { PodRef } from "../records/common.ts";
import { type Quote, RawText } from "../records/evidence.ts";
import type { RunContext } from "./context.ts";

type Json = Record<string, unknown>;
const o = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});

/**
 * kubectl is kept where the command itself is what a user would type (apply of the topic's manifests, scale,
 * logs); reads and waits go through the API in process (`api` target: helpers/exec/api.ts), recorded alike.
 */

export async function kubectlRaw(ctx: RunContext, argv: string[], stdin?: string): Promise<RawText> {
  return RawText.stdout(
    await mustRun(ctx.exec, { target: { kind: "kubectl" }, argv, ...(stdin !== undefined ? { stdin } : {}) }),
  );
}

/** A cilium-agent Pod's log since `sinceIso` (the run's start, or a leg's), at its place in the bundle. */
export async function agentLogSince(ctx: RunContext, pod: string, sinceIso: string): Promise<RawText> {
  return kubectlRaw(ctx, [
    "-n",
    "kube-system",
    "logs",
    pod,
    "-c",
    "cilium-agent",
    `--since-time=${sinceIso}`,
  ]);
}

export async function kubectl(ctx: RunContext, argv: string[], stdin?: string): Promise<string> {
  return (await kubectlRaw(ctx, argv, stdin)).text;
}

/** `kubectl … -o json`: the document, and its output at its place (evidence quotes its lines). */
export async function kubectlJsonRaw(ctx: RunContext, argv: string[]): Promise<{ json: Json; raw: RawText }> {
  const raw = await kubectlRaw(ctx, [...argv, "-o", "json"]);
  try {
    return { json: o(JSON.parse(raw.text)), raw };
  } catch {
    throw new Error(`kubectl ${argv.join(" ")} -o json printed no JSON: ${raw.text.slice(0, 120)}`);
  }
}

export async function kubectlJson(ctx: RunContext, argv: string[]): Promise<Json> {
  return (await kubectlJsonRaw(ctx, argv)).json;
}

/** A read through the API (`get …`, within API_READ_TIMEOUT_MS): the answer, and its output at its place. */
export async function apiJsonRaw(ctx: RunContext, q: ApiQuery): Promise<{ json: Json; raw: RawText }> {
  const argv = apiGet(q);
  const raw = RawText.stdout(
    await mustRun(ctx.exec, { target: { kind: "api" }, argv, timeoutMs: API_READ_TIMEOUT_MS }),
  );
  try {
    return { json: o(JSON.parse(raw.text)), raw };
  } catch {
    throw new Error(`api ${argv.join(" ")} answered no JSON: ${raw.text.slice(0, 120)}`);
  }
}

/**
 * Waits by watching: on a cluster, one `api watch` call lists then watches until `done` holds, so it reacts to
 * the change itself instead of the next poll's tick, and is recorded (and replayed) as ONE call whose output is
 * the list at the moment the condition held. At the deadline it throws DeadlineError with the last list seen;
 * in a replay whose recordings never meet the condition, ReplayExhausted; any other failure (no permission,
 * interrupted) names the call.
 */
export type { WatchOptions };

export async function watchUntil(
  ctx: RunContext,
  w: WatchOptions,
): Promise<{ json: Json; raw: RawText; elapsedMs: number }> {
  const spent = ctx.spent().count;
  const { json, result } = await watchCall(ctx.exec, w, {
    progress: ctx.log,
    stopped: (last) =>
      ctx.spent().count > spent ? new ReplayExhausted(w.what, ctx.spent().key, last) : null,
  });
  return { json, raw: RawText.stdout(result), elapsedMs: result.durationMs };
}

/** The quotes of some JSON values of an output (those present). */
function jsonQuotes(raw: RawText | undefined, paths: (string | number)[][]): Quote[] {
  if (!raw) return [];
  return paths.map((p) => raw.jsonQuote(p)).filter((q): q is Quote => q !== null);
}

export interface PodInfo extends PodRef {
  node: string;
  ready: boolean;
  phase: string;
}

/** Pods of a `get pods -o json` List (or one Pod); with its output, each carries the lines of its name and IP. */
export function podInfos(list: Json, raw?: RawText): PodInfo[] {
  const listed = Array.isArray(list.items);
  const items = listed ? (list.items as Json[]) : [list];
  return items.map((p, i) => {
    const at = listed ? ["items", i] : [];
    const meta = o(p.metadata);
    const spec = o(p.spec);
    const status = o(p.status);
    const conds = Array.isArray(status.conditions) ? (status.conditions as Json[]) : [];
    return {
      name: String(meta.name ?? ""),
      ip: String(status.podIP ?? ""),
      node: String(spec.nodeName ?? ""),
      phase: String(status.phase ?? ""),
      ready:
        conds.some((c) => c.type === "Ready" && c.status === "True") &&
        Boolean(meta.deletionTimestamp) === false,
      evidence: jsonQuotes(raw, [
        [...at, "metadata", "name"],
        [...at, "status", "podIP"],
      ]),
    };
  });
}

export async function pods(ctx: RunContext, namespace: string, selector: string): Promise<PodInfo[]> {
  const { json, raw } = await apiJsonRaw(ctx, { resource: "pods", namespace, selector });
  return podInfos(json, raw);
}

export async function pod(ctx: RunContext, namespace: string, name: string): Promise<PodInfo> {
  const { json, raw } = await apiJsonRaw(ctx, { resource: "pod", name, namespace });
  const [p] = podInfos(json, raw);
  if (!p) throw new Error(`pod ${namespace}/${name} not found`);
  return p;
}

/** A Service's ClusterIP, and the line of the output that says it. */
export async function clusterIpRaw(
  ctx: RunContext,
  namespace: string,
  service: string,
): Promise<{ ip: string; evidence: Quote[] }> {
  const { json, raw } = await apiJsonRaw(ctx, { resource: "service", name: service, namespace });
  const ip = o(json.spec).clusterIP;
  if (typeof ip !== "string" || ip === "" || ip === "None")
    throw new Error(`service ${namespace}/${service} has no ClusterIP`);
  return { ip, evidence: jsonQuotes(raw, [["spec", "clusterIP"]]) };
}

export async function clusterIp(ctx: RunContext, namespace: string, service: string): Promise<string> {
  return (await clusterIpRaw(ctx, namespace, service)).ip;
}

export interface NodeInfo {
  name: string;
  internalIp: string;
  kernel: string;
  kubelet: string;
  /** The lines of its name, InternalIP and kernel in `get nodes -o json`. */
  evidence: Quote[];
}

export async function nodes(ctx: RunContext): Promise<NodeInfo[]> {
  const { json: list, raw } = await apiJsonRaw(ctx, { resource: "nodes" });
  return ((list.items ?? []) as Json[]).map((n, i) => {
    const status = o(n.status);
    const addrs = Array.isArray(status.addresses) ? (status.addresses as Json[]) : [];
    const info = o(status.nodeInfo);
    const ipAt = addrs.findIndex((a) => a.type === "InternalIP");
    return {
      name: String(o(n.metadata).name ?? ""),
      internalIp: String(addrs[ipAt]?.address ?? ""),
      kernel: String(info.kernelVersion ?? ""),
      kubelet: String(info.kubeletVersion ?? ""),
      evidence: jsonQuotes(raw, [
        ["items", i, "metadata", "name"],
        ...(ipAt >= 0 ? [["items", i, "status", "addresses", ipAt, "address"]] : []),
        ["items", i, "status", "nodeInfo", "kernelVersion"],
      ]),
    };
  });
}

/** The Cilium endpoint id of a Pod (its CiliumEndpoint's status.id), and the line that says it. */
export async function endpointIdRaw(
  ctx: RunContext,
  namespace: string,
  podName: string,
): Promise<{ id: number; evidence: Quote[] }> {
  const { json: cep, raw } = await apiJsonRaw(ctx, {
    resource: "ciliumendpoints.cilium.io",
    name: podName,
    namespace,
  });
  const id = o(cep.status).id;
  if (typeof id !== "number") throw new Error(`CiliumEndpoint ${namespace}/${podName} has no status.id yet`);
  return { id, evidence: jsonQuotes(raw, [["status", "id"]]) };
}

export async function endpointId(ctx: RunContext, namespace: string, podName: string): Promise<number> {
  return (await endpointIdRaw(ctx, namespace, podName)).id;
}
