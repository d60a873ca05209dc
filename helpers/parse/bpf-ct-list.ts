import { parseEndpoint } from "./address.ts";
import { fail, noteUnknown, skipLine } from "./lines.ts";
import { type U64, u64, u64Sum } from "./u64.ts";

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
  /** 64-bit in the datapath's entry (it shares a union): a number when exact, else the printed decimal. */
  backendId: U64 | null;
  flags: string[];
  flagsHex: string;
  sourceSecurityId: number | null;
  /** 64-bit in the datapath: a number when exact, else the printed decimal (see u64.ts). */
  packets: U64 | null;
  bytes: U64 | null;
  ifIndex: number | null;
  natPort: number | null;
  /** `Key=value` fields this parser does not know (a newer agent's), kept as printed, and reported. */
  extra?: Record<string, string>;
}

export interface CtList {
  entries: CtEntry[];
}

const FORMAT = "bpf-ct-list";
const DIRECTIONS = new Set(["OUT", "IN", "SVC"]);
const SKIPPED = /^Unable to open .*Skipping\.?$/;

/**
 * The layout every 1.15–1.20 agent prints, as one regex: irregexp reads it natively, several times faster
 * than any per-character scan in JS. Lines it does not fit go through `scanCtLine`.
 */
const FAST_BODY =
  "(\\S+) (OUT|IN|SVC) (\\S+) -> (\\S+) (related )?expires=(\\d+)(?: \\(remaining: \\d+ sec\\(s\\)\\))? (?:Packets=(\\d+) Bytes=(\\d+)|RxPackets=(\\d+) RxBytes=(\\d+) .*?TxPackets=(\\d+) TxBytes=(\\d+)) .*?Flags=(0x[0-9a-fA-F]+) \\[ ?(.*?) ?\\] RevNAT=(\\d+) SourceSecurityID=(\\d+)(?: IfIndex=(\\d+))?(?: BackendID=(\\d+))?(?: NatPort=(\\d+))?[ \\t\\r]*";
const FAST = new RegExp(`^${FAST_BODY}$`);
/** The same, sticky over a whole dump: matches one line at `lastIndex` including its newline. */
const FAST_STICKY = new RegExp(`${FAST_BODY}(?:\\n|$)`, "y");

const IPV4_ENDPOINT = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}:\d{1,5}$/;
/** Shared by every entry without flags (the common case), so a large dump allocates no empty arrays. */
const NO_FLAGS: string[] = Object.freeze([]) as unknown as string[];

/** IPv4 `a.b.c.d:port` is already normal form and is kept as is; IPv6 gets brackets. */
function endpointText(text: string): string | null {
  if (IPV4_ENDPOINT.test(text)) return text;
  return parseEndpoint(text)?.text ?? null;
}

const opt = (v: string | undefined): number | null => (v === undefined ? null : +v);
/** A 64-bit field: exact past 2^53 (u64.ts). */
const opt64 = (v: string | undefined): U64 | null => (v === undefined ? null : v.length > 15 ? u64(v) : +v);
/** Fields every 1.15–1.20 agent prints that the entry does not model. */
const UNMODELLED = new Set(["RxFlagsSeen", "LastRxReport", "TxFlagsSeen", "LastTxReport"]);

/** One `bpf ct list global` line → entry, or null when the line is not an entry. */
export function parseCtLine(text: string, line = 0): CtEntry | null {
  const m = FAST.exec(text);
  return m ? fromMatch(m) : scanCtLine(text, line);
}

const interned = new Map<string, string>();
const flagLists = new Map<string, string[]>();

/** Protocol, direction and flags repeat on every line: share one string/array per distinct value. */
function intern(s: string): string {
  let v = interned.get(s);
  if (v === undefined) {
    v = s;
    if (interned.size < 4096) interned.set(s, s);
  }
  return v;
}

function flagList(text: string | undefined): string[] {
  if (!text) return NO_FLAGS;
  let v = flagLists.get(text);
  if (v === undefined) {
    v = Object.freeze(text.split(" ").filter((f) => f !== "")) as unknown as string[];
    if (flagLists.size < 4096) flagLists.set(text, v);
  }
  return v;
}

