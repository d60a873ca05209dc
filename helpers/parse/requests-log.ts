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
  /** 1-based line of the log it was read from. */
  line: number;
}

export interface RequestLog {
  requests: RequestResult[];
  /** The loop's own closing count ({"event":"done"}), null when it had not ended. */
  done: { requests: number; failed: number; line: number } | null;
  /** Lines that were neither a request nor an event (a torn last line, kubectl's own messages). */
  unreadLines: number[];
}

export function parseRequestLog(text: string): RequestLog {
  const out: RequestLog = { requests: [], done: null, unreadLines: [] };
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
        line,
      });
    else if (o.event === undefined) out.unreadLines.push(line);
  });
  return out;
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
   * The gap with the longest net time (less the loop's own stall): the longest the datapath left a target
   * without a success, failed requests inside or not (a request that hangs fails nothing until it ends).
   */
  longestOutage: Gap | null;
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
export function requestStats(log: RequestLog, window?: { from: number; to: number }): RequestStats {
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
      const gap: Gap = {
        to,
        ms: until - from,
        failedBetween: mine.filter((r) => !r.ok && r.t > from && r.t < until).length,
        after: a,
        before: b,
        stallMs,
        netMs: Math.max(0, until - from - stallMs),
      };
      nets.push(gap.netMs);
      if (!longestGap || gap.ms > longestGap.ms) longestGap = gap;
      if (!longestOutage || gap.netMs > longestOutage.netMs) longestOutage = gap;
    }
    if (nets.length > 0) gaps[to] = distribution(nets);
  }
  let loopStallMs = 0;
  for (let k = 1; k < inside.length; k++)
    loopStallMs = Math.max(loopStallMs, (inside[k] as RequestResult).t - (inside[k - 1] as RequestResult).t);
  const slowest = inside
    .filter((r) => r.ok)
    .reduce<RequestResult | null>((m, r) => (!m || r.ms > m.ms ? r : m), null);
  return {
    requests: inside.length,
    failed: failures.length,
    failures,
    longestGap,
    longestOutage,
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
