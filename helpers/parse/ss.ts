import { contentLines, fail, mayBeCut } from "./lines.ts";

export interface Socket {
  netid: string | null;
  state: string;
  recvQ: number;
  sendQ: number;
  local: string;
  peer: string;
  process: string | null;
  /** 1-based line. */
  line: number;
}

export interface SsOutput {
  sockets: Socket[];
}

const FORMAT = "ss";
/**
 * The header, whole: a header with anything after it is a header joined with the next line. ss prints each title
 * at its column's width, with no space after one that fills it (`Peer Address:PortProcess`, iproute2 5.x `ss -tnp`
 * when no row has a process), so the titles may touch.
 */
const HEADER = /^(Netid\s*)?State\s*Recv-Q\s*Send-Q\s*Local Address:Port\s*Peer Address:Port(?:\s*Process)?$/;
/**
 * `ADDRESS:PORT` as ss prints it: `*`, an IPv4 address, `[v6]`, each optionally `%iface`; the port a number, a
 * service name or `*`.
 */
const ENDPOINT = /^(?:\*|[0-9.]+|\[[0-9a-fA-F:.]+\])(?:%[^\s:%]+)?:(?:\*|\d+|[a-z][a-z0-9-]*)$/;
const STATES = new Set([
  "LISTEN",
  "ESTAB",
  "SYN-SENT",
  "SYN-RECV",
  "FIN-WAIT-1",
  "FIN-WAIT-2",
  "TIME-WAIT",
  "CLOSE-WAIT",
  "LAST-ACK",
  "CLOSING",
  "CLOSE",
  "UNCONN",
  "UNKNOWN",
]);

/** Normalises `[::ffff:10.0.0.1]:80` to `10.0.0.1:80`; everything else is kept as printed. */
function addr(text: string): string {
  const mapped = /^\[::ffff:(\d+\.\d+\.\d+\.\d+)\]:(\S+)$/.exec(text);
  return mapped ? `${mapped[1]}:${mapped[2]}` : text;
}

/** `ss -Htln …` / `ss -tn` (with or without header, with or without Netid column and `users:(…)`). */
export function parseSs(input: string): SsOutput {
  const sockets: Socket[] = [];
  for (const line of contentLines(FORMAT, input)) {
    if (HEADER.test(line.text)) continue;
    const tokens = line.text.trim().split(/\s+/);
    let netid: string | null = null;
    if (!STATES.has(tokens[0] as string) && STATES.has(tokens[1] as string)) netid = tokens.shift() as string;
    const [state, rq, sq, local, peer, ...rest] = tokens;
    if (
      !state ||
      !STATES.has(state) ||
      !/^\d+$/.test(rq ?? "") ||
      !/^\d+$/.test(sq ?? "") ||
      !local ||
      !peer
    ) {
      fail(FORMAT, line, "expected `STATE RECV-Q SEND-Q LOCAL PEER [PROCESS]`");
    }
    if (!ENDPOINT.test(local)) fail(FORMAT, line, `local ${JSON.stringify(local)} is not ADDRESS:PORT`);
    if (!ENDPOINT.test(peer)) fail(FORMAT, line, `peer ${JSON.stringify(peer)} is not ADDRESS:PORT`);
    if (rest.some((t) => STATES.has(t)))
      fail(FORMAT, line, "a second row after the first: two lines joined?");
    mayBeCut(line);
    sockets.push({
      netid,
      state,
      recvQ: Number(rq),
      sendQ: Number(sq),
      local: addr(local),
      peer: addr(peer),
      process: rest.length > 0 ? rest.join(" ") : null,
      line: line.no,
    });
  }
  return { sockets };
}
