/** An address split into parts; `text` is the normalised `IP:PORT` or `[IPv6]:PORT`. */
export interface Endpoint {
  ip: string;
  port: number;
  text: string;
}

export function formatEndpoint(ip: string, port: number | string): string {
  return ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/**
 * An IP in one form whatever printed it: IPv4 as is, IPv6 lower-case and compressed as RFC 5952 says (the WHATWG
 * URL parser serialises it so): `/proc/net/tcp6`, Kubernetes and Cilium may each print the same address apart.
 */
export function canonicalIp(ip: string): string {
  if (!ip.includes(":")) return ip;
  try {
    return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return ip;
  }
}

/** An endpoint (`IP:PORT`, `[IPv6]:PORT`, unbracketed IPv6 with its port) in canonical form, or null. */
export function canonicalEndpoint(text: string): string | null {
  const ep = parseEndpoint(text.replace(/(?:\/\w+)+$/, ""));
  return ep ? formatEndpoint(canonicalIp(ep.ip), ep.port) : null;
}

/**
 * Parses `1.2.3.4:80`, `[fd00::1]:80`, and unbracketed IPv6 with a trailing port (`fd00::1:80`, as
 * `bpf ct list` prints it): the port is what follows the last colon.
 */
export function parseEndpoint(text: string): Endpoint | null {
  let ip: string;
  let portText: string;
  if (text.startsWith("[")) {
    const close = text.indexOf("]:");
    if (close < 0) return null;
    ip = text.slice(1, close);
    portText = text.slice(close + 2);
  } else {
    const at = text.lastIndexOf(":");
    if (at <= 0) return null;
    ip = text.slice(0, at);
    portText = text.slice(at + 1);
  }
  if (!/^\d+$/.test(portText) || !isIp(ip)) return null;
  const port = Number(portText);
  return { ip, port, text: formatEndpoint(ip, port) };
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** A dotted quad with every part 0–255 (`10.24` or `10.244.1.300` is not an address). */
export function isIpv4(text: string): boolean {
  const m = IPV4.exec(text);
  return m?.slice(1).every((p) => Number(p) <= 255) ?? false;
}

/**
 * An IPv4 address, or an IPv6 one: hex groups of 1–4 digits separated by colons, at most one `::`, eight groups
 * (or fewer with `::`), the last two optionally a dotted quad.
 */
export function isIp(text: string): boolean {
  if (isIpv4(text)) return true;
  if (text.length > 45 || !/^[0-9a-fA-F:.]+$/.test(text) || !text.includes(":")) return false;
  const dbl = text.indexOf("::");
  if (dbl >= 0 && text.indexOf("::", dbl + 1) >= 0) return false;
  let groups = text.split(":");
  let want = 8;
  const last = groups[groups.length - 1] as string;
  if (last.includes(".")) {
    if (!isIpv4(last)) return false;
    groups = groups.slice(0, -1);
    want = 6;
  }
  if (dbl >= 0) {
    const parts = groups.filter((g) => g !== "");
    return parts.length < want && parts.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g));
  }
  return groups.length === want && groups.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g));
}

/**
 * A Cilium service address as printed by `service list` and `bpf lb list`:
 * `IP:PORT[/PROTO][/i]`. 1.16 has no `/PROTO`; `/i` marks the internal scope.
 */
export interface ServiceAddress extends Endpoint {
  protocol: string | null;
  scope: "external" | "internal";
}

const PROTOS = new Set(["TCP", "UDP", "SCTP", "ANY", "NONE", "ICMP"]);

export function parseServiceAddress(text: string): ServiceAddress | null {
  const parts = text.split("/");
  const head = parts.shift() as string;
  let protocol: string | null = null;
  let scope: "external" | "internal" = "external";
  for (const p of parts) {
    if (p === "i") scope = "internal";
    else if (PROTOS.has(p.toUpperCase())) protocol = p.toUpperCase();
    else return null;
  }
  const ep = parseEndpoint(head);
  if (!ep) return null;
  return { ...ep, protocol, scope };
}

/** An IPv6 address as a number (null when it is none). */
export function ipv6Big(ip: string): bigint | null {
  if (!ip.includes(":") || ip.includes(".")) return null;
  const [head, tail, more] = canonicalIp(ip).split("::");
  if (more !== undefined) return null;
  const h = head ? head.split(":") : [];
  const t = tail !== undefined ? (tail ? tail.split(":") : []) : [];
  if (tail === undefined && h.length !== 8) return null;
  const groups = [...h, ...Array(8 - h.length - t.length).fill("0"), ...t];
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.reduce((a, g) => (a << 16n) + BigInt(Number.parseInt(g, 16)), 0n);
}

/** A number as a canonical IPv6 address. */
export function ipv6Text(n: bigint): string {
  const groups: string[] = [];
  for (let i = 7; i >= 0; i--) groups.push(((n >> BigInt(i * 16)) & 0xffffn).toString(16));
  return canonicalIp(groups.join(":"));
}
