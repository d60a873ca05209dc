import { API_BULK_APPLY, apiBulkDelete } from "../exec/api-argv.ts";
import { mustRun, targetKey } from "../exec/types.ts";
import { pods } from "../observe/cluster.ts";
import type { RunContext } from "../observe/context.ts";
import { parseServiceListJson } from "../parse/service-list-json.ts";
import { RawText } from "../records/evidence.ts";

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

/** The deadline of a bulk create or delete of the measurement's objects (200 Services and their slices). */
export const BULK_DEADLINE_MS = 120_000;

/** N Services with 4 endpoints each, as one List (bulk-apply's stdin). */
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

/**
 * Creates (or updates) every object of a List in bulk: server-side apply through the API, 16 requests at a time
 * (`api bulk-apply`), where `kubectl apply` took 13.9 s for 200 Services and their slices on the lab cluster.
 */
export async function applyInBulk(ctx: RunContext, list: string): Promise<RawText> {
  return RawText.stdout(
    await mustRun(ctx.exec, {
      target: { kind: "api" },
      argv: API_BULK_APPLY,
      stdin: list,
      timeoutMs: BULK_DEADLINE_MS,
    }),
  );
}

/**
 * Removes the measurement Services and their EndpointSlices (by label) in bulk (`api bulk-delete`:
 * deletecollection, or concurrent deletes where the API serves none). It does not wait for the API to finish
 * (`kubectl delete --wait=true` deleted one object at a time: 89.5 s for 200 Services and their slices on the
 * lab cluster): the callers wait for what they measure, the agents dropping the Services.
 */
export async function deleteMeasurement(ctx: RunContext, label: string): Promise<RawText> {
  return RawText.stdout(
    await mustRun(ctx.exec, {
      target: { kind: "api" },
      argv: apiBulkDelete(["services", "endpointslices"], ctx.namespace, label),
      timeoutMs: BULK_DEADLINE_MS,
    }),
  );
}

export async function agentNodes(ctx: RunContext): Promise<string[]> {
  return (await pods(ctx, "kube-system", "k8s-app=cilium")).map((p) => p.node).sort();
}

/**
 * Frontends (`ip:80`) of this run's measurement Services in one agent, with their backend counts, and when the
 * read ended (its recorded time: measurements are computed from recorded times, the same in a replay).
 */
export async function measureFrontends(
  ctx: RunContext,
  node: string,
  prefix: string,
): Promise<{ frontends: Map<string, number>; raw: RawText; at: number }> {
  const r = await mustRun(ctx.exec, {
    target: { kind: "agent", node },
    argv: ["cilium-dbg", "service", "list", "-o", "json"],
  });
  const raw = RawText.stdout(r);
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
  return { frontends: out, raw, at: r.recorded?.at ?? Date.now() };
}

/**
 * An observation's calls, timed: the context to run them through, and the span from the first call's start to
 * the last call's end (recorded times, so a replay gives the recording's span).
 */
export function timedCalls(ctx: RunContext): {
  ctx: RunContext;
  span(): { startMs: number; endMs: number } | null;
  /** The latest recorded end of a call to one target (`node/<name>`, `agent/<name>`), or -Infinity. */
  latestAt(target: string): number;
} {
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  const byTarget = new Map<string, number>();
  const exec = {
    run: async (req: Parameters<RunContext["exec"]["run"]>[0]) => {
      const r = await ctx.exec.run(req);
      const at = r.recorded?.at ?? Date.now();
      start = Math.min(start, at - r.durationMs);
      end = Math.max(end, at);
      const key = targetKey(req.target);
      byTarget.set(key, Math.max(byTarget.get(key) ?? Number.NEGATIVE_INFINITY, at));
      return r;
    },
  };
  return {
    ctx: { ...ctx, exec },
    span: () => (Number.isFinite(start) ? { startMs: Math.round(start), endMs: end } : null),
    latestAt: (target) => byTarget.get(target) ?? Number.NEGATIVE_INFINITY,
  };
}
