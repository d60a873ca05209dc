/**
 * Topic "upgrade" — Knowledge: clusters.md §6; Cilium's upgrade guide (Documentation/operations/upgrade.rst).
 * A Cilium upgrade, and the way back, with traffic flowing: every long-lived connection survives on its
 * backend, no request fails, and every agent runs the version asked for.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and how it is judged. The observation code
 * and the record builders follow the declaration.
 *
 * The load is Cilium's conn-disrupt check made richer: a long-lived connection from a Pod on every node to the
 * web Service's ClusterIP and one from a node's own network namespace to the NodePort on another node (our
 * holder program, one request a second on the same connection), and a bounded request loop (a new connection
 * every 100 ms to the ClusterIP and the NodePort in turn) that logs each request's outcome and time.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CILIUM_CHART } from "../../clusters/versions.ts";
import { mustRun } from "../../helpers/exec/types.ts";
import { ciliumDbg } from "../../helpers/observe/agent.ts";
import { kubectl, kubectlJson, type NodeInfo, nodes } from "../../helpers/observe/cluster.ts";
import type { RunContext, UpgradePlan } from "../../helpers/observe/context.ts";
import {
  apply,
  ensureWeb,
  MANIFESTS_DIR,
  NODE_PORT,
  renderManifest,
  WEB_PORT,
  waitPodsReady,
} from "../../helpers/observe/workloads.ts";
import { dropDeltas, parseBpfMetrics } from "../../helpers/parse/bpf-metrics.ts";
import { type HolderEvent, holderEvents } from "../../helpers/parse/holder-log.ts";
import { parseRequestLog, type RequestResult, requestStats } from "../../helpers/parse/requests-log.ts";
import { parseStatus } from "../../helpers/parse/status.ts";
import { pollUntil } from "../../helpers/poll.ts";
import type { Expect } from "../../helpers/properties/expectation.ts";
import { KN } from "../../helpers/properties/sources.ts";
import type { RecordSet, UpgradeConnection, UpgradeLeg, UpgradeRecord } from "../../helpers/records/types.ts";
import type { PropertyDeclaration } from "../../helpers/topic.ts";
import { defineTopic } from "../../helpers/topic.ts";

/** Traffic keeps flowing this long after the last agent is ready, so a late break shows in the record. */
const SETTLE_MS = 15_000;
/** The request loop's bound: longer than any upgrade and rollback here (its log is read when it ends). */
const LOOP_BOUND_MS = 40 * 60_000;
/** A request every 100 ms to two targets in turn: 200 ms between requests to one target. */
const LOOP_PERIOD_PER_TARGET_MS = 200;

const UPGRADE_GUIDE = "Cilium's upgrade guide (Documentation/operations/upgrade.rst)";

