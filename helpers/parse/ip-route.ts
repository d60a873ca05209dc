import { isIp } from "./address.ts";
import { contentLines, fail, type Line, mayBeCut, noteUnknown } from "./lines.ts";

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
  /** Flags printed bare: onlink, linkdown, pervasive, … */
  flags: string[];
  /** `nexthop` entries of a multipath route (their own lines, or inline). */
  nexthops: { via: string | null; dev: string | null; weight: number | null; flags: string[] }[];
  /**
   * Every other keyword as printed, known (metric, pref, expires, realms, …) or not (a newer iproute2's
   * addition, kept and reported): keyword → value ("" for a bare word).
   */
  extra: Record<string, string>;
  /** 1-based line of the route. */
  line: number;
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
/** Keywords iproute2's print_route writes with one value after them (`mtu lock 1450`, `congctl lock cubic`). */
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
  "dsfield",
  "advmss",
  "expires",
  "rtt",
  "rttvar",
  "reordering",
  "window",
  "cwnd",
  "ssthresh",
  "initcwnd",
  "initrwnd",
  "hoplimit",
  "pref",
  "error",
  "nhid",
  "realm",
  "realms",
  "features",
  "rto_min",
  "congctl",
  "fastopen_no_cookie",
  "quickack",
  "ttl-propagate",
  "weight",
  "ipid",
  "age",
  "used",
  "users",
  "mark",
  "sport",
  "dport",
  "ipproto",
]);
/** Bare words iproute2 prints as flags. */
const FLAGS = new Set([
  "onlink",
  "pervasive",
  "linkdown",
  "dead",
  "offload",
  "trap",
  "notify",
  "unresolved",
  "rt_offload",
  "rt_trap",
  "rt_offload_failed",
  "<redirected>",
  "<redirect>",
  "<cloned>",
]);
const known = (t: string | undefined) =>
  t !== undefined && (WITH_VALUE.has(t) || FLAGS.has(t) || t === "nexthop");

type Hop = Route["nexthops"][number];

/** `default`, an address, or a prefix (`10.244.1.0/24`, `fe80::/64`). */
function isDestination(t: string): boolean {
  if (t === "default") return true;
  const [ip, len, more] = t.split("/");
  if (more !== undefined || !isIp(ip as string)) return false;
  return len === undefined || (/^\d{1,3}$/.test(len) && Number(len) <= (ip?.includes(":") ? 128 : 32));
}

const NUMBER = /^\d+$/;
/** What each keyword's value must look like (the rest take any word): a value that does not is cut or joined. */
const VALUES: Record<string, (v: string) => boolean> = {
  via: isIp,
  src: isIp,
  from: isDestination,
  dev: (v) => /^[^\s/]{1,15}$/.test(v),
  iif: (v) => /^[^\s/]{1,15}$/.test(v),
  oif: (v) => /^[^\s/]{1,15}$/.test(v),
  mtu: (v) => NUMBER.test(v),
  advmss: (v) => NUMBER.test(v),
  uid: (v) => NUMBER.test(v),
  metric: (v) => NUMBER.test(v),
  weight: (v) => NUMBER.test(v),
  hoplimit: (v) => NUMBER.test(v),
  nhid: (v) => NUMBER.test(v),
  error: (v) => /^-?\d+$/.test(v),
  scope: (v) => /^(?:host|link|global|nowhere|site|universe|\d+)$/.test(v),
  pref: (v) => /^(?:low|medium|high)$/.test(v),
  expires: (v) => /^-?\d+sec$/.test(v),
  proto: (v) => /^[a-z0-9_.-]+$/i.test(v),
  table: (v) => /^[a-z0-9_.-]+$/i.test(v),
};
/** A keyword iproute2 could print: lower case, digits, `_` and `-` (a token like `AAAA` or an address is not one). */
const KEYWORD = /^[a-z][a-z0-9_-]*$/;

function checkValue(line: Line, key: string, value: string): void {
  const ok = VALUES[key];
  if (ok && !ok(value))
    fail(
      FORMAT,
      line,
      `${key} ${JSON.stringify(value)}: not a value ${key} takes (cut off, or two lines joined?)`,
    );
}

/**
 * `ip route get ADDR` and `ip route [show]` lines; the indented `cache …` line belongs to the route above, an
 * indented `nexthop …` line is one of its paths. A keyword this parser does not know (a newer iproute2's) is
 * kept in `extra` with the value after it, when the next word is not itself a keyword, and reported.
 */
export function parseIpRoute(input: string): IpRouteOutput {
  const routes: Route[] = [];
  let error: string | null = null;
  for (const line of contentLines(FORMAT, input)) {
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
      if (!destination || known(destination)) fail(FORMAT, line, "expected a destination");
      if (!isDestination(destination))
        fail(FORMAT, line, `${JSON.stringify(destination)} is not \`default\`, an address or a prefix`);
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
        flags: [],
        nexthops: [],
        extra: {},
        line: line.no,
      };
      routes.push(target);
    }
    mayBeCut(line);
    let hop: Hop | null = null;
    const seen = new Set<string>();
    for (; i < tokens.length; i++) {
      const key = tokens[i] as string;
      if (!KEYWORD.test(key) && !FLAGS.has(key))
        fail(FORMAT, line, `${JSON.stringify(key)} is not a keyword (cut off, or two lines joined?)`);
      if (hop === null && key !== "lock" && key !== "nexthop") {
        if (seen.has(key)) fail(FORMAT, line, `${key} twice: two lines joined?`);
        seen.add(key);
      }
      if (key === "lock") continue;
      if (key === "cache" && !indented)
        fail(FORMAT, line, "a `cache` line's words in a route's line: two lines joined?");
      if (key === "nexthop") {
        hop = { via: null, dev: null, weight: null, flags: [] };
        target.nexthops.push(hop);
        continue;
      }
      if (FLAGS.has(key)) {
        (hop ?? target).flags.push(key);
        continue;
      }
      if (key === "encap") {
        // `encap mpls 200`, `encap ip id 1 src … dst …`: everything up to the next keyword
        const parts: string[] = [];
        while (i + 1 < tokens.length && !known(tokens[i + 1])) parts.push(tokens[++i] as string);
        target.extra.encap = parts.join(" ");
        continue;
      }
      if (!WITH_VALUE.has(key)) {
        const next = tokens[i + 1];
        const value = next !== undefined && !known(next) && !isDestination(next) ? next : "";
        if (value !== "") i++;
        target.extra[key] = value;
        noteUnknown(line.no, `keyword ${JSON.stringify(key)}`, value === "" ? key : `${key} ${value}`);
        continue;
      }
      let value = tokens[++i];
      if (value === "lock") value = tokens[++i];
      if (value === undefined) fail(FORMAT, line, `${key} without a value`);
      if (key === "via" && (value === "inet" || value === "inet6")) value = tokens[++i] ?? "";
      checkValue(line, key, value);
      if (hop && (key === "via" || key === "dev" || key === "weight")) {
        if (key === "via") hop.via = value;
        else if (key === "dev") hop.dev = value;
        else hop.weight = Number(value);
        continue;
      }
      if (key === "via") target.via = value;
      else if (key === "dev") target.dev = value;
      else if (key === "src") target.src = value;
      else if (key === "mtu") target.mtu = Number(value);
      else if (key === "proto") target.proto = value;
      else if (key === "scope") target.scope = value;
      else if (key === "table") target.table = value;
      else if (key === "uid") target.uid = Number(value);
      else target.extra[key] = value;
    }
  }
  return { routes, error };
}
