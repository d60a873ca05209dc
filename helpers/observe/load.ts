/**
 * The load the upgrade and restart topics hold the datapath under while its agents change (Cilium's conn-disrupt
 * check made richer), and one leg's observation: long-lived connections from a Pod on every node to web's ClusterIP,
 * from a node's host namespace to its NodePort on another node, and (with a range of ours) from Pods to a
 * LoadBalancer address and to one with externalTrafficPolicy Local; a request loop that opens a new connection every
 * LOOP_INTERVAL_MS to each target in turn, measuring its own lag; and per leg a capture of the loop's connection
 * packets on its node, the datapath's drop counters, the agents' error lines and the pinned maps, before and after.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { mustRun } from "../exec/types.ts";
import { dropDeltas, parseBpfMetrics } from "../parse/bpf-metrics.ts";
import { type HolderEvent, holderEventLines, holderStall } from "../parse/holder-log.ts";
import { errorLines } from "../parse/metrics-json.ts";
import type { Attribution } from "../parse/packets.ts";
import { clientStall, parseRequestLog, type RequestResult, requestStats } from "../parse/requests-log.ts";
import { parseStatus } from "../parse/status.ts";
import { EXPECTED_DROP_REASONS, EXPECTED_ERROR_LINES } from "../properties/sources.ts";
import { statusQuote } from "../records/common.ts";
import { derive, type EvidenceItem, type Quote, RawText } from "../records/evidence.ts";
import type { UpgradeConnection, UpgradeLeg } from "../records/types.ts";
import { connectionSurvived } from "../records/upgrade.ts";
import { ciliumDbgRaw } from "./agent.ts";
import { apiJsonRaw, clusterIp, kubectlRaw, type NodeInfo, nodes, watchUntil } from "./cluster.ts";
import { type RunContext, waitFor } from "./context.ts";
import { attributeLeg, startPcap } from "./leg-capture.ts";
import { onNode } from "./node.ts";
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
/** The capture's bound per leg (tcpdump -c): SYN, SYN-ACK, FIN and RST of the loop's connections. */
const CAPTURE_PACKETS = 200_000;

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

/** One connection's state from its holder log and every node's conntrack, each fact with its line. */
interface Snapshot {
  log: RawText;
  events: { event: HolderEvent; line: number }[];
  connection: number;
  closed: number;
  errors: number;
  /** The backend (its hostname) of the last reply, and that reply's line. */
  backend: string | null;
  lastReply: Quote | null;
  lastConnected: Quote | null;
  /** Lines that are not replies or the start (connects, stalls, errors, closes). */
  breaks: Quote[];
  ct: Quote | null;
  ctNode: string | null;
  /** The conntrack outputs it was looked for in (the source of its absence). */
  ctRaw: RawText[];
}

const ctDestination = (q: Quote | null): string | null =>
  q ? (q.quote.trim().split(/\s+/)[4] ?? null) : null;

