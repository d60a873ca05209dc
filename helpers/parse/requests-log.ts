/**
 * The request loop's log (manifests/traffic/requests.mjs): one JSON object per request, in the order the
 * requests ended, plus `start` and `done` events. Lines that are not JSON objects are counted, never fatal.
 */
export interface RequestResult {
  i: number;
  /** The target's name (`clusterip`, `nodeport`). */
  to: string;
  /** Start of the request, ms since the epoch. */
  t: number;
  /** Duration, ms. */
  ms: number;
  ok: boolean;
  status?: number;
  backend?: string;
  error?: string;
  /** How late the loop's timer fired when it started this request (ms); absent in logs from before issue 35. */
  lag?: number;
  /** The local port it was bound to (the loop's SOURCE_PORTS); absent when the kernel chose. */
  port?: number;
  /** 1-based line of the log it was read from. */
  line: number;
}

/** A window in which the loop's own process was not running: a sampler tick that fired `ms` late, due at `t`. */
export interface LagEvent {
  t: number;
  ms: number;
  line: number;
}

export interface RequestLog {
  requests: RequestResult[];
  /** The loop's own stalls over its report threshold (none in logs from before issue 35: lagMeasured false). */
  lags: LagEvent[];
  /** Whether the loop measured its own lag (its start line names lagTickMs): what judging may rely on. */
  lagMeasured: boolean;
  /** The loop's timeout per request (ms, from its start line); null when the log has no start line. */
  timeoutMs: number | null;
  /** The loop's own closing count ({"event":"done"}), null when it had not ended. */
  done: { requests: number; failed: number; line: number } | null;
  /** Lines that were neither a request nor an event (a torn last line, kubectl's own messages). */
  unreadLines: number[];
}

export function parseRequestLog(text: string): RequestLog {
  const out: RequestLog = {
    requests: [],
    lags: [],
    lagMeasured: false,
    timeoutMs: null,
    done: null,
    unreadLines: [],
  };
  text.split("\n").forEach((raw, idx) => {
    const line = idx + 1;
    const l = raw.trim();
    if (!l) return;
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(l) as Record<string, unknown>;
    } catch {
      out.unreadLines.push(line);
      return;
    }
    if (o.event === "done") out.done = { requests: Number(o.requests), failed: Number(o.failed), line };
    else if (o.event === "start") {
      if (typeof o.timeoutMs === "number") out.timeoutMs = o.timeoutMs;
      if (typeof o.lagTickMs === "number") out.lagMeasured = true;
    } else if (o.event === "lag" && typeof o.t === "number" && typeof o.ms === "number")
      out.lags.push({ t: o.t, ms: o.ms, line });
    else if (typeof o.i === "number" && typeof o.t === "number" && typeof o.ok === "boolean")
      out.requests.push({
        i: o.i,
        to: String(o.to ?? ""),
        t: o.t,
        ms: Number(o.ms ?? 0),
        ok: o.ok,
        ...(typeof o.status === "number" ? { status: o.status } : {}),
        ...(typeof o.backend === "string" ? { backend: o.backend } : {}),
        ...(typeof o.error === "string" ? { error: o.error } : {}),
        ...(typeof o.lag === "number" ? { lag: o.lag } : {}),
        ...(typeof o.port === "number" ? { port: o.port } : {}),
        line,
      });
    else if (o.event === undefined) out.unreadLines.push(line);
  });
  return out;
}

/**
 * The declared margins of a client stall (issue 35): a request that ran past its own timeout by more than
 * STALL_OVERRUN_MS was not being run (its timer could not fire); one that started STALL_LAG_MS late or overlaps a
 * measured stall of at least that long ran while the loop's process was not scheduled. 500 ms: five of the loop's
 * periods, over twice the worst lag an idle loop showed on the lab's 2 cores.
 */
export const STALL_OVERRUN_MS = 500;
export const STALL_LAG_MS = 500;

