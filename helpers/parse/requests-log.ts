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
}

export interface RequestStats {
  requests: number;
  failed: number;
  failures: RequestResult[];
  /** The longest time between the starts of two successive successful requests to one target. */
  longestGap: Gap | null;
  /**
   * The longest such gap with failed requests to that target inside it: the datapath's outage as the loop saw
   * it (a gap without failures inside is the loop starting no request: its own process was not scheduled).
   */
  longestOutage: Gap | null;
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
  const targets = [...new Set(inside.map((r) => r.to))].sort();
  for (const to of targets) {
    const mine = inside.filter((r) => r.to === to);
    const ok = mine.filter((r) => r.ok);
    const seen: Record<string, number> = {};
    for (const r of ok) seen[r.backend ?? "?"] = (seen[r.backend ?? "?"] ?? 0) + 1;
    if (ok.length > 0) backends[to] = seen;
    const edges: (RequestResult | null)[] = [null, ...ok, null];
    for (let k = 0; k + 1 < edges.length; k++) {
      const a = edges[k] ?? null;
      const b = edges[k + 1] ?? null;
      if (!window && (a === null || b === null)) continue;
      const from = a?.t ?? window?.from ?? 0;
      const until = b?.t ?? window?.to ?? 0;
      const gap: Gap = {
        to,
        ms: until - from,
        failedBetween: mine.filter((r) => !r.ok && r.t > from && r.t < until).length,
        after: a,
        before: b,
      };
      if (!longestGap || gap.ms > longestGap.ms) longestGap = gap;
      if (gap.failedBetween > 0 && (!longestOutage || gap.ms > longestOutage.ms)) longestOutage = gap;
    }
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
    loopStallMs,
    slowest,
    backends,
  };
}
