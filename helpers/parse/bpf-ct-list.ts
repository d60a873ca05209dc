import { parseEndpoint } from "./address.ts";
import { fail, forEachContentLine } from "./lines.ts";

export interface CtEntry {
  protocol: string;
  direction: "OUT" | "IN" | "SVC";
  /** Client side, as printed (the CLI compensates the reversed tuple): `IP:PORT`. */
  source: string;
  /** Server side: the backend for OUT/IN, the frontend VIP for SVC. */
  destination: string;
  related: boolean;
  expires: number;
  revNat: number;
  backendId: number | null;
  flags: string[];
  flagsHex: string;
  sourceSecurityId: number | null;
  packets: number | null;
  bytes: number | null;
  ifIndex: number | null;
  natPort: number | null;
}

export interface CtList {
  entries: CtEntry[];
}

const FORMAT = "bpf-ct-list";
const HEAD = /^(\S+) (OUT|IN|SVC) (\S+) -> (\S+) (related )?expires=(\d+)/;
const SKIPPED = /^Unable to open .*Skipping\.?$/;

function field(line: string, name: string): string | null {
  const at = line.indexOf(` ${name}=`);
  if (at < 0) return null;
  const start = at + name.length + 2;
  let end = line.indexOf(" ", start);
  if (end < 0) end = line.length;
  return line.slice(start, end);
}

function num(line: string, name: string): number | null {
  const v = field(line, name);
  return v === null ? null : Number(v);
}

/** One `bpf ct list global` line → entry, or null when the line is not an entry. */
export function parseCtLine(text: string): CtEntry | null {
  const m = HEAD.exec(text);
  if (!m) return null;
  const src = parseEndpoint(m[3] as string);
  const dst = parseEndpoint(m[4] as string);
  if (!src || !dst) return null;
  const open = text.indexOf("[", m[0].length);
  const close = open >= 0 ? text.indexOf("]", open) : -1;
  const flags =
    open >= 0 && close > open
      ? text
          .slice(open + 1, close)
          .trim()
          .split(/\s+/)
          .filter(Boolean)
      : [];
  let packets = num(text, "Packets");
  let bytes = num(text, "Bytes");
  if (packets === null) {
    const rx = num(text, "RxPackets");
    const tx = num(text, "TxPackets");
    if (rx !== null || tx !== null) packets = (rx ?? 0) + (tx ?? 0);
    const rxb = num(text, "RxBytes");
    const txb = num(text, "TxBytes");
    if (rxb !== null || txb !== null) bytes = (rxb ?? 0) + (txb ?? 0);
  }
  return {
    protocol: m[1] as string,
    direction: m[2] as CtEntry["direction"],
    source: src.text,
    destination: dst.text,
    related: m[5] !== undefined,
    expires: Number(m[6]),
    revNat: num(text, "RevNAT") ?? 0,
    backendId: num(text, "BackendID"),
    flags,
    flagsHex: field(text, "Flags") ?? "0x0000",
    sourceSecurityId: num(text, "SourceSecurityID"),
    packets,
    bytes,
    ifIndex: num(text, "IfIndex"),
    natPort: num(text, "NatPort"),
  };
}

/**
 * `cilium-dbg bpf ct list global` (text). Accepts every 1.15–1.20 tail (IfIndex, BackendID, NatPort),
 * Rx/Tx or merged counters, `(remaining: …)` from `-d`, SVC entries and unbracketed IPv6.
 */
export function parseBpfCtList(input: string): CtList {
  const entries: CtEntry[] = [];
  forEachContentLine(input, (text, no) => {
    if (SKIPPED.test(text)) return;
    const e = parseCtLine(text);
    if (!e) fail(FORMAT, { no, text }, "expected `PROTO OUT|IN|SVC SRC -> DST expires=…`");
    entries.push(e);
  });
  return { entries };
}
