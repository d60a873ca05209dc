import { isIp } from "./address.ts";
import { contentLines, fail } from "./lines.ts";

export interface InterfaceAddress {
  ifindex: number;
  device: string;
  family: "inet" | "inet6";
  /** Address with prefix, e.g. `10.42.0.9/32`. */
  cidr: string;
  ip: string;
  /** 1-based line. */
  line: number;
}

export interface IpAddrOutput {
  addresses: InterfaceAddress[];
}

const FORMAT = "ip-addr";
const ROW = /^(\d+):\s+(\S+?)(?:@\S+)?\s+(inet6?)\s+(\S+)/;
/** How every `ip -o addr` line ends (iproute2 prints both lifetimes for every address): a line without it is cut. */
const END = /\\\s+valid_lft \S+ preferred_lft (?:forever|\d+sec)$/;

/**
 * `ip -o addr show` (one line per address; `\` continuation marks are ignored). Every line ends with its address's
 * lifetimes, so a cut-off line (or one joined with the next) is an error naming it, never an address.
 */
export function parseIpAddr(input: string): IpAddrOutput {
  const addresses: InterfaceAddress[] = [];
  for (const line of contentLines(FORMAT, input)) {
    const m = ROW.exec(line.text);
    if (!m) fail(FORMAT, line, "expected `N: DEV inet|inet6 ADDR/PREFIX …` (ip -o addr)");
    const cidr = m[4] as string;
    const [ip, len] = cidr.split("/");
    if (!isIp(ip as string) || !/^\d{1,3}$/.test(len ?? ""))
      fail(FORMAT, line, `${JSON.stringify(cidr)} is not ADDRESS/PREFIX`);
    const end = END.exec(line.text);
    if (!end) fail(FORMAT, line, "no `valid_lft … preferred_lft …` at the end (cut off?)");
    if (/ inet6? /.test(line.text.slice(m[0].length, end.index)))
      fail(FORMAT, line, "a second address in the line: two lines joined?");
    addresses.push({
      ifindex: Number(m[1]),
      device: m[2] as string,
      family: m[3] as "inet" | "inet6",
      cidr,
      ip: cidr.split("/")[0] as string,
      line: line.no,
    });
  }
  return { addresses };
}

function ipv4ToInt(ip: string): number | null {
  const p = ip.split(".");
  if (p.length !== 4 || p.some((x) => !/^\d+$/.test(x) || Number(x) > 255)) return null;
  return p.reduce((acc, x) => acc * 256 + Number(x), 0);
}

/** True when an IPv4 prefix (`10.43.0.0/16`, `10.43.0.10`, `default`) contains the address; `default` is excluded. */
export function prefixContains(prefix: string, ip: string): boolean {
  if (prefix === "default") return false;
  const [net, lenText] = prefix.split("/");
  const len = lenText === undefined ? 32 : Number(lenText);
  const a = ipv4ToInt(net as string);
  const b = ipv4ToInt(ip);
  if (a === null || b === null || len < 0 || len > 32) return false;
  if (len === 0) return true;
  const size = 2 ** (32 - len);
  return Math.floor(a / size) === Math.floor(b / size);
}
