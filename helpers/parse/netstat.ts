import { parseEndpoint } from "./address.ts";
import { contentLines, fail } from "./lines.ts";

export interface NetstatConnection {
  proto: string;
  recvQ: number;
  sendQ: number;
  local: string;
  foreign: string;
  state: string | null;
  /** 1-based line. */
  line: number;
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
    const [proto, rq, sq, local, foreign, state] = line.text.trim().split(/\s+/);
    if (!proto || !/^(tcp|udp|raw)6?$/.test(proto) || !/^\d+$/.test(rq ?? "") || !/^\d+$/.test(sq ?? "")) {
      fail(FORMAT, line, "expected `PROTO RECV-Q SEND-Q LOCAL FOREIGN [STATE]`");
    }
    if (!local || !foreign) fail(FORMAT, line, "missing local or foreign address");
    connections.push({
      proto,
      recvQ: Number(rq),
      sendQ: Number(sq),
      local: addr(local),
      foreign: addr(foreign),
      state: state ?? null,
      line: line.no,
    });
  }
  return { connections };
}
