/**
 * The load the upgrade and restart topics hold the datapath under while its agents change (Cilium's conn-disrupt
 * check made richer): long-lived connections from a Pod on every node to web's ClusterIP, from a node's host
 * namespace to its NodePort on another node, and (with a range of ours) from Pods to a LoadBalancer address and to
 * one with externalTrafficPolicy Local; a request loop that opens a new connection every LOOP_INTERVAL_MS to each
 * target in turn, measuring its own lag. Deployed, waited for, ended and removed here; a leg under it is leg.ts,
 * what a leg reads of the agents leg-agents.ts, of the traffic leg-traffic.ts, and its captures on every node
 * leg-capture.ts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { mustRun } from "../exec/types.ts";
import { holderEventLines } from "../parse/holder-log.ts";
import { parseRequestLog } from "../parse/requests-log.ts";
import { type Quote, RawText } from "../records/evidence.ts";
import type { UpgradeConnection } from "../records/types.ts";
import { apiJsonRaw, clusterIp, kubectlRaw, type NodeInfo, nodes } from "./cluster.ts";
import { type RunContext, waitFor } from "./context.ts";
import {
  apply,
  ensureLbPool,
  ensureWeb,
  type LbRange,
  lbRangeFor,
  MANIFESTS_DIR,
  NODE_PORT,
  renderManifest,
  WEB_PORT,
  waitPodsReady,
} from "./workloads.ts";

/** Traffic keeps flowing this long after the last agent is ready, so a late break shows in the record. */
export const SETTLE_MS = 15_000;
/** The request loop's bound: longer than any leg here (its log is read when it ends). */
const LOOP_BOUND_MS = 40 * 60_000;
/** A request every 50 ms to each target in turn: with four targets, 200 ms between requests to one. */
export const LOOP_INTERVAL_MS = 50;
/** The loop's local ports, in turn (20000 ports: reused after 16 minutes at 20 a second, long after TIME_WAIT). */
const LOOP_PORTS = "20000-39999";

/** A long-lived connection: the Pod holding it and what it dials. */
export interface LoadClient {
  name: string;
  node: string;
  via: UpgradeConnection["via"];
  /** The address its socket is bound to (Pod IP or node IP) and its fixed source port. */
  localIp: string;
  sourcePort: number;
}

export interface Load {
  clients: LoadClient[];
  nodeList: NodeInfo[];
  /** The loop's node and its Pod's address (the capture's filter). */
  loopNode: string;
  loopIp: string;
  /** `name=host:port` per target, as the loop was given them. */
  targets: string[];
  /** The pool of ours the LoadBalancer targets came from (removed with the load), or null. */
  range: LbRange | null;
}

/** The clock the loop stamps its requests with, read the way it reads it (node: any image that runs the loop has it). */
const LOOP_CLOCK = ["node", "-e", "console.log(Date.now())"];

export type Clock = { ms: number; quote: Quote };

/** The loop's clock (ms since the epoch), read in the loop's Pod: recorded, so a replay reads the same. */
export async function loopClock(ctx: RunContext): Promise<Clock> {
  const r = await mustRun(ctx.exec, {
    target: { kind: "pod", namespace: ctx.namespace, pod: "request-loop" },
    argv: LOOP_CLOCK,
  });
  const quote = RawText.stdout(r).find((l) => l.trim() !== "");
  const line = quote?.quote.trim() ?? "";
  if (!quote || !/^\d{13}$/.test(line))
    throw new Error(`${LOOP_CLOCK.join(" ")} in request-loop printed ${JSON.stringify(r.stdout)}`);
  return { ms: Number(line), quote };
}

/** A LoadBalancer Service's first ingress address, polled until LB-IPAM gave one. */
async function ingressIp(ctx: RunContext, name: string): Promise<string> {
  const { value } = await waitFor(ctx, {
    what: `${name}'s LoadBalancer address from LB-IPAM`,
    deadlineMs: 60_000,
    intervalMs: 1000,
    probe: async () => {
      const { json } = await apiJsonRaw(ctx, { resource: "service", name, namespace: ctx.namespace });
      const ip = (json.status as { loadBalancer?: { ingress?: { ip?: unknown }[] } } | undefined)
        ?.loadBalancer?.ingress?.[0]?.ip;
      return typeof ip === "string" ? ip : null;
    },
    done: (ip) => ip !== null,
    show: (ip) => ip ?? "pending",
  });
  return value as string;
}

