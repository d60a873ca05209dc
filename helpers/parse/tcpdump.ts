import { contentLines, fail, type Line, mayBeCut } from "./lines.ts";

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
/** tcpdump's own lines around the capture, whole (a banner with a packet after it is two lines joined). */
const NOISE = [
  /^tcpdump: data link type \S+$/,
  /^tcpdump: verbose output suppressed, use -v(?:\[v\])?\.\.\. for full protocol decode$/,
  /^listening on \S+, link-type \S+(?: \([^)]*\))?, (?:snapshot length|capture size) \d+ bytes$/,
  /^\d+ packets? (?:captured|received by filter|dropped by kernel)$/,
  /^dropped privs to \S+$/,
];
/** Any other `tcpdump: …` message (a warning), unless a packet's timestamp is in it. */
const TCPDUMP_MESSAGE = /^tcpdump: /;
const TIMESTAMP_ANYWHERE = /\d{2}:\d{2}:\d{2}\.\d{6}/;
/** `a.b.c.d[.port]` or an IPv6 address `x:y::z[.port]`, as tcpdump -nn prints them. */
const ADDRESS = /^(?:\d{1,3}(?:\.\d{1,3}){3}(?:\.\d{1,5})?|[0-9a-fA-F]*:[0-9a-fA-F:]*(?:\.\d{1,5})?)$/;

/** tcpdump prints `a.b.c.d.port`; we normalise to `a.b.c.d:port` (IPv6 and port-less addresses stay as printed). */
function hostPort(text: string): string {
  const at = text.lastIndexOf(".");
  if (!/^\d+\.\d+\.\d+\.\d+\.\d+$/.test(text) || at < 0) return text;
  return `${text.slice(0, at)}:${text.slice(at + 1)}`;
}

/** An IP line's fields; an IP/IP6 line that is not `SRC > DST: …` with both addresses is cut, and an error. */
function packet(text: string, line: Line): Packet {
  const m = IP_LINE.exec(text);
  if (m) {
    const src = m[2] as string;
    const dst = m[3] as string;
    const info = (m[4] as string).trim();
    if (!ADDRESS.test(src) || !ADDRESS.test(dst))
      fail(FORMAT, line, `${JSON.stringify(`${src} > ${dst}`)} is not SRC > DST (cut off?)`);
    // a second packet, a timestamp or a hex dump line in the decoded text: lines joined
    if (
      info.includes(" > ") ||
      info.includes("\t") ||
      TIMESTAMP_ANYWHERE.test(info) ||
      /IP6? [0-9a-fA-F.:]+ > /.test(info)
    )
      fail(FORMAT, line, "a second packet in the line: two lines joined?");
    return { proto: m[1] as string, src: hostPort(src), dst: hostPort(dst), info };
  }
  const proto = (text.split(/[ ,]/)[0] ?? "").trim();
  if (proto === "IP" || proto === "IP6") fail(FORMAT, line, "expected `IP SRC > DST: …` (cut off?)");
  return { proto, src: "", dst: "", info: text };
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
  for (const line of contentLines(FORMAT, input)) {
    const text = line.text.trim();
    if (/^\s/.test(line.text)) continue; // -v continuation lines, hex dumps
    if (NOISE.some((n) => n.test(text))) continue;
    if (TCPDUMP_MESSAGE.test(text)) {
      if (TIMESTAMP_ANYWHERE.test(text))
        fail(FORMAT, line, "a packet inside tcpdump's message: two lines joined?");
      continue;
    }
    const ts = TIMESTAMP.exec(line.text);
    const body = ts ? line.text.slice(ts[0].length) : line.text;
    const last = packets[packets.length - 1];
    if (!ts && last && last.inner === null && isTunnel(last.outer)) {
      last.inner = packet(body, line);
      last.innerLine = line.no;
      mayBeCut(line);
      continue;
    }
    // `-T vxlan` decodes every UDP packet as VXLAN, the inner one too: an inner DNS datagram is decoded once
    // more and prints a nonsense frame (`75:62:… > 00:00:…, ethertype Unknown (0x7465)`) and a hex dump.
    // They belong to the packet before them (seen on the first real lab run).
    if (!ts && last && last.inner !== null) continue;
    if (!ts && !IP_LINE.test(body))
      fail(FORMAT, line, "expected a timestamped frame or the inner frame of a tunnel packet");
    const p = packet(body, line);
    if (p.proto !== "IP" && p.proto !== "IP6") continue; // a non-IP frame on the capture device
    mayBeCut(line);
    packets.push({ outer: p, inner: null, line: line.no, innerLine: null });
  }
  return { packets };
}
