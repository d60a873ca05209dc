import { ParseError } from "../errors.ts";
import { jsonErrorOffset } from "./json-error.ts";
import { ELISION_LINE, JsonScanError, jsonScan } from "./json-scan.ts";

/**
 * What a parser passed over without failing, for the reader: lines a human elided (skipped and counted), unknown
 * keywords or trailing fields (kept in the record's `extra`, and reported here), and doubts: a record the output
 * cannot vouch for (its last line has no newline after it, so it may be cut off; a table without its COMMIT).
 * Parsers are pure and synchronous: `withNotes` collects what one parse noted. This is the one channel for all
 * three; a line the parser cannot read at all is a ParseError instead (exit 2, naming the line).
 */
export interface ParseNotes {
  /** 1-based lines that were elision marks (`...`, `....`, `[...]`, `…`). */
  elided: number[];
  /** Unknown keywords or fields, kept raw: where, and what. */
  unknown: { line: number; token: string; text: string }[];
  /** Records kept that may be wrong (cut off, unfinished): where, why, and the line. */
  warnings: ParseWarning[];
}

export interface ParseWarning {
  /** 1-based line the doubt is about. */
  line: number;
  reason: string;
  text: string;
}

let notes: ParseNotes | null = null;

export function withNotes<T>(fn: () => T): { value: T; notes: ParseNotes } {
  const outer = notes;
  const mine: ParseNotes = { elided: [], unknown: [], warnings: [] };
  notes = mine;
  try {
    return { value: fn(), notes: mine };
  } finally {
    notes = outer;
  }
}

export function noteElided(line: number): void {
  notes?.elided.push(line);
}

/** An unknown keyword or trailing field a parser kept (in `extra`) instead of failing on it. */
export function noteUnknown(line: number, token: string, text: string): void {
  notes?.unknown.push({ line, token, text });
}

/** A record kept that the output cannot vouch for (the CLI prints it on stderr and adds it to the result). */
export function noteWarning(line: number, text: string, reason: string): void {
  notes?.warnings.push({ line, reason, text });
}

export const CUT_OFF = "the output ends on this line without a newline: it may be cut off";

/**
 * Called where a record is made from (or changed by) a line: when that line is the input's last and has no
 * newline after it, the record may be a cut-off line's, and the parse says so.
 */
export function mayBeCut(line: Line): void {
  if (line.unterminated) noteWarning(line.no, line.text, CUT_OFF);
}

/** The notes as one line each, for the CLI's stderr ("" when there are none). */
export function formatNotes(format: string, n: ParseNotes): string {
  const out: string[] = [];
  if (n.elided.length > 0)
    out.push(
      `${format}: skipped ${n.elided.length} elided line${n.elided.length > 1 ? "s" : ""} (line ${n.elided.join(", ")})`,
    );
  for (const u of n.unknown)
    out.push(`${format}: line ${u.line}: kept unknown ${u.token} in extra: ${JSON.stringify(u.text)}`);
  for (const w of n.warnings)
    out.push(`${format}: warning: line ${w.line}: ${w.reason}: ${JSON.stringify(shown(w.text))}`);
  return out.map((l) => `${l}\n`).join("");
}

const shown = (text: string) => (text.length > 160 ? `${text.slice(0, 157)}...` : text);

export interface Line {
  /** 1-based line number in the original input. */
  no: number;
  /** The line with trailing whitespace (tabwriter padding) removed. */
  text: string;
  /** The input's last line, with no newline after it: it may be cut off (see `mayBeCut`). */
  unterminated?: true;
}

/**
 * What no command this suite reads prints inside a line: C0 control characters but tab, DEL, C1 controls,
 * U+FFFD (what invalid UTF-8 decodes to), and a carriage return that does not end the line (CRLF is fine).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this looks for
const BINARY = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\ufffd]/;

/** BINARY without the carriage return (JSON white space; inside a string JSON.parse refuses it). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this looks for
const JSON_BINARY = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffd]/;

/** Throws a ParseError naming the line when it holds binary data or a stray carriage return. */
export function checkText(format: string, text: string, no: number): void {
  const m = BINARY.exec(text);
  if (!m) return;
  const c = m[0].charCodeAt(0);
  const what =
    c === 13
      ? "a carriage return inside the line (line endings mangled?)"
      : c === 0xfffd
        ? "invalid UTF-8 (U+FFFD)"
        : `binary data (0x${c.toString(16).padStart(2, "0")})`;
  throw new ParseError(format, no, text, `${what} at column ${m.index + 1}`);
}

/**
 * kubectl prints this on stderr when `-c` is not given; captured outputs often carry it. Matched whole (the
 * containers listed to the end of the line), so an output line joined to it is not skipped with it.
 */
const KUBECTL_NOISE = /^Defaulted container "[^"]*" out of: [\w.-]+(?: \(\w+\))?(?:, [\w.-]+(?: \(\w+\))?)*$/;
/** True for a line a human elided from an excerpt: `...`, `....`, `[...]`, `(...)`, `…`. */
export function isElision(text: string): boolean {
  return ELISION_LINE.test(text);
}

