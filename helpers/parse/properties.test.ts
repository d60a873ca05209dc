/**
 * Parsers that know when they don't know (issue 26). Every real output we have — the captured samples in
 * ../shared/samples (skipped with the reason when absent) and every raw output of the shipped bundles that a
 * format reads (suites/bundles/**\/raw, `.txt.gz` too) — is damaged the ways pasted output is damaged: cut off
 * anywhere, two lines joined, line endings swapped, bytes injected. The parse of the damaged text must then be
 * one of:
 *   - a ParseError naming a line (exit 2 in the CLI), never another exception;
 *   - a result with a warning (`withNotes(…).notes.warnings`, stderr and `parseWarnings` in the CLI);
 *   - a clean result in which every entry is one of the undamaged output's, and every entry it lost came from
 *     the damaged lines (for a cut: exactly the parse of the complete lines before the cut).
 * "Entries" are the result flattened to its leaves (each object in an array whole, each other value by its
 * path), so a record with one truncated field, a counter that moved, or a record swallowed by its neighbour
 * each count as a wrong entry.
 *
 * Every sample gets every kind of damage; the bundles' outputs (1,300 of them, 34 MB) are sampled: each run draws
 * an output and a damage, runs per format bounded by the bytes they parse, so the whole file takes a few seconds.
 * fast-check draws with a fixed seed; PARSE_PROPERTY_SEED changes it and PARSE_PROPERTY_SCALE multiplies the runs
 * for a deeper search.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ParseError, UserError } from "../errors.ts";
import { SAMPLES_SKIP_REASON, samplesAvailable, samplesFor } from "../samples.ts";
import { FORMATS } from "./index.ts";
import { withNotes } from "./lines.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const BUNDLES = join(ROOT, "suites", "bundles");
const SEED = Number(process.env.PARSE_PROPERTY_SEED ?? 26);
/** PARSE_PROPERTY_SCALE=10 runs ten times as many damages (a deeper search than `npm test` affords). */
const SCALE = Number(process.env.PARSE_PROPERTY_SCALE ?? 1);

/** samples/<dir> → the format that reads it (the samples without a format here are not read by any parser). */
const SAMPLE_FORMATS: Record<string, string> = {
  "bpf-ct-list-global": "bpf-ct-list",
  "bpf-lb-list": "bpf-lb-list",
  "bpftool-net-show": "bpftool-net",
  "config-all": "config",
  "endpoint-get-json": "endpoint-json",
  "iptables-save": "iptables-save",
  "map-list": "map-list",
  "service-list": "service-list",
  "service-list-json": "service-list-json",
  status: "status",
  "status-verbose": "status",
  "tc-filter-show": "tc-filter",
};

/** A call's argv (joined with spaces) → the format of its stdout; the first match wins. */
const RAW_FORMATS: [RegExp, string][] = [
  [/^cilium-dbg bpf lb list --backends\b/, "bpf-lb-backends"],
  [/^cilium-dbg bpf lb list -o json\b/, "bpf-lb-list-json"],
  [/^cilium-dbg bpf lb list\b/, "bpf-lb-list"],
  [/^cilium-dbg service list -o json\b/, "service-list-json"],
  [/^cilium-dbg service list\b/, "service-list"],
  [/^cilium-dbg bpf ct list\b/, "bpf-ct-list"],
  [/^cilium-dbg status -o json\b/, "status-json"],
  [/^cilium-dbg status\b/, "status"],
  [/^cilium-dbg config\b/, "config"],
  [/^cilium-dbg endpoint get \S+ -o json\b/, "endpoint-json"],
  [/^cilium-dbg map list\b/, "map-list"],
  [/^cilium-dbg metrics list -o json\b/, "metrics-json"],
  [/^bpftool -j net\b/, "bpftool-net-json"],
  [/^bpftool net\b/, "bpftool-net"],
  [/^bpftool cgroup\b/, "bpftool-cgroup"],
  [/\bnc -l .*echo "exit=/, "bind-probe"],
  [/^tc filter show\b/, "tc-filter"],
  [/^iptables-save\b/, "iptables-save"],
  [/^ss /, "ss"],
  [/^netstat /, "netstat"],
  [/^cat \/proc\/net\/tcp\b/, "proc-net-tcp"],
  [/^ip route\b/, "ip-route"],
  [/^ip -o addr\b/, "ip-addr"],
  [/^cat \/tmp\/cap\.txt$/, "tcpdump"],
  [/\bget endpointslices\b.* -o json\b/, "endpointslice-json"],
  [/^curl /, "curl"],
];

interface Item {
  format: string;
  /** Where it came from, for the failure message. */
  name: string;
  text: string;
  /** A bundle's output of a call that ended without an exit status: what came before the cut, not a whole capture. */
  cut?: boolean;
}

function* files(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else yield p;
  }
}