/**
 * Deploys web, web-np, with a range of ours web-lb and web-local (LoadBalancer, externalTrafficPolicy Cluster and
 * Local), a connection from every node to the ClusterIP, the NodePort connection, the LoadBalancer ones, the capture
 * on the loop's node and the request loop.
 */
export async function deployLoad(ctx: RunContext): Promise<Load> {
  await ensureWeb(ctx, 2);
  await apply(ctx, renderManifest("web-np.yaml", ctx.namespace));
  const ip = await clusterIp(ctx, ctx.namespace, "web");
  const nodeList = (await nodes(ctx)).sort((a, b) => a.name.localeCompare(b.name));
  if (nodeList.length < 2) throw new Error(`the load needs two nodes, the cluster has ${nodeList.length}`);
  // the NodePort is dialled from one node to another (the last), so the path crosses the tunnel
  const npNode = nodeList.at(-1) as NodeInfo;
  const fromNode = nodeList.at(-2) as NodeInfo;
  const range = await lbRangeFor(ctx, npNode);
  let lbIp: string | null = null;
  let localIp: string | null = null;
  if ("none" in range) ctx.log(`no LoadBalancer targets in the load: ${range.none}`);
  else {
    await ensureLbPool(ctx, range);
    await apply(ctx, renderManifest("web-lb.yaml", ctx.namespace, { POOL: range.pool }));
    lbIp = await ingressIp(ctx, "web-lb");
    localIp = await ingressIp(ctx, "web-local");
  }
  const src = (f: string) => readFileSync(join(MANIFESTS_DIR, f), "utf8");
  const cm = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "traffic-src", namespace: ctx.namespace },
    data: { "holder.mjs": src("holder/holder.mjs"), "requests.mjs": src("traffic/requests.mjs") },
  };
  const conn = (
    name: string,
    node: string,
    hostNetwork: boolean,
    host: string,
    port: number,
    source: number,
  ) =>
    renderManifest("conn-client.yaml", ctx.namespace, {
      NAME: name,
      NODE: node,
      HOST_NETWORK: String(hostNetwork),
      TARGET_HOST: host,
      TARGET_PORT: String(port),
      SOURCE_PORT: String(source),
    });
  const targets = [
    `clusterip=${ip}:${WEB_PORT}`,
    `nodeport=${npNode.internalIp}:${NODE_PORT}`,
    ...(lbIp ? [`loadbalancer=${lbIp}:${WEB_PORT}`] : []),
    ...(localIp ? [`local=${localIp}:${WEB_PORT}`] : []),
  ];
  const docs = [
    JSON.stringify(cm),
    ...nodeList.map((n, i) => conn(`conn-${i}`, n.name, false, ip, WEB_PORT, 40410 + i)),
    conn("conn-np", fromNode.name, true, npNode.internalIp, NODE_PORT, 40420),
    ...(lbIp ? [conn("conn-lb", npNode.name, false, lbIp, WEB_PORT, 40421)] : []),
    ...(localIp ? [conn("conn-local", fromNode.name, false, localIp, WEB_PORT, 40422)] : []),
    renderManifest("request-loop.yaml", ctx.namespace, {
      NODE: fromNode.name,
      TARGETS: targets.join(","),
      DURATION_MS: String(LOOP_BOUND_MS),
      INTERVAL_MS: String(LOOP_INTERVAL_MS),
      SOURCE_PORTS: LOOP_PORTS,
    }),
  ];
  await apply(ctx, docs.join("\n---\n"));
  const expected = nodeList.length + 1 + (lbIp ? 1 : 0) + (localIp ? 1 : 0);
  const ready = await waitPodsReady(ctx, "app=conn-client", expected);
  const [loop] = await waitPodsReady(ctx, "app=request-loop", 1);
  if (!loop) throw new Error("the request loop's Pod is not there");
  const via = (name: string): UpgradeConnection["via"] =>
    name === "conn-np"
      ? "nodeport"
      : name === "conn-lb"
        ? "loadbalancer"
        : name === "conn-local"
          ? "local"
          : "clusterip";
  const port = (name: string) =>
    name === "conn-np"
      ? 40420
      : name === "conn-lb"
        ? 40421
        : name === "conn-local"
          ? 40422
          : 40410 + Number(name.slice(5));
  const clients: LoadClient[] = ready.map((p) => ({
    name: p.name,
    node: p.node,
    via: via(p.name),
    localIp: p.ip,
    sourcePort: port(p.name),
  }));
  return {
    clients,
    nodeList,
    loopNode: loop.node,
    loopIp: loop.ip,
    targets,
    range: "none" in range ? null : range,
  };
}