/** The properties of one leg: the upgrade, or the rollback after it. */
function legProperties(kind: UpgradeLeg["kind"]): PropertyDeclaration[] {
  const prefix = kind === "upgrade" ? "upgrade" : "upgrade.rollback";
  const what = kind === "upgrade" ? "the upgrade" : "the rollback (helm rollback to the revision before)";
  const leg = (r: { get(n: "upgrade"): UpgradeRecord }) => {
    const l = r.get("upgrade").legs.find((x) => x.kind === kind);
    return l ?? null;
  };
  const noLeg =
    kind === "rollback"
      ? "this run has no rollback leg (ROLLBACK=1 rolls back after the upgrade)"
      : "this run has no upgrade leg (UPGRADE_TO)";
  const both = (e: Expect) => ({ kpr: e, "kube-proxy": e });
  return [
    {
      id: `${prefix}.connections-survive`,
      claim: `Every long-lived connection (a Pod on every node to the ClusterIP, a node to the NodePort) survives ${what}: same connection, no close, no error`,
      source: KN(
        "clusters.md §6 (BPF maps stay pinned while agents restart; cilium-cli's conn-disrupt test)",
      ),
      expect: both({ eq: true }),
      needs: ["upgrade"],
      observe: (r) => {
        const l = leg(r);
        if (!l) return { value: null, evidence: [], skip: noLeg };
        return {
          value: l.connections.length > 0 && l.connections.every(survived),
          evidence: [
            ...l.connections.map(
              (c) =>
                `${c.name} (${c.via}, ${c.node}): connection ${c.connection_before} → ${c.connection_after}, ${c.closed_events} close, ${c.error_events} error event(s); last line: ${c.last_line_after}`,
            ),
            ...l.connections.flatMap((c) => c.break_lines.map((b) => `${c.name}: ${b}`)),
            ...legContext(l),
          ],
        };
      },
    },
    {
      id: `${prefix}.same-backend`,
      claim: `Every long-lived connection is answered by the same backend before and after ${what}, and where Cilium's conntrack holds its entry, the entry points at that backend`,
      source: KN("clusters.md §6"),
      expect: both({ eq: true }),
      needs: ["upgrade"],
      observe: (r) => {
        const l = leg(r);
        if (!l) return { value: null, evidence: [], skip: noLeg };
        return {
          value: l.connections.length > 0 && l.connections.every(sameBackend),
          evidence: l.connections.flatMap((c) => [
            `${c.name}: answered by ${c.backend_before ?? "?"} → ${c.backend_after ?? "?"}`,
            ...(c.ct_before ? [`${c.name} conntrack before: ${c.ct_before}`] : []),
            ...(c.ct_after ? [`${c.name} conntrack after: ${c.ct_after}`] : []),
          ]),
        };
      },
    },
    {
      id: `${prefix}.no-failed-requests`,
      claim: `No request of the loop (a new connection every 100 ms to the ClusterIP and the NodePort in turn) fails during ${what}`,
      source: KN("clusters.md §6 (cilium-cli's conn-disrupt test: no disruption during the upgrade)"),
      expect: both({ eq: 0 }),
      needs: ["upgrade"],
      observe: (r) => {
        const l = leg(r);
        if (!l) return { value: null, evidence: [], skip: noLeg };
        return {
          value: l.requests.failed,
          evidence: [
            `${l.requests.total} requests from ${l.window.from_line} to ${l.window.to_line}, ${l.requests.failed} failed`,
            ...l.requests.failures.slice(0, 20).map((f) => f.raw),
            ...legContext(l),
          ],
        };
      },
    },
    {
      id: `${prefix}.longest-gap`,
      claim: `During ${what}, no target of the loop goes longer than a second without a successful request (one is due every 200 ms)`,
      source: KN("clusters.md §6"),
      why: `the loop starts a request to each target every ${LOOP_PERIOD_PER_TARGET_MS} ms, so a gap over 1000 ms means at least four requests in a row failed or stalled`,
      expect: both({ lte: 1000 }),
      needs: ["upgrade"],
      observe: (r) => {
        const l = leg(r);
        if (!l) return { value: null, evidence: [], skip: noLeg };
        const g = l.requests.longest_gap;
        return {
          value: g?.ms ?? null,
          evidence: g
            ? [
                `${g.ms} ms to ${g.to} between:`,
                g.after ?? "(the window's start)",
                g.before ?? "(the window's end)",
              ]
            : [],
        };
      },
    },
    {
      id: `${prefix}.agents-run-target`,
      claim: `After ${what} every agent runs exactly the version asked for and reports OK`,
      source: KN(UPGRADE_GUIDE),
      expect: both({ eq: true }),
      needs: ["upgrade"],
      observe: (r) => {
        const l = leg(r);
        if (!l) return { value: null, evidence: [], skip: noLeg };
        const agents = Object.entries(l.agents_after);
        return {
          value: agents.length > 0 && agents.every(([, v]) => v.version === l.to && v.ok),
          evidence: agents.map(([node, v]) => `${node}: ${v.line} (status ${v.ok ? "OK" : "not OK"})`),
        };
      },
    },
  ];
}

