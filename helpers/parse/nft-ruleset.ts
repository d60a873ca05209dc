// One file over 450 lines: one parser of `nft list ruleset`: the generic tables and kube-proxy's records built on them
import { ParseError } from "../errors.ts";
import { contentLines, type Line } from "./lines.ts";

/**
 * `nft list ruleset` (nftables ≥ 1.0): tables of chains, sets and maps, as nft prints them, and what kube-proxy's
 * nftables mode keeps there (`table ip kube-proxy` / `table ip6 kube-proxy`, pkg/proxy/nftables/proxier.go,
 * Kubernetes v1.35.5). The generic part reads any table (the iptables-nft tables of the same node included); the
 * kube-proxy part turns its maps and chains into one record per Service port.
 *
 * Strict about structure: a block still open at the end (a cut-off output) or a line that is neither a block, a
 * property nor a rule is an error naming the line; it never returns a partial ruleset as if it were whole.
 */

const FORMAT = "nft-ruleset";

export interface NftRule {
  /** The statement as printed (continuation lines joined by one space). */
  text: string;
  line: number;
  /** `counter packets N bytes M` in the rule; null when the rule has no counter (kube-proxy's have none). */
  counter: { packets: number; bytes: number } | null;
  comment: string | null;
}

export interface NftChain {
  name: string;
  line: number;
  /** `type filter hook input priority filter; policy accept;` of a base chain; null for a regular chain. */
  hook: { type: string; hook: string; priority: string; policy: string | null; line: number } | null;
  comment: string | null;
  rules: NftRule[];
}

export interface NftElement {
  /** The key's parts (`10.96.0.10 . tcp . 53` → ["10.96.0.10", "tcp", "53"]). */
  key: string[];
  /** A map element's value (`goto service-…`, `drop`); null in a set. */
  value: string | null;
  comment: string | null;
  /** Anything else the element carries (`timeout 3h expires 2h59m`, `counter packets …`), as printed. */
  extra: string | null;
  line: number;
}

export interface NftSet {
  kind: "set" | "map";
  name: string;
  line: number;
  type: string | null;
  comment: string | null;
  elements: NftElement[];
  /** Other properties (`flags dynamic,timeout`, `timeout 3h`, `size 65535`, …) as printed, with their line. */
  props: { text: string; line: number }[];
}

export interface NftTable {
  family: string;
  name: string;
  line: number;
  comment: string | null;
  chains: NftChain[];
  sets: NftSet[];
  /** Other objects (flowtable, counter, quota, ct helper …): name, keyword, line; their content is not read. */
  others: { keyword: string; name: string; line: number }[];
}

export interface NftRuleset {
  tables: NftTable[];
}

/** A string with its quoted parts blanked out, so braces, commas and colons inside quotes do not count. */
function unquoted(s: string): string {
  return s.replace(/"(?:[^"\\]|\\.)*"/g, (q) => `"${"_".repeat(q.length - 2)}"`);
}

function braceDelta(s: string): number {
  const u = unquoted(s);
  let d = 0;
  for (const c of u) {
    if (c === "{") d++;
    else if (c === "}") d--;
  }
  return d;
}

