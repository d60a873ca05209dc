import { ParseError } from "../errors.ts";
import { contentLines, isNoise, mayBeCut, parseJsonText } from "./lines.ts";
import { type U64, u64, u64Of } from "./u64.ts";

/** The model's integers are int64: kept exactly (a decimal string past 2^53). */
export interface AgentEndpoint {
  id: U64 | null;
  interfaceName: string | null;
  interfaceIndex: U64 | null;
  containerInterfaceName: string | null;
  namespace: string | null;
  podName: string | null;
  state: string | null;
  identity: U64 | null;
  addresses: string[];
  /** True when read from a grep-filtered fragment rather than a whole JSON document. */
  excerpt: boolean;
}

const FORMAT = "endpoint-json";
type Json = Record<string, unknown>;
const o = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});

/** `cilium-dbg endpoint get <id> [-o json]`: an array with one models.Endpoint (or the object alone). */
export function parseEndpointJson(input: string): AgentEndpoint {
  const trimmed = input
    .split("\n")
    .filter((l) => !isNoise(l))
    .join("\n")
    .trim();
  if (trimmed.startsWith("[") || trimmed.startsWith("{")) {
    const doc = parseJsonText(FORMAT, input);
    const ep = o(Array.isArray(doc) ? doc[0] : doc);
    const status = o(ep.status);
    const net = o(status.networking);
    const ext = o(status["external-identifiers"]);
    const addressing = Array.isArray(net.addressing) ? (net.addressing as Json[]) : [];
    return {
      id: u64Of(ep.id),
      interfaceName: typeof net["interface-name"] === "string" ? (net["interface-name"] as string) : null,
      interfaceIndex: u64Of(net["interface-index"]),
      containerInterfaceName:
        typeof net["container-interface-name"] === "string"
          ? (net["container-interface-name"] as string)
          : null,
      namespace: typeof ext["k8s-namespace"] === "string" ? (ext["k8s-namespace"] as string) : null,
      podName: typeof ext["k8s-pod-name"] === "string" ? (ext["k8s-pod-name"] as string) : null,
      state: typeof status.state === "string" ? status.state : null,
      identity: u64Of(o(status.identity).id),
      addresses: addressing.flatMap((a) =>
        [a.ipv4, a.ipv6].filter((x): x is string => typeof x === "string"),
      ),
      excerpt: false,
    };
  }
  return parseFragment(input);
}

const KEYS =
  /"(?:id|interface-name|interface-index|container-interface-name|k8s-namespace|k8s-pod-name|state|ipv4|ipv6)":/;

/**
 * A grep -A excerpt of the JSON (not a whole document): read the known keys line by line. An excerpt has no
 * structure to tell a cut-off last line by, so a last line without a newline that names a known key is a
 * warning.
 */
function parseFragment(input: string): AgentEndpoint {
  const lines = contentLines(FORMAT, input);
  const text = lines.map((l) => l.text).join("\n");
  const last = lines[lines.length - 1];
  if (last && KEYS.test(last.text)) mayBeCut(last);
  const str = (key: string): string | null => {
    const m = new RegExp(`"${key}":\\s*"([^"]*)"`).exec(text);
    return m ? (m[1] as string) : null;
  };
  const int = (key: string): U64 | null => {
    const m = new RegExp(`"${key}":\\s*(\\d+)`).exec(text);
    return m ? u64(m[1] as string) : null;
  };
  const addresses = [...text.matchAll(/"ipv[46]":\s*"([^"]+)"/g)].map((m) => m[1] as string);
  const ep: AgentEndpoint = {
    id: int("id"),
    interfaceName: str("interface-name"),
    interfaceIndex: int("interface-index"),
    containerInterfaceName: str("container-interface-name"),
    namespace: str("k8s-namespace"),
    podName: str("k8s-pod-name"),
    state: str("state"),
    identity: null,
    addresses,
    excerpt: true,
  };
  if (ep.interfaceName === null && ep.id === null) {
    const first = input.split("\n").findIndex((l) => !isNoise(l));
    throw new ParseError(
      FORMAT,
      first + 1,
      input.split("\n")[first] ?? "",
      "neither JSON nor an endpoint excerpt",
    );
  }
  return ep;
}
