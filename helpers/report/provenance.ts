import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { CallRecord } from "../exec/record.ts";

/** A raw output that holds some of a verdict's evidence lines: the call that produced it and the lines around them. */
export interface RawSource {
  /** Relative to the bundle: raw/<topic>/NNN-….txt */
  file: string;
  target: string;
  command: string;
  exitCode: number | null;
  /** The excerpt: matched lines with a little context, with their line numbers in the file. */
  lines: { n: number; text: string; matched: boolean }[];
}

export interface Provenance {
  sources: RawSource[];
  /** Evidence lines found verbatim in no raw output (a record's summary of several lines, e.g. `key: value`). */
  derived: string[];
}

const CONTEXT = 2;
const MAX_SOURCES = 6;
const MAX_LINES = 40;

/** The calls of one topic in a bundle, with their outputs (read once per bundle). */
export class BundleCalls {
  private readonly cache = new Map<string, { call: CallRecord; lines: string[] }[]>();

  constructor(private readonly dir: string) {}

  of(topic: string): { call: CallRecord; lines: string[] }[] {
    let calls = this.cache.get(topic);
    if (!calls) {
      const file = join(this.dir, "calls", `${topic}.jsonl`);
      calls = existsSync(file)
        ? readFileSync(file, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l) as CallRecord)
            .map((call) => {
              const out = join(this.dir, call.stdoutFile);
              return { call, lines: existsSync(out) ? readFileSync(out, "utf8").split("\n") : [] };
            })
        : [];
      this.cache.set(topic, calls);
    }
    return calls;
  }
}

/**
 * Where a verdict's evidence lines came from: the raw outputs of its topic that contain them (the latest
 * call first: a poll's last read is the one the record used), each as an excerpt with the matched lines.
 */
export function provenance(calls: BundleCalls, topic: string, evidence: string[]): Provenance {
  const wanted = [...new Set(evidence.map((e) => e.trim()).filter((e) => e.length > 0))];
  const found = new Set<string>();
  const sources: RawSource[] = [];
  for (const { call, lines } of [...calls.of(topic)].reverse()) {
    if (sources.length >= MAX_SOURCES) break;
    const hits = new Set<number>();
    lines.forEach((l, i) => {
      const t = l.trim();
      for (const w of wanted)
        if (t.length > 0 && !found.has(w) && (t === w || (w.length >= 12 && t.includes(w)))) hits.add(i);
    });
    if (hits.size === 0) continue;
    for (const i of hits) {
      const t = (lines[i] as string).trim();
      for (const w of wanted) if (t === w || (w.length >= 12 && t.includes(w))) found.add(w);
    }
    const keep = new Set<number>();
    for (const i of hits)
      for (let j = Math.max(0, i - CONTEXT); j <= Math.min(lines.length - 1, i + CONTEXT); j++) keep.add(j);
    sources.push({
      file: call.stdoutFile,
      target: call.target,
      command: call.argv.join(" "),
      exitCode: call.exitCode,
      lines: [...keep]
        .sort((a, b) => a - b)
        .slice(0, MAX_LINES)
        .map((i) => ({ n: i + 1, text: lines[i] as string, matched: hits.has(i) })),
    });
  }
  return { sources, derived: wanted.filter((w) => !found.has(w)) };
}
