import { ParseError } from "../errors.ts";
import { formatEndpoint } from "./address.ts";
import { parseJsonText } from "./lines.ts";

export interface SliceEndpoint {
  addresses: string[];
  ready: boolean;
  serving: boolean | null;
  terminating: boolean | null;
  nodeName: string | null;
  podName: string | null;
  /** The endpoint's JSON path in the output (the List's `items`, or the lone EndpointSlice). */
  path: (string | number)[];
}

export interface EndpointSlice {
  name: string;
  namespace: string | null;
  service: string | null;
  addressType: string;
  ports: { name: string | null; port: number; protocol: string }[];
  endpoints: SliceEndpoint[];
}

export interface EndpointSlices {
  slices: EndpointSlice[];
}

const FORMAT = "endpointslice-json";
type Json = Record<string, unknown>;
const o = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});

/** `kubectl get endpointslices -o json` (a List) or one EndpointSlice. */
export function parseEndpointSliceJson(input: string): EndpointSlices {
  const doc = o(parseJsonText(FORMAT, input));
  const items =
    doc.kind === "EndpointSlice" ? [doc] : Array.isArray(doc.items) ? (doc.items as Json[]) : null;
  if (!items)
    throw new ParseError(
      FORMAT,
      1,
      input.split("\n")[0] ?? "",
      "expected an EndpointSlice or a List of them",
    );
  return {
    slices: items.map((item, si) => {
      const meta = o(item.metadata);
      const labels = o(meta.labels);
      return {
        name: String(meta.name ?? ""),
        namespace: typeof meta.namespace === "string" ? meta.namespace : null,
        service:
          typeof labels["kubernetes.io/service-name"] === "string"
            ? (labels["kubernetes.io/service-name"] as string)
            : null,
        addressType: String(item.addressType ?? "IPv4"),
        ports: (Array.isArray(item.ports) ? (item.ports as Json[]) : []).map((p) => ({
          name: typeof p.name === "string" ? p.name : null,
          port: Number(p.port),
          protocol: String(p.protocol ?? "TCP"),
        })),
        endpoints: (Array.isArray(item.endpoints) ? (item.endpoints as Json[]) : []).map((e, ei) => {
          const cond = o(e.conditions);
          return {
            addresses: (Array.isArray(e.addresses) ? e.addresses : []).map(String),
            // The API says a nil `ready` is to be read as ready.
            ready: cond.ready !== false,
            serving: typeof cond.serving === "boolean" ? cond.serving : null,
            terminating: typeof cond.terminating === "boolean" ? cond.terminating : null,
            nodeName: typeof e.nodeName === "string" ? e.nodeName : null,
            podName: typeof o(e.targetRef).name === "string" ? (o(e.targetRef).name as string) : null,
            path: [...(doc.kind === "EndpointSlice" ? [] : ["items", si]), "endpoints", ei],
          };
        }),
      };
    }),
  };
}

/** Ready `IP:PORT` pairs of a Service across its slices, for one port (by name or number) or all. */
export function readyAddresses(slices: EndpointSlices, port?: string | number): string[] {
  const out = new Set<string>();
  for (const s of slices.slices) {
    for (const p of s.ports) {
      if (port !== undefined && p.name !== port && p.port !== port) continue;
      for (const e of s.endpoints)
        if (e.ready) for (const a of e.addresses) out.add(formatEndpoint(a, p.port));
    }
  }
  return [...out].sort();
}
