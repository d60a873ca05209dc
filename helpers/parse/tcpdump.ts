import { contentLines, fail } from "./lines.ts";

export interface Packet {
  src: string;
  dst: string;
  /** Text after the addresses, e.g. `VXLAN, flags [I] (0x08), vni 2` or `12345+ A? kubernetes… (54)`. */
  info: string;
}

export interface EncapsulatedPacket {
  outer: Packet;
  inner: Packet | null;
}

export interface TcpdumpOutput {
  packets: EncapsulatedPacket[];
}

const FORMAT = "tcpdump";
const IP_LINE = /(?:^|\s)IP6? (\S+) > (\S+?):\s*(.*)$/;
const NOISE = /^(tcpdump: |listening on |dropped privs|\d+ packets (captured|received|dropped))/;

/** tcpdump prints `a.b.c.d.port`; we normalise to `a.b.c.d:port`. */
function hostPort(text: string): string {
  const at = text.lastIndexOf(".");
  if (at < 0 || !/^\d+$/.test(text.slice(at + 1))) return text;
  return `${text.slice(0, at)}:${text.slice(at + 1)}`;
}

function isTunnel(p: Packet): boolean {
  return /^VXLAN|^Geneve|^OTV/.test(p.info) || /:(8472|4789|6081)$/.test(p.dst);
}

/**
 * `tcpdump -nn [-T vxlan] [-v] udp port 8472`. A tunnel packet's line is followed by the inner packet's
 * `IP src > dst:` line (tcpdump decodes VXLAN on 4789, and on 8472 with `-T vxlan`); each outer packet is
 * paired with the inner one that follows it.
 */
export function parseTcpdump(input: string): TcpdumpOutput {
  const packets: EncapsulatedPacket[] = [];
  for (const line of contentLines(input)) {
    if (NOISE.test(line.text.trim())) continue;
    const m = IP_LINE.exec(line.text);
    if (!m) {
      if (/^\s/.test(line.text) || /^\d{2}:\d{2}:\d{2}/.test(line.text)) continue; // -v detail or non-IP frame
      fail(FORMAT, line, "expected a tcpdump `IP SRC > DST:` line");
    }
    const p: Packet = {
      src: hostPort(m[1] as string),
      dst: hostPort(m[2] as string),
      info: (m[3] as string).trim(),
    };
    const last = packets[packets.length - 1];
    if (isTunnel(p)) {
      packets.push({ outer: p, inner: null });
      const inner = IP_LINE.exec(p.info);
      if (inner && packets.length > 0) {
        (packets[packets.length - 1] as EncapsulatedPacket).inner = {
          src: hostPort(inner[1] as string),
          dst: hostPort(inner[2] as string),
          info: (inner[3] as string).trim(),
        };
      }
    } else if (last && last.inner === null) {
      last.inner = p;
    } else {
      packets.push({ outer: p, inner: null });
    }
  }
  return { packets };
}