export const topic = defineTopic({
  name: "upgrade",
  title: "A Cilium upgrade, and the way back, under load: connections survive, no request fails",
  source: KN("clusters.md §6"),
  deploys: ["web.yaml", "web-np.yaml", "conn-client.yaml", "request-loop.yaml"],
  steps: [
    { on: "kubectl", run: "-n <ns> logs conn-", for: "each long-lived connection: its events and backends" },
    { on: "pod", run: "date +%s%3N", for: "the leg's start and end on the loop's clock" },
    { on: "agent", run: "cilium-dbg bpf ct list global", for: "each connection's conntrack entry" },
    {
      on: "agent",
      run: "cilium-dbg bpf metrics list -o json",
      for: "the datapath's drop counters before and after each leg (pinned: they outlive the agent)",
    },
    {
      on: "local",
      run: "helm upgrade --install cilium-preflight",
      for: "the preflight check of the new version",
    },
    { on: "local", run: "helm uninstall cilium-preflight", for: "removing it" },
    { on: "local", run: "helm upgrade cilium", for: "the upgrade, with the run's full values" },
    { on: "local", run: "helm history cilium", for: "the revision to roll back to" },
    { on: "local", run: "helm rollback cilium", for: "the way back (ROLLBACK=1)" },
    { on: "agent", run: "cilium-dbg status", for: "every agent's version and health" },
    {
      on: "kubectl",
      run: "-n kube-system get pods -l k8s-app=cilium -o json",
      for: "when each node's new agent started and became ready",
    },
    { on: "pod", run: "kill -TERM 1", for: "ending the request loop" },
    { on: "kubectl", run: "-n <ns> logs request-loop", for: "every request's outcome and time" },
  ],
  builds: ["upgrade"],
  observe: observeUpgrade,
  properties: [...legProperties("upgrade"), ...legProperties("rollback")],
});

function survived(c: UpgradeConnection): boolean {
  return (
    c.connection_before > 0 &&
    c.connection_after === c.connection_before &&
    c.closed_events === 0 &&
    c.error_events === 0
  );
}

function sameBackend(c: UpgradeConnection): boolean {
  const ct = c.ct_backend_before === null || c.ct_backend_after === c.ct_backend_before;
  return c.backend_before !== null && c.backend_after === c.backend_before && ct;
}

/** What else the leg recorded: when each node's agent restarted, and the datapath's drops per node. */
function legContext(l: UpgradeLeg): string[] {
  return [
    ...Object.entries(l.agent_restarts).map(
      ([node, r]) =>
        `agent on ${node}: new Pod ${r.pod} started ${r.started ?? "?"}, ready ${r.ready ?? "?"}`,
    ),
    ...l.drops.map(
      (d) => `drops on ${d.node}: ${d.packets} × ${d.reason} (${d.direction}, ${d.file}:${d.line})`,
    ),
  ];
}

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

async function helm(ctx: RunContext, args: string[]): Promise<string> {
  if (!ctx.kubeContext) throw new Error("the upgrade needs the cluster's kubectl context");
  return (
    await mustRun(ctx.exec, {
      target: { kind: "local" },
      argv: ["helm", ...args, "--namespace", "kube-system", "--kube-context", ctx.kubeContext],
      timeoutMs: 900_000,
    })
  ).stdout;
}

/** A long-lived connection: the Pod holding it and what it dials. */
interface Client {
  name: string;
  node: string;
  via: "clusterip" | "nodeport";
  /** The address its socket is bound to (Pod IP or node IP) and its fixed source port. */
  localIp: string;
  sourcePort: number;
}

