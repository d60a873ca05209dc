import { ParseError } from "../errors.ts";
import { jsonErrorOffset } from "./json-error.ts";

export interface Line {
  /** 1-based line number in the original input. */
  no: number;
  /** The line with trailing whitespace (tabwriter padding) removed. */
  text: string;
}

/** kubectl prints this on stderr when `-c` is not given; captured outputs often carry it. */
const KUBECTL_NOISE = /^Defaulted container "[^"]*" out of: /;
/** Author or tool elisions inside excerpts: `...`, `[...]`, `…`. */
const ELISION = /^\s*(\.\.\.|\[\.\.\.\]|…)\s*$/;

/** True for lines every text parser skips: blank, kubectl container noise, elisions. */
export function isNoise(text: string): boolean {
  const c = text.charCodeAt(0);
  // Only lines starting with D, ., [, …, or white space can be noise: skip the regexes for the rest.
  if (c !== 68 && c !== 46 && c !== 91 && c !== 0x2026 && c !== 32 && c !== 9 && text.length > 0)
    return false;
  return text.trim() === "" || KUBECTL_NOISE.test(text) || ELISION.test(text);
}

/** Splits raw output into numbered lines, dropping noise and trailing padding. */
export function contentLines(input: string): Line[] {
  const out: Line[] = [];
  const raw = input.split("\n");
  for (let i = 0; i < raw.length; i++) {
    const text = (raw[i] as string).replace(/\s+$/, "");
    if (isNoise(text)) continue;
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
      if (!isNoise(text)) fn(text, no);
    }
    start = end + 1;
  }
}

/** Parses JSON, reporting a syntax error as a ParseError with the line it occurred on. */
export function parseJsonText(format: string, input: string): unknown {
  const lines = input.split("\n");
  let skipped = 0;
  while (skipped < lines.length && isNoise(lines[skipped] as string)) skipped++;
  const body = lines.slice(skipped).join("\n");
  if (body.trim() === "") throw new ParseError(format, 1, "", "empty input, expected JSON");
  try {
    return JSON.parse(body);
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    const at = jsonErrorOffset(body);
    const lineNo = skipped + body.slice(0, Math.max(at, 0)).split("\n").length;
    throw new ParseError(format, lineNo, lines[lineNo - 1] ?? "", `invalid JSON (${msg})`);
  }
}

export function fail(format: string, line: Line, reason: string): never {
  throw new ParseError(format, line.no, line.text, reason);
}