const COMMENT = /(?:^|\s)comment\s+"((?:[^"\\]|\\.)*)"/;
const COUNTER = /\bcounter packets (\d+) bytes (\d+)/;
const BLOCK =
  /^(table|chain|set|map|flowtable|counter|quota|limit|ct helper|ct timeout|ct expectation|secmark|synproxy)\s+(.+?)\s*\{$/;
const HOOK = /^type (\S+) hook (\S+)(?: device (?:"[^"]*"|\S+))? priority ([^;]+);(?: policy (\S+);)?$/;

function commentOf(s: string): string | null {
  const m = COMMENT.exec(s);
  return m ? (m[1] as string).replace(/\\"/g, '"') : null;
}

/** Splits `a, b,\n c` (element text with the line each element starts on) at commas outside quotes and braces. */
function splitElements(parts: { text: string; line: number }[]): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let cur = "";
  let curLine = parts[0]?.line ?? 0;
  let depth = 0;
  for (const p of parts) {
    const u = unquoted(p.text);
    for (let i = 0; i < p.text.length; i++) {
      const c = u[i] as string;
      if (c === "{") depth++;
      else if (c === "}") depth--;
      if (c === "," && depth === 0) {
        out.push({ text: cur.trim(), line: curLine });
        cur = "";
        curLine = p.line;
        continue;
      }
      if (cur.trim() === "" && c.trim() !== "") curLine = p.line;
      cur += p.text[i];
    }
    cur += " ";
  }
  if (cur.trim() !== "") out.push({ text: cur.trim(), line: curLine });
  return out;
}

function parseElement(raw: { text: string; line: number }, isMap: boolean, at: Line): NftElement {
  const u = unquoted(raw.text);
  let keyPart = raw.text;
  let value: string | null = null;
  if (isMap) {
    const i = u.lastIndexOf(" : ");
    if (i < 0) throw new ParseError(FORMAT, raw.line, at.text, "a map element without ` : value`");
    keyPart = raw.text.slice(0, i);
    value = raw.text.slice(i + 3).trim();
  }
  const comment = commentOf(keyPart);
  const bare = keyPart.replace(COMMENT, " ").trim();
  // the key is the leading `a . b . c`; what follows (timeout, expires, counter) is kept as printed
  const m = /^(\S+(?: \. \S+)*)(?:\s+(.*))?$/.exec(bare);
  if (!m || (m[1] as string).startsWith("{"))
    throw new ParseError(FORMAT, raw.line, at.text, `cannot read the element ${JSON.stringify(raw.text)}`);
  return {
    key: (m[1] as string).split(" . "),
    value,
    comment,
    extra: m[2] ? (m[2] as string) : null,
    line: raw.line,
  };
}

interface Frame {
  kind: "table" | "chain" | "set" | "map" | "other";
  line: Line;
  table?: NftTable;
  chain?: NftChain;
  set?: NftSet;
  /** For `other`: how deep inside its own braces we are. */
  depth?: number;
}

/** `nft list ruleset` / `nft list table …` output. */
export function parseNftRuleset(input: string): NftRuleset {
  const tables: NftTable[] = [];
  const stack: Frame[] = [];
  const lines = contentLines("nft-ruleset", input);
  let i = 0;
  const top = (): Frame | undefined => stack[stack.length - 1];

  /** Joins a statement whose braces do not close on its own line (a multi-line anonymous set or `elements`). */
  const gather = (first: Line): { parts: { text: string; line: number }[]; last: Line } => {
    const parts = [{ text: first.text.trim(), line: first.no }];
    let depth = braceDelta(first.text);
    let last = first;
    while (depth > 0) {
      i++;
      const next = lines[i];
      if (!next)
        throw new ParseError(
          FORMAT,
          last.no,
          last.text,
          `input ends inside the statement begun at line ${first.no} (cut off?)`,
        );
      parts.push({ text: next.text.trim(), line: next.no });
      depth += braceDelta(next.text);
      last = next;
    }
    if (depth < 0) throw new ParseError(FORMAT, last.no, last.text, "unbalanced `}`");
    return { parts, last };
  };

  for (; i < lines.length; i++) {
    const line = lines[i] as Line;
    const t = line.text.trim();
    if (t.startsWith("#")) continue; // `# Warning: table ip nat is managed by iptables-nft …` when stderr is merged
    const frame = top();

    if (frame?.kind === "other") {
      frame.depth = (frame.depth ?? 0) + braceDelta(t);
      if ((frame.depth ?? 0) < 0) stack.pop();
      continue;
    }

    if (t === "}") {
      if (!frame) throw new ParseError(FORMAT, line.no, line.text, "`}` with no open table");
      stack.pop();
      continue;
    }

    if (!frame) {
      const m = /^table (\S+) (\S+) \{$/.exec(t);
      if (!m) throw new ParseError(FORMAT, line.no, line.text, "expected `table <family> <name> {`");
      const table: NftTable = {
        family: m[1] as string,
        name: m[2] as string,
        line: line.no,
        comment: null,
        chains: [],
        sets: [],
        others: [],
      };
      tables.push(table);
      stack.push({ kind: "table", line, table });
      continue;
    }

    if (frame.kind === "table") {
      const table = frame.table as NftTable;
      const b = BLOCK.exec(t);
      if (b) {
        const keyword = b[1] as string;
        const name = (b[2] as string).replace(/^"(.*)"$/, "$1");
        if (keyword === "chain") {
          const chain: NftChain = { name, line: line.no, hook: null, comment: null, rules: [] };
          table.chains.push(chain);
          stack.push({ kind: "chain", line, chain });
        } else if (keyword === "set" || keyword === "map") {
          const set: NftSet = {
            kind: keyword,
            name,
            line: line.no,
            type: null,
            comment: null,
            elements: [],
            props: [],
          };
          table.sets.push(set);
          stack.push({ kind: keyword, line, set });
        } else if (keyword === "table") {
          throw new ParseError(FORMAT, line.no, line.text, "a table inside a table (a `}` missing above?)");
        } else {
          table.others.push({ keyword, name, line: line.no });
          stack.push({ kind: "other", line, depth: 0 });
        }
        continue;
      }
      const c = commentOf(t);
      if (c !== null && t.startsWith("comment ")) {
        table.comment = c;
        continue;
      }
      if (/^flags \S+$/.test(t)) continue;
      throw new ParseError(
        FORMAT,
        line.no,
        line.text,
        `expected a chain, set, map or other object of table ${table.family} ${table.name}, or \`}\``,
      );
    }

    if (frame.kind === "chain") {
      const chain = frame.chain as NftChain;
      const h = HOOK.exec(t);
      if (h) {
        chain.hook = {
          type: h[1] as string,
          hook: h[2] as string,
          priority: (h[3] as string).trim(),
          policy: h[4] ?? null,
          line: line.no,
        };
        continue;
      }
      if (t.startsWith("comment ") && commentOf(t) !== null && chain.rules.length === 0) {
        chain.comment = commentOf(t);
        continue;
      }
      if (!/^[a-z@]/.test(t))
        throw new ParseError(FORMAT, line.no, line.text, `not an nft statement in chain ${chain.name}`);
      const { parts } = gather(line);
      const text = parts.map((p) => p.text).join(" ");
      const counter = COUNTER.exec(text);
      chain.rules.push({
        text,
        line: line.no,
        counter: counter ? { packets: Number(counter[1]), bytes: Number(counter[2]) } : null,
        comment: commentOf(text),
      });
      continue;
    }

    // set or map
    const set = frame.set as NftSet;
    if (t.startsWith("elements = {")) {
      const { parts } = gather(line);
      const first = parts[0] as { text: string; line: number };
      const body = [{ text: first.text.slice("elements = {".length), line: first.line }, ...parts.slice(1)];
      const end = body[body.length - 1] as { text: string; line: number };
      const close = end.text.lastIndexOf("}");
      end.text = end.text.slice(0, close);
      for (const el of splitElements(body)) set.elements.push(parseElement(el, set.kind === "map", line));
      continue;
    }
    const ty = /^type (.+)$/.exec(t);
    if (ty) {
      set.type = ty[1] as string;
      continue;
    }
    if (t.startsWith("comment ") && commentOf(t) !== null) {
      set.comment = commentOf(t);
      continue;
    }
    if (/^[a-z][a-z-]*(?:\s|$)/.test(t) && braceDelta(t) === 0) {
      set.props.push({ text: t, line: line.no });
      continue;
    }
    throw new ParseError(FORMAT, line.no, line.text, `not a property of ${set.kind} ${set.name}`);
  }

  const open = top();
  if (open) {
    const last = lines[lines.length - 1] as Line;
    const what =
      open.kind === "table"
        ? `table ${open.table?.family} ${open.table?.name}`
        : open.kind === "chain"
          ? `chain ${open.chain?.name}`
          : open.kind === "other"
            ? "an object"
            : `${open.kind} ${open.set?.name}`;
    throw new ParseError(
      FORMAT,
      last.no,
      last.text,
      `input ends inside ${what} opened at line ${open.line.no} (cut off?)`,
    );
  }
  return { tables };
}

// ---------------------------------------------------------------------------------------------------------------
// kube-proxy's nftables mode

export type IpFamily = "ipv4" | "ipv6";

export interface KubeProxyEndpoint {
  ip: string;
  port: number;
  /** The endpoint chain (`endpoint-<HASH>-ns/svc/proto/port__ip/port`). */
  chain: string;
  /** Line of the chain's `dnat to` rule. */
  line: number;
}

/** One Service port as kube-proxy's nftables mode programs it, in one IP family. */
export interface KubeProxyServicePort {
  family: IpFamily;
  namespace: string;
  name: string;
  protocol: string;
  /** The Service port's name ("" for an unnamed port). */
  portName: string;
  clusterIP: string | null;
  port: number | null;
  nodePort: number | null;
  externalIPs: string[];
  /** The service chain (`service-…`, or `local-…` for internalTrafficPolicy Local); null without endpoints. */
  chain: string | null;
  endpoints: KubeProxyEndpoint[];
  /**
   * What kube-proxy does with traffic while the port has no (usable) endpoints: `reject` (via reject-chain) or
   * `drop`, per destination (the ClusterIP or another service IP, or the NodePort).
   */
  noEndpoints: {
    on: "ip" | "nodeport";
    address: string | null;
    port: number;
    verdict: "reject" | "drop";
    line: number;
  }[];
  /** Every line this record was read from (map elements, the chain, its rules). */
  lines: number[];
}

export interface KubeProxyNft {
  /** The kube-proxy tables found (`ip`, `ip6`); empty: kube-proxy's nftables mode is not in this ruleset. */
  tables: { family: string; line: number }[];
  services: KubeProxyServicePort[];
}

const SVC_CHAIN = /^(service|local|external|firewall)-([A-Z2-7]{8})-([^/]+)\/([^/]+)\/([a-z]+)\/(.*)$/;
const EP_CHAIN = /^endpoint-([A-Z2-7]{8})-([^/]+)\/([^/]+)\/([a-z]+)\/(.*)__(.+)\/(\d+)$/;

function gotoTarget(value: string | null): string | null {
  const m = /^(?:goto|jump) (\S+)$/.exec(value ?? "");
  return m ? (m[1] as string) : null;
}

/** The Service ports kube-proxy's nftables mode programmed (every `kube-proxy` table of the ruleset). */
export function kubeProxyNft(rs: NftRuleset): KubeProxyNft {
  const out: KubeProxyNft = { tables: [], services: [] };
  for (const table of rs.tables) {
    if (table.name !== "kube-proxy" || (table.family !== "ip" && table.family !== "ip6")) continue;
    out.tables.push({ family: table.family, line: table.line });
    const family: IpFamily = table.family === "ip" ? "ipv4" : "ipv6";
    const byKey = new Map<string, KubeProxyServicePort>();
    const chains = new Map(table.chains.map((c) => [c.name, c]));
    const sets = new Map(table.sets.map((s) => [s.name, s]));
    const clusterIPs = new Set((sets.get("cluster-ips")?.elements ?? []).map((e) => e.key[0]));

    const record = (ns: string, name: string, protocol: string, portName: string): KubeProxyServicePort => {
      const k = `${ns}/${name}/${protocol}/${portName}`;
      let r = byKey.get(k);
      if (!r) {
        r = {
          family,
          namespace: ns,
          name,
          protocol,
          portName,
          clusterIP: null,
          port: null,
          nodePort: null,
          externalIPs: [],
          chain: null,
          endpoints: [],
          noEndpoints: [],
          lines: [],
        };
        byKey.set(k, r);
      }
      return r;
    };
    const fromChain = (chain: string, line: number): KubeProxyServicePort => {
      const m = SVC_CHAIN.exec(chain);
      if (!m) throw new ParseError(FORMAT, line, chain, "not a kube-proxy service chain name");
      return record(m[3] as string, m[4] as string, m[5] as string, m[6] as string);
    };
    /** `ns/svc:port` (ServicePortName.String()) of a no-endpoints element, with the protocol from its key. */
    const fromComment = (el: NftElement, protocol: string): KubeProxyServicePort => {
      const m = /^([^/]+)\/([^:]+)(?::(.*))?$/.exec(el.comment ?? "");
      if (!m)
        throw new ParseError(
          FORMAT,
          el.line,
          el.comment ?? "",
          "a no-endpoints element without `ns/svc:port`",
        );
      return record(m[1] as string, m[2] as string, protocol, m[3] ?? "");
    };
    const port = (s: string | undefined, line: number): number => {
      const n = Number(s);
      if (!Number.isInteger(n) || n < 0 || n > 65535)
        throw new ParseError(FORMAT, line, s ?? "", "not a port");
      return n;
    };

    for (const el of sets.get("service-ips")?.elements ?? []) {
      const target = gotoTarget(el.value);
      if (!target)
        throw new ParseError(FORMAT, el.line, el.value ?? "", "a service-ips element without `goto`");
      const r = fromChain(target, el.line);
      r.lines.push(el.line);
      const [ip, , p] = el.key;
      if (target.startsWith("external-")) r.externalIPs.push(ip as string);
      else {
        r.clusterIP = ip as string;
        r.port = port(p, el.line);
        r.chain = target;
      }
    }
    for (const el of sets.get("service-nodeports")?.elements ?? []) {
      const target = gotoTarget(el.value);
      if (!target)
        throw new ParseError(FORMAT, el.line, el.value ?? "", "a service-nodeports element without `goto`");
      const r = fromChain(target, el.line);
      r.nodePort = port(el.key[1], el.line);
      r.lines.push(el.line);
    }
    const verdict = (el: NftElement): "reject" | "drop" => {
      if (el.value === "drop") return "drop";
      if (gotoTarget(el.value) === "reject-chain") return "reject";
      throw new ParseError(FORMAT, el.line, el.value ?? "", "expected `goto reject-chain` or `drop`");
    };
    for (const el of sets.get("no-endpoint-services")?.elements ?? []) {
      const [ip, proto, p] = el.key;
      const r = fromComment(el, proto as string);
      const n = port(p, el.line);
      if (clusterIPs.has(ip)) {
        r.clusterIP = ip as string;
        r.port = n;
      }
      r.noEndpoints.push({ on: "ip", address: ip as string, port: n, verdict: verdict(el), line: el.line });
      r.lines.push(el.line);
    }
    for (const el of sets.get("no-endpoint-nodeports")?.elements ?? []) {
      const [proto, p] = el.key;
      const r = fromComment(el, proto as string);
      const n = port(p, el.line);
      r.nodePort = n;
      r.noEndpoints.push({ on: "nodeport", address: null, port: n, verdict: verdict(el), line: el.line });
      r.lines.push(el.line);
    }

    // endpoints: the service chain's `numgen random mod N vmap { 0 : goto endpoint-…, … }`, each endpoint chain's
    // `dnat to`
    for (const r of byKey.values()) {
      if (!r.chain) continue;
      const chain = chains.get(r.chain);
      const named = r.lines[0] ?? table.line;
      if (!chain)
        throw new ParseError(
          FORMAT,
          named,
          r.chain,
          "the service chain this element names is not in the table",
        );
      r.lines.push(chain.line);
      for (const rule of chain.rules) {
        r.lines.push(rule.line);
        for (const m of rule.text.matchAll(/goto (endpoint-\S+?)(?=[,\s}]|$)/g)) {
          const epName = m[1] as string;
          const ep = chains.get(epName);
          if (!ep)
            throw new ParseError(
              FORMAT,
              rule.line,
              rule.text,
              `endpoint chain ${epName} is not in the table`,
            );
          const dnat = ep.rules.find((x) => /\bdnat to /.test(x.text));
          const d = /\bdnat to (?:\[([^\]]+)\]|([^\s:]+)):(\d+)/.exec(dnat?.text ?? "");
          if (!dnat || !d)
            throw new ParseError(
              FORMAT,
              ep.line,
              epName,
              "an endpoint chain without a `dnat to ip:port` rule",
            );
          const epm = EP_CHAIN.exec(epName);
          if (!epm) throw new ParseError(FORMAT, ep.line, epName, "not a kube-proxy endpoint chain name");
          r.endpoints.push({
            ip: (d[1] ?? d[2]) as string,
            port: Number(d[3]),
            chain: epName,
            line: dnat.line,
          });
          r.lines.push(ep.line, dnat.line);
        }
      }
    }
    for (const r of byKey.values()) r.lines = [...new Set(r.lines)].sort((a, b) => a - b);
    for (const r of byKey.values()) out.services.push(r);
  }
  return out;
}

/** The Service port records of one Service (every port and family), e.g. `servicePorts(kp, "cca-dp", "web")`. */
export function servicePorts(kp: KubeProxyNft, namespace: string, name: string): KubeProxyServicePort[] {
  return kp.services.filter((s) => s.namespace === namespace && s.name === name);
}
