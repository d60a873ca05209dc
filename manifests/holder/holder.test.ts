/** The holder against real TCP servers on loopback: source port, logged peer, requests, reconnects. */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server, type Socket } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { lastHolderConnection } from "../../helpers/parse/holder-log.ts";

const HOLDER = join(dirname(fileURLToPath(import.meta.url)), "holder.mjs");

interface Seen {
  server: Server;
  port: number;
  sockets: Socket[];
  clients: string[];
}

async function httpServer(): Promise<Seen> {
  const seen: Seen = { server: createServer(), port: 0, sockets: [], clients: [] };
  seen.server.on("connection", (s) => {
    seen.sockets.push(s);
    seen.clients.push(`${s.remoteAddress}:${s.remotePort}`);
    s.on("error", () => {}); // the holder is killed at the end of each test
    s.on("data", (d) => {
      for (const req of d
        .toString()
        .split("\r\n\r\n")
        .filter((x) => x.startsWith("GET"))) {
        const body = req.startsWith("GET /clientip") ? `${s.remoteAddress}:${s.remotePort}` : "web-test-pod";
        s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      }
    });
  });
  await new Promise<void>((r) => seen.server.listen(0, "127.0.0.1", () => r()));
  seen.port = (seen.server.address() as { port: number }).port;
  return seen;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const children: ChildProcess[] = [];
const servers: Server[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
  for (const s of servers.splice(0)) s.close();
});

function startHolder(port: number, sourcePort: number): { log: () => string } {
  let out = "";
  const child = spawn(process.execPath, [HOLDER], {
    env: {
      ...process.env,
      TARGET_HOST: "127.0.0.1",
      TARGET_PORT: String(port),
      SOURCE_PORT: String(sourcePort),
      INTERVAL_MS: "50",
    },
  });
  children.push(child);
  child.stdout.on("data", (d) => {
    out += d.toString();
  });
  return { log: () => out };
}

async function until(cond: () => boolean, what: string, ms = 5000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("holder (real sockets on loopback)", () => {
  it("connects from the source port, logs getpeername, keeps requesting", async () => {
    const srv = await httpServer();
    servers.push(srv.server);
    const sourcePort = await freePort();
    const h = startHolder(srv.port, sourcePort);
    await until(
      () =>
        h
          .log()
          .split("\n")
          .filter((l) => l.includes('"reply"')).length >= 3,
      "three replies",
    );
    expect(srv.clients).toEqual([`127.0.0.1:${sourcePort}`]);
    const conn = lastHolderConnection(h.log());
    expect(conn).toMatchObject({
      event: "connected",
      local: `127.0.0.1:${sourcePort}`,
      peer: `127.0.0.1:${srv.port}`,
      connection: 1,
    });
    expect(h.log()).toContain(`"body":"127.0.0.1:${sourcePort}"`);
  });

  it("logs the close and reconnects from the same source port when the server drops it", async () => {
    const srv = await httpServer();
    servers.push(srv.server);
    const sourcePort = await freePort();
    const h = startHolder(srv.port, sourcePort);
    await until(() => srv.sockets.length === 1 && h.log().includes('"reply"'), "first connection");
    srv.sockets[0]?.destroy();
    await until(() => lastHolderConnection(h.log())?.connection === 2, "reconnect");
    expect(h.log()).toMatch(/"event":"closed"/);
    expect(h.log()).toMatch(/"event":"reconnect"/);
    expect(srv.clients).toEqual([`127.0.0.1:${sourcePort}`, `127.0.0.1:${sourcePort}`]);
  });
});