/** The loop's clock (ms since the epoch), read in the loop's Pod: recorded, so a replay reads the same. */
async function loopClock(ctx: RunContext): Promise<{ ms: number; line: string }> {
  const r = await mustRun(ctx.exec, {
    target: { kind: "pod", namespace: ctx.namespace, pod: "request-loop" },
    argv: ["date", "+%s%3N"],
  });
  const line = r.stdout.trim();
  if (!/^\d{13}$/.test(line)) throw new Error(`date +%s%3N in request-loop printed ${JSON.stringify(line)}`);
  return { ms: Number(line), line };
}

/** Deploys web, web-np, a connection from every node, the NodePort connection and the request loop. */
async function deployTraffic(ctx: RunContext): Promise<{ clients: Client[]; nodeList: NodeInfo[] }> {
  await ensureWeb(ctx, 2);
  await apply(ctx, renderManifest("web-np.yaml", ctx.namespace));
  const svc = (await kubectlJson(ctx, ["-n", ctx.namespace, "get", "service", "web"])) as {
    spec?: { clusterIP?: string };
  };
  const ip = svc.spec?.clusterIP ?? "";
  const nodeList = (await nodes(ctx)).sort((a, b) => a.name.localeCompare(b.name));
  if (nodeList.length < 2)
    throw new Error(`the upgrade load needs two nodes, the cluster has ${nodeList.length}`);
  // the NodePort is dialled from one node to another (the last), so the path crosses the tunnel
  const npNode = nodeList.at(-1) as NodeInfo;
  const fromNode = nodeList.at(-2) as NodeInfo;
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
  const docs = [
    JSON.stringify(cm),
    ...nodeList.map((n, i) => conn(`conn-${i}`, n.name, false, ip, WEB_PORT, 40410 + i)),
    conn("conn-np", fromNode.name, true, npNode.internalIp, NODE_PORT, 40420),
    renderManifest("request-loop.yaml", ctx.namespace, {
      NODE: fromNode.name,
      TARGETS: `clusterip=${ip}:${WEB_PORT},nodeport=${npNode.internalIp}:${NODE_PORT}`,
      DURATION_MS: String(LOOP_BOUND_MS),
    }),
  ];
  await apply(ctx, docs.join("\n---\n"));
  const ready = await waitPodsReady(ctx, "app=conn-client", nodeList.length + 1);
  await waitPodsReady(ctx, "app=request-loop", 1);
  const clients: Client[] = ready.map((p) => {
    const np = p.name === "conn-np";
    const i = np ? -1 : Number(p.name.slice("conn-".length));
    return {
      name: p.name,
      node: p.node,
      via: np ? "nodeport" : "clusterip",
      localIp: p.ip,
      sourcePort: np ? 40420 : 40410 + i,
    };
  });
  return { clients, nodeList };
}

interface Snapshot {
  events: HolderEvent[];
  /** The log's lines that are not replies or the start (connects, stalls, errors, closes), raw. */
  breaks: string[];
  /** The log's lines (raw), for quoting. */
  lines: string[];
  connection: number;
  closed: number;
  errors: number;
  /** The backend (its hostname) of the last reply. */
  backend: string | null;
  ct: string | null;
}

/** The connection's own entry in Cilium's conntrack (`TCP OUT <local> -> …`), on the agent of its node. */
function ctLine(ct: string, c: Client): string | null {
  const local = `${c.localIp}:${c.sourcePort}`;
  return ct.split("\n").find((l) => l.startsWith(`TCP OUT ${local} -> `)) ?? null;
}

/** The destination of a `TCP OUT a -> b …` conntrack line: the backend once translated at the socket. */
const ctDestination = (line: string | null): string | null => (line ? (line.split(" ")[4] ?? null) : null);

