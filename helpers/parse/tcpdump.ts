import { contentLines, fail } from "./lines.ts";

export interface Packet {
  /** `IP`, `IP6`, `ARP`, … (the first word tcpdump prints for the frame). */
  proto: string;
  /** `a.b.c.d:port` (tcpdump's `a.b.c.d.port` normalised); empty for frames without addresses (ARP). */
  src: string;
  dst: string;
  /** Text after the addresses, e.g. `VXLAN, flags [I] (0x08), vni 2` or `12345+ A? kubernetes… (54)`. */
  info: string;
}

export interface EncapsulatedPacket {
  outer: Packet;
  inner: Packet | null;
  /** 1-based lines of the outer frame and of the inner one (null: none). */
  line: number;
  innerLine: number | null;
}

export interface TcpdumpOutput {
  packets: EncapsulatedPacket[];
}

const FORMAT = "tcpdump";
const TIMESTAMP = /^\d{2}:\d{2}:\d{2}\.\d+\s+(?:\S+\s+(?:In|Out|B|M|P)\s+)?/;
const IP_LINE = /^(IP6?) (\S+) > (\S+?):(?:\s+|$)(.*)$/;
const NOISE = /^(tcpdump: |listening on |dropped privs|\d+ packets (captured|received|dropped))/;

/** tcpdump prints `a.b.c.d.port`; we normalise to `a.b.c.d:port` (IPv6 and port-less addresses stay as printed). */
function hostPort(text: string): string {
  const at = text.lastIndexOf(".");
  if (!/^\d+\.\d+\.\d+\.\d+\.\d+$/.test(text) || at < 0) return text;
  return `${text.slice(0, at)}:${text.slice(at + 1)}`;
}

function packet(text: string): Packet {
  const m = IP_LINE.exec(text);
  if (m)
    return {
      proto: m[1] as string,
      src: hostPort(m[2] as string),
      dst: hostPort(m[3] as string),
      info: (m[4] as string).trim(),
    };
  return { proto: (text.split(/[ ,]/)[0] ?? "").trim(), src: "", dst: "", info: text };
}

function isTunnel(p: Packet): boolean {
  return /^(VXLAN|Geneve|OTV)\b/.test(p.info) || /:(8472|4789|6081)$/.test(p.dst);
}

/**
 * `tcpdump -nn [-T vxlan] [-i any] udp port 8472`. tcpdump prints a tunnel packet's outer line with a
 * timestamp and the decoded inner frame on the next line without one (tcpdump decodes VXLAN on 4789, and
 * on 8472 with `-T vxlan`); each outer packet is paired with that inner frame (IP, IP6, ARP, …). Lines after
 * the inner frame without a timestamp (a nested decode of the inner payload) are part of the same packet.
 */
export function parseTcpdump(input: string): TcpdumpOutput {
  const packets: EncapsulatedPacket[] = [];
  for (const line of contentLines(input)) {
    const text = line.text.trim();
    if (NOISE.test(text) || /^\s/.test(line.text)) continue; // banner, or -v continuation lines
    const ts = TIMESTAMP.exec(line.text);
    const body = ts ? line.text.slice(ts[0].length) : line.text;
    const last = packets[packets.length - 1];
    if (!ts && last && last.inner === null && isTunnel(last.outer)) {
      last.inner = packet(body);
      last.innerLine = line.no;
      continue;
    }
    // `-T vxlan` decodes every UDP packet as VXLAN, the inner one too: an inner DNS datagram is decoded once
    // more and prints a nonsense frame (`75:62:… > 00:00:…, ethertype Unknown (0x7465)`) and a hex dump.
    // They belong to the packet before them (seen on the first real lab run).
    if (!ts && last && last.inner !== null) continue;
    if (!ts && !IP_LINE.test(body))
      fail(FORMAT, line, "expected a timestamped frame or the inner frame of a tunnel packet");
    const p = packet(body);
    if (p.proto !== "IP" && p.proto !== "IP6") continue; // a non-IP frame on the capture device
    packets.push({ outer: p, inner: null, line: line.no, innerLine: null });
  }
  return { packets };
}
