import { fitLine, percentile } from "../measure/stats.ts";
import { formatEndpoint } from "../parse/address.ts";
import { parseBpfLbList } from "../parse/bpf-lb-list.ts";
import { parseConfig } from "../parse/config.ts";
import { curlArgv, parseCurl } from "../parse/curl.ts";
import { linesContaining } from "../parse/iptables-save.ts";
import { parseServiceListJson } from "../parse/service-list-json.ts";
import { pollUntil } from "../poll.ts";
import type { MeasureLatencyRecord, MeasureScaleRecord, RecordSet } from "../records/types.ts";
import { ciliumDbg } from "./agent.ts";
import { clusterIp, kubectl, nodes, pods } from "./cluster.ts";
import type { RunContext } from "./context.ts";
import { iptablesSave } from "./node.ts";
import { ensureGhostAndProbe } from "./workloads.ts";

/** Service counts of the scale measurement (the issue's 1, 50, 200). */
export const SCALE_POINTS = [1, 50, 200];
export const ENDPOINTS_PER_SERVICE = 4;
export const CONVERGENCE_EVENTS = 10;
export const GHOST_PROBES = 20;
const SCALE_LABEL = "dpc-measure=scale";
const LATENCY_LABEL = "dpc-measure=latency";

/**
 * Backend addresses for measurement EndpointSlices: 198.18.0.0/15, the benchmarking range. They back
 * Services without Pods; nothing ever sends traffic to them.
 */
export function benchAddress(k: number, base = 18): string {
  return `198.${base}.${(k >> 8) & 255}.${k & 255}`;
}

type Obj = Record<string, unknown>;

function service(ns: string, name: string, label: string): Obj {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: ns, labels: { "dpc-measure": label } },
    spec: { type: "ClusterIP", ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }] },
  };
}