function fromMatch(m: RegExpExecArray): CtEntry | null {
  const source = endpointText(m[3] as string);
  const destination = endpointText(m[4] as string);
  if (source === null || destination === null) return null;
  const split = m[7] === undefined;
  return {
    protocol: intern(m[1] as string),
    direction: intern(m[2] as string) as CtEntry["direction"],
    source,
    destination,
    related: m[5] !== undefined,
    expires: +(m[6] as string),
    revNat: +(m[15] as string),
    backendId: opt64(m[18]),
    flags: flagList(m[14]),
    flagsHex: intern(m[13] as string),
    sourceSecurityId: +(m[16] as string),
    packets: split ? u64Sum(m[9] as string, m[11] as string) : u64(m[7] as string),
    bytes: split ? u64Sum(m[10] as string, m[12] as string) : u64(m[8] as string),
    ifIndex: opt(m[17]),
    natPort: opt(m[19]),
  };
}

/**
 * The slow path for lines in an order or with fields FAST does not know. The tuple is split off
 * once; the `Key=value` fields are then read in a single forward scan, keys recognised by their length and
 * first letter and numbers read in place (no substrings), which keeps a million-line dump fast.
 */
function scanCtLine(text: string, line: number): CtEntry | null {
  const s1 = text.indexOf(" ");
  const s2 = text.indexOf(" ", s1 + 1);
  const s3 = text.indexOf(" ", s2 + 1);
  const s4 = text.indexOf(" ", s3 + 1);
  const s5 = text.indexOf(" ", s4 + 1);
  if (s1 <= 0 || s5 < 0 || s4 !== s3 + 3 || text.charCodeAt(s3 + 1) !== 45 || text.charCodeAt(s3 + 2) !== 62)
    return null;
  const direction = text.slice(s1 + 1, s2);
  if (!DIRECTIONS.has(direction)) return null;
  const src = parseEndpoint(text.slice(s2 + 1, s3));
  const dst = parseEndpoint(text.slice(s4 + 1, s5));
  if (!src || !dst) return null;
  let pos = s5 + 1;
  const related = text.startsWith("related ", pos);
  if (related) pos += 8;
  if (!text.startsWith("expires=", pos)) return null;
  const e: CtEntry = {
    protocol: text.slice(0, s1),
    direction: direction as CtEntry["direction"],
    source: src.text,
    destination: dst.text,
    related,
    expires: 0,
    revNat: 0,
    backendId: null,
    flags: [],
    flagsHex: "0x0000",
    sourceSecurityId: null,
    packets: null,
    bytes: null,
    ifIndex: null,
    natPort: null,
  };
  let rx: string | null = null;
  let tx: string | null = null;
  let rxb: string | null = null;
  let txb: string | null = null;
  const len = text.length;
  while (pos < len) {
    const start = pos;
    const c0 = text.charCodeAt(start);
    if (c0 === 91 /* [ */) {
      const close = text.indexOf("]", start);
      if (close < 0) return null;
      const inner = text.slice(start + 1, close).trim();
      if (inner !== "") e.flags = inner.split(/\s+/);
      pos = close + 1;
      while (pos < len && text.charCodeAt(pos) === 32) pos++;
      continue;
    }
    let eq = -1;
    let end = start;
    for (; end < len; end++) {
      const c = text.charCodeAt(end);
      if (c === 32) break;
      if (c === 61 && eq < 0) eq = end;
    }
    if (eq > start) {
      const keyLen = eq - start;
      let n = 0;
      let digits = 0;
      for (let i = eq + 1; i < end; i++) {
        const c = text.charCodeAt(i);
        if (c < 48 || c > 57) {
          digits = -1;
          break;
        }
        n = n * 10 + (c - 48);
        digits++;
      }
      const num = digits > 0 ? n : null;
      // counters keep their exact printed value past 2^53
      const big = digits > 15 ? u64(text.slice(eq + 1, end)) : num;
      const dec = digits > 0 ? text.slice(eq + 1, end) : null;
      switch (keyLen * 128 + c0) {
        case 7 * 128 + 101: // expires
          e.expires = num ?? 0;
          break;
        case 7 * 128 + 80: // Packets
          e.packets = big;
          break;
        case 5 * 128 + 66: // Bytes
          e.bytes = big;
          break;
        case 9 * 128 + 82: // RxPackets
          rx = dec;
          break;
        case 7 * 128 + 82: // RxBytes
          rxb = dec;
          break;
        case 9 * 128 + 84: // TxPackets
          tx = dec;
          break;
        case 7 * 128 + 84: // TxBytes
          txb = dec;
          break;
        case 5 * 128 + 70: // Flags
          e.flagsHex = text.slice(eq + 1, end);
          break;
        case 6 * 128 + 82: // RevNAT
          e.revNat = num ?? 0;
          break;
        case 16 * 128 + 83: // SourceSecurityID
          e.sourceSecurityId = num;
          break;
        case 7 * 128 + 73: // IfIndex
          e.ifIndex = num;
          break;
        case 9 * 128 + 66: // BackendID
          e.backendId = big;
          break;
        case 7 * 128 + 78: // NatPort
          e.natPort = num;
          break;
        default: {
          const key = text.slice(start, eq);
          if (!UNMODELLED.has(key)) {
            e.extra ??= {};
            e.extra[key] = text.slice(eq + 1, end);
            noteUnknown(line, `field ${JSON.stringify(key)}`, text.slice(start, end));
          }
        }
      }
    }
    pos = end + 1;
  }
  if (e.packets === null && (rx !== null || tx !== null)) {
    e.packets = u64Sum(rx ?? "0", tx ?? "0");
    e.bytes = u64Sum(rxb ?? "0", txb ?? "0");
  }
  return e;
}

