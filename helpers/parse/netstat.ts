import { parseEndpoint } from "./address.ts";
import { contentLines, fail, noteUnknown } from "./lines.ts";
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
const HEADERS = [
  /^Active Internet connections/,
  /^Proto\s+Recv-Q\s+Send-Q\s+Local Address\s+Foreign Address/,
];

/** busybox / net-tools `netstat -tn[a]`: IPv6 and v4-mapped addresses are unbracketed. */
function addr(text: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+):(\d+)$/.exec(text);
  if (mapped) return `${mapped[1]}:${mapped[2]}`;
  return parseEndpoint(text)?.text ?? text;
}

export function parseNetstat(input: string): NetstatOutput {
  const connections: NetstatConnection[] = [];
  for (const line of contentLines(input)) {
    if (HEADERS.some((h) => h.test(line.text))) continue;
    const [proto, rq, sq, local, foreign, state, ...rest] = line.text.trim().split(/\s+/);
    if (!proto || !/^(tcp|udp|raw)6?$/.test(proto) || !/^\d+$/.test(rq ?? "") || !/^\d+$/.test(sq ?? "")) {
      fail(FORMAT, line, "expected `PROTO RECV-Q SEND-Q LOCAL FOREIGN [STATE]`");
    }
    if (!local || !foreign) fail(FORMAT, line, "missing local or foreign address");
    if (rest.length > 0) noteUnknown(line.no, "trailing column", rest.join(" "));
    connections.push({
      proto,
      recvQ: u64(rq as string),
      sendQ: u64(sq as string),
      local: addr(local),
      foreign: addr(foreign),
      state: state ?? null,
      line: line.no,
      ...(rest.length > 0 ? { extra: { trailing: rest.join(" ") } } : {}),
    });
  }
  return { connections };
}
