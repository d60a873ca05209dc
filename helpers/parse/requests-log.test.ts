import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { clientStall, parseRequestLog, requestStats } from "./requests-log.ts";

const shippedLog = (bundle: string, leg: string, file: string) =>
  parseRequestLog(
    gunzipSync(
      readFileSync(join(import.meta.dirname, "..", "..", "suites", "bundles", bundle, "raw", leg, file)),
    ).toString(),
  );

describe("the request loop's log: a starved client told apart from a lost packet (issue 35)", () => {
  it("the shipped kpr 1.18 → 1.19 upgrade: its one failure ran 2.9 s past its own 2 s timeout, the client's stall", () => {
    // recorded by the lab (run up-118-119-kpr, 2026-12-06), read from the shipped bundle
    const log = shippedLog("upgrade-1.18-1.19/kpr", "upgrade", "075--n-cca-dp-logs-request-loop.txt.gz");
    expect(log.timeoutMs).toBe(2000);
    expect(log.lagMeasured).toBe(true);
    const st = requestStats(log);
    expect(st.failures.map((f) => [f.i, f.to, f.error])).toEqual([[472, "clusterip", "ETIMEDOUT"]]);
    expect(st.clientStalls.map((s) => s.why)).toEqual([
      "ran 4873 ms against its 2000 ms timeout: 2873 ms past it, its own timer not run",
    ]);
    // the outage around it: 5.2 s raw, of which the loop measured 4.8 s of its own stall
    expect(st.longestOutage).toMatchObject({
      to: "clusterip",
      ms: 5214,
      measuredStallMs: 4774,
      judgedMs: 440,
    });
  });

  it("the shipped kpr 1.19 restart: two requests failed on time with the loop running, not the client's", () => {
    // recorded by the lab (run up-119-120-kpr-b, 2026-12-06): a 626 ms stall ended 1.6 s before their deadline
    const log = shippedLog("upgrade-1.19-1.20/kpr-2", "restart", "071--n-cca-dp-logs-request-loop.txt.gz");
    const st = requestStats(log);
    expect(st.failures.map((f) => [f.i, f.to, f.error])).toEqual([
      [473, "nodeport", "ETIMEDOUT"],
      [474, "loadbalancer", "ETIMEDOUT"],
    ]);
    expect(st.clientStalls).toEqual([]);
    for (const f of st.failures) expect(clientStall(f, log)).toBeNull();
  });

  // written by us: a loop that measured its lag (issue 35's requests.mjs), 100 ms period per target
  const measured = [
    '{"event":"start","targets":["a=10.96.0.1:80"],"intervalMs":100,"timeoutMs":2000,"lagTickMs":20,"lagReportMs":100}',
    '{"i":0,"to":"a","t":1000,"ms":2,"lag":1,"port":20000,"ok":true,"status":200,"backend":"w1"}',
    '{"i":1,"to":"a","t":1100,"ms":2,"lag":0,"port":20001,"ok":true,"status":200,"backend":"w1"}',
    '{"event":"lag","t":1150,"ms":900}',
    '{"i":2,"to":"a","t":2050,"ms":2003,"lag":850,"port":20002,"ok":false,"error":"ETIMEDOUT"}',
    '{"i":3,"to":"a","t":2100,"ms":2001,"lag":0,"port":20003,"ok":false,"error":"ECONNRESET"}',
    '{"i":4,"to":"a","t":4200,"ms":3,"lag":0,"port":20004,"ok":true,"status":200,"backend":"w2"}',
  ].join("\n");

  it("a request that started late is the client's; one that failed on time outside a stall is not", () => {
    const log = parseRequestLog(measured);
    expect(log.lagMeasured).toBe(true);
    expect(log.lags).toEqual([{ t: 1150, ms: 900, line: 4 }]);
    const st = requestStats(log);
    expect(st.clientStalls.map((s) => [s.request.i, s.why])).toEqual([
      [2, "started 850 ms late: the loop was not running"],
    ]);
    expect(clientStall(st.failures[1] as (typeof st.failures)[number], log)).toBeNull();
    expect(st.failures.map((f) => f.port)).toEqual([20002, 20003]);
  });

  it("a timeout is the client's only when its stall covers the timeout's due time (written by us, after run up-119-120-kp)", () => {
    const log = parseRequestLog(
      [
        '{"event":"start","targets":["lb=172.31.100.240:80"],"intervalMs":50,"timeoutMs":2000,"lagTickMs":20,"lagReportMs":100}',
        // the stall ends 289 ms before request 1's deadline: the loop was running then and no answer had come
        '{"event":"lag","t":1750,"ms":1322}',
        '{"i":1,"to":"lb","t":1361,"ms":2193,"lag":20,"port":20386,"ok":false,"error":"ETIMEDOUT"}',
        // this one's deadline (4000) falls inside the next stall: its timer fired before the loop could read
        '{"event":"lag","t":3900,"ms":600}',
        '{"i":2,"to":"lb","t":2000,"ms":2480,"lag":0,"port":20387,"ok":false,"error":"ETIMEDOUT"}',
        // a reset is no stall's doing
        '{"i":3,"to":"lb","t":3950,"ms":5,"lag":0,"port":20388,"ok":false,"error":"ECONNRESET"}',
      ].join("\n"),
    );
    const why = requestStats(log).failures.map((f) => [f.i, clientStall(f, log)]);
    expect(why).toEqual([
      [1, null],
      [2, "the loop stalled 600 ms across its timeout's due time (its lag line 4)"],
      [3, null],
    ]);
  });

  it("the outage is the raw gap less only the stall the loop measured", () => {
    const st = requestStats(parseRequestLog(measured));
    // between the successes at 1100 and 4200: 3100 ms, 900 ms of it measured as the loop's own stall
    expect(st.longestOutage).toMatchObject({ ms: 3100, measuredStallMs: 900, judgedMs: 2200 });
  });
});
