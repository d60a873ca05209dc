import { parseServiceAddress } from "./address.ts";
import { contentLines, fail } from "./lines.ts";

export interface ServiceBackend {
  address: string;
  state: string;
  protocol: string | null;
  /** `--clustermesh-affinity` marks preferred backends; null when not shown. */
  preferred: boolean | null;
}

export interface AgentService {
  id: number;
  frontend: string;
  protocol: string | null;
  scope: "external" | "internal";
  type: string;
  remote: boolean;
  namespace: string | null;
  name: string | null;
  backends: ServiceBackend[];
}

export interface ServiceList {
  services: AgentService[];
}

const FORMAT = "service-list";
const HEADER = /^\s*ID\s+Frontend\s+Service Type\s+Backend$/;
const BACKEND = String.raw`(\d+) => (\S+) \(([^)]+)\)( \(preferred\))?`;
const FIRST_ROW = new RegExp(String.raw`^(\d+)\s+(\S+)\s+(\w+)( \(Remote\))?(?:\s+${BACKEND})?$`);
const CONTINUATION = new RegExp(String.raw`^\s+${BACKEND}$`);

/** `cilium-dbg service list` (text). Rows are padded by tabwriter; continuation rows start with spaces. */
export function parseServiceList(input: string): ServiceList {
  const services: AgentService[] = [];
  let current: AgentService | null = null;
  for (const line of contentLines(input)) {
    if (HEADER.test(line.text)) continue;
    const first = FIRST_ROW.exec(line.text);
    if (first) {
      const fe = parseServiceAddress(first[2] as string);
      if (!fe) fail(FORMAT, line, "frontend is not IP:PORT[/PROTO][/i]");
      current = {
        id: Number(first[1]),
        frontend: fe.text,
        protocol: fe.protocol,
        scope: fe.scope,
        type: first[3] as string,
        remote: first[4] !== undefined,
        namespace: null,
        name: null,
        backends: [],
      };
      services.push(current);
      if (first[5] !== undefined) current.backends.push(backend(line, first.slice(5)));
      continue;
    }
    const cont = CONTINUATION.exec(line.text);
    if (cont && current) {
      current.backends.push(backend(line, cont.slice(1)));
      continue;
    }
    fail(FORMAT, line, current ? "not a service row nor a backend continuation" : "expected a service row");
  }
  return { services };
}

function backend(line: { no: number; text: string }, m: (string | undefined)[]): ServiceBackend {
  const addr = parseServiceAddress(m[1] as string);
  if (!addr) fail(FORMAT, line, "backend is not IP:PORT[/PROTO]");
  return {
    address: addr.text,
    state: m[2] as string,
    protocol: addr.protocol,
    preferred: m[3] !== undefined ? true : null,
  };
}