/** Until every connection has connected and had an answer. */
export async function waitConnected(ctx: RunContext, clients: LoadClient[]): Promise<void> {
  await waitFor(ctx, {
    what: `every long-lived connection (${clients.map((c) => c.name).join(", ")}) connected and answered`,
    deadlineMs: 120_000,
    intervalMs: 2000,
    probe: async () => {
      const waiting: string[] = [];
      for (const c of clients) {
        const ev = holderEventLines((await kubectlRaw(ctx, ["-n", ctx.namespace, "logs", c.name])).text);
        if (!ev.some((e) => e.event.event === "reply" && e.event.status === 200)) waiting.push(c.name);
      }
      return waiting;
    },
    done: (w) => w.length === 0,
    show: (w) => `no answer yet on ${w.join(", ")}`,
  });
}

/** Ends the request loop and reads its log: every request's outcome and time. */
export async function stopLoop(ctx: RunContext): Promise<RawText> {
  await mustRun(ctx.exec, {
    target: { kind: "pod", namespace: ctx.namespace, pod: "request-loop" },
    argv: ["kill", "-TERM", "1"],
  });
  const { value: loop } = await waitFor(ctx, {
    what: "the request loop's closing line",
    deadlineMs: 60_000,
    intervalMs: 1000,
    probe: () => kubectlRaw(ctx, ["-n", ctx.namespace, "logs", "request-loop"]),
    done: (l) => parseRequestLog(l.text).done !== null,
    show: (l) => `${parseRequestLog(l.text).requests.length} requests logged, no closing line yet`,
  });
  return loop;
}

/**
 * The load gone, and every node-level port the run's topics hold free for the nested run (its own NodePort
 * Services, hostPort and host-network Pods take the same ports): the connections, the loop and the captures
 * deleted; every Service of the namespace that is not a ClusterIP (NodePorts, LoadBalancers); the Pods with a
 * hostPort or on the host network that are not node shells; the load's pool (a nested run makes its own, on the
 * same range).
 */
export async function removeLoad(ctx: RunContext, load: Load | null): Promise<void> {
  const del = (argv: string[]) =>
    mustRun(ctx.exec, {
      target: { kind: "kubectl" },
      argv: ["-n", ctx.namespace, "delete", ...argv],
      timeoutMs: 200_000,
    });
  await del(["pod", "-l", "app in (conn-client,request-loop,load-capture)", "--wait=true", "--timeout=180s"]);
  const { json: svcs } = await apiJsonRaw(ctx, { resource: "services", namespace: ctx.namespace });
  const held = ((svcs.items ?? []) as { metadata?: { name?: string }; spec?: { type?: string } }[])
    .filter((s) => s.spec?.type === "NodePort" || s.spec?.type === "LoadBalancer")
    .map((s) => s.metadata?.name ?? "")
    .filter(Boolean)
    .sort();
  if (held.length > 0) await del(["service", ...held, "--ignore-not-found", "--wait=true"]);
  const { json: podList } = await apiJsonRaw(ctx, { resource: "pods", namespace: ctx.namespace });
  type P = {
    metadata?: { name?: string; labels?: Record<string, string> };
    spec?: { hostNetwork?: boolean; containers?: { ports?: { hostPort?: number }[] }[] };
  };
  const hostPods = ((podList.items ?? []) as P[])
    .filter((p) => !p.metadata?.name?.startsWith("node-shell-"))
    .filter(
      (p) =>
        p.spec?.hostNetwork === true ||
        (p.spec?.containers ?? []).some((c) => (c.ports ?? []).some((x) => x.hostPort)),
    )
    .map((p) => p.metadata?.name ?? "")
    .filter(Boolean)
    .sort();
  if (hostPods.length > 0)
    await del(["pod", ...hostPods, "--ignore-not-found", "--wait=true", "--timeout=180s"]);
  if (load?.range)
    await mustRun(ctx.exec, {
      target: { kind: "kubectl" },
      argv: ["delete", "ciliumloadbalancerippool", load.range.pool, "--ignore-not-found", "--wait=true"],
      timeoutMs: 120_000,
    });
}