async function snapshot(
  ctx: RunContext,
  clients: LoadClient[],
  nodeList: NodeInfo[],
): Promise<Map<string, Snapshot>> {
  const cts = new Map<string, RawText>();
  for (const n of nodeList) cts.set(n.name, await ciliumDbgRaw(ctx, n.name, ["bpf", "ct", "list", "global"]));
  const out = new Map<string, Snapshot>();
  for (const c of clients) {
    const log = await kubectlRaw(ctx, ["-n", ctx.namespace, "logs", c.name]);
    const events = holderEventLines(log.text);
    const of = (pred: (e: HolderEvent) => boolean) => events.filter((x) => pred(x.event));
    const reply = of((e) => e.event === "reply" && e.status === 200).at(-1);
    const connected = of((e) => e.event === "connected").at(-1);
    // its own node's OUT entry first; else any node's entry from its port: a connection from a node's host
    // namespace leaves with the address the route gives it (cilium_host's toward a Pod, recorded in run
    // up-119-120-kpr-a: `TCP OUT 10.244.2.229:40420 -> …`, and `TCP IN …` on the backend's node). The load's
    // source ports (40410–40422) are its own
    const own =
      cts.get(c.node)?.find((l) => l.startsWith(`TCP OUT ${c.localIp}:${c.sourcePort} -> `)) ?? null;
    let ct = own;
    let ctNode = own ? c.node : null;
    if (!ct)
      for (const [node, raw] of [...cts].sort(([a], [b]) => (a === c.node ? -1 : b === c.node ? 1 : 0))) {
        // the same port's entries of an earlier leg's connection linger (run up-119-120-kpr-b's rollback found
        // the upgrade leg's): the live one is the one refreshed last, with the latest expiry on that node
        const expiry = (l: string) => Number(/\bexpires=(\d+)/.exec(l)?.[1] ?? 0);
        const q =
          raw
            .quotes((l) => /^TCP (?:IN|OUT) \S+:(\d+) -> /.exec(l)?.[1] === String(c.sourcePort))
            .sort((a, b) => expiry(b.quote) - expiry(a.quote))[0] ?? null;
        if (q) {
          ct = q;
          ctNode = node;
          break;
        }
      }
    out.set(c.name, {
      log,
      events,
      connection: Number(connected?.event.connection ?? 0),
      closed: of((e) => e.event === "closed").length,
      errors: of((e) => e.event === "error" || e.event === "stalled").length,
      backend: typeof reply?.event.body === "string" ? reply.event.body : null,
      lastReply: reply ? log.quote(reply.line) : null,
      lastConnected: connected ? log.quote(connected.line) : null,
      // the holder's own lag is not a break of the connection (issue 42: it says whether the holder kept time)
      breaks: of((e) => e.event !== "reply" && e.event !== "start" && e.event !== "lag").map((x) =>
        log.quote(x.line),
      ),
      ct,
      ctNode,
      ctRaw: [...cts.values()],
    });
  }
  return out;
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

type Counts = Record<string, number | undefined>;
const status = (o: Record<string, unknown>): Counts => (o.status ?? {}) as Counts;
const generation = (o: Record<string, unknown>): number =>
  ((o.metadata ?? {}) as { generation?: number }).generation ?? 1;

/**
 * The DaemonSet and the operator's Deployment rolled out, by watching both (as `kubectl rollout status`: the
 * newest generation observed, every Pod updated and ready, no old replica left).
 */
async function rolledOut(ctx: RunContext, ds: string, dep: string, deadlineMs: number): Promise<void> {
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

interface AgentVersion {
  version: string;
  ok: boolean;
  line: string;
  quote: Quote | null;
}

/** Every agent Pod of the DaemonSet rolled out, each running `version` and reporting OK. */
async function waitAgents(
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

/** Every node's pinned BPF metrics map (the datapath's drop counters, kept across agent restarts). */
async function bpfMetrics(ctx: RunContext, nodeList: NodeInfo[]) {
  const out = new Map<string, { raw: RawText; parsed: ReturnType<typeof parseBpfMetrics> }>();
  for (const n of nodeList) {
    const raw = await ciliumDbgRaw(ctx, n.name, ["bpf", "metrics", "list", "-o", "json"]);
    out.set(n.name, { raw, parsed: parseBpfMetrics(raw.text) });
  }
  return out;
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
async function pinnedMaps(ctx: RunContext, nodeList: NodeInfo[]): Promise<Map<string, RawText>> {
  const out = new Map<string, RawText>();
  for (const n of nodeList)
    out.set(n.name, RawText.stdout(await onNode(ctx, n.name, ["ls", "-1", "/sys/fs/bpf/tc/globals"])));
  return out;
}

/** When each node's agent Pod (the new one, after a rollout) started and became ready, from the API. */
async function agentRestarts(
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

/**
 * The capture of the loop's connections on its node for one leg: a hostNetwork Pod running tcpdump on every
 * interface for SYN, FIN and RST packets to or from the loop's Pod (bounded by CAPTURE_PACKETS), its log read
 * after the leg.
 */
async function startCapture(ctx: RunContext, load: Load, kind: string): Promise<string> {
  const name = `capture-${kind}`;
  await apply(
    ctx,
    renderManifest("load-capture.yaml", ctx.namespace, {
      NAME: name,
      LEG: kind,
      NODE: load.loopNode,
      FILTER: `host ${load.loopIp} and tcp[tcpflags] & (tcp-syn|tcp-fin|tcp-rst) != 0`,
      COUNT: String(CAPTURE_PACKETS),
    }),
  );
  await waitPodsReady(ctx, `app=load-capture,leg=${kind}`, 1);
  return name;
}

/** The capture's lines that carry a local port of the loop's (`<ip>.<port> >` or `> <ip>.<port>:`). */
export function packetsOf(capture: RawText, ip: string, port: number): Quote[] {
  const out = `${ip}.${port} >`;
  const back = `> ${ip}.${port}:`;
  return capture.quotes((l) => l.includes(out) || l.includes(back));
}

/**
 * Where a failed request's packets were seen on the loop's node (tcpdump -i any, by its local port), in words:
 * what a maintainer asks before believing the datapath lost it.
 */
export function whereItDied(lines: string[], ip: string, port: number): string {
  const src = `${ip}.${port} >`;
  const out = lines.filter((l) => l.includes(src));
  const back = lines.filter((l) => !l.includes(src));
  const syn = (l: string) => /Flags \[S\]/.test(l);
  const synAck = (l: string) => /Flags \[S\.\]/.test(l);
  const rst = (l: string) => /Flags \[R/.test(l);
  // tcpdump -i any -tt: `<time> <interface> In|Out IP <src> > <dst>: Flags [S], …`; a Pod's packets enter the
  // node on its lxc interface (In) and are delivered to a Pod on one (Out)
  const fields = (l: string) => l.trim().split(/\s+/);
  const lxc = (l: string) => /^lxc/.test(fields(l)[1] ?? "");
  const dir = (l: string) => fields(l)[2];
  const fromPod = out.filter((l) => syn(l) && lxc(l) && dir(l) === "In");
  const leftPod = out.filter((l) => syn(l) && !lxc(l) && dir(l) === "Out");
  const reached = out.filter((l) => syn(l) && lxc(l) && dir(l) === "Out");
  const answers = back.filter(synAck);
  const delivered = answers.filter((l) => lxc(l) && dir(l) === "Out");
  if (out.length === 0 && back.length === 0)
    return "no packet of it was seen on the loop's node: its SYN never left the client Pod (or the capture missed it)";
  if (back.some(rst))
    return `reset by the other end: ${back.filter(rst).length} RST came back to the loop's node`;
  // tcpdump -tt's epoch seconds, said as an ISO time (issue 42: one way to write a time)
  const time = (l: string) => {
    const t = Number(fields(l)[0]);
    return Number.isFinite(t) ? new Date(Math.round(t * 1000)).toISOString() : "?";
  };
  const closed = out.filter((l) => /Flags \[(?:F|R)/.test(l) && lxc(l) && dir(l) === "In");
  if (delivered.length > 0 && closed.length > 0)
    return `the handshake completed (the SYN-ACK delivered to the client Pod at ${time(delivered[0] as string)}) and no answer to the request came until the client closed at its timeout (${time(closed[0] as string)}): the request or its answer was lost after the handshake (the capture holds SYN, FIN and RST only)`;
  if (out.some(rst)) return `reset by the client: ${out.filter(rst).length} RST from the loop's Pod`;
  if (delivered.length > 0)
    return "the answer (SYN-ACK) was delivered to the client Pod: the datapath did its part, the client did not take it";
  if (answers.length > 0)
    return "the answer (SYN-ACK) reached the loop's node but was not delivered to the client Pod: lost on its way back there";
  if (leftPod.length > 0 || reached.length > 0)
    return "the SYN left the client Pod and its node (or reached a local backend), and no answer came back";
  if (fromPod.length > 0)
    return "the SYN left the client Pod and was not forwarded: dropped on the loop's own node";
  return `seen only as: ${[...out, ...back].map((l) => l.trim()).join(" | ")}`;
}

/** A leg as the topics run it: the change, then what every agent must run once it is done. */
export interface LegPlan {
  kind: UpgradeLeg["kind"];
  from: string;
  to: string;
  change: () => Promise<void>;
}

/** One leg: before, the change (upgrade, rollback or restart), the rollout, the settle time, after. */
export async function runLeg(ctx: RunContext, plan: LegPlan, load: Load) {
  const { kind, from, to } = plan;
  const { clients, nodeList } = load;
  const before = await snapshot(ctx, clients, nodeList);
  const metricsBefore = await bpfMetrics(ctx, nodeList);
  const mapsBefore = await pinnedMaps(ctx, nodeList);
  const capture = await startCapture(ctx, load, kind);
  const pcap = await startPcap(
    ctx,
    nodeList.map((n) => n.name),
    load.loopIp,
    kind,
  );
  ctx.log(`${kind} ${from} → ${to}: ${clients.length} connections held, the request loop running`);
  const start = await loopClock(ctx);
  const startIso = new Date(start.ms).toISOString();
  await plan.change();
  const agents = await waitAgents(ctx, nodeList, to);
  const rolled = await loopClock(ctx);
  ctx.log(`${kind} ${from} → ${to}: every agent ready after ${((rolled.ms - start.ms) / 1000).toFixed(1)} s`);
  if (!ctx.replay) await ctx.sleep(SETTLE_MS);
  const end = await loopClock(ctx);
  const after = await snapshot(ctx, clients, nodeList);
  const metricsAfter = await bpfMetrics(ctx, nodeList);
  const mapsAfter = await pinnedMaps(ctx, nodeList);
  const { restarts, raw: podsRaw, pods } = await agentRestarts(ctx);
  const logs: RawText[] = [];
  const errors: string[] = [];
  const errorQuotes: Quote[] = [];
  for (const [node, pod] of Object.entries(pods).sort()) {
    const log = await kubectlRaw(ctx, [
      "-n",
      "kube-system",
      "logs",
      pod,
      "-c",
      "cilium-agent",
      `--since-time=${startIso}`,
    ]);
    logs.push(log);
    const mine = errorLines(log.text).filter((l) => !EXPECTED_ERROR_LINES.some((re) => re.test(l)));
    const set = new Set(mine);
    for (const l of mine) errors.push(`${node}: ${l}`);
    errorQuotes.push(...log.quotes((l) => set.has(l)));
  }
  const captured = await kubectlRaw(ctx, ["-n", ctx.namespace, "logs", capture]);
  const drops = nodeList.flatMap((n) =>
    dropDeltas(metricsBefore.get(n.name)?.parsed ?? [], metricsAfter.get(n.name)?.parsed ?? []).map((d) => ({
      node: n.name,
      ...d,
    })),
  );
  const unexpected = [...new Set(drops.map((d) => d.reason))]
    .filter((r) => !EXPECTED_DROP_REASONS.includes(r))
    .sort();
  const connections: UpgradeConnection[] = [];
  const evConnections: EvidenceItem[] = [];
  const evBackends: EvidenceItem[] = [];
  for (const c of clients) {
    const b = before.get(c.name) as Snapshot;
    const a = after.get(c.name) as Snapshot;
    const breaks = a.breaks.slice(b.breaks.length);
    // the holder's own lag during the leg (issue 42), and whether it explains the first break
    const during = a.events.slice(b.events.length).map((x) => x.event);
    const lags = during.filter((e) => e.event === "lag" && typeof e.ms === "number");
    const lagMeasured = a.events.some(
      (x) => x.event.event === "start" && typeof x.event.lagTickMs === "number",
    );
    const firstBreak = during.find(
      (e) => e.event !== "reply" && e.event !== "lag" && typeof e.t === "string",
    );
    const stall = firstBreak ? holderStall(during, Date.parse(String(firstBreak.t))) : null;
    connections.push({
      name: c.name,
      node: c.node,
      via: c.via,
      connection_before: b.connection,
      connection_after: a.connection,
      closed_events: a.closed - b.closed,
      error_events: a.errors - b.errors,
      backend_before: b.backend,
      backend_after: a.backend,
      ct_before: b.ct?.quote ?? null,
      ct_after: a.ct?.quote ?? null,
      ct_node_before: b.ctNode,
      ct_node_after: a.ctNode,
      ct_backend_before: ctDestination(b.ct),
      ct_backend_after: ctDestination(a.ct),
      replies_during:
        a.events.filter((e) => e.event.event === "reply").length -
        b.events.filter((e) => e.event.event === "reply").length,
      break_lines: breaks.map((q) => q.quote),
      last_line_after: a.log.lines.filter((l) => l.trim()).at(-1) ?? "(empty log)",
      ...(lagMeasured
        ? {
            lag_measured: true,
            lag_max_ms: Math.max(0, ...lags.map((e) => Number(e.ms))),
            client_stall: stall,
          }
        : {}),
      ...(firstBreak ? { broke_at: String(firstBreak.t) } : {}),
    });
    evConnections.push(
      ...(a.lastConnected ? [a.lastConnected] : []),
      ...breaks,
      derive(
        `${c.name} (${c.via}, ${c.node}): connection ${b.connection} → ${a.connection}, ${a.closed - b.closed} close and ${a.errors - b.errors} error event(s) during the ${kind}`,
        b.log,
        a.log,
      ),
    );
    evBackends.push(
      ...(b.lastReply ? [b.lastReply] : [derive(`${c.name}: no reply before the ${kind}`, b.log)]),
      ...(a.lastReply ? [a.lastReply] : [derive(`${c.name}: no reply after the ${kind}`, a.log)]),
      ...(b.ct ? [b.ct] : [derive(`no conntrack entry of ${c.name}'s socket on any node before`, b.ctRaw)]),
      ...(a.ct ? [a.ct] : [derive(`no conntrack entry of ${c.name}'s socket on any node after`, a.ctRaw)]),
    );
  }
  const maps = nodeList.map((n) => {
    const was = foldMapNames(mapsBefore.get(n.name)?.text ?? "");
    const now = foldMapNames(mapsAfter.get(n.name)?.text ?? "");
    return {
      node: n.name,
      before: was,
      after: now,
      added: now.filter((m) => !was.includes(m)),
      removed: was.filter((m) => !now.includes(m)),
    };
  });
  const context: EvidenceItem[] = [
    ...Object.entries(restarts).map(([node, r]) =>
      derive(`agent on ${node}: Pod ${r.pod} started ${r.started ?? "?"}, ready ${r.ready ?? "?"}`, podsRaw),
    ),
    ...(drops.length > 0
      ? drops.map((d) =>
          derive(
            `dropped on ${d.node}: ${d.packets} × ${d.reason} (${d.direction}, ${d.file}:${d.line})`,
            metricsBefore.get(d.node)?.raw,
            metricsAfter.get(d.node)?.raw,
          ),
        )
      : [
          derive(
            `no drop counted on any node during the ${kind}`,
            ...[...metricsAfter.values()].map((m) => m.raw),
          ),
        ]),
  ];
  const evAgents = Object.values(agents).map((v) => v.quote ?? derive(v.line, []));
  const evDrops: EvidenceItem[] =
    unexpected.length > 0
      ? drops
          .filter((d) => unexpected.includes(d.reason))
          .map((d) =>
            derive(
              `dropped on ${d.node}: ${d.packets} × ${d.reason} (${d.direction}, ${d.file}:${d.line}), not among the expected reasons`,
              metricsBefore.get(d.node)?.raw,
              metricsAfter.get(d.node)?.raw,
            ),
          )
      : [
          derive(
            `${drops.length === 0 ? "no drop" : `only expected reasons (${[...new Set(drops.map((d) => d.reason))].join(", ")})`} counted during the ${kind}`,
            ...[...metricsAfter.values()].map((m) => m.raw),
          ),
        ];
  const evMaps = maps.flatMap((m) =>
    m.added.length + m.removed.length > 0
      ? [
          derive(
            `${m.node}: pinned maps added ${m.added.join(", ") || "none"}; removed ${m.removed.join(", ") || "none"}`,
            mapsBefore.get(m.node),
            mapsAfter.get(m.node),
          ),
        ]
      : [],
  );
  return {
    leg: {
      kind,
      from,
      to,
      duration_s: Math.round((rolled.ms - start.ms) / 100) / 10,
      agents_after: Object.fromEntries(
        Object.entries(agents).map(([n, v]) => [n, { version: v.version, ok: v.ok, line: v.line }]),
      ),
      agent_restarts: restarts,
      drops,
      unexpected_drops: unexpected,
      error_lines: errors,
      maps,
      connections,
    },
    evidence: {
      connections: evConnections,
      backends: evBackends,
      agents: evAgents,
      context: [...context, ...evMaps],
      drops: evDrops,
      errors:
        errorQuotes.length > 0
          ? errorQuotes
          : [derive(`no error-level line in the ${logs.length} agents' logs since ${startIso}`, logs)],
    },
    start,
    rolledOut: rolled,
    end,
    capture: captured,
    pcap,
  };
}

/** The loop's requests inside a leg's window, with the lines that show it and where its failures died. */
export function legRequests(
  loop: RawText,
  start: Clock,
  rolledOut: Clock,
  end: Clock,
  capture: RawText | null,
  loopIp: string,
  attributions: Map<number, Attribution> = new Map(),
) {
  const log = parseRequestLog(loop.text);
  const st = requestStats(log, { from: start.ms, to: end.ms });
  const q = (r: RequestResult | null) => (r ? loop.quote(r.line) : null);
  const line = (r: RequestResult | null) => q(r)?.quote ?? null;
  const gap = st.longestOutage;
  const lagsIn = log.lags.filter((e) => e.t >= start.ms && e.t <= end.ms);
  const failureFacts = st.failures.map((f) => {
    const stall = clientStall(f, log);
    const packets = capture && f.port !== undefined ? packetsOf(capture, loopIp, f.port) : [];
    const where =
      capture && f.port !== undefined
        ? whereItDied(
            packets.map((p) => p.quote),
            loopIp,
            f.port,
          )
        : "not captured (a loop without fixed local ports, or no capture)";
    return { f, stall, packets, where };
  });
  const requests: UpgradeLeg["requests"] = {
    total: st.requests,
    failed: st.failed,
    failures: failureFacts.map(({ f, stall, packets, where }) => ({
      t: f.t,
      to: f.to,
      error: f.error ?? `HTTP ${f.status}`,
      raw: line(f) ?? "",
      stall,
      port: f.port ?? null,
      where,
      packets: packets.map((p) => p.quote),
      ...(f.port !== undefined && attributions.has(f.port)
        ? { attribution: attributions.get(f.port) as Attribution }
        : {}),
    })),
    client_stalls: st.clientStalls.length,
    lag_measured: log.lagMeasured,
    lag_events: { count: lagsIn.length, max_ms: Math.max(0, ...lagsIn.map((e) => e.ms)) },
    longest_gap: st.longestGap
      ? {
          to: st.longestGap.to,
          ms: st.longestGap.ms,
          after: line(st.longestGap.after),
          before: line(st.longestGap.before),
        }
      : null,
    longest_outage: gap
      ? {
          to: gap.to,
          ms: gap.ms,
          net_ms: gap.netMs,
          stall_ms: gap.stallMs,
          measured_stall_ms: gap.measuredStallMs,
          judged_ms: gap.judgedMs,
          after: line(gap.after),
          before: line(gap.before),
        }
      : null,
    gaps: st.gaps,
    period_ms: st.periodMs,
    loop_stall_ms: st.loopStallMs,
    slowest_ms: st.slowest?.ms ?? null,
    backends: st.backends,
  };
  const window = derive(
    `${st.requests} requests started between ${new Date(start.ms).toISOString()} and ${new Date(end.ms).toISOString()} (the leg, ${rolledOut.ms - start.ms} ms to the rollout, then ${SETTLE_MS} ms of settling), ${st.failed} failed, ${st.clientStalls.length} of them explained by the client's own stall`,
    start.quote,
    rolledOut.quote,
    end.quote,
    loop,
  );
  const edge = (what: string, r: RequestResult | null): EvidenceItem =>
    q(r) ?? derive(`the window's ${what}`, start.quote, end.quote);
  const lagQuotes = lagsIn
    .filter((e) => e.ms >= 500)
    .slice(0, 10)
    .map((e) => loop.quote(e.line));
  const evidence = {
    requests: [
      window,
      ...failureFacts
        .slice(0, 20)
        .flatMap(({ f, stall, packets, where }) => [
          loop.quote(f.line),
          derive(
            `request ${f.i} (${f.to}, local port ${f.port ?? "?"}): ${stall ? `client stalled — ${stall}` : "no client stall explains it"}; ${where}${f.port !== undefined && attributions.has(f.port) ? `; on every node: ${attributions.get(f.port)?.kind}: ${attributions.get(f.port)?.why}` : ""}`,
            loop,
            ...(capture ? [capture] : []),
          ),
          ...packets.slice(0, 6),
        ]),
      ...lagQuotes,
    ],
    gap: [
      ...(gap
        ? [
            derive(
              `${gap.judgedMs} ms judged without a success to ${gap.to}: ${gap.ms} ms between successes${gap.measuredStallMs !== null ? ` less ${gap.measuredStallMs} ms the loop measured itself stalled` : " (the loop did not measure its lag: nothing taken off)"}; inferred from its start times alone it would be ${gap.netMs} ms net (${gap.stallMs} ms without a start past its period); ${gap.failedBetween} failed request(s) inside`,
              loop,
            ),
            edge("start", gap.after),
            edge("end", gap.before),
          ]
        : [derive(`no success to compare in the window (${st.requests} requests)`, loop)]),
      ...Object.entries(st.gaps).map(([to, d]) =>
        derive(
          `net gaps between successes to ${to}: ${d.n} gaps, p50 ${d.p50} ms, p90 ${d.p90} ms, p99 ${d.p99} ms, max ${d.max} ms, ${d.over500} over 500 ms`,
          loop,
        ),
      ),
      ...lagQuotes,
      ...(st.slowest ? [loop.quote(st.slowest.line)] : []),
    ],
  };
  return {
    requests,
    evidence,
    window: { from_ms: start.ms, to_ms: end.ms, from_line: start.quote.quote, to_line: end.quote.quote },
  };
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

/**
 * One leg whole, as the restart and upgrade topics run it: the load deployed and connected, the change under it,
 * the loop ended, each failure and broken connection attributed from every node's capture and drop monitor (issue
 * 42), the load removed. Returns the leg's record (without the nested run, which the upgrade adds) and how many
 * requests the loop made.
 */
export async function legUnderLoad(
  ctx: RunContext,
  plan: LegPlan,
): Promise<{ leg: UpgradeLeg; loopTotal: number }> {
  const load = await deployLoad(ctx);
  await waitConnected(ctx, load.clients);
  const l = await runLeg(ctx, plan, load);
  const loop = await stopLoop(ctx);
  const nodes = load.nodeList.map((n) => n.name);
  const who = await attributeLeg(
    ctx,
    l.pcap,
    nodes,
    { text: loop.text, ip: load.loopIp, node: load.loopNode, from: l.start.ms, to: l.end.ms },
    l.leg.connections.map((c) => ({
      name: c.name,
      node: c.node,
      port: load.clients.find((x) => x.name === c.name)?.sourcePort ?? 0,
      brokeAt: connectionSurvived(c) ? null : (c.broke_at ?? null),
    })),
  );
  const r = legRequests(loop, l.start, l.rolledOut, l.end, l.capture, load.loopIp, who.requests);
  await removeLoad(ctx, load);
  const connections = l.leg.connections.map((c) =>
    who.connections.has(c.name) ? { ...c, attribution: who.connections.get(c.name) as Attribution } : c,
  );
  // what the captures say of each broken connection (a leg without captures has nothing to add: the holder's
  // lines already say it broke)
  const attributed: EvidenceItem[] =
    who.raws.length === 0
      ? []
      : [...who.connections].map(([name, a]) =>
          derive(`${name} broke: on every node: ${a.kind}: ${a.why}`, ...who.raws),
        );
  return {
    leg: {
      ...l.leg,
      connections,
      window: r.window,
      requests: r.requests,
      ...(l.pcap ? { datapath_evidence: who.summary } : {}),
      evidence: {
        ...l.evidence,
        connections: [...l.evidence.connections, ...attributed],
        ...r.evidence,
      },
    },
    loopTotal: parseRequestLog(loop.text).requests.length,
  };
}