/**
 * `cilium-dbg bpf ct list global` (text). Accepts every 1.15–1.20 tail (IfIndex, BackendID, NatPort),
 * Rx/Tx or merged counters, `(remaining: …)` from `-d`, SVC entries and unbracketed IPv6.
 */
export function parseBpfCtList(input: string): CtList {
  const entries: CtEntry[] = [];
  forEachCtEntry(input, (e) => {
    entries.push(e);
  });
  return { entries };
}

/**
 * Streams the entries of a dump to `fn` without building a list: the sticky regex reads each line in
 * place (no per-line substring); lines it does not fit go through the line-by-line slow path. Returns the
 * number of lines read (a stream's next block starts after them).
 */
export function forEachCtEntry(
  input: string,
  fn: (e: CtEntry, line: number) => void,
  /** Lines before `input` (a block of a stream): error messages and `line` count from the dump's start. */
  lineOffset = 0,
): number {
  let pos = 0;
  let no = lineOffset;
  const len = input.length;
  while (pos < len) {
    no++;
    FAST_STICKY.lastIndex = pos;
    const m = FAST_STICKY.exec(input);
    if (m) {
      const e = fromMatch(m);
      if (e) {
        fn(e, no);
        pos = FAST_STICKY.lastIndex;
        continue;
      }
    }
    let end = input.indexOf("\n", pos);
    if (end < 0) end = len;
    const text = input.slice(pos, end).replace(/\s+$/, "");
    pos = end + 1;
    if (skipLine(text, no) || SKIPPED.test(text)) continue;
    const e = scanCtLine(text, no);
    if (!e) fail(FORMAT, { no, text }, "expected `PROTO OUT|IN|SVC SRC -> DST expires=…`");
    fn(e, no);
  }
  return no - lineOffset;
}

/** JSON text of the few distinct strings a dump repeats (protocol, flags, flag words), computed once each. */
const jsonOf = new Map<string, string>();
function jstr(v: string): string {
  let j = jsonOf.get(v);
  if (j === undefined) {
    j = JSON.stringify(v);
    if (jsonOf.size < 4096) jsonOf.set(v, j);
  }
  return j;
}
const flagsJson = new WeakMap<string[], string>();
function jflags(flags: string[]): string {
  let j = flagsJson.get(flags);
  if (j === undefined) {
    j = JSON.stringify(flags);
    flagsJson.set(flags, j);
  }
  return j;
}
const jnum = (v: U64 | null) => (v === null ? "null" : typeof v === "number" ? `${v}` : `"${v}"`);

/**
 * `JSON.stringify(e)`, byte for byte, faster on the million entries of a big node's dump (`parse --ndjson`):
 * the keys are known, the addresses were validated by the parser (digits, dots, colons, hex and brackets need
 * no escaping), and the strings that repeat are escaped once.
 */
export function ctEntryJson(e: CtEntry): string {
  return (
    '{"protocol":' +
    jstr(e.protocol) +
    ',"direction":"' +
    e.direction +
    '","source":"' +
    e.source +
    '","destination":"' +
    e.destination +
    '","related":' +
    e.related +
    ',"expires":' +
    e.expires +
    ',"revNat":' +
    e.revNat +
    ',"backendId":' +
    jnum(e.backendId) +
    ',"flags":' +
    jflags(e.flags) +
    ',"flagsHex":' +
    jstr(e.flagsHex) +
    ',"sourceSecurityId":' +
    jnum(e.sourceSecurityId) +
    ',"packets":' +
    jnum(e.packets) +
    ',"bytes":' +
    jnum(e.bytes) +
    ',"ifIndex":' +
    jnum(e.ifIndex) +
    ',"natPort":' +
    jnum(e.natPort) +
    (e.extra ? `,"extra":${JSON.stringify(e.extra)}` : "") +
    "}"
  );
}