/** Why a failed request is the client's own stall, not the datapath's loss; null when nothing says so. */
export function clientStall(r: RequestResult, log: Pick<RequestLog, "lags" | "timeoutMs">): string | null {
  if (log.timeoutMs !== null && r.ms > log.timeoutMs + STALL_OVERRUN_MS)
    return `ran ${Math.round(r.ms)} ms against its ${log.timeoutMs} ms timeout: ${Math.round(r.ms - log.timeoutMs)} ms past it, its own timer not run`;
  if (r.lag !== undefined && r.lag >= STALL_LAG_MS)
    return `started ${r.lag} ms late: the loop was not running`;
  // a timeout the loop's own stall explains: the loop was not running when the timeout came due (its timer then
  // fires before the loop reads an answer that arrived meanwhile). A stall that ended before the deadline does
  // not: the loop was running then, and no answer had come (run up-119-120-kp: a stall of 1322 ms that ended
  // 289 ms before the deadline, the handshake done at once, the answer never came)
  if (r.error !== "ETIMEDOUT" || log.timeoutMs === null) return null;
  const due = r.t + log.timeoutMs;
  const e = log.lags.find(
    (x) => x.ms >= STALL_LAG_MS && x.t <= due && x.t + x.ms >= due - STALL_DUE_SLACK_MS,
  );
  return e ? `the loop stalled ${e.ms} ms across its timeout's due time (its lag line ${e.line})` : null;
}

/** How close before a timeout's due time a stall must end for the loop to have had no time to read an answer. */
export const STALL_DUE_SLACK_MS = 50;

/** The loop's measured stall (its lag events) inside (from, until), ms. */
function measuredStall(lags: LagEvent[], from: number, until: number): number {
  let ms = 0;
  for (const e of lags) ms += Math.max(0, Math.min(until, e.t + e.ms) - Math.max(from, e.t));
  return ms;
}

export interface Gap {
  to: string;
  ms: number;
  /** Requests to that target started in between that failed: none means the loop itself started none. */
  failedBetween: number;
  /** The successful requests on either side (by start time), or the window's edge (null). */
  after: RequestResult | null;
  before: RequestResult | null;
  /**
   * The loop's own stall inside the gap: for each two successive request starts (any target) in it, the time
   * past the loop's period (the median time between starts); time in which no request was even started.
   */
  stallMs: number;
  /** The gap less the loop's stall: how long the target went without a success while the loop was running. */
  netMs: number;
  /** The loop's own stall inside the gap as it measured it (its lag events); null when the loop did not measure. */
  measuredStallMs: number | null;
  /**
   * What the outage is judged on (issue 35): the raw gap, less only the stall the loop measured itself (nothing is
   * taken off on inference: a gap the loop did not measure counts whole).
   */
  judgedMs: number;
}