async function snapshot(ctx: RunContext, clients: Client[]): Promise<Map<string, Snapshot>> {
  const cts = new Map<string, string>();
  for (const node of new Set(clients.map((c) => c.node)))
    cts.set(node, await ciliumDbg(ctx, node, ["bpf", "ct", "list", "global"]));
  const out = new Map<string, Snapshot>();
  for (const c of clients) {
    const log = await kubectl(ctx, ["-n", ctx.namespace, "logs", c.name]);
    const events = holderEvents(log);
    const replies = events.filter((e) => e.event === "reply" && e.status === 200);
    const lines = log.split("\n").filter((l) => l.trim());
    out.set(c.name, {
      events,
      breaks: lines.filter((l) => !/"event":"(reply|start)"/.test(l)),
      lines,
      connection: Number(events.filter((e) => e.event === "connected").at(-1)?.connection ?? 0),
      closed: events.filter((e) => e.event === "closed").length,
      errors: events.filter((e) => e.event === "error" || e.event === "stalled").length,
      backend: typeof replies.at(-1)?.body === "string" ? String(replies.at(-1)?.body) : null,
      ct: ctLine(cts.get(c.node) ?? "", c),
    });
  }
  return out;
}

/** Until every connection has connected and had an answer. */
async function waitConnected(ctx: RunContext, clients: Client[]): Promise<void> {
  await pollUntil({
    what: `every long-lived connection (${clients.map((c) => c.name).join(", ")}) connected and answered`,
    deadlineMs: 120_000,
    intervalMs: 2000,
    probe: async () => {
      const waiting: string[] = [];
      for (const c of clients) {
        const ev = holderEvents(await kubectl(ctx, ["-n", ctx.namespace, "logs", c.name]));
        if (!ev.some((e) => e.event === "reply" && e.status === 200)) waiting.push(c.name);
      }
      return waiting;
    },
    done: (w) => w.length === 0,
    show: (w) => `no answer yet on ${w.join(", ")}`,
    sleep: ctx.sleep,
    now: ctx.now,
    progress: ctx.log,
  });
}

interface AgentVersion {
  version: string;
  ok: boolean;
  line: string;
}

/** Every agent Pod of the DaemonSet rolled out, each running `version` and reporting OK. */
async function waitAgents(
  ctx: RunContext,
  nodeList: NodeInfo[],
  version: string,
): Promise<Record<string, AgentVersion>> {
  await pollUntil({
    what: "DaemonSet cilium and Deployment cilium-operator rolled out",
    deadlineMs: 900_000,
    intervalMs: 3000,
    probe: async () => {
      const ds = (await kubectlJson(ctx, ["-n", "kube-system", "get", "daemonset", "cilium"])) as {
        metadata?: { generation?: number };
        status?: Record<string, number>;
      };
      const op = (await kubectlJson(ctx, ["-n", "kube-system", "get", "deployment", "cilium-operator"])) as {
        metadata?: { generation?: number };
        status?: Record<string, number>;
      };
      const s = ds.status ?? {};
      const o = op.status ?? {};
      return {
        ds:
          (s.observedGeneration ?? 0) >= (ds.metadata?.generation ?? 1) &&
          s.desiredNumberScheduled !== undefined &&
          s.updatedNumberScheduled === s.desiredNumberScheduled &&
          s.numberReady === s.desiredNumberScheduled &&
          (s.numberUnavailable ?? 0) === 0,
        op:
          (o.observedGeneration ?? 0) >= (op.metadata?.generation ?? 1) &&
          (o.updatedReplicas ?? 0) >= 1 &&
          o.updatedReplicas === o.availableReplicas &&
          o.replicas === o.updatedReplicas,
        shown: `agents ${s.updatedNumberScheduled ?? 0} updated, ${s.numberReady ?? 0} ready of ${s.desiredNumberScheduled ?? "?"}; operator ${o.updatedReplicas ?? 0} updated, ${o.availableReplicas ?? 0} available`,
      };
    },
    done: (s) => s.ds && s.op,
    show: (s) => s.shown,
    sleep: ctx.sleep,
    now: ctx.now,
    progress: ctx.log,
  });
  const agents: Record<string, AgentVersion> = {};
  for (const n of nodeList) {
    const { value } = await pollUntil({
      what: `the agent on ${n.name} to run Cilium ${version} and report OK`,
      deadlineMs: 600_000,
      intervalMs: 3000,
      probe: async () => {
        const out = await ciliumDbg(ctx, n.name, ["status"]);
        const st = parseStatus(out);
        const line = out.split("\n").find((l) => l.startsWith("Cilium:")) ?? "(no Cilium line)";
        return {
          version: (st.ciliumVersion ?? "").split(" ")[0] ?? "",
          ok: /^Cilium:\s+Ok\b/.test(line),
          line: line.trim(),
        };
      },
      done: (s) => s.ok && s.version === version,
      show: (s) => s.line,
      sleep: ctx.sleep,
      now: ctx.now,
      progress: ctx.log,
    });
    agents[n.name] = value;
  }
  return agents;
}

