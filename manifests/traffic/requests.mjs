// requests: a bounded request loop for the upgrade topic. Every INTERVAL_MS it starts one HTTP GET /hostname,
// on a new connection, to the next of TARGETS (name=host:port,…, in turn), with a TIMEOUT_MS deadline; it never
// waits for the previous request, so a stalled datapath shows as timeouts, not as a slower loop. One JSON
// object per line on stdout for every request, when it ends:
//   {"i":7,"to":"clusterip","t":1764730000123,"ms":2.4,"ok":true,"status":200,"backend":"web-5d…"}
//   {"i":8,"to":"nodeport","t":1764730000323,"ms":2000.1,"ok":false,"error":"ETIMEDOUT"}
// (t: the request's start, ms since the epoch). It stops after DURATION_MS or MAX_REQUESTS (the bound), or on
// SIGTERM, and prints {"event":"done","requests":N,"failed":F} once every request has ended.
//
// Its own lag (issue 35: a starved client is not a lost packet): every request carries `lag`, how late the timer
// that started it fired (ms past its due time), and `port`, the local port it was bound to (SOURCE_PORTS, in turn:
// a capture on the node finds each request's packets by it). A sampler ticks every LAG_TICK_MS and prints
// {"event":"lag","t":<when it was due>,"ms":<how late it fired>} whenever it fired over LAG_REPORT_MS late: the
// windows in which the process was not running. A request that ran past its own timeout by more than that was not
// being run either.
import http from "node:http";

const targets = (process.env.TARGETS ?? "local=127.0.0.1:80").split(",").map((t) => {
  const [name, addr] = t.split("=");
  const i = addr.lastIndexOf(":");
  return { name, host: addr.slice(0, i).replace(/^\[|\]$/g, ""), port: Number(addr.slice(i + 1)) };
});
const intervalMs = Number(process.env.INTERVAL_MS ?? "200");
const timeoutMs = Number(process.env.TIMEOUT_MS ?? "2000");
const durationMs = Number(process.env.DURATION_MS ?? "1800000");
const maxRequests = Number(process.env.MAX_REQUESTS ?? "20000");
const lagTickMs = Number(process.env.LAG_TICK_MS ?? "20");
const lagReportMs = Number(process.env.LAG_REPORT_MS ?? "100");
// local ports, in turn (0: the kernel's choice); a range wide enough that a port is reused only long after its
// TIME_WAIT has ended (20000 ports at 10 requests a second: 33 minutes)
const [portFrom, portTo] = (process.env.SOURCE_PORTS ?? "0-0").split("-").map(Number);
const portAt = (i) => (portFrom > 0 ? portFrom + (i % (portTo - portFrom + 1)) : undefined);

const out = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const started = Date.now();
let sent = 0;
let inFlight = 0;
let failed = 0;
let stopping = false;

function one(i, target, lag) {
  const t = Date.now();
  const t0 = performance.now();
  const port = portAt(i);
  let settled = false;
  inFlight++;
  const end = (fields) => {
    if (settled) return;
    settled = true;
    inFlight--;
    if (!fields.ok) failed++;
    out({
      i,
      to: target.name,
      t,
      ms: Math.round((performance.now() - t0) * 10) / 10,
      lag,
      ...(port !== undefined ? { port } : {}),
      ...fields,
    });
    if (stopping && inFlight === 0) done();
  };
  const req = http.get(
    {
      host: target.host,
      port: target.port,
      path: "/hostname",
      agent: false,
      timeout: timeoutMs,
      ...(port !== undefined ? { localPort: port } : {}),
    },
    (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => {
        body += c;
      });
      res.on("end", () => end({ ok: res.statusCode === 200, status: res.statusCode, backend: body.trim() }));
      res.on("error", (err) => end({ ok: false, error: err.code ?? err.message }));
    },
  );
  req.on("timeout", () => req.destroy(Object.assign(new Error("timeout"), { code: "ETIMEDOUT" })));
  req.on("error", (err) => end({ ok: false, error: err.code ?? err.message }));
}

function done() {
  out({ event: "done", requests: sent, failed });
  process.exit(0);
}

function stop() {
  if (stopping) return;
  stopping = true;
  clearInterval(timer);
  clearInterval(sampler);
  if (inFlight === 0) done();
}

// each tick is due an interval after the one before fired (Node reschedules an interval from its run): how late
// it fires is the process's own lag
let prev = performance.now();
const timer = setInterval(() => {
  const now = performance.now();
  const lag = Math.max(0, Math.round(now - prev - intervalMs));
  prev = now;
  if (sent >= maxRequests || Date.now() - started >= durationMs) return stop();
  one(sent, targets[sent % targets.length], lag);
  sent++;
}, intervalMs);
let due = performance.now() + lagTickMs;
const sampler = setInterval(() => {
  const now = performance.now();
  const late = now - due;
  if (late > lagReportMs) out({ event: "lag", t: Math.round(Date.now() - late), ms: Math.round(late) });
  due = now + lagTickMs;
}, lagTickMs);
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
out({
  event: "start",
  targets: targets.map((t) => `${t.name}=${t.host}:${t.port}`),
  intervalMs,
  timeoutMs,
  lagTickMs,
  lagReportMs,
});
