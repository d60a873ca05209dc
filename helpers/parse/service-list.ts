import { parseServiceAddress } from "./address.ts";
import { contentLines, fail, mayBeCut, noteUnknown } from "./lines.ts";
import { type U64, u64 } from "./u64.ts";

export interface ServiceBackend {
  address: string;
  state: string;
  protocol: string | null;
  /** `--clustermesh-affinity` marks preferred backends; null when not shown. */
  preferred: boolean | null;
  /** 1-based line (text); for `-o json` the JSON path of the backend. */
  line?: number;
  path?: (string | number)[];
  /** Text after the known fields (a newer agent's), kept as printed, and reported. */
  extra?: Record<string, string>;
}

export interface AgentService {
  /** int64 in the agent's model: exact past 2^53 (u64.ts). */
  id: U64;
  frontend: string;
  protocol: string | null;
  scope: "external" | "internal";
  type: string;
  remote: boolean;
  namespace: string | null;
  name: string | null;
  backends: ServiceBackend[];
  /** 1-based line of the row (text); for `-o json` the JSON path of the element's spec. */
  line?: number;
  path?: (string | number)[];
}

export interface ServiceList {
  services: AgentService[];
}

const FORMAT = "service-list";
const HEADER = /^\s*ID\s+Frontend\s+Service Type\s+Backend$/;
const BACKEND = String.raw`(\d+) => (\S+) \(([^)]+)\)( \(preferred\))?(?:\s+(\S.*?))?`;
const FIRST_ROW = new RegExp(String.raw`^(\d+)\s+(\S+)\s+(\w+)( \(Remote\))?(?:\s+${BACKEND})?$`);
const CONTINUATION = new RegExp(String.raw`^\s+${BACKEND}$`);
/** Text after a backend that is itself a service row or a backend: two lines joined. */
const JOINED = /^(?:\d+\s+\S+:\d+|\d+ => )/;

/** `cilium-dbg service list` (text). Rows are padded by tabwriter; continuation rows start with spaces. */
export function parseServiceList(input: string): ServiceList {
  const services: AgentService[] = [];
  let current: AgentService | null = null;
  for (const line of contentLines(FORMAT, input)) {
    if (HEADER.test(line.text)) continue;
    const first = FIRST_ROW.exec(line.text);
    if (first) {
      const fe = parseServiceAddress(first[2] as string);
      if (!fe) fail(FORMAT, line, "frontend is not IP:PORT[/PROTO][/i]");
      current = {
        id: u64(first[1] as string),
        frontend: fe.text,
        protocol: fe.protocol,
        scope: fe.scope,
        type: first[3] as string,
        remote: first[4] !== undefined,
        namespace: null,
        name: null,
        backends: [],
        line: line.no,
      };
      services.push(current);
      if (first[5] !== undefined) current.backends.push(backend(line, first.slice(5)));
      mayBeCut(line);
      continue;
    }
    const cont = CONTINUATION.exec(line.text);
    if (cont && current) {
      current.backends.push(backend(line, cont.slice(1)));
      mayBeCut(line);
      continue;
    }
    fail(FORMAT, line, current ? "not a service row nor a backend continuation" : "expected a service row");
  }
  return { services };
}

function backend(line: { no: number; text: string }, m: (string | undefined)[]): ServiceBackend {
  const addr = parseServiceAddress(m[1] as string);
  if (!addr) fail(FORMAT, line, "backend is not IP:PORT[/PROTO]");
  if (m[4] && JOINED.test(m[4])) fail(FORMAT, line, "a second row after the first: two lines joined?");
  if (m[4]) noteUnknown(line.no, "trailing field", m[4]);
  return {
    address: addr.text,
    state: m[2] as string,
    protocol: addr.protocol,
    preferred: m[3] !== undefined ? true : null,
    line: line.no,
    ...(m[4] ? { extra: { trailing: m[4] } } : {}),
  };
}