async function preflight(
  ctx: RunContext,
  plan: UpgradePlan,
  chart: string[],
  labSet: string[],
): Promise<void> {
  const apiServer = plan.k8sServiceHost
    ? ["--set", `k8sServiceHost=${plan.k8sServiceHost}`, "--set", `k8sServicePort=${plan.k8sServicePort}`]
    : [];
  await helm(ctx, [
    "upgrade",
    "--install",
    "cilium-preflight",
    ...chart,
    ...labSet,
    "--set",
    "preflight.enabled=true",
    "--set",
    "agent=false",
    "--set",
    "operator.enabled=false",
    ...apiServer,
  ]);
  await pollUntil({
    what: "the cilium-pre-flight-check DaemonSet and Deployment ready",
    deadlineMs: 600_000,
    intervalMs: 3000,
    probe: async () => {
      const ds = (await kubectlJson(ctx, [
        "-n",
        "kube-system",
        "get",
        "daemonset",
        "cilium-pre-flight-check",
      ])) as {
        status?: Record<string, number>;
      };
      const dep = (await kubectlJson(ctx, [
        "-n",
        "kube-system",
        "get",
        "deployment",
        "cilium-pre-flight-check",
      ])) as {
        status?: Record<string, number>;
      };
      return {
        ready: ds.status?.numberReady ?? 0,
        desired: ds.status?.desiredNumberScheduled ?? -1,
        dep: dep.status?.readyReplicas ?? 0,
      };
    },
    done: (s) => s.desired > 0 && s.ready === s.desired && s.dep >= 1,
    show: (s) => `preflight ${s.ready}/${s.desired}, deployment ${s.dep}/1`,
    sleep: ctx.sleep,
    now: ctx.now,
    progress: ctx.log,
  });
  await helm(ctx, ["uninstall", "cilium-preflight"]);
}

/** Every node's pinned BPF metrics map (the datapath's drop counters, kept across agent restarts). */
async function bpfMetrics(ctx: RunContext, nodeList: NodeInfo[]) {
  const out = new Map<string, ReturnType<typeof parseBpfMetrics>>();
  for (const n of nodeList)
    out.set(n.name, parseBpfMetrics(await ciliumDbg(ctx, n.name, ["bpf", "metrics", "list", "-o", "json"])));
  return out;
}

/** When each node's agent Pod (the new one, after a rollout) started and became ready, from the API. */
async function agentRestarts(ctx: RunContext): Promise<UpgradeLeg["agent_restarts"]> {
  const list = (await kubectlJson(ctx, ["-n", "kube-system", "get", "pods", "-l", "k8s-app=cilium"])) as {
    items?: {
      metadata?: { name?: string };
      spec?: { nodeName?: string };
      status?: {
        containerStatuses?: { name?: string; state?: { running?: { startedAt?: string } } }[];
        conditions?: { type?: string; status?: string; lastTransitionTime?: string }[];
      };
    }[];
  };
  const out: UpgradeLeg["agent_restarts"] = {};
  for (const p of list.items ?? []) {
    const node = p.spec?.nodeName;
    if (!node) continue;
    const agent = p.status?.containerStatuses?.find((c) => c.name === "cilium-agent");
    const ready = p.status?.conditions?.find((c) => c.type === "Ready" && c.status === "True");
    out[node] = {
      pod: p.metadata?.name ?? "?",
      started: agent?.state?.running?.startedAt ?? null,
      ready: ready?.lastTransitionTime ?? null,
    };
  }
  return out;
}

