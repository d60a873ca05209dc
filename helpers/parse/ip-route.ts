import { contentLines, fail } from "./lines.ts";

export interface Route {
  type: string | null;
  destination: string;
  via: string | null;
  dev: string | null;
  src: string | null;
  mtu: number | null;
  proto: string | null;
  scope: string | null;
  table: string | null;
  uid: number | null;
  /** `ip route get` answers carry a `cache` line. */
  cached: boolean;
}

export interface IpRouteOutput {
  routes: Route[];
  /** `RTNETLINK answers: …` when the kernel refused (e.g. "Network is unreachable"). */
  error: string | null;
}

const FORMAT = "ip-route";
const TYPES = new Set([
  "unicast",
  "local",
  "broadcast",
  "multicast",
  "unreachable",
  "blackhole",
  "prohibit",
  "throw",
  "anycast",
  "nat",
]);
const WITH_VALUE = new Set([
  "via",
  "dev",
  "src",
  "mtu",
  "proto",
  "scope",
  "table",
  "uid",
  "metric",
  "from",
  "iif",
  "oif",
  "tos",
  "advmss",
  "expires",
  "rtt",
  "hoplimit",
  "pref",
  "error",
]);

/** `ip route get ADDR` and `ip route [show]` lines; the indented `cache …` line belongs to the route above. */
export function parseIpRoute(input: string): IpRouteOutput {
  const routes: Route[] = [];
  let error: string | null = null;
  for (const line of contentLines(input)) {
    const rt = /^RTNETLINK answers: (.*)$/.exec(line.text);
    if (rt) {
      error = rt[1] as string;
      continue;
    }
    const tokens = line.text.trim().split(/\s+/);
    const indented = /^\s/.test(line.text);
    let target: Route | undefined;
    let i = 0;
    if (indented) {
      target = routes[routes.length - 1];
      if (!target) fail(FORMAT, line, "detail line before any route");
      if (tokens[0] === "cache") {
        target.cached = true;
        i = 1;
      }
    } else {
      let type: string | null = null;
      if (TYPES.has(tokens[0] as string)) type = tokens[i++] as string;
      const destination = tokens[i++];
      if (!destination) fail(FORMAT, line, "expected a destination");
      target = {
        type,
        destination,
        via: null,
        dev: null,
        src: null,
        mtu: null,
        proto: null,
        scope: null,
        table: null,
        uid: null,
        cached: false,
      };
      routes.push(target);
    }
    for (; i < tokens.length; i++) {
      const key = tokens[i] as string;
      if (key === "lock") continue;
      if (!WITH_VALUE.has(key)) {
        if (/^[a-z_]+$/.test(key)) continue; // flags such as onlink, linkdown, pervasive
        fail(FORMAT, line, `unexpected token ${JSON.stringify(key)}`);
      }
      let value = tokens[++i];
      if (value === "lock") value = tokens[++i];
      if (value === undefined) fail(FORMAT, line, `${key} without a value`);
      if (key === "via") target.via = value === "inet" || value === "inet6" ? (tokens[++i] ?? null) : value;
      else if (key === "dev") target.dev = value;
      else if (key === "src") target.src = value;
      else if (key === "mtu") target.mtu = Number(value);
      else if (key === "proto") target.proto = value;
      else if (key === "scope") target.scope = value;
      else if (key === "table") target.table = value;
      else if (key === "uid") target.uid = Number(value);
    }
  }
  return { routes, error };
}