/** Every distinct (format, output) pair: the samples, then the bundles' raw outputs. */
function corpus(): Item[] {
  const out: Item[] = [];
  const seen = new Set<string>();
  const add = (format: string, name: string, text: string, cut = false) => {
    const h = createHash("sha1").update(`${format}\u0000${text}`).digest("hex");
    if (seen.has(h)) return;
    seen.add(h);
    out.push({ format, name, text, ...(cut ? { cut } : {}) });
  };
  if (samplesAvailable)
    for (const [dir, format] of Object.entries(SAMPLE_FORMATS))
      for (const s of samplesFor(dir)) add(format, `samples/${dir}/${s.name}`, s.output);
  for (const f of files(BUNDLES)) {
    if (!/\/calls\/[^/]+\.jsonl$/.test(f)) continue;
    const bundle = dirname(dirname(f));
    for (const l of readFileSync(f, "utf8").split("\n")) {
      if (l === "") continue;
      const call = JSON.parse(l) as { argv?: string[]; stdoutFile?: string; exitCode?: unknown };
      if (!call.stdoutFile || !Array.isArray(call.argv)) continue;
      const argv = call.argv.join(" ");
      const format = RAW_FORMATS.find(([re]) => re.test(argv))?.[1];
      if (!format) continue;
      const path = join(bundle, call.stdoutFile);
      if (!existsSync(path)) continue;
      const bytes = readFileSync(path);
      const text = (path.endsWith(".gz") ? gunzipSync(bytes) : bytes).toString("utf8");
      // curl's exit status is the call's, not in its output: the text form carries it on an `exit=N` line
      // a call that ended without an exit status (timed out, its exec closed) kept only what came before: not whole
      const cut = call.exitCode === null && format !== "curl";
      add(format, relative(ROOT, path), format === "curl" ? `exit=${call.exitCode}\n${text}` : text, cut);
    }
  }
  return out;
}

type Outcome =
  | { kind: "error"; error: unknown }
  | { kind: "warned"; warnings: string[]; entries: string[] }
  | { kind: "clean"; entries: string[] };