function slice(ns: string, svc: string, label: string, addresses: string[]): Obj {
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
async function deleteMeasurement(ctx: RunContext, label: string): Promise<void> {
  await kubectl(ctx, ["-n", ctx.namespace, "delete", "services,endpointslices", "-l", label, "--wait=true"]);
}

async function agentNodes(ctx: RunContext): Promise<string[]> {
  return (await pods(ctx, "kube-system", "k8s-app=cilium")).map((p) => p.node).sort();
}

/** Frontends (`ip:80`) of this run's measurement Services in one agent, with their backend counts. */
async function measureFrontends(ctx: RunContext, node: string, prefix: string): Promise<Map<string, number>> {
  const list = parseServiceListJson(await ciliumDbg(ctx, node, ["service", "list", "-o", "json"]));
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
  return out;
}

/** Issue 6: kube-proxy lines and BPF LB entries as the number of Services grows (both modes). */
export async function observeScaling(ctx: RunContext): Promise<RecordSet> {
  const agents = await agentNodes(ctx);
  const node = agents[0] as string;
  const points: MeasureScaleRecord["points"] = [];
  for (const n of SCALE_POINTS) {
    ctx.log(`${n} Services × ${ENDPOINTS_PER_SERVICE} endpoints`);
    const t0 = ctx.now();
    await kubectl(ctx, ["apply", "-f", "-"], scaleManifest(ctx.namespace, n));
    let frontends = new Map<string, number>();
    for (const a of agents) {
      const { value } = await pollUntil({
        what: `${n} measurement Services with ${ENDPOINTS_PER_SERVICE} backends each in the agent on ${a}`,
        deadlineMs: 120_000,
        intervalMs: 1000,
        probe: () => measureFrontends(ctx, a, "dpc-m-"),
        done: (m) => m.size === n && [...m.values()].every((c) => c === ENDPOINTS_PER_SERVICE),
        show: (m) =>
          `${m.size} Services, ${[...m.values()].filter((c) => c === ENDPOINTS_PER_SERVICE).length} complete`,
        sleep: ctx.sleep,
        now: ctx.now,
        progress: ctx.log,
      });
      if (a === node) frontends = value;
    }
    const comment = `${ctx.namespace}/dpc-m-`;
    let raw = "";
    if (ctx.mode === "kube-proxy") {
      const want = n * ENDPOINTS_PER_SERVICE;
      const { value } = await pollUntil({
        what: `${want} KUBE-SEP DNAT rules for the measurement Services on ${node}`,
        deadlineMs: 120_000,
        intervalMs: 1000,
        probe: () => iptablesSave(ctx, node),
        done: (t) => linesContaining(t, comment).filter((l) => l.includes("-j DNAT")).length === want,
        show: (t) => `${linesContaining(t, comment).filter((l) => l.includes("-j DNAT")).length} DNAT rules`,
        sleep: ctx.sleep,
        now: ctx.now,
        progress: ctx.log,
      });
      raw = value;
    } else raw = await iptablesSave(ctx, node);
    const programmedMs = ctx.now() - t0;
    const ips = new Set([...frontends.keys()].map((f) => f.slice(0, f.lastIndexOf(":"))));
    const lbEntries: Record<string, number> = {};
    for (const a of agents) {
      const lb = parseBpfLbList(await ciliumDbg(ctx, a, ["bpf", "lb", "list"]));
      lbEntries[a] = lb.services
        .filter((s) => ips.has(s.frontend.slice(0, s.frontend.lastIndexOf(":"))))
        .reduce((acc, s) => acc + 1 + s.backends.length, 0);
    }
    points.push({
      services: n,
      endpoints: n * ENDPOINTS_PER_SERVICE,
      kube_proxy_lines: linesContaining(raw, comment).length,
      lb_entries: lbEntries,
      programmed_ms: programmedMs,
    });
    await deleteMeasurement(ctx, SCALE_LABEL);
    for (const a of agents) {
      await pollUntil({
        what: `the measurement Services gone from the agent on ${a}`,
        deadlineMs: 120_000,
        intervalMs: 1000,
        probe: () => measureFrontends(ctx, a, "dpc-m-"),
        done: (m) => m.size === 0,
        show: (m) => `${m.size} left`,
        sleep: ctx.sleep,
        now: ctx.now,
        progress: ctx.log,
      });
    }
  }
  const xs = points.map((p) => p.services);
  const kp = fitLine(
    xs,
    points.map((p) => p.kube_proxy_lines),
  );
  const lb = fitLine(
    xs,
    points.map((p) => p.lb_entries[node] ?? 0),
  );
  const round = (v: number) => Math.round(v * 1000) / 1000;
  return {
    scaling: {
      record: {
        endpoints_per_service: ENDPOINTS_PER_SERVICE,
        points,
        kube_proxy_per_service: round(kp.slope),
        kube_proxy_r2: round(kp.r2),
        lb_per_service: round(lb.slope),
        lb_r2: round(lb.r2),
      },
      evidence: {
        points: points.map(
          (p) =>
            `${p.services} Services: ${p.kube_proxy_lines} kube-proxy lines, LB entries ${JSON.stringify(p.lb_entries)}, programmed in ${p.programmed_ms} ms`,
        ),
      },
    },
  };
}

/** Issue 6: endpoint → map convergence (and → KUBE-SEP with kube-proxy) over repeated events; ghost fail-fast times. */
export async function observeLatency(ctx: RunContext): Promise<RecordSet> {
  const agents = await agentNodes(ctx);
  const node = agents[0] as string;
  const svc = "dpc-c";
  const addrs = (k: number) => Array.from({ length: k }, (_, i) => benchAddress(i + 1, 19));
  await kubectl(
    ctx,
    ["apply", "-f", "-"],
    JSON.stringify({
      apiVersion: "v1",
      kind: "List",
      items: [service(ctx.namespace, svc, "latency"), slice(ctx.namespace, svc, "latency", addrs(1))],
    }),
  );
  const vip = await clusterIp(ctx, ctx.namespace, svc);
  const frontend = formatEndpoint(vip, 80);
  const events: MeasureLatencyRecord["events"] = [];
  for (let k = 2; k <= CONVERGENCE_EVENTS + 1; k++) {
    const address = formatEndpoint(benchAddress(k, 19), 8080);
    await kubectl(ctx, ["apply", "-f", "-"], JSON.stringify(slice(ctx.namespace, svc, "latency", addrs(k))));
    const t0 = ctx.now();
    const mapMs: Record<string, number | null> = Object.fromEntries(agents.map((a) => [a, null]));
    let kpMs: number | null = null;
    const deadline = t0 + 30_000;
    while (ctx.now() < deadline) {
      for (const a of agents) {
        if (mapMs[a] !== null) continue;
        const lb = parseBpfLbList(await ciliumDbg(ctx, a, ["bpf", "lb", "list"]));
        const has = lb.services.some(
          (s) => s.frontend === frontend && s.backends.some((b) => b.address === address),
        );
        if (has) mapMs[a] = ctx.now() - t0;
      }
      if (ctx.mode === "kube-proxy" && kpMs === null) {
        const raw = await iptablesSave(ctx, node);
        if (raw.includes(`--to-destination ${address}`)) kpMs = ctx.now() - t0;
      }
      if (Object.values(mapMs).every((v) => v !== null) && (ctx.mode !== "kube-proxy" || kpMs !== null))
        break;
      await ctx.sleep(200);
    }
    events.push({ index: k - 1, address, map_ms: mapMs, kube_proxy_ms: kpMs });
    ctx.log(
      `event ${k - 1}: ${address} in the maps after ${JSON.stringify(mapMs)} ms${ctx.mode === "kube-proxy" ? `, KUBE-SEP after ${kpMs} ms` : ""}`,
    );
  }
  await deleteMeasurement(ctx, LATENCY_LABEL);
  await ensureGhostAndProbe(ctx);
  const ghost = await clusterIp(ctx, ctx.namespace, "ghost");
  const seconds: number[] = [];
  const exits: number[] = [];
  for (let i = 0; i < GHOST_PROBES; i++) {
    const r = await ctx.exec.run({
      target: { kind: "pod", namespace: ctx.namespace, pod: "probe" },
      argv: curlArgv(`http://${ghost}/`, { verbose: false }),
    });
    const c = parseCurl({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr });
    seconds.push(c.timeTotal ?? Number.NaN);
    exits.push(c.exitCode);
  }
  const config = parseConfig(await ciliumDbg(ctx, node, ["config", "-a"]));
  const all = events.flatMap((e) => Object.values(e.map_ms).map((v) => v ?? Number.POSITIVE_INFINITY));
  const kp = events.map((e) => e.kube_proxy_ms).filter((v): v is number => v !== null);
  const nodeCount = (await nodes(ctx)).length;
  return {
    latency: {
      record: {
        events,
        map_p50_ms: percentile(all, 50),
        map_p90_ms: percentile(all, 90),
        kube_proxy_p50_ms:
          ctx.mode === "kube-proxy"
            ? percentile(kp.length === events.length ? kp : [...kp, Number.POSITIVE_INFINITY], 50)
            : null,
        kube_proxy_p90_ms:
          ctx.mode === "kube-proxy"
            ? percentile(kp.length === events.length ? kp : [...kp, Number.POSITIVE_INFINITY], 90)
            : null,
        ghost_seconds: seconds,
        ghost_p50_s: percentile(seconds, 50),
        ghost_p90_s: percentile(seconds, 90),
        ghost_exit_codes: [...new Set(exits)].sort(),
        no_backend_response: config.options.ServiceNoBackendResponse ?? null,
      },
      evidence: {
        events: events.map(
          (e) =>
            `#${e.index} ${e.address}: maps ${JSON.stringify(e.map_ms)} ms${e.kube_proxy_ms !== null ? `, KUBE-SEP ${e.kube_proxy_ms} ms` : ""} (${nodeCount} nodes)`,
        ),
        ghost_seconds: [
          `${seconds.length} probes: ${seconds.join(", ")} s; exit codes ${[...new Set(exits)].join(",")}`,
        ],
      },
    },
  };
}
