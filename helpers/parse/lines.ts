import { ParseError } from "../errors.ts";
import { jsonErrorOffset } from "./json-error.ts";
import { ELISION_LINE, JsonScanError, jsonScan } from "./json-scan.ts";

/**
 * What a parser passed over without failing, for the reader: lines a human elided (skipped and counted) and
 * unknown keywords or trailing fields (kept in the record's `extra`, and reported here). Parsers are pure and
 * synchronous: `withNotes` collects what one parse noted.
 */
export interface ParseNotes {
  /** 1-based lines that were elision marks (`...`, `....`, `[...]`, `…`). */
  elided: number[];
  /** Unknown keywords or fields, kept raw: where, and what. */
  unknown: { line: number; token: string; text: string }[];
}

let notes: ParseNotes | null = null;

export function withNotes<T>(fn: () => T): { value: T; notes: ParseNotes } {
  const outer = notes;
  const mine: ParseNotes = { elided: [], unknown: [] };
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

/** The notes as one line each, for the CLI's stderr ("" when there are none). */
export function formatNotes(format: string, n: ParseNotes): string {
  const out: string[] = [];
  if (n.elided.length > 0)
    out.push(
      `${format}: skipped ${n.elided.length} elided line${n.elided.length > 1 ? "s" : ""} (line ${n.elided.join(", ")})`,
    );
  for (const u of n.unknown)
    out.push(`${format}: line ${u.line}: kept unknown ${u.token} in extra: ${JSON.stringify(u.text)}`);
  return out.map((l) => `${l}\n`).join("");
}

export interface Line {
  /** 1-based line number in the original input. */
  no: number;
  /** The line with trailing whitespace (tabwriter padding) removed. */
  text: string;
}

/** kubectl prints this on stderr when `-c` is not given; captured outputs often carry it. */
const KUBECTL_NOISE = /^Defaulted container "[^"]*" out of: /;
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

/** Splits raw output into numbered lines, dropping noise and trailing padding. */
export function contentLines(input: string): Line[] {
  const out: Line[] = [];
  const raw = input.split("\n");
  for (let i = 0; i < raw.length; i++) {
    const text = (raw[i] as string).replace(/\s+$/, "");
    if (skipLine(text, i + 1)) continue;
    out.push({ no: i + 1, text });
  }
  return out;
}

/** Calls `fn` for every line (no array of the whole input is kept), with noise removed. */
export function forEachContentLine(input: string, fn: (text: string, no: number) => void): void {
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
      if (!skipLine(text, no)) fn(text, no);
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