/** One leg: before, the change (upgrade or rollback), the rollout, the settle time, after. */
async function runLeg(
  ctx: RunContext,
  kind: UpgradeLeg["kind"],
  from: string,
  to: string,
  change: () => Promise<void>,
  clients: Client[],
  nodeList: NodeInfo[],
): Promise<
  Omit<UpgradeLeg, "requests" | "window"> & {
    start: { ms: number; line: string };
    end: { ms: number; line: string };
  }
> {
  const before = await snapshot(ctx, clients);
  const metricsBefore = await bpfMetrics(ctx, nodeList);
  ctx.log(`${kind} ${from} → ${to}: ${clients.length} connections held, the request loop running`);
  const start = await loopClock(ctx);
  await change();
  const agents = await waitAgents(ctx, nodeList, to);
  const rolledOut = await loopClock(ctx);
  ctx.log(
    `${kind} ${from} → ${to}: every agent ready after ${((rolledOut.ms - start.ms) / 1000).toFixed(1)} s`,
  );
  if (!ctx.replay) await ctx.sleep(SETTLE_MS);
  const end = await loopClock(ctx);
  const after = await snapshot(ctx, clients);
  const metricsAfter = await bpfMetrics(ctx, nodeList);
  const drops = nodeList.flatMap((n) =>
    dropDeltas(metricsBefore.get(n.name) ?? [], metricsAfter.get(n.name) ?? []).map((d) => ({
      node: n.name,
      ...d,
    })),
  );
  const connections: UpgradeConnection[] = clients.map((c) => {
    const b = before.get(c.name) as Snapshot;
    const a = after.get(c.name) as Snapshot;
    return {
      name: c.name,
      node: c.node,
      via: c.via,
      connection_before: b.connection,
      connection_after: a.connection,
      closed_events: a.closed - b.closed,
      error_events: a.errors - b.errors,
      backend_before: b.backend,
      backend_after: a.backend,
      ct_before: b.ct,
      ct_after: a.ct,
      ct_backend_before: ctDestination(b.ct),
      ct_backend_after: ctDestination(a.ct),
      replies_during:
        a.events.filter((e) => e.event === "reply").length -
        b.events.filter((e) => e.event === "reply").length,
      break_lines: a.breaks.slice(b.breaks.length),
      last_line_after: a.lines.at(-1) ?? "(empty log)",
    };
  });
  return {
    kind,
    from,
    to,
    duration_s: Math.round((rolledOut.ms - start.ms) / 100) / 10,
    agents_after: agents,
    agent_restarts: await agentRestarts(ctx),
    drops,
    connections,
    start,
    end,
  };
}

/** The loop's requests inside a leg's window, summarised with the raw lines that show it. */
function legRequests(lines: string[], log: ReturnType<typeof parseRequestLog>, from: number, to: number) {
  const st = requestStats(log, { from, to });
  const raw = (r: RequestResult | null) => (r ? (lines[r.line - 1] ?? "") : null);
  return {
    total: st.requests,
    failed: st.failed,
    failures: st.failures.map((f) => ({
      t: f.t,
      to: f.to,
      error: f.error ?? `HTTP ${f.status}`,
      raw: raw(f) ?? "",
    })),
    longest_gap: st.longestGap
      ? {
          to: st.longestGap.to,
          ms: st.longestGap.ms,
          after: raw(st.longestGap.after),
          before: raw(st.longestGap.before),
        }
      : null,
    backends: st.backends,
  };
}

