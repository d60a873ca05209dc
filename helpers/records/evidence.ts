import type { ExecResult } from "../exec/types.ts";
import type { JsonPath } from "../parse/json-scan.ts";
import { jsonLines } from "../parse/lines.ts";

/**
 * Evidence a reader can check: every item is either a raw line quoted verbatim at its place in the bundle, or a
 * value derived from places it names. Paths are relative to the bundle.
 */
export interface Place {
  /**
   * raw/<topic>/NNN-….txt (a call's stdout), calls/<topic>.jsonl (with `call` and `stream`: that call's
   * stderr), or another file of the bundle (baseline/…).
   */
  file: string;
  /**
   * The call's sequence number in calls/<topic>.jsonl: with `stream`, the place is in its stderr; without, it is
   * the call's record itself (its exit code, its recorded time).
   */
  call?: number;
  stream?: "stderr";
  /** 1-based line. Absent only among a derived value's sources: the whole output (what an absence was read from). */
  line?: number;
}

export type LinePlace = Place & { line: number };

export interface Quote {
  /** The line exactly as the file holds it (trailing padding included). */
  quote: string;
  at: LinePlace;
}

export interface Derived {
  /** A value the suite computed (a count, a difference, a summary), in words. */
  derived: string;
  /** The places it was computed from: never empty. */
  from: Place[];
}

export type EvidenceItem = Quote | Derived;

/** Where a call's output is when it was not recorded into a bundle (unit tests, the kernel lab). */
export const NOT_RECORDED = "(not recorded)";

/** A call's record in calls/<topic>.jsonl (its exit code and recorded time): what a derived value may cite. */
export function callPlace(r: ExecResult): Place {
  return r.recorded
    ? { file: `calls/${r.recorded.topic}.jsonl`, call: r.recorded.seq }
    : { file: NOT_RECORDED };
}

interface Segment {
  where: Omit<Place, "line">;
  /** 0-based index, in the text, of the segment's first line. */
  first: number;
}

/**
 * A command's output with its place in the bundle: record builders quote its lines, and the quote carries the
 * file and line it is at. Several outputs read as one (iptables-save and iptables-legacy-save) keep each line's
 * own file.
 */
export class RawText {
  private cached: string[] | null = null;
  private json: ((path: JsonPath) => number | null) | null | undefined;

  private constructor(
    readonly text: string,
    private readonly segments: Segment[],
  ) {}

  static of(text: string, where: Omit<Place, "line">): RawText {
    return new RawText(text, [{ where, first: 0 }]);
  }

  /** A call's stdout, at its raw/ file. */
  static stdout(r: ExecResult): RawText {
    return RawText.of(r.stdout, { file: r.recorded?.stdoutFile ?? NOT_RECORDED });
  }

  /** A call's stderr, in its calls/<topic>.jsonl line. */
  static stderr(r: ExecResult): RawText {
    return RawText.of(
      r.stderr,
      r.recorded
        ? { file: `calls/${r.recorded.topic}.jsonl`, call: r.recorded.seq, stream: "stderr" }
        : { file: NOT_RECORDED, stream: "stderr" },
    );
  }

  /** Outputs read one after the other; each line keeps its own place. */
  static concat(parts: RawText[]): RawText {
    let text = "";
    const segments: Segment[] = [];
    for (const p of parts) {
      if (text !== "" && !text.endsWith("\n")) text += "\n";
      const first = text === "" ? 0 : text.split("\n").length - 1;
      for (const s of p.segments) segments.push({ where: s.where, first: first + s.first });
      text += p.text;
    }
    return new RawText(text, segments);
  }

  get lines(): string[] {
    if (!this.cached) this.cached = this.text.split("\n");
    return this.cached;
  }

  /** The place of line `n` (1-based, in this text). */
  place(n: number): LinePlace {
    let seg = this.segments[0] as Segment;
    for (const s of this.segments) if (s.first < n) seg = s;
    return { ...seg.where, line: n - seg.first };
  }

  /** Line `n` (1-based) quoted verbatim at its place. */
  quote(n: number): Quote {
    const text = this.lines[n - 1];
    if (text === undefined)
      throw new Error(`no line ${n} in ${this.place(1).file} (${this.lines.length} lines)`);
    return { quote: text, at: this.place(n) };
  }

  /** Every line that satisfies `pred`, quoted. */
  quotes(pred: (line: string, n: number) => boolean): Quote[] {
    const out: Quote[] = [];
    this.lines.forEach((l, i) => {
      if (pred(l, i + 1)) out.push(this.quote(i + 1));
    });
    return out;
  }

  /** The first line that satisfies `pred`, quoted; null when none does. */
  find(pred: (line: string, n: number) => boolean): Quote | null {
    const i = this.lines.findIndex((l, k) => pred(l, k + 1));
    return i < 0 ? null : this.quote(i + 1);
  }

  /** Every line that is not blank, quoted (what `| wc -l` or a reader counts as the output). */
  nonBlank(): Quote[] {
    return this.quotes((l) => l.trim() !== "");
  }

  /** The line where a JSON value starts (its member name for an object member); null when the path is absent. */
  jsonLine(path: JsonPath): number | null {
    if (this.json === undefined) this.json = jsonLines(this.text);
    return this.json ? this.json(path) : null;
  }

