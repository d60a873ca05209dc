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

export function isIp(text: string): boolean {
  if (IPV4.test(text)) return true;
  return /^[0-9a-fA-F:.]+$/.test(text) && text.includes(":");
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