/**
 * Cilium's documented path: the preflight check for the new version, then `helm upgrade` with the run's full
 * values and upgradeCompatibility set to the installed minor (never --reuse-values across minors); with
 * ROLLBACK=1 then `helm rollback` to the revision before, the guide's way back. All under the load above.
 */
export async function observeUpgrade(ctx: RunContext): Promise<RecordSet> {
  const plan = ctx.upgrade;
  if (!plan) throw new Error("no upgrade planned (UPGRADE_TO is unset)");
  const { clients, nodeList } = await deployTraffic(ctx);
  await waitConnected(ctx, clients);
  const chart = plan.lab ? [plan.lab.chart] : [CILIUM_CHART, "--version", plan.to];
  const labSet = (plan.lab?.set ?? []).flatMap((kv) => ["--set", kv]);
  if (plan.lab && plan.lab.load.length > 0) {
    await mustRun(ctx.exec, {
      target: { kind: "local" },
      argv: ["kind", "load", "docker-image", "--name", plan.lab.cluster, ...plan.lab.load],
      timeoutMs: 900_000,
    });
  }
  await preflight(ctx, plan, chart, labSet);
  const legs = [
    await runLeg(
      ctx,
      "upgrade",
      plan.from,
      plan.to,
      async () => {
        await helm(ctx, [
          "upgrade",
          "cilium",
          ...chart,
          "--values",
          plan.valuesFile,
          ...labSet,
          "--set",
          `upgradeCompatibility=${plan.fromMinor}`,
        ]);
      },
      clients,
      nodeList,
    ),
  ];
  if (plan.rollback) {
    const history = JSON.parse(await helm(ctx, ["history", "cilium", "-o", "json"])) as {
      revision: number;
      app_version?: string;
      status: string;
    }[];
    // the revision before the upgrade: the newest superseded one
    const back = history.filter((h) => h.status === "superseded").at(-1);
    if (!back)
      throw new Error(`helm history cilium has no revision to roll back to: ${JSON.stringify(history)}`);
    legs.push(
      await runLeg(
        ctx,
        "rollback",
        plan.to,
        plan.from,
        async () => {
          await helm(ctx, ["rollback", "cilium", String(back.revision)]);
        },
        clients,
        nodeList,
      ),
    );
  }
  // end the loop and read its log: every request's outcome and time
  await mustRun(ctx.exec, {
    target: { kind: "pod", namespace: ctx.namespace, pod: "request-loop" },
    argv: ["kill", "-TERM", "1"],
  });
  const { value: loopLog } = await pollUntil({
    what: "the request loop's closing line",
    deadlineMs: 60_000,
    intervalMs: 1000,
    probe: () => kubectl(ctx, ["-n", ctx.namespace, "logs", "request-loop"]),
    done: (l) => parseRequestLog(l).done !== null,
    show: (l) => `${parseRequestLog(l).requests.length} requests logged, no closing line yet`,
    sleep: ctx.sleep,
    now: ctx.now,
    progress: ctx.log,
  });
  const lines = loopLog.split("\n");
  const log = parseRequestLog(loopLog);
  const record: UpgradeRecord = {
    from: plan.from,
    from_minor: plan.fromMinor,
    to: plan.to,
    legs: legs.map(({ start, end, ...leg }) => ({
      ...leg,
      window: { from_ms: start.ms, to_ms: end.ms, from_line: start.line, to_line: end.line },
      requests: legRequests(lines, log, start.ms, end.ms),
    })),
    loop_total: log.requests.length,
  };
  await kubectl(ctx, [
    "-n",
    ctx.namespace,
    "delete",
    "pod",
    "-l",
    "app in (conn-client,request-loop)",
    "--wait=false",
  ]);
  return { upgrade: { record, evidence: {} } };
}
