import type { CallRecord } from "../exec/record.ts";
import { type EvidenceItem, type Place, shownValue } from "../records/evidence.ts";
import { BundleFiles } from "../records/verify-evidence.ts";

/**
 * The raw outputs a report embeds for one bundle: every output an evidence item points into (a raw file, or a
 * call's stderr), with the call that produced it, so each quoted line links to its place and is highlighted
 * there. A long output is embedded around the lines evidence points at (whole up to MAX_WHOLE lines).
 */
export interface RawOutput {
  /** The output's key: `raw/<topic>/NNN-….txt`, or `calls/<topic>.jsonl#SEQ stderr`. */
  key: string;
  /** Anchor id of the output (and, suffixed `L<n>`, of each line): short, there are thousands of lines. */
  id: string;
  call: CallRecord | null;
  /** Lines shown (1-based numbers), with gaps where a long output is cut; `cited` marks the lines evidence points at. */
  lines: { n: number; text: string; cited: boolean }[];
  total: number;
}

const MAX_WHOLE = 200;
const CONTEXT = 3;
/**
 * At most this many lines of one output are embedded, whatever the evidence cites (issue 45: a 1.2 MB `.gz` whose
 * every line a verdict cited made a report cell take 25 s to open): the first lines and the context of the
 * first cited ones; the output's total says how many it has.
 */
export const MAX_EMBEDDED_LINES = 1000;

export const outputKey = (p: Place) => (p.stream === "stderr" ? `${p.file}#${p.call} stderr` : p.file);

/** The anchor of a place among a column's embedded outputs: the line's, or the whole output's; null: not embedded. */
export function placeAnchor(outputs: Map<string, RawOutput>, p: Place): string | null {
  const o = outputs.get(outputKey(p));
  if (!o) return null;
  return p.line === undefined ? o.id : `${o.id}L${p.line}`;
}

/** The calls of a bundle by their calls/<topic>.jsonl file and sequence number. */
function callOf(files: BundleFiles, p: Place): CallRecord | null {
  if (p.stream === "stderr" && p.call !== undefined) return files.call(p.file, p.call);
  const m = /^raw\/([^/]+)\/(\d+)-/.exec(p.file);
  if (!m) return null;
  return files.call(`calls/${m[1]}.jsonl`, Number(m[2]));
}

/** Every output the evidence points into, in first-cited order, with the lines to embed. */
export function rawOutputs(dir: string, col: number, evidence: EvidenceItem[]): RawOutput[] {
  const files = new BundleFiles(dir);
  const cited = new Map<string, { place: Place; lines: Set<number> }>();
  const add = (p: Place) => {
    if (p.call !== undefined && p.stream !== "stderr") return; // a call's record (exit code, time), not an output
    const k = outputKey(p);
    const e = cited.get(k) ?? { place: p, lines: new Set<number>() };
    if (p.line !== undefined) e.lines.add(p.line);
    cited.set(k, e);
  };
  for (const item of evidence) {
    if ("quote" in item) add(item.at);
    else for (const p of item.from) add(p);
  }
  const out: RawOutput[] = [];
  for (const [key, { place, lines }] of cited) {
    const all = files.outputLines(place);
    if (!all) continue;
    const keep = new Set<number>();
    if (all.length <= MAX_WHOLE) for (let n = 1; n <= all.length; n++) keep.add(n);
    else {
      for (let n = 1; n <= Math.min(10, all.length); n++) keep.add(n);
      for (const c of [...lines].sort((a, b) => a - b)) {
        if (keep.size >= MAX_EMBEDDED_LINES) break;
        for (let n = Math.max(1, c - CONTEXT); n <= Math.min(all.length, c + CONTEXT); n++) keep.add(n);
      }
    }
    out.push({
      key,
      id: `r${col}o${out.length}`,
      call: callOf(files, place),
      lines: [...keep]
        .sort((a, b) => a - b)
        .map((n) => ({ n, text: shownValue(all[n - 1] as string), cited: lines.has(n) })),
      total: all.length,
    });
  }
  return out;
}
