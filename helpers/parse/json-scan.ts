/**
 * One pass over JSON text that JSON.parse cannot make: every integer keeps its exact printed value (past 2^53 it
 * stays the decimal string it was printed as, like the u64 fields of the text formats), and the line every value
 * starts on is known (an object member's: the line of its name), so evidence can quote it at its place.
 *
 * Lines a human elided (`...`, `[...]`, `…`) are skipped and counted; a comma left dangling before `]` or `}` by
 * such an elision is accepted, and only then.
 */
export type JsonPath = (string | number)[];

export class JsonScanError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
    this.name = "JsonScanError";
  }
}

/** A line that is nothing but an elision mark: `...`, `....`, `[...]`, `(...)`, `…`. */
export const ELISION_LINE = /^\s*(?:\.{3,}|…+|\[\s*(?:\.{3,}|…)\s*\]|\(\s*(?:\.{3,}|…)\s*\))\s*$/;

/** No output this suite reads nests deeper than a few levels; 512 is far from both that and the stack's limit. */
const MAX_DEPTH = 512;

/**
 * Where each value starts, in a tree beside the value (one small node per value: keying every value by its
 * whole path, as this scan first did, cost most of its time on the API's Pod lists).
 */
interface LineNode {
  line: number;
  kids: Record<string, LineNode> | LineNode[] | null;
}

export interface JsonScan {
  value: unknown;
  /** 1-based lines that were elision marks, skipped. */
  elided: number[];
  lineOf(path: JsonPath): number | null;
}

export function jsonScan(input: string): JsonScan {
  const elided: number[] = [];
  // blank the elision lines (keeping their newlines, so line numbers stay those of the input)
  let text = input;
  if (/(\.\.\.|…)/.test(input)) {
    const lines = input.split("\n");
    lines.forEach((l, i) => {
      if (ELISION_LINE.test(l)) {
        elided.push(i + 1);
        lines[i] = "";
      }
    });
    if (elided.length > 0) text = lines.join("\n");
  }
  const root: LineNode = { line: 0, kids: null };
  let i = 0;
  let line = 1;
  const n = text.length;
  const fail = (why: string): never => {
    throw new JsonScanError(line, why);
  };
  const ws = () => {
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === 10) line++;
      else if (c !== 32 && c !== 9 && c !== 13) break;
    }
  };
  const str = (): string => {
    const start = i;
    i++;
    let escaped = false;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === 92) {
        escaped = true;
        i++;
      } else if (c === 34) break;
      else if (c === 10) fail("unterminated string");
      // as JSON.parse: a control character inside a string must be escaped
      else if (c < 32) fail(`control character 0x${c.toString(16).padStart(2, "0")} in a string`);
    }
    if (i >= n) fail("unterminated string");
    i++;
    const raw = text.slice(start, i);
    return escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
  };
  const num = (): number | string => {
    const m = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
    m.lastIndex = i;
    const r = m.exec(text);
    if (!r) return fail(`unexpected ${JSON.stringify(text[i])}`);
    i = m.lastIndex;
    const v = Number(r[0]);
    // an integer past 2^53 keeps its printed decimal; fractions and exponents are doubles as printed
    if (r[1] === undefined && r[2] === undefined && !Number.isSafeInteger(v)) return r[0];
    return v;
  };
  /** How deep the value being read is nested: past MAX_DEPTH the input is not an output (and the stack would end). */
  let depth = 0;
  const value = (at: LineNode): unknown => {
    if (++depth > MAX_DEPTH) fail(`nested deeper than ${MAX_DEPTH} levels`);
    try {
      return member(at);
    } finally {
      depth--;
    }
  };
  const member = (at: LineNode): unknown => {
    ws();
    if (i >= n) return fail("unexpected end of input");
    // an object member's line is its name's, set by the object; any other value's is where it starts
    if (at.line === 0) at.line = line;
    const c = text[i];
    if (c === "{") {
      i++;
      const out: Record<string, unknown> = {};
      const kids: Record<string, LineNode> = Object.create(null);
      at.kids = kids;
      ws();
      if (text[i] === "}") {
        i++;
        return out;
      }
      for (;;) {
        ws();
        if (text[i] === "}" && elided.length > 0) {
          i++;
          return out;
        }
        if (text[i] !== '"') fail("expected a member name");
        const nameLine = line;
        const name = str();
        const child: LineNode = { line: nameLine, kids: null };
        kids[name] = child;
        ws();
        if (text[i] !== ":") fail("expected `:`");
        i++;
        // as JSON.parse: `__proto__` is a member like any other, never the object's prototype
        if (name === "__proto__")
          Object.defineProperty(out, name, {
            value: value(child),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        else out[name] = value(child);
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return out;
        }
        fail("expected `,` or `}`");
      }
    }
    if (c === "[") {
      i++;
      const out: unknown[] = [];
      const kids: LineNode[] = [];
      at.kids = kids;
      ws();
      if (text[i] === "]") {
        i++;
        return out;
      }
      for (;;) {
        ws();
        if (text[i] === "]" && elided.length > 0) {
          i++;
          return out;
        }
        const child: LineNode = { line: 0, kids: null };
        kids.push(child);
        out.push(value(child));
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return out;
        }
        fail("expected `,` or `]`");
      }
    }
    if (c === '"') return str();
    if (text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    if (text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    return num();
  };
  const v = value(root);
  ws();
  if (i < n) fail(`unexpected ${JSON.stringify(text[i])} after the document`);
  const lineOf = (path: JsonPath): number | null => {
    let node: LineNode | undefined = root;
    for (const step of path) {
      const kids: LineNode["kids"] = node.kids;
      if (!kids) return null;
      node = Array.isArray(kids)
        ? /^\d+$/.test(String(step))
          ? kids[Number(step)]
          : undefined
        : Object.hasOwn(kids, String(step))
          ? kids[String(step)]
          : undefined;
      if (!node) return null;
    }
    return node.line;
  };
  return { value: v, elided, lineOf };
}