/** True for lines every text parser skips: blank, kubectl container noise, elisions. */
export function isNoise(text: string): boolean {
  const c = text.charCodeAt(0);
  // Only lines starting with D, ., [, (, …, or white space can be noise: skip the regexes for the rest.
  if (c !== 68 && c !== 46 && c !== 91 && c !== 40 && c !== 0x2026 && c !== 32 && c !== 9 && text.length > 0)
    return false;
  return text.trim() === "" || KUBECTL_NOISE.test(text) || ELISION_LINE.test(text);
}

/** `isNoise`, noting an elision (for the line numbered `no`). */
export function skipLine(text: string, no: number): boolean {
  if (!isNoise(text)) return false;
  if (ELISION_LINE.test(text)) noteElided(no);
  return true;
}

/** Trailing white space, removed in one linear pass (`/\s+$/` is quadratic on a long run of spaces). */
const trimEnd = (s: string) => s.trimEnd();

/**
 * Splits raw output into numbered lines, dropping noise and trailing padding; a line with binary data in it is a
 * ParseError. The last line is marked `unterminated` when the input does not end with a newline.
 */
export function contentLines(format: string, input: string): Line[] {
  const out: Line[] = [];
  const raw = input.split("\n");
  for (let i = 0; i < raw.length; i++) {
    const text = trimEnd(raw[i] as string);
    if (skipLine(text, i + 1)) continue;
    checkText(format, text, i + 1);
    const line: Line = { no: i + 1, text };
    if (i === raw.length - 1) line.unterminated = true;
    out.push(line);
  }
  return out;
}

/**
 * Calls `fn` for every line (no array of the whole input is kept), with noise removed and binary data refused;
 * `unterminated` is true for the input's last line when no newline follows it.
 */
export function forEachContentLine(
  format: string,
  input: string,
  fn: (text: string, no: number, unterminated: boolean) => void,
): void {
  let start = 0;
  let no = 0;
  const len = input.length;
  while (start <= len) {
    let end = input.indexOf("\n", start);
    if (end === -1) end = len;
    no++;
    let stop = end;
    while (stop > start) {
      const c = input.charCodeAt(stop - 1);
      if (c === 32 || c === 9 || c === 13) stop--;
      else break;
    }
    if (stop > start) {
      const text = input.slice(start, stop);
      if (!skipLine(text, no)) {
        checkText(format, text, no);
        fn(text, no, end === len);
      }
    }
    start = end + 1;
  }
}

/**
 * Parses JSON, reporting a syntax error as a ParseError with the line it occurred on. Integers past 2^53 keep
 * their printed decimal (a string), and lines a human elided are skipped and counted (json-scan.ts): JSON.parse
 * reads everything else, fast.
 */
export function parseJsonText(format: string, input: string): unknown {
  const lines = input.split("\n");
  let skipped = 0;
  while (skipped < lines.length && isNoise(lines[skipped] as string) && !isElision(lines[skipped] as string))
    skipped++;
  const body = lines.slice(skipped).join("\n");
  if (body.trim() === "") throw new ParseError(format, 1, "", "empty input, expected JSON");
  // JSON.parse refuses control characters itself, but takes C1 controls and U+FFFD inside a string
  const bin = JSON_BINARY.exec(body);
  if (bin) {
    const lineNo = skipped + body.slice(0, bin.index).split("\n").length;
    checkText(format, (lines[lineNo - 1] ?? "").trimEnd(), lineNo);
  }
  // a run of 16 digits may be an integer JSON.parse would round; an ellipsis may be an elided line
  if (!/(?<![\d.])\d{16}|\.\.\.|…/.test(body)) {
    try {
      return JSON.parse(body);
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      const at = jsonErrorOffset(body);
      const lineNo = skipped + body.slice(0, Math.max(at, 0)).split("\n").length;
      throw new ParseError(format, lineNo, lines[lineNo - 1] ?? "", `invalid JSON (${msg})`);
    }
  }
  try {
    const scan = jsonScan(body);
    for (const l of scan.elided) noteElided(skipped + l);
    return scan.value;
  } catch (err) {
    if (!(err instanceof JsonScanError)) throw err;
    const lineNo = skipped + err.line;
    throw new ParseError(format, lineNo, lines[lineNo - 1] ?? "", `invalid JSON (${err.message})`);
  }
}

/** Where each value of a JSON output starts (1-based lines of `input`, noise before the document skipped); null: not JSON. */
export function jsonLines(input: string): ((path: (string | number)[]) => number | null) | null {
  const lines = input.split("\n");
  let skipped = 0;
  while (skipped < lines.length && isNoise(lines[skipped] as string) && !isElision(lines[skipped] as string))
    skipped++;
  try {
    const scan = jsonScan(lines.slice(skipped).join("\n"));
    return (path) => {
      const n = scan.lineOf(path);
      return n === null ? null : n + skipped;
    };
  } catch {
    return null;
  }
}

export function fail(format: string, line: Line, reason: string): never {
  throw new ParseError(format, line.no, line.text, reason);
}
