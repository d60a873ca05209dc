import { contentLines, fail, mayBeCut } from "./lines.ts";
import type { NetstatOutput } from "./netstat.ts";

const FORMAT = "proc-net-tcp";
/** The header, whole (tcp's `rem_address`, tcp6's `remote_address`): with anything after it, it swallowed a row. */
const HEADER =
  /^sl\s+local_address\s+rem(?:ote)?_address\s+st\s+tx_queue\s+rx_queue\s+tr\s+tm->when\s+retrnsmt\s+uid\s+timeout\s+inode$/;
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

/** One 32-bit word of the table, printed in host (little-endian) byte order → its four bytes in network order. */
const wordBytes = (w: string): number[] => [6, 4, 2, 0].map((i) => Number.parseInt(w.slice(i, i + 2), 16));

/**
 * `0100007F:9D94` (IPv4) → `127.0.0.1:40340`; a /proc/net/tcp6 address → `[2001:db8::1]:80`, and an IPv4-mapped
 * one (`0000000000000000FFFF00000100007F`) → `127.0.0.1:…`: a Go server listening on `:8080` is a dual-stack
 * IPv6 socket, so its IPv4 peers are only in tcp6.
 */
function hexEndpoint(text: string): string | null {
  const m = /^([0-9A-Fa-f]{8}|[0-9A-Fa-f]{32}):([0-9A-Fa-f]{4})$/.exec(text);
  if (!m) return null;
  const h = (m[1] as string).toUpperCase();
  const port = Number.parseInt(m[2] as string, 16);
  if (h.length === 8) return `${wordBytes(h).join(".")}:${port}`;
  const bytes = [0, 8, 16, 24].flatMap((i) => wordBytes(h.slice(i, i + 8)));
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff)
    return `${bytes.slice(12).join(".")}:${port}`;
  const groups = [0, 2, 4, 6, 8, 10, 12, 14].map((i) =>
    (((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16),
  );
  return `[${groups.join(":").replace(/(^|:)0(:0)+(:|$)/, "::")}]:${port}`;
}

/**
 * `cat /proc/net/tcp [/proc/net/tcp6]`: the socket tables of a network namespace, in any image. Both tables may
 * be concatenated (each with its header); IPv4-mapped IPv6 peers are given as IPv4.
 */
export function parseProcNetTcp(input: string): NetstatOutput {
  const connections: NetstatOutput["connections"] = [];
  for (const line of contentLines(FORMAT, input)) {
    const t = line.text.trim().split(/\s+/);
    if (t[0] === "sl") {
      if (!HEADER.test(line.text.trim()))
        fail(FORMAT, line, "a header with more after it: two lines joined?");
      continue;
    }
    const local = hexEndpoint(t[1] ?? "");
    const foreign = hexEndpoint(t[2] ?? "");
    if (!/^\d+:$/.test(t[0] ?? "") || !local || !foreign)
      fail(FORMAT, line, "expected `N: LOCAL_HEX:PORT REM_HEX:PORT ST …`");
    // the row runs to the inode at least (sl … timeout inode): shorter is cut off
    if (
      !/^[0-9A-Fa-f]{2}$/.test(t[3] ?? "") ||
      !/^[0-9A-Fa-f]{8}:[0-9A-Fa-f]{8}$/.test(t[4] ?? "") ||
      t.length < 10
    )
      fail(FORMAT, line, "a row that ends before its inode column (cut off?)");
    if (t.slice(1).some((x) => /^\d+:$/.test(x)))
      fail(FORMAT, line, "a second row after the first: two lines joined?");
    mayBeCut(line);
    connections.push({
      proto: (t[1] ?? "").length > 13 ? "tcp6" : "tcp",
      recvQ: 0,
      sendQ: 0,
      local,
      foreign,
      state: STATES[(t[3] ?? "").toUpperCase()] ?? t[3] ?? null,
      line: line.no,
    });
  }
  return { connections };
}
