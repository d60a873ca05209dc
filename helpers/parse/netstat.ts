import { isIp, parseEndpoint } from "./address.ts";
import { contentLines, fail, mayBeCut, noteUnknown } from "./lines.ts";
import { type U64, u64 } from "./u64.ts";

export interface NetstatConnection {
  proto: string;
  /** unsigned long in the kernel's table: exact past 2^53 (u64.ts). */
  recvQ: U64;
  sendQ: U64;
  local: string;
  foreign: string;
  state: string | null;
  /** 1-based line. */
  line: number;
  /** Columns after the state (`netstat -p`'s PID/Program name, …), kept as printed, and reported. */
  extra?: Record<string, string>;
}

export interface NetstatOutput {
  connections: NetstatConnection[];
}

const FORMAT = "netstat";
/** The headers, whole: a header with anything after it is a header joined with the next line. */
const HEADERS = [
  /^Active Internet connections(?: \((?:w\/o servers|servers and established|only servers)\))?$/,
  /^Proto\s+Recv-Q\s+Send-Q\s+Local Address\s+Foreign Address\s+State(?:\s+PID\/Program name)?$/,
];
/** TCP's states as net-tools and busybox print them. */
const TCP_STATES = new Set([
  "ESTABLISHED",
  "SYN_SENT",
  "SYN_RECV",
  "FIN_WAIT1",
  "FIN_WAIT2",
  "TIME_WAIT",
  "CLOSE",
  "CLOSE_WAIT",
  "LAST_ACK",
  "LISTEN",
  "CLOSING",
  "UNKNOWN",
]);

/**
 * busybox / net-tools `netstat -tn[a]` address → normal form (`a.b.c.d:port`, `[v6]:port`; IPv6 and v4-mapped
 * addresses are printed unbracketed), or null when it is not `ADDRESS:PORT` (a port `*` for a listener's peer).
 */
function addr(text: string): string | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+):(\d+|\*)$/.exec(text);
  if (mapped) return isIp(mapped[1] as string) ? `${mapped[1]}:${mapped[2]}` : null;
  const any = /^(.*):\*$/.exec(text);
  if (any) return isIp(any[1] as string) ? text : null;
  return parseEndpoint(text)?.text ?? null;
}

/**
 * `netstat -tn` (busybox or net-tools): `PROTO RECV-Q SEND-Q LOCAL FOREIGN STATE [more]`. Both addresses must be
 * `ADDRESS:PORT` and a TCP row must end in a state, so a cut-off row is an error naming it, never a connection
 * with half an address or no state.
 */
export function parseNetstat(input: string): NetstatOutput {
  const connections: NetstatConnection[] = [];
  for (const line of contentLines(FORMAT, input)) {
    if (HEADERS.some((h) => h.test(line.text))) continue;
    const [proto, rq, sq, local, foreign, state, ...rest] = line.text.trim().split(/\s+/);
    if (!proto || !/^(tcp|udp|raw)6?$/.test(proto) || !/^\d+$/.test(rq ?? "") || !/^\d+$/.test(sq ?? "")) {
      fail(FORMAT, line, "expected `PROTO RECV-Q SEND-Q LOCAL FOREIGN [STATE]`");
    }
    if (!local || !foreign) fail(FORMAT, line, "missing local or foreign address");
    const l = addr(local);
    const f = addr(foreign);
    if (l === null) fail(FORMAT, line, `local address ${JSON.stringify(local)} is not ADDRESS:PORT`);
    if (f === null) fail(FORMAT, line, `foreign address ${JSON.stringify(foreign)} is not ADDRESS:PORT`);
    if (proto.startsWith("tcp") && (state === undefined || !TCP_STATES.has(state)))
      fail(
        FORMAT,
        line,
        state === undefined
          ? "a TCP row without its state (cut off?)"
          : `${JSON.stringify(state)} is not a TCP state`,
      );
    if (rest.length > 0 && /^(tcp|udp|raw)6?$/.test(rest[0] as string))
      fail(FORMAT, line, "a second row after the first: two lines joined?");
    if (rest.length > 0) noteUnknown(line.no, "trailing column", rest.join(" "));
    mayBeCut(line);
    connections.push({
      proto,
      recvQ: u64(rq as string),
      sendQ: u64(sq as string),
      local: l,
      foreign: f,
      state: state ?? null,
      line: line.no,
      ...(rest.length > 0 ? { extra: { trailing: rest.join(" ") } } : {}),
    });
  }
  return { connections };
}
