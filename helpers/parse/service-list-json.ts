import { ParseError } from "../errors.ts";
import { formatEndpoint } from "./address.ts";
import { parseJsonText } from "./lines.ts";
import type { AgentService, ServiceList } from "./service-list.ts";
import { u64Of } from "./u64.ts";

const FORMAT = "service-list-json";

interface ModelAddr {
  ip?: string;
  port?: number;
  protocol?: string;
  scope?: string;
  state?: string;
  preferred?: boolean;
}

/** `cilium-dbg service list -o json`: an array of models.Service (spec + status.realized). */
export function parseServiceListJson(input: string): ServiceList {
  const doc = parseJsonText(FORMAT, input);
  if (!Array.isArray(doc))
    throw new ParseError(FORMAT, 1, input.split("\n")[0] ?? "", "expected a JSON array");
  const services: AgentService[] = doc.map((item, index) => {
    const spec = (item as { spec?: Record<string, unknown> })?.spec;
    const fe = spec?.["frontend-address"] as ModelAddr | undefined;
    if (!spec || !fe || typeof fe.ip !== "string" || typeof fe.port !== "number") {
      throw new ParseError(
        FORMAT,
        1,
        JSON.stringify(item).slice(0, 120),
        `element ${index} has no spec.frontend-address`,
      );
    }
    const flags = (spec.flags ?? {}) as Record<string, unknown>;
    const backends = ((spec["backend-addresses"] ?? []) as ModelAddr[]).map((b, k) => ({
      address: formatEndpoint(String(b.ip), Number(b.port)),
      state: b.state ?? "active",
      protocol: b.protocol ? b.protocol.toUpperCase() : null,
      preferred: typeof b.preferred === "boolean" ? b.preferred : null,
      path: [index, "spec", "backend-addresses", k],
    }));
    return {
      id: u64Of(spec.id) ?? Number.NaN,
      frontend: formatEndpoint(fe.ip, fe.port),
      protocol: fe.protocol ? fe.protocol.toUpperCase() : null,
      scope: fe.scope === "internal" ? "internal" : "external",
      type: typeof flags.type === "string" ? flags.type : "unknown",
      remote: Boolean(flags.cluster),
      namespace: typeof flags.namespace === "string" ? flags.namespace : null,
      name: typeof flags.name === "string" ? flags.name : null,
      backends,
      path: [index, "spec"],
    };
  });
  return { services };
}
