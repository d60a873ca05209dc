/** The request loop against real HTTP servers on loopback: one line per request, failures and the bound. */
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { createServer as createTcpServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { parseRequestLog, requestStats } from "../../helpers/parse/requests-log.ts";

const LOOP = join(dirname(fileURLToPath(import.meta.url)), "requests.mjs");
const servers: { close(): unknown }[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function listen(server: Server | ReturnType<typeof createTcpServer>): Promise<number> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return (server.address() as { port: number }).port;
}

/** Runs the loop to its end; with `stopAfter`, sends SIGTERM once that many requests are logged. */
function run(env: Record<string, string>, stopAfter?: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LOOP], { env: { ...process.env, ...env } });
    let out = "";
    let stopped = false;
    child.stdout.on("data", (d) => {
      out += d.toString();
      if (stopAfter && !stopped && parseRequestLog(out).requests.length >= stopAfter) {
        stopped = true;
        child.kill("SIGTERM");
      }
    });
    const guard = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the loop did not end: ${out}`));
    }, 10_000);
    child.on("exit", () => {
      clearTimeout(guard);
      resolve(out);
    });
  });
}

describe("request loop (real sockets on loopback)", () => {
  it("alternates its targets, one line per request with the backend's answer, and stops at its bound", async () => {
    const a = await listen(createServer((_q, s) => s.end("web-a")));
    const b = await listen(createServer((_q, s) => s.end("web-b\n")));
    const log = parseRequestLog(
      await run({ TARGETS: `one=127.0.0.1:${a},two=127.0.0.1:${b}`, INTERVAL_MS: "20", MAX_REQUESTS: "6" }),
    );
    expect(log.requests).toHaveLength(6);
    expect(log.done).toMatchObject({ requests: 6, failed: 0 });
    expect(log.unreadLines).toEqual([]);
    const st = requestStats(log);
    expect(st.failed).toBe(0);
    expect(st.backends).toEqual({ one: { "web-a": 3 }, two: { "web-b": 3 } });
    expect(st.longestGap?.ms).toBeGreaterThanOrEqual(20);
    expect(st.longestGap?.ms).toBeLessThan(2000);
  });

  it("a refused and a silent target fail with their errno, each at its own time, and the loop goes on", async () => {
    const closed = await listen(createTcpServer());
    servers.pop()?.close();
    const silent = await listen(createTcpServer(() => {})); // accepts, never answers
    const out = await run({
      TARGETS: `refused=127.0.0.1:${closed},silent=127.0.0.1:${silent}`,
      INTERVAL_MS: "20",
      TIMEOUT_MS: "200",
      MAX_REQUESTS: "4",
    });
    const log = parseRequestLog(out);
    expect(log.done).toMatchObject({ requests: 4, failed: 4 });
    const errors = Object.fromEntries(log.requests.map((r) => [r.to, r.error]));
    expect(errors).toEqual({ refused: "ECONNREFUSED", silent: "ETIMEDOUT" });
    for (const r of log.requests.filter((x) => x.to === "silent")) expect(r.ms).toBeGreaterThanOrEqual(195);
  });

  it("a loop that is not run (SIGSTOP) says so: a lag line for the stall, late starts, and each request's own port", async () => {
    const slow = await listen(createServer((_q, s) => setTimeout(() => s.end("web-a"), 5)));
    // a free range of local ports: the kernel's ephemeral one would collide; ours is above it on this machine
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [LOOP], {
        env: {
          ...process.env,
          TARGETS: `one=127.0.0.1:${slow}`,
          INTERVAL_MS: "20",
          TIMEOUT_MS: "300",
          SOURCE_PORTS: "61000-61099",
          LAG_REPORT_MS: "100",
        },
      });
      let text = "";
      let started = false;
      child.stdout.on("data", (d) => {
        text += d.toString();
        // once it runs (its start line; a loaded machine may take a second to start node): starved as an agent
        // restart on two cores starves it, not scheduled for 700 ms
        if (!started && text.includes('"event":"start"')) {
          started = true;
          setTimeout(() => child.kill("SIGSTOP"), 300);
          setTimeout(() => child.kill("SIGCONT"), 1000);
          setTimeout(() => child.kill("SIGTERM"), 1400);
        }
      });
      const guard = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`the loop did not end: ${text}`));
      }, 10_000);
      child.on("exit", () => {
        clearTimeout(guard);
        resolve(text);
      });
    });
    const log = parseRequestLog(out);
    expect(log.lagMeasured).toBe(true);
    expect(log.lags.some((e) => e.ms >= 500)).toBe(true);
    expect(log.requests.some((r) => (r.lag ?? 0) >= 500)).toBe(true);
    const ports = log.requests.map((r) => r.port);
    expect(ports.every((p) => p !== undefined && p >= 61000 && p <= 61099)).toBe(true);
    expect(new Set(ports).size).toBe(ports.length);
  });

  it("SIGTERM ends it after the requests in flight, with its closing count", async () => {
    const a = await listen(createServer((_q, s) => s.end("web-a")));
    const log = parseRequestLog(await run({ TARGETS: `one=127.0.0.1:${a}`, INTERVAL_MS: "10" }, 4));
    expect(log.done?.requests).toBe(log.requests.length);
    expect(log.requests.length).toBeGreaterThan(3);
  });
});

describe("request statistics", () => {
  const line = (i: number, to: string, t: number, ok: boolean, extra = "") =>
    `{"i":${i},"to":"${to}","t":${t},"ms":1,"ok":${ok}${extra}}`;

  it("the longest gap is between successes to one target, failures in between, window edges included", () => {
    const text = [
      '{"event":"start"}',
      line(0, "c", 1000, true, ',"backend":"w1"'),
      line(1, "n", 1100, true, ',"backend":"w2"'),
      line(2, "c", 1200, false, ',"error":"ECONNRESET"'),
      line(3, "n", 1300, true, ',"backend":"w2"'),
      line(4, "c", 1400, false, ',"error":"ETIMEDOUT"'),
      line(5, "c", 1900, true, ',"backend":"w1"'),
      "kubectl: torn {",
    ].join("\n");
    const log = parseRequestLog(text);
    expect(log.unreadLines).toEqual([8]);
    const st = requestStats(log);
    expect(st).toMatchObject({ requests: 6, failed: 2 });
    expect(st.failures.map((f) => [f.t, f.error, f.line])).toEqual([
      [1200, "ECONNRESET", 4],
      [1400, "ETIMEDOUT", 6],
    ]);
    expect(st.longestGap).toMatchObject({ to: "c", ms: 900, failedBetween: 2 });
    // the loop's period is the median time between starts (100 ms); c's 900 ms gap holds one 500 ms start-to-start
    // interval (1400 -> 1900), 400 ms of it past the period: the loop's stall
    expect(st.periodMs).toBe(100);
    expect(st.longestOutage).toMatchObject({ to: "c", ms: 900, stallMs: 400, netMs: 500 });
    expect(st.gaps.c).toMatchObject({ n: 1, max: 500 });
    expect(st.loopStallMs).toBe(500);
    expect(st.longestGap?.after?.line).toBe(2);
    expect(st.longestGap?.before?.line).toBe(7);
    // inside a window that ends before c answered again, the gap runs to the window's end
    const w = requestStats(log, { from: 1000, to: 1800 });
    expect(w.longestGap).toMatchObject({ to: "c", ms: 800, before: null });
    // a gap in which the loop started nothing is its own delay, not an outage: taken off
    const stalled = parseRequestLog(
      [
        line(0, "c", 0, true),
        line(1, "c", 100, true),
        line(2, "c", 200, true),
        line(3, "c", 2200, true),
      ].join("\n"),
    );
    expect(requestStats(stalled)).toMatchObject({
      longestGap: { ms: 2000, failedBetween: 0 },
      longestOutage: { netMs: 100 },
    });
    // a target that went unanswered while the loop kept asking (its requests hung or failed) is an outage
    const down = parseRequestLog(
      [
        line(0, "c", 0, true),
        ...[1, 2, 3, 4, 5, 6, 7, 8, 9].map((k) => line(k, "c", k * 100, false, ',"error":"ETIMEDOUT"')),
        line(10, "c", 1000, true),
      ].join("\n"),
    );
    expect(requestStats(down).longestOutage).toMatchObject({
      ms: 1000,
      stallMs: 0,
      netMs: 1000,
      failedBetween: 9,
    });
    // a target with no success in the window: the whole window
    expect(requestStats(parseRequestLog(line(0, "c", 10, false)), { from: 0, to: 50 }).longestGap?.ms).toBe(
      50,
    );
  });
});
