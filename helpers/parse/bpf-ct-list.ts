import { parseEndpoint } from "./address.ts";
import { checkText, fail, mayBeCut, noteUnknown, skipLine } from "./lines.ts";
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
  /**
   * Set when the line carries the `service` marker: a pre-1.16 agent's service entry (TUPLE_F_SERVICE, printed
   * after the tuple by pkg/maps/ctmap's CtKey4Global.Dump). Its tuple is printed as the key holds it (frontend
   * first); 1.16+ agents print such entries with direction SVC instead.
   */
  service?: true;
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
 * The layouts every 1.15–1.20 agent prints, as one regex: irregexp reads it natively, several times faster than
 * any per-character scan in JS. Every part is anchored by a literal key, so a line that does not fit fails at its
 * first wrong character (no part can backtrack into another: linear on any input, a 1 MB line included). The
 * counters are ≤1.15's RxPackets/RxBytes/…/TxBytes or 1.16+'s merged Packets/Bytes. Lines it does not fit go
 * through `scanCtLine`.
 */
const FAST_BODY =
  "([A-Za-z0-9]+) (OUT|IN|SVC) ([0-9a-fA-F.:\\[\\]]+) -> ([0-9a-fA-F.:\\[\\]]+) (related )?(service )?expires=(\\d+)(?: \\(remaining: \\d+ sec\\(s\\)\\))? (?:Packets=(\\d+) Bytes=(\\d+) RxFlagsSeen=0x[0-9a-fA-F]+ LastRxReport=\\d+|RxPackets=(\\d+) RxBytes=(\\d+) RxFlagsSeen=0x[0-9a-fA-F]+ LastRxReport=\\d+ TxPackets=(\\d+) TxBytes=(\\d+)) TxFlagsSeen=0x[0-9a-fA-F]+ LastTxReport=\\d+ Flags=(0x[0-9a-fA-F]+) \\[((?: [A-Za-z0-9=]+)*) \\] RevNAT=(\\d+) SourceSecurityID=(\\d+)(?: IfIndex=(\\d+))?(?: BackendID=(\\d+))?(?: NatPort=(\\d+))?[ \\t\\r]*";
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
  const split = m[8] === undefined;
  const e: CtEntry = {
    protocol: intern(m[1] as string),
    direction: intern(m[2] as string) as CtEntry["direction"],
    source,
    destination,
    related: m[5] !== undefined,
    expires: +(m[7] as string),
    revNat: +(m[16] as string),
    backendId: opt64(m[19]),
    flags: flagList(m[15]),
    flagsHex: intern(m[14] as string),
    sourceSecurityId: +(m[17] as string),
    packets: split ? u64Sum(m[10] as string, m[12] as string) : u64(m[8] as string),
    bytes: split ? u64Sum(m[11] as string, m[13] as string) : u64(m[9] as string),
    ifIndex: opt(m[18]),
    natPort: opt(m[20]),
  };
  if (m[6] !== undefined) e.service = true;
  return e;
}

/** Keys the scanner reads into the entry (the rest are kept in `extra`, or are UNMODELLED). */
const NUMERIC = new Set([
  "expires",
  "Packets",
  "Bytes",
  "RxPackets",
  "RxBytes",
  "TxPackets",
  "TxBytes",
  "RevNAT",
  "SourceSecurityID",
  "IfIndex",
  "BackendID",
  "NatPort",
  "LastRxReport",
  "LastTxReport",
]);
/** What every 1.15–1.20 entry prints: a line without one of them is cut off, or not one entry. */
const REQUIRED = ["Flags", "RevNAT", "SourceSecurityID"];
const KEY = /^[A-Za-z][A-Za-z0-9]*$/;
const JOINED = "two entries on one line?";