  /** The JSON value at `path` quoted at its line; null when absent. */
  jsonQuote(path: JsonPath): Quote | null {
    const n = this.jsonLine(path);
    return n === null ? null : this.quote(n);
  }

  /** The whole output(s): what a derived absence names as its source. */
  sources(): Place[] {
    return this.segments.map((s) => ({ ...s.where }));
  }
}

/** A parsed output with the output itself: builders read the one and quote the other. */
export interface Read<T> {
  parsed: T;
  raw: RawText;
}

export function read<T>(raw: RawText, parse: (text: string) => T): Read<T> {
  return { parsed: parse(raw.text), raw };
}

type Source = EvidenceItem | Place | RawText | null | undefined | Source[];

function placeKey(p: Place): string {
  return `${p.file}#${p.call ?? ""}:${p.line ?? ""}`;
}

/** The places behind some evidence: a quote's place, a derived value's sources, an output's files. */
export function placesOf(...sources: Source[]): Place[] {
  const out = new Map<string, Place>();
  const add = (s: Source): void => {
    if (s === null || s === undefined) return;
    if (Array.isArray(s)) {
      for (const x of s) add(x);
      return;
    }
    if (s instanceof RawText) {
      for (const p of s.sources()) out.set(placeKey(p), p);
      return;
    }
    if ("quote" in s) out.set(placeKey(s.at), s.at);
    else if ("derived" in s) for (const p of s.from) out.set(placeKey(p), p);
    else out.set(placeKey(s), s);
  };
  for (const s of sources) add(s);
  return [...out.values()];
}

/** A value the suite computed, with the places it came from (quotes, other derived values, whole outputs). */
export function derive(text: string, ...sources: Source[]): Derived {
  return { derived: text, from: placesOf(...sources) };
}

export function isQuote(e: EvidenceItem): e is Quote {
  return "quote" in e;
}

export function showPlace(p: Place): string {
  const where =
    p.stream === "stderr"
      ? `${p.file}#${p.call ?? "?"} stderr`
      : p.call !== undefined
        ? `${p.file}#${p.call}`
        : p.file;
  return p.line === undefined ? where : `${where}:${p.line}`;
}

/**
 * How much of one quoted line (or derived value) a message, a log, a JUnit report or a step summary shows (issue
 * 45): a raw line is as long as the output it is in (a bundle's 30 KB `.gz` held a 30-million-character line,
 * quoted twice into every failure: 60 MB of stdout, 120 MB of JUnit, 1.1 GB of memory). The evidence keeps the
 * line whole (it is checked against its file); what is shown stops here, saying how much more the file has.
 */
export const SHOWN_VALUE_CHARS = 1000;

/** `s` cut at SHOWN_VALUE_CHARS, with how many characters were left out; unchanged when it fits. */
export function shownValue(s: string, cap = SHOWN_VALUE_CHARS): string {
  if (s.length <= cap) return s;
  return `${s.slice(0, cap)} … (${s.length - cap} more characters, in the bundle)`;
}

/**
 * What one command may print of verdicts' messages in all (issue 45): each message is bounded (its values cut,
 * its items counted: helpers/properties/judge.ts), but a folder of bundles multiplies them. Past this many
 * characters, a message shows its first line and says where the rest is.
 */
export const MESSAGES_RUN_CHARS = 2 * 1024 * 1024;

/** The messages of one command's run, together under MESSAGES_RUN_CHARS (check's text, its JUnit report). */
export class MessageBudget {
  private left: number;
  private held = 0;

  constructor(total = MESSAGES_RUN_CHARS) {
    this.left = total;
  }

  /** `message` whole while there is room; past it, its first line and a note. */
  take(message: string): string {
    if (message.length <= this.left) {
      this.left -= message.length;
      return message;
    }
    this.left = 0;
    this.held++;
    const first = shownValue(message.split("\n", 1)[0] as string);
    return `${first}\n  (the rest not shown: this run printed ${MESSAGES_RUN_CHARS / (1024 * 1024)} MiB of messages; \`check\` of this bundle alone, or \`report\`, has it)`;
  }

  /** How many messages were cut short. */
  get cut(): number {
    return this.held;
  }
}

/** One line for a message or a log: `raw/…:12  <the line>`, or `<derived> ← raw/…:3, raw/…:5`, each value cut. */
export function showItem(e: EvidenceItem): string {
  if (isQuote(e)) return `${showPlace(e.at)}  ${shownValue(e.quote)}`;
  const from =
    e.from.length > 20
      ? [...e.from.slice(0, 20).map(showPlace), `${e.from.length - 20} more`]
      : e.from.map(showPlace);
  return `${shownValue(e.derived)}  ← ${from.join(", ") || "(no source)"}`;
}

/** True for an item in this format (bundles recorded before issue 19 hold plain strings). */
export function isEvidenceItem(x: unknown): x is EvidenceItem {
  if (!x || typeof x !== "object") return false;
  const o = x as Record<string, unknown>;
  if (typeof o.quote === "string") {
    const at = o.at as Record<string, unknown> | undefined;
    return !!at && typeof at.file === "string" && typeof at.line === "number";
  }
  return typeof o.derived === "string" && Array.isArray(o.from);
}
