import { contentLines, fail } from "./lines.ts";
import type { NetstatOutput } from "./netstat.ts";

const FORMAT = "proc-net-tcp";
const STATES: Record<string, string> = {
  "01": "ESTABLISHED",
  "02": "SYN_SENT",
  "03": "SYN_RECV",
  "04": "FIN_WAIT1",
  "05": "FIN_WAIT2",
  "06": "TIME_WAIT",
  "07": "CLOSE",
  "08": "CLOSE_WAIT",
  "09": "LAST_ACK",
  "0A": "LISTEN",
  "0B": "CLOSING",
};

/** `0100007F:9D94` (little-endian IPv4 in hex) → `127.0.0.1:40340`. */
function hexEndpoint(text: string): string | null {
  const m = /^([0-9A-Fa-f]{8}):([0-9A-Fa-f]{4})$/.exec(text);
  if (!m) return null;
  const h = m[1] as string;
  const ip = [6, 4, 2, 0].map((i) => Number.parseInt(h.slice(i, i + 2), 16)).join(".");
  return `${ip}:${Number.parseInt(m[2] as string, 16)}`;
}

/** `cat /proc/net/tcp` (IPv4): the socket table of a network namespace, in any image. */
export function parseProcNetTcp(input: string): NetstatOutput {
  const connections: NetstatOutput["connections"] = [];
  for (const line of contentLines(input)) {
    const t = line.text.trim().split(/\s+/);
    if (t[0] === "sl") continue;
    const local = hexEndpoint(t[1] ?? "");
    const foreign = hexEndpoint(t[2] ?? "");
    if (!/^\d+:$/.test(t[0] ?? "") || !local || !foreign)
      fail(FORMAT, line, "expected `N: LOCAL_HEX:PORT REM_HEX:PORT ST …`");
    connections.push({
      proto: "tcp",
      recvQ: 0,
      sendQ: 0,
      local,
      foreign,
      state: STATES[(t[3] ?? "").toUpperCase()] ?? t[3] ?? null,
    });
  }
  return { connections };
}