/** JSON with sorted keys, so equal records are equal strings. */
function canon(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canon).join(",")}]`;
  if (v && typeof v === "object")
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canon((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(v) ?? "undefined";
}

/** The result's leaves: each element of an array whole (with the array's path), every other value by its path. */
function entries(v: unknown, path = "", out: string[] = []): string[] {
  if (Array.isArray(v)) for (const e of v) out.push(`${path}[]=${canon(e)}`);
  else if (v && typeof v === "object")
    for (const k of Object.keys(v)) entries((v as Record<string, unknown>)[k], `${path}.${k}`, out);
  else out.push(`${path}=${JSON.stringify(v)}`);
  return out;
}

function run(format: string, text: string): Outcome {
  const spec = FORMATS[format];
  if (!spec) throw new Error(`no format ${format}`);
  try {
    const { value, notes } = withNotes(() => spec.parse(text));
    if (notes.warnings.length > 0)
      return {
        kind: "warned",
        warnings: notes.warnings.map((w) => `line ${w.line}: ${w.reason}`),
        entries: entries(value),
      };
    return { kind: "clean", entries: entries(value) };
  } catch (error) {
    return { kind: "error", error };
  }
}

/** Entries of `a` not in `b`, as multisets. */
function minus(a: string[], b: string[]): string[] {
  const left = new Map<string, number>();
  for (const e of b) left.set(e, (left.get(e) ?? 0) + 1);
  const out: string[] = [];
  for (const e of a) {
    const n = left.get(e) ?? 0;
    if (n > 0) left.set(e, n - 1);
    else out.push(e);
  }
  return out;
}

const clip = (s: string) => (s.length > 300 ? `${s.slice(0, 297)}...` : s);

/** A ParseError/UserError is the expected way to refuse; anything else (TypeError, RangeError) is a crash. */
function assertRefusal(o: Outcome, what: string): void {
  if (o.kind !== "error") return;
  const e = o.error;
  if (!(e instanceof ParseError) && !(e instanceof UserError))
    throw new Error(`${what}: crashed instead of naming a line: ${e instanceof Error ? e.stack : String(e)}`);
}

interface Damaged {
  text: string;
  /** The undamaged output with the damaged lines blanked (same line numbers): what a clean parse may lose. */
  without: string;
  describe: string;
}

/** `lines` of `text` replaced by empty lines. */
function blank(text: string, lines: Set<number>): string {
  return text
    .split("\n")
    .map((l, i) => (lines.has(i) ? "" : l))
    .join("\n");
}

/**
 * A clean parse of damaged text is right only when it holds nothing the undamaged parse lacks and loses only
 * what the damaged lines carried.
 */
function judge(item: Item, damage: Damaged, whole: Outcome): void {
  const what = `${item.format} ${item.name}: ${damage.describe}`;
  const o = run(item.format, damage.text);
  assertRefusal(o, what);
  if (o.kind !== "clean" || whole.kind === "error") return;
  const ref = run(item.format, damage.without);
  // what the parse has must be the output's, or what it is without the damaged lines (a field they set, unset)
  const extra = minus(o.entries, whole.entries).filter(
    (e) => ref.kind === "error" || !ref.entries.includes(e),
  );
  if (extra.length > 0)
    throw new Error(
      `${what}: a clean parse with an entry the output does not have: ${clip(extra[0] as string)}`,
    );
  if (ref.kind !== "clean") return;
  const lost = minus(minus(whole.entries, o.entries), minus(whole.entries, ref.entries));
  if (lost.length > 0)
    throw new Error(`${what}: a clean parse lost an entry of an undamaged line: ${clip(lost[0] as string)}`);
}

/**
 * A cut: clean only when whatever the partial last line added is an entry of the whole output (intact), and
 * nothing it took away from the complete lines before it was.
 */
function judgeCut(item: Item, at: number, whole: Outcome): void {
  const text = item.text.slice(0, at);
  const partial = text.slice(text.lastIndexOf("\n") + 1);
  const what = `${item.format} ${item.name}: cut at ${at} of ${item.text.length} (last line ${JSON.stringify(clip(partial))})`;
  const o = run(item.format, text);
  assertRefusal(o, what);
  if (o.kind !== "clean" || whole.kind === "error") return;
  const ref = run(item.format, text.slice(0, text.length - partial.length));
  const before = ref.kind === "error" ? [] : ref.entries;
  const added = minus(minus(o.entries, before), whole.entries);
  if (added.length > 0)
    throw new Error(
      `${what}: a clean parse took an entry from the cut-off line: ${clip(added[0] as string)}`,
    );
  const removed = minus(before, o.entries).filter((e) => whole.entries.includes(e));
  if (removed.length > 0)
    throw new Error(`${what}: the cut-off line changed an intact entry: ${clip(removed[0] as string)}`);
}

/** Bytes no output here carries: C0 controls, DEL, C1 controls, what invalid UTF-8 decodes to, a lone CR. */
const BAD_BYTES = [
  ..."\u0000\u0001\u0002\u0007\u0008\u000b\u000c\u000e\u001b\u001f\u007f\u0080\u0085\u009b\u009f\ufffd\r",
];

const items = corpus();
const byFormat = new Map<string, Item[]>();
for (const i of items) byFormat.set(i.format, [...(byFormat.get(i.format) ?? []), i]);

const KINDS = ["cut", "join", "endings", "inject"] as const;

/** One damage, drawn by fast-check: its kind and the numbers that place it (taken modulo the output's size). */
const DAMAGE = fc.record({
  kind: fc.constantFrom(...KINDS),
  at: fc.nat(),
  sep: fc.constantFrom("", " ", "\r"),
  byte: fc.constantFrom(...BAD_BYTES),
});
type Damage = typeof DAMAGE extends fc.Arbitrary<infer T> ? T : never;

/** Applies one damage to `item` and judges the parse (`whole`: the undamaged output's parse). */
function check(item: Item, whole: Outcome, d: Damage): void {
  const text = item.text;
  if (d.kind === "cut") {
    if (text.length > 1) judgeCut(item, 1 + (d.at % (text.length - 1)), whole);
    return;
  }
  if (d.kind === "join") {
    const lines = text.split("\n");
    if (lines.length < 2) return;
    const i = d.at % (lines.length - 1);
    // joining a blank line moves the other up or leaves it: nothing to damage
    if ((lines[i] as string).trim() === "" || (lines[i + 1] as string).trim() === "") return;
    lines[i] = `${lines[i]}${d.sep}${lines[i + 1]}`;
    lines[i + 1] = "";
    judge(
      item,
      {
        text: lines.join("\n"),
        without: blank(text, new Set([i, i + 1])),
        describe: `line ${i + 1} joined with line ${i + 2} by ${JSON.stringify(d.sep)}`,
      },
      whole,
    );
    return;
  }
  if (d.kind === "endings") {
    if (!text.includes("\n")) return;
    // CRLF throughout reads the same as LF
    const crlf = run(item.format, text.replace(/\n/g, "\r\n"));
    assertRefusal(crlf, `${item.format} ${item.name}: CRLF`);
    if (whole.kind === "clean") expect(crlf, `${item.format} ${item.name}: CRLF line endings`).toEqual(whole);
    // CR alone (old Mac): the whole output on one line
    judge(item, { text: text.replace(/\n/g, "\r"), without: "", describe: "every LF replaced by CR" }, whole);
    return;
  }
  const at = d.at % (text.length + 1);
  const line = text.slice(0, at).split("\n").length - 1;
  judge(
    item,
    {
      text: `${text.slice(0, at)}${d.byte}${text.slice(at)}`,
      without: blank(text, new Set([line])),
      describe: `${JSON.stringify(d.byte)} injected at ${at} (line ${line + 1})`,
    },
    whole,
  );
}

/** The undamaged parse of each output, computed once. */
const wholes = new Map<Item, Outcome>();
function wholeOf(item: Item): Outcome {
  let o = wholes.get(item);
  if (!o) {
    o = run(item.format, item.text);
    assertRefusal(o, `${item.format} ${item.name}: undamaged`);
    wholes.set(item, o);
  }
  return o;
}

/**
 * The bundles' raw outputs of one format are sampled: each run draws an output and a damage. Runs are bounded
 * by BUDGET bytes of damaged text per format (each run parses it and an undamaged reference), between MIN_RUNS
 * and MAX_RUNS, so the whole file stays within a few seconds.
 */
const BUDGET = 1_500_000;
/**
 * Every output up to this size is parsed undamaged (about 1,190 of the 1,300 distinct ones; the 110 larger, 25 MB of measure-scale
 * service lists, iptables dumps and conntrack tables, are parsed whole by the replay project's records, and
 * sampled for damage here).
 */
const WHOLE_MAX = 64 * 1024;
const MIN_RUNS = 8;
const MAX_RUNS = 60;

describe(`parsers on damaged real outputs (${items.length} distinct outputs)`, () => {
  const samples = items.filter((i) => i.name.startsWith("samples/"));
  it.skipIf(!samplesAvailable)(
    `every sample, cut, joined, with line endings swapped and bytes injected${samplesAvailable ? "" : ` (skipped: ${SAMPLES_SKIP_REASON})`}`,
    () => {
      expect(samples.length).toBeGreaterThan(20);
      samples.forEach((item, n) => {
        const whole = wholeOf(item);
        for (const kind of KINDS)
          fc.assert(
            fc.property(DAMAGE, (d) => check(item, whole, { ...d, kind })),
            { numRuns: kind === "endings" ? 1 : 12 * SCALE, seed: SEED + n, includeErrorInReport: true },
          );
      });
    },
  );

  it(`every output up to ${WHOLE_MAX / 1024} KB parses undamaged; the bundles' (whole captures, not cut by a timeout) without a warning`, () => {
    const formats = new Set(items.filter((i) => !i.name.startsWith("samples/")).map((i) => i.format));
    expect([...formats].sort()).toEqual(
      expect.arrayContaining(["bpf-ct-list", "bpf-lb-list", "config", "iptables-save", "status", "tcpdump"]),
    );
    const refused: string[] = [];
    const warned: string[] = [];
    for (const item of items) {
      // a capture cut by its call's timeout ends in a partial line, which a parser may refuse, naming it: the
      // damage tests below cover cut outputs; this one holds whole ones
      if (item.text.length > WHOLE_MAX || item.cut) continue;
      const o = wholeOf(item);
      if (o.kind === "error") refused.push(`${item.name}: ${(o.error as Error).message}`);
      if (o.kind === "warned" && !item.name.startsWith("samples/"))
        warned.push(`${item.name}: ${o.warnings[0]}`);
    }
    expect(refused).toEqual([]);
    expect(warned).toEqual([]);
  });

  for (const [format, list] of [...byFormat].sort((a, b) => a[0].localeCompare(b[0]))) {
    const raw = list.filter((i) => !i.name.startsWith("samples/"));
    if (raw.length === 0) continue;
    const mean = raw.reduce((a, i) => a + i.text.length, 0) / raw.length;
    const numRuns = Math.max(MIN_RUNS, Math.min(MAX_RUNS, Math.floor(BUDGET / (2 * Math.max(mean, 1)))));
    it(`${format}: ${numRuns} damaged outputs drawn from the bundles' ${raw.length}`, () => {
      fc.assert(
        fc.property(fc.nat({ max: raw.length - 1 }), DAMAGE, (k, d) => {
          const item = raw[k] as Item;
          check(item, wholeOf(item), d);
        }),
        { numRuns: numRuns * SCALE, seed: SEED, includeErrorInReport: true },
      );
    });
  }
});
