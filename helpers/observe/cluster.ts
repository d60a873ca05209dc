import { mustRun } from "../exec/types.ts";
import type { PodRef } from "../records/common.ts";
import type { RunContext } from "./context.ts";

type Json = Record<string, unknown>;
const o = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});

export async function kubectl(ctx: RunContext, argv: string[], stdin?: string): Promise<string> {
  return (
    await mustRun(ctx.exec, { target: { kind: "kubectl" }, argv, ...(stdin !== undefined ? { stdin } : {}) })
  ).stdout;
}

export async function kubectlJson(ctx: RunContext, argv: string[]): Promise<Json> {
  const out = await kubectl(ctx, [...argv, "-o", "json"]);
  try {
    return o(JSON.parse(out));
  } catch {
    throw new Error(`kubectl ${argv.join(" ")} -o json printed no JSON: ${out.slice(0, 120)}`);
  }
}

export interface PodInfo extends PodRef {
  node: string;
  ready: boolean;
  phase: string;
}

export function podInfos(list: Json): PodInfo[] {
  const items = Array.isArray(list.items) ? (list.items as Json[]) : [list];
  return items.map((p) => {
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
    };
  });
}

export async function pods(ctx: RunContext, namespace: string, selector: string): Promise<PodInfo[]> {
  return podInfos(await kubectlJson(ctx, ["-n", namespace, "get", "pods", "-l", selector]));
}

export async function pod(ctx: RunContext, namespace: string, name: string): Promise<PodInfo> {
  const [p] = podInfos(await kubectlJson(ctx, ["-n", namespace, "get", "pod", name]));
  if (!p) throw new Error(`pod ${namespace}/${name} not found`);
  return p;
}

export async function clusterIp(ctx: RunContext, namespace: string, service: string): Promise<string> {
  const svc = await kubectlJson(ctx, ["-n", namespace, "get", "service", service]);
  const ip = o(svc.spec).clusterIP;
  if (typeof ip !== "string" || ip === "" || ip === "None")
    throw new Error(`service ${namespace}/${service} has no ClusterIP`);
  return ip;
}

export interface NodeInfo {
  name: string;
  internalIp: string;
  kernel: string;
  kubelet: string;
}

export async function nodes(ctx: RunContext): Promise<NodeInfo[]> {
  const list = await kubectlJson(ctx, ["get", "nodes"]);
  return ((list.items ?? []) as Json[]).map((n) => {
    const status = o(n.status);
    const addrs = Array.isArray(status.addresses) ? (status.addresses as Json[]) : [];
    const info = o(status.nodeInfo);
    return {
      name: String(o(n.metadata).name ?? ""),
      internalIp: String(addrs.find((a) => a.type === "InternalIP")?.address ?? ""),
      kernel: String(info.kernelVersion ?? ""),
      kubelet: String(info.kubeletVersion ?? ""),
    };
  });
}

/** The Cilium endpoint id of a Pod (`kubectl get cep NAME` → status.id). */
export async function endpointId(ctx: RunContext, namespace: string, podName: string): Promise<number> {
  const cep = await kubectlJson(ctx, ["-n", namespace, "get", "ciliumendpoints.cilium.io", podName]);
  const id = o(cep.status).id;
  if (typeof id !== "number") throw new Error(`CiliumEndpoint ${namespace}/${podName} has no status.id yet`);
  return id;
}
