// holder: binds source port SOURCE_PORT, connects to TARGET_HOST:TARGET_PORT, logs the peer address the
// socket API reports (getpeername), holds the connection with a periodic HTTP request so a dead connection
// is noticed, and logs every reconnect. One JSON object per line on stdout. It measures its own lag as the
// request loop does (issue 42: a starved holder is not a broken datapath): a sampler ticks every LAG_TICK_MS and
// logs {"event":"lag","due":<ISO, when the tick was due: the stall's start>,"ms":<how late it fired>} whenever it
// fired over LAG_REPORT_MS late.
import net from "node:net";

const host = process.env.TARGET_HOST ?? "127.0.0.1";
const port = Number(process.env.TARGET_PORT ?? "80");
const localPort = Number(process.env.SOURCE_PORT ?? "40404");
const intervalMs = Number(process.env.INTERVAL_MS ?? "2000");
const paths = (process.env.PATHS ?? "/clientip,/hostname").split(",");
const lagTickMs = Number(process.env.LAG_TICK_MS ?? "20");
const lagReportMs = Number(process.env.LAG_REPORT_MS ?? "100");

const log = (event, fields = {}) =>
  process.stdout.write(`${JSON.stringify({ event, t: new Date().toISOString(), ...fields })}\n`);
const addr = (ip, p) => (ip?.includes(":") ? `[${ip}]:${p}` : `${ip}:${p}`);

let attempt = 0;
let connections = 0;

function connect() {
  attempt++;
  const sock = net.connect({ host, port, localPort });
  let buffer = "";
  let timer = null;
  let pending = 0;
  let i = 0;
  sock.setNoDelay(true);
  sock.on("connect", () => {
    connections++;
    attempt = 0;
    log("connected", {
      local: addr(sock.localAddress, sock.localPort),
      peer: addr(sock.remoteAddress, sock.remotePort),
      connection: connections,
    });
    const tick = () => {
      if (pending > 2) {
        log("stalled", { pending });
        sock.destroy(new Error("no reply to 3 requests"));
        return;
      }
      const path = paths[i++ % paths.length];
      pending++;
      sock.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n\r\n`);
    };
    tick();
    timer = setInterval(tick, intervalMs);
  });
  sock.on("data", (chunk) => {
    buffer += chunk.toString("utf8");
    for (;;) {
      const head = buffer.indexOf("\r\n\r\n");
      if (head < 0) return;
      const m = /content-length:\s*(\d+)/i.exec(buffer.slice(0, head));
      const len = m ? Number(m[1]) : 0;
      if (buffer.length < head + 4 + len) return;
      const status = Number(buffer.slice(9, 12));
      const body = buffer.slice(head + 4, head + 4 + len);
      buffer = buffer.slice(head + 4 + len);
      pending = Math.max(0, pending - 1);
      log("reply", { status, body: body.trim() });
    }
  });
  sock.on("error", (err) => log("error", { code: err.code ?? null, message: err.message }));
  sock.on("close", () => {
    if (timer) clearInterval(timer);
    log("closed", { connection: connections });
    const delay = Math.min(5000, 200 * 2 ** Math.min(attempt, 5));
    log("reconnect", { inMs: delay, attempt: attempt + 1 });
    setTimeout(connect, delay);
  });
}

let due = performance.now() + lagTickMs;
setInterval(() => {
  const now = performance.now();
  const late = now - due;
  if (late > lagReportMs)
    log("lag", { due: new Date(Date.now() - late).toISOString(), ms: Math.round(late) });
  due = now + lagTickMs;
}, lagTickMs);

process.on("SIGTERM", () => process.exit(0));
log("start", { target: addr(host, port), localPort, lagTickMs, lagReportMs });
connect();
