import { type HolderEvent, holderEventLines } from "../parse/holder-log.ts";
import type { Attribution } from "../parse/packets.ts";
import { clientStall, parseRequestLog, type RequestResult, requestStats } from "../parse/requests-log.ts";
import { derive, type EvidenceItem, type Quote, type RawText } from "../records/evidence.ts";
import type { UpgradeLeg } from "../records/types.ts";
import { ciliumDbgRaw } from "./agent.ts";
import { kubectlRaw, type NodeInfo } from "./cluster.ts";
import type { RunContext } from "./context.ts";
import { type Clock, type Load, type LoadClient, SETTLE_MS } from "./load.ts";
import { apply, renderManifest, waitPodsReady } from "./workloads.ts";

/** One connection's state from its holder log and every node's conntrack, each fact with its line. */
export interface Snapshot {
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

export const ctDestination = (q: Quote | null): string | null =>
  q ? (q.quote.trim().split(/\s+/)[4] ?? null) : null;

export async function snapshot(
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

/** The capture's bound per leg (tcpdump -c): SYN, SYN-ACK, FIN and RST of the loop's connections. */
const CAPTURE_PACKETS = 200_000;

/**
 * The capture of the loop's connections on its node for one leg: a hostNetwork Pod running tcpdump on every
 * interface for SYN, FIN and RST packets to or from the loop's Pod (bounded by CAPTURE_PACKETS), its log read
 * after the leg.
 */
export async function startCapture(ctx: RunContext, load: Load, kind: string): Promise<string> {
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