/**
 * The slow path for lines in an order or with fields FAST does not know. The tuple is split off once; the rest is
 * read token by token: each a `Key=value` field (each key once), the flags' `[ … ]` after `Flags=`, or `-d`'s
 * `(remaining: N sec(s))` after `expires=`. Anything else (a second tuple, a bare word) is an error naming the
 * line, as is a line without Flags, RevNAT or SourceSecurityID: never an entry whose fields a neighbour filled.
 * Returns null when the line does not start like an entry at all.
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
  const where = { no: line, text };
  let pos = s5 + 1;
  const related = text.startsWith("related ", pos);
  if (related) pos += 8;
  const service = text.startsWith("service ", pos);
  if (service) pos += 8;
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
  if (service) e.service = true;
  if (!/^[A-Za-z0-9]+$/.test(e.protocol)) fail(FORMAT, where, `protocol ${JSON.stringify(e.protocol)}`);
  const seen = new Set<string>();
  /** The token before was Flags= (its `[ … ]` must follow it); and that `[ … ]` was read. */
  let afterFlags = false;
  let bracket = false;
  let rx: string | null = null;
  let tx: string | null = null;
  let rxb: string | null = null;
  let txb: string | null = null;
  const tokens = text.slice(pos).split(" ");
  for (let k = 0; k < tokens.length; k++) {
    const tok = tokens[k] as string;
    if (tok === "") continue;
    const wasAfterFlags = afterFlags;
    afterFlags = false;
    if (tok === "[") {
      // the flag words up to `]`, right after Flags=
      if (!wasAfterFlags || bracket) fail(FORMAT, where, `\`[\` not after Flags=: ${JOINED}`);
      bracket = true;
      const words: string[] = [];
      for (k++; k < tokens.length && tokens[k] !== "]"; k++) {
        const w = tokens[k] as string;
        if (w === "") continue;
        if (!/^[A-Za-z0-9]+(?:=0x[0-9a-fA-F]+)?$/.test(w)) fail(FORMAT, where, `flag ${JSON.stringify(w)}`);
        words.push(w);
      }
      if (k >= tokens.length) fail(FORMAT, where, "flags `[ … ]` without their `]` (cut off?)");
      e.flags = words;
      continue;
    }
    if (tok === "(remaining:" && seen.size === 1 && seen.has("expires")) {
      if (!/^\d+$/.test(tokens[k + 1] ?? "") || tokens[k + 2] !== "sec(s))")
        fail(FORMAT, where, "`(remaining: N sec(s))` cut off");
      k += 2;
      continue;
    }
    const eq = tok.indexOf("=");
    const key = eq > 0 ? tok.slice(0, eq) : "";
    const value = tok.slice(eq + 1);
    if (!KEY.test(key) || value === "") fail(FORMAT, where, `unexpected ${JSON.stringify(tok)}: ${JOINED}`);
    if (seen.has(key)) fail(FORMAT, where, `${key}= twice: ${JOINED}`);
    seen.add(key);
    if (NUMERIC.has(key) && !/^\d+$/.test(value)) fail(FORMAT, where, `${key}= is not a number`);
    // counters keep their exact printed value past 2^53
    const num = NUMERIC.has(key) ? (value.length > 15 ? u64(value) : +value) : null;
    switch (key) {
      case "expires":
        e.expires = +value;
        break;
      case "Packets":
        e.packets = num;
        break;
      case "Bytes":
        e.bytes = num;
        break;
      case "RxPackets":
        rx = value;
        break;
      case "RxBytes":
        rxb = value;
        break;
      case "TxPackets":
        tx = value;
        break;
      case "TxBytes":
        txb = value;
        break;
      case "Flags":
        if (!/^0x[0-9a-fA-F]+$/.test(value)) fail(FORMAT, where, "Flags= is not hex");
        e.flagsHex = value;
        afterFlags = true;
        break;
      case "RevNAT":
        e.revNat = +value;
        break;
      case "SourceSecurityID":
        e.sourceSecurityId = +value;
        break;
      case "IfIndex":
        e.ifIndex = +value;
        break;
      case "BackendID":
        e.backendId = num;
        break;
      case "NatPort":
        e.natPort = +value;
        break;
      default:
        if (!UNMODELLED.has(key) && !NUMERIC.has(key)) {
          e.extra ??= {};
          e.extra[key] = value;
          noteUnknown(line, `field ${JSON.stringify(key)}`, tok);
        }
    }
  }
  for (const key of REQUIRED)
    if (!seen.has(key)) fail(FORMAT, where, `no ${key}= (cut off, or not an entry)`);
  if (!bracket) fail(FORMAT, where, "Flags= without its `[ … ]` (cut off?)");
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
        if (FAST_STICKY.lastIndex === len && input.charCodeAt(len - 1) !== 10) {
          const text = input.slice(pos, len);
          mayBeCut({ no, text, unterminated: true });
        }
        fn(e, no);
        pos = FAST_STICKY.lastIndex;
        continue;
      }
    }
    let end = input.indexOf("\n", pos);
    if (end < 0) end = len;
    const text = input.slice(pos, end).trimEnd();
    pos = end + 1;
    if (skipLine(text, no) || SKIPPED.test(text)) continue;
    checkText(FORMAT, text, no);
    const e = scanCtLine(text, no);
    if (!e) fail(FORMAT, { no, text }, "expected `PROTO OUT|IN|SVC SRC -> DST expires=…`");
    if (end === len) mayBeCut({ no, text, unterminated: true });
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
    (e.service ? ',"service":true' : "") +
    (e.extra ? `,"extra":${JSON.stringify(e.extra)}` : "") +
    "}"
  );
}
