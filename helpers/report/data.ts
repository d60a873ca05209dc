/**
 * The report's evidence, held once and rendered on open (issue 27): each bundle's verdicts (expected vs
 * observed, the message, the evidence lines with their places) and the raw outputs the evidence points into go
 * into one JSON document whose strings are interned (a raw line that several bundles printed is held once),
 * gzipped and base64-encoded into a data attribute of the page. The page's own script decodes it
 * (DecompressionStream) and builds the DOM from it with textContent only, so a bundle's string never becomes
 * markup there either; base64 cannot end the attribute it sits in. Six full bundles took 5.4 MB as markup.
 */
import { gunzipSync, gzipSync } from "node:zlib";
import type { Verdict } from "../properties/judge.ts";
import { skipReason } from "../properties/judge.ts";
import type { Property } from "../properties/types.ts";
import {
  type EvidenceItem,
  type Place,
  SHOWN_VALUE_CHARS,
  shownValue,
  showPlace,
} from "../records/evidence.ts";
import { outputKey, placeAnchor, type RawOutput } from "./provenance.ts";
import { shownValues } from "./values.ts";

/** A place: its text (string index) and the anchor of its line among the embedded outputs (absent: not embedded). */
export interface DataPlace {
  p: number;
  a?: string;
}

export type DataEvidence =
  | { q: number; at: DataPlace }
  /** a derived value, the places it names (at most REPORT_EVIDENCE_ITEMS; `more` counts the rest), its call records */
  | { d: number; f: DataPlace[]; more?: number; calls: number };

/** One verdict: every text is an index into the string table. */
export interface DataVerdict {
  /** status */
  s: Verdict["status"];
  /** observed (the real value), expected (the real value that matched, when a pattern held) and the pattern */
  o: number;
  x: number;
  pt?: number;
  /** the message without its evidence lines (they are listed), a skip's reason, a note, the configuration */
  m: number;
  r?: number;
  n?: number;
  cf?: number;
  ev: DataEvidence[];
  /** the embedded outputs the evidence cites, by their index among the bundle's outputs */
  src: number[];
}

/** One embedded raw output: key, the call that printed it, its lines (1-based number, text, cited: 0/1). */
export interface DataOutput {
  k: number;
  c: number;
  t: number;
  l: number[];
}

export interface ReportData {
  /** The string table. */
  S: string[];
  /** Per property, in the report's order of input.properties: its claim, source and why. */
  P: { claim: number; src: number; why: number }[];
  /** Per bundle: its label, its verdict per property (null: not judged there) and its outputs. */
  C: { label: number; v: (DataVerdict | null)[]; o: DataOutput[] }[];
}

export interface DataColumn {
  label: string;
  verdicts: Map<string, Verdict>;
  raw: Map<string, RawOutput>;
}

/** The command that printed an output, where it ran and its exit code, in one line. */
export function callText(o: RawOutput): string {
  if (!o.call) return "";
  const argv = Array.isArray(o.call.argv) ? o.call.argv.map(String).join(" ") : String(o.call.argv);
  return `${argv.slice(0, 160)} on ${String(o.call.target)}, exit ${String(o.call.exitCode ?? "none")}`;
}

/**
 * Evidence items one verdict's cell lists, and places one derived item names (issue 45): a property over a large
 * output cites every line it counted, and a cell of a million items took the page 25 s to open.
 */
export const REPORT_EVIDENCE_ITEMS = 200;

/** The report's data: every string interned once. */
export function reportData(
  properties: Pick<Property, "id" | "claim" | "why" | "source">[],
  sourceOf: (p: Pick<Property, "id" | "claim" | "why" | "source">) => string,
  columns: DataColumn[],
): ReportData {
  const S: string[] = [];
  const index = new Map<string, number>();
  const I = (s: unknown): number => {
    const t = typeof s === "string" ? s : s === undefined || s === null ? "" : String(s);
    let i = index.get(t);
    if (i === undefined) {
      i = S.push(t) - 1;
      index.set(t, i);
    }
    return i;
  };
  const C = columns.map((c) => {
    const outputs = [...c.raw.values()];
    const order = new Map(outputs.map((o, i) => [o.key, i]));
    const place = (p: Place): DataPlace => {
      const a = placeAnchor(c.raw, p);
      return a ? { p: I(showPlace(p)), a } : { p: I(showPlace(p)) };
    };
    // each text shown cut (shownValue), a derived value's places and a verdict's items counted past their caps
    const evidence = (e: EvidenceItem): DataEvidence => {
      if ("quote" in e) return { q: I(shownValue(e.quote)), at: place(e.at) };
      const from = e.from.filter((p) => p.call === undefined || p.stream === "stderr");
      const f = from.slice(0, REPORT_EVIDENCE_ITEMS).map(place);
      const more = from.length - f.length;
      return {
        d: I(shownValue(e.derived)),
        f,
        ...(more > 0 ? { more } : {}),
        calls: e.from.length - from.length,
      };
    };
    const evidenceOf = (v: Verdict): DataEvidence[] => {
      const items = Array.isArray(v.evidence) ? v.evidence : [];
      const shown = items.slice(0, REPORT_EVIDENCE_ITEMS).map(evidence);
      if (items.length > REPORT_EVIDENCE_ITEMS)
        shown.push({
          d: I(
            `${items.length - REPORT_EVIDENCE_ITEMS} more evidence items (the bundle's verdicts.jsonl has them all)`,
          ),
          f: [],
          calls: 0,
        });
      return shown;
    };
    const verdict = (v: Verdict): DataVerdict => {
      const shown = shownValues(v);
      const cited = new Set(v.evidence.flatMap((e) => ("quote" in e ? [e.at] : e.from)).map(outputKey));
      return {
        s: v.status,
        o: I(shownValue(shown.observed)),
        x: I(shownValue(shown.expected)),
        ...(shown.pattern !== undefined ? { pt: I(shownValue(shown.pattern)) } : {}),
        m: I(shownValue(String(v.message ?? "").split("\n  evidence")[0] as string, 4 * SHOWN_VALUE_CHARS)),
        ...(v.status === "skip" ? { r: I(skipReason(v)) } : {}),
        ...(v.note ? { n: I(v.note) } : {}),
        ...(v.configuration ? { cf: I(v.configuration) } : {}),
        ev: evidenceOf(v),
        src: [...cited].flatMap((k) => (order.has(k) ? [order.get(k) as number] : [])),
      };
    };
    return {
      label: I(c.label),
      v: properties.map((p) => {
        const v = c.verdicts.get(p.id);
        return v ? verdict(v) : null;
      }),
      o: outputs.map((o) => ({
        k: I(o.key),
        c: I(callText(o)),
        t: o.total,
        l: o.lines.flatMap((l) => [l.n, I(l.text), l.cited ? 1 : 0]),
      })),
    };
  });
  const P = properties.map((p) => ({ claim: I(p.claim), src: I(sourceOf(p)), why: I(p.why ?? "") }));
  return { S, P, C };
}

/** The data as the page holds it: JSON, gzipped, base64. */
export function encodeData(d: ReportData): string {
  return gzipSync(Buffer.from(JSON.stringify(d), "utf8"), { level: 9 }).toString("base64");
}

/** The inverse of encodeData (for tests). */
export function decodeData(b64: string): ReportData {
  return JSON.parse(gunzipSync(Buffer.from(b64, "base64")).toString("utf8")) as ReportData;
}
