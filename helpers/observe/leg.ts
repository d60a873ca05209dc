import { holderStall } from "../parse/holder-log.ts";
import { errorLines } from "../parse/metrics-json.ts";
import type { Attribution } from "../parse/packets.ts";
import { parseRequestLog } from "../parse/requests-log.ts";
import { EXPECTED_DROP_REASONS, EXPECTED_ERROR_LINES } from "../properties/sources.ts";
import { derive, type EvidenceItem, type Quote, type RawText } from "../records/evidence.ts";
import type { UpgradeConnection, UpgradeLeg } from "../records/types.ts";
import { connectionSurvived } from "../records/upgrade.ts";
import { agentLogSince, kubectlRaw } from "./cluster.ts";
import type { RunContext } from "./context.ts";
import {
  agentRestarts,
  bpfMetrics,
  dropText,
  foldMapNames,
  nodeDrops,
  pinnedMaps,
  waitAgents,
} from "./leg-agents.ts";
import { attributeLeg, startPcap } from "./leg-capture.ts";
import { deployRoll, readRoll, startRoll } from "./leg-roll.ts";
import { ctDestination, legRequests, type Snapshot, snapshot, startCapture } from "./leg-traffic.ts";
import { deployLoad, type Load, loopClock, removeLoad, SETTLE_MS, stopLoop, waitConnected } from "./load.ts";

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
  const roll = await deployRoll(ctx);
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
  // backends replaced while the agents change: leg-roll's new Pods are created as they restart
  await startRoll(ctx, roll);
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
    const log = await agentLogSince(ctx, pod, startIso);
    logs.push(log);
    const mine = errorLines(log.text).filter((l) => !EXPECTED_ERROR_LINES.some((re) => re.test(l)));
    const set = new Set(mine);
    for (const l of mine) errors.push(`${node}: ${l}`);
    errorQuotes.push(...log.quotes((l) => set.has(l)));
  }
  const captured = await kubectlRaw(ctx, ["-n", ctx.namespace, "logs", capture]);
  const replaced = await readRoll(
    ctx,
    roll,
    nodeList.map((n) => n.name),
  );
  const drops = nodeDrops(nodeList, metricsBefore, metricsAfter);
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
            `dropped on ${d.node}: ${dropText(d)}`,
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
              `dropped on ${d.node}: ${dropText(d)}, not among the expected reasons`,
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
      ...(replaced ? { rolled: replaced.rolled } : {}),
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
      ...(replaced ? { rolled: replaced.evidence } : {}),
    },
    start,
    rolledOut: rolled,
    end,
    capture: captured,
    pcap,
  };
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
