import { ciliumDbgRaw } from "../observe/agent.ts";
import { kubectl, pods } from "../observe/cluster.ts";
import type { RunContext } from "../observe/context.ts";
import { parseServiceListJson } from "../parse/service-list-json.ts";
import type { RawText } from "../records/evidence.ts";

/** Service counts of the scale measurement (the 1, 50, 200). */
export const SCALE_POINTS = [1, 50, 200];
export const ENDPOINTS_PER_SERVICE = 4;
export const CONVERGENCE_EVENTS = 10;
export const GHOST_PROBES = 20;
export const SCALE_LABEL = "dpc-measure=scale";
export const LATENCY_LABEL = "dpc-measure=latency";

/**
 * Backend addresses for measurement EndpointSlices: 198.18.0.0/15, the benchmarking range. They back
 * Services without Pods; nothing ever sends traffic to them.
 */
export function benchAddress(k: number, base = 18): string {
  return `198.${base}.${(k >> 8) & 255}.${k & 255}`;
}

type Obj = Record<string, unknown>;

export function service(ns: string, name: string, label: string): Obj {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: ns, labels: { "dpc-measure": label } },
    spec: { type: "ClusterIP", ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }] },
  };
}

export function slice(ns: string, svc: string, label: string, addresses: string[]): Obj {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: `${svc}-dpc`,
      namespace: ns,
      labels: {
        "kubernetes.io/service-name": svc,
        "endpointslice.kubernetes.io/managed-by": "cilium-datapath-conformance",
        "dpc-measure": label,
      },
    },
    addressType: "IPv4",
    ports: [{ name: "http", port: 8080, protocol: "TCP" }],
    endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
  };
}

/** N Services with 4 endpoints each, as one List for `kubectl apply -f -`. */
export function scaleManifest(ns: string, services: number): string {
  const items: Obj[] = [];
  for (let i = 0; i < services; i++) {
    const name = `dpc-m-${i}`;
    items.push(service(ns, name, "scale"));
    items.push(
      slice(
        ns,
        name,
        "scale",
        Array.from({ length: ENDPOINTS_PER_SERVICE }, (_, j) => benchAddress(i * ENDPOINTS_PER_SERVICE + j)),
      ),
    );
  }
  return JSON.stringify({ apiVersion: "v1", kind: "List", items });
}

/** Removes the measurement Services and their EndpointSlices (by label), waiting for the API to finish. */
export async function deleteMeasurement(ctx: RunContext, label: string): Promise<void> {
  await kubectl(ctx, ["-n", ctx.namespace, "delete", "services,endpointslices", "-l", label, "--wait=true"]);
}

export async function agentNodes(ctx: RunContext): Promise<string[]> {
  return (await pods(ctx, "kube-system", "k8s-app=cilium")).map((p) => p.node).sort();
}

/** Frontends (`ip:80`) of this run's measurement Services in one agent, with their backend counts. */
export async function measureFrontends(
  ctx: RunContext,
  node: string,
  prefix: string,
): Promise<{ frontends: Map<string, number>; raw: RawText }> {
  const raw = await ciliumDbgRaw(ctx, node, ["service", "list", "-o", "json"]);
  const list = parseServiceListJson(raw.text);
  const out = new Map<string, number>();
  for (const s of list.services) {
    if (
      s.namespace === ctx.namespace &&
      s.name?.startsWith(prefix) &&
      s.type === "ClusterIP" &&
      s.scope === "external"
    )
      out.set(s.frontend, s.backends.length);
  }
  return { frontends: out, raw };
}