/** A distribution of one target's net gaps between successes (ms). */
export interface GapDistribution {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Net gaps longer than 500 ms (over twice the loop's period per target). */
  over500: number;
}

export interface RequestStats {
  requests: number;
  failed: number;
  failures: RequestResult[];
  /** The longest time between the starts of two successive successful requests to one target. */
  longestGap: Gap | null;
  /**
   * The gap with the longest judged time (the raw gap less the stall the loop measured): the longest the datapath
   * left a target without a success, failed requests inside or not (a request that hangs fails nothing until it ends).
   */
  longestOutage: Gap | null;
  /** The failures the client's own stall explains (clientStall), with the reason. */
  clientStalls: { request: RequestResult; why: string }[];
  /** Per target, the distribution of the net gaps between successes. */
  gaps: Record<string, GapDistribution>;
  /** The loop's period: the median time between two successive request starts (ms). */
  periodMs: number;
  /** The longest time between two successive request starts, any target: how late the loop itself ran. */
  loopStallMs: number;
  /** The slowest successful request. */
  slowest: RequestResult | null;
  /** Successful requests per target and backend. */
  backends: Record<string, Record<string, number>>;
}

/**
 * The requests that started inside [from, to] (ms since the epoch; the whole log without a window): how many,
 * which failed, and the longest gap between successes to the same target, edges of the window included (a
 * target that stopped answering before the window ended shows the gap up to the end).
 */
export function requestStats(
  log: Pick<RequestLog, "requests" | "lags" | "lagMeasured" | "timeoutMs">,
  window?: { from: number; to: number },
): RequestStats {
  const inside = log.requests
    .filter((r) => !window || (r.t >= window.from && r.t <= window.to))
    .sort((a, b) => a.t - b.t || a.i - b.i);
  const failures = inside.filter((r) => !r.ok);
  const backends: Record<string, Record<string, number>> = {};
  let longestGap: Gap | null = null;
  let longestOutage: Gap | null = null;
  const gaps: Record<string, GapDistribution> = {};
  const starts = inside.map((r) => r.t);
  const periodMs = median(starts.slice(1).map((t, k) => t - (starts[k] as number)));
  /** The loop's stall in (from, until): time past its period between successive starts, the edges included. */
  const stallIn = (from: number, until: number) => {
    const points = [from, ...starts.filter((t) => t > from && t < until), until];
    let stall = 0;
    for (let k = 1; k < points.length; k++)
      stall += Math.max(0, (points[k] as number) - (points[k - 1] as number) - periodMs);
    return stall;
  };
  const targets = [...new Set(inside.map((r) => r.to))].sort();
  for (const to of targets) {
    const mine = inside.filter((r) => r.to === to);
    const ok = mine.filter((r) => r.ok);
    const seen: Record<string, number> = {};
    for (const r of ok) seen[r.backend ?? "?"] = (seen[r.backend ?? "?"] ?? 0) + 1;
    if (ok.length > 0) backends[to] = seen;
    const edges: (RequestResult | null)[] = [null, ...ok, null];
    const nets: number[] = [];
    for (let k = 0; k + 1 < edges.length; k++) {
      const a = edges[k] ?? null;
      const b = edges[k + 1] ?? null;
      if (!window && (a === null || b === null)) continue;
      const from = a?.t ?? window?.from ?? 0;
      const until = b?.t ?? window?.to ?? 0;
      const stallMs = stallIn(from, until);
      const measured = log.lagMeasured ? measuredStall(log.lags, from, until) : null;
      const gap: Gap = {
        to,
        ms: until - from,
        failedBetween: mine.filter((r) => !r.ok && r.t > from && r.t < until).length,
        after: a,
        before: b,
        stallMs,
        netMs: Math.max(0, until - from - stallMs),
        measuredStallMs: measured,
        judgedMs: Math.max(0, until - from - (measured ?? 0)),
      };
      nets.push(gap.netMs);
      if (!longestGap || gap.ms > longestGap.ms) longestGap = gap;
      if (!longestOutage || gap.judgedMs > longestOutage.judgedMs) longestOutage = gap;
    }
    if (nets.length > 0) gaps[to] = distribution(nets);
  }
  let loopStallMs = 0;
  for (let k = 1; k < inside.length; k++)
    loopStallMs = Math.max(loopStallMs, (inside[k] as RequestResult).t - (inside[k - 1] as RequestResult).t);
  const slowest = inside
    .filter((r) => r.ok)
    .reduce<RequestResult | null>((m, r) => (!m || r.ms > m.ms ? r : m), null);
  const clientStalls = failures.flatMap((r) => {
    const why = clientStall(r, log);
    return why ? [{ request: r, why }] : [];
  });
  return {
    requests: inside.length,
    failed: failures.length,
    failures,
    longestGap,
    longestOutage,
    clientStalls,
    gaps,
    periodMs,
    loopStallMs,
    slowest,
    backends,
  };
}

function median(xs: number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] as number;
}

/** Nearest-rank percentiles of a non-empty list. */
function distribution(xs: number[]): GapDistribution {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) =>
    s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] as number;
  return {
    n: s.length,
    p50: at(50),
    p90: at(90),
    p99: at(99),
    max: s[s.length - 1] as number,
    over500: s.filter((x) => x > 500).length,
  };
}
