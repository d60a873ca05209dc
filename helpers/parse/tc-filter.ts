import { contentLines, fail, mayBeCut } from "./lines.ts";

export interface TcFilter {
  parent: string | null;
  protocol: string;
  pref: number;
  kind: string;
  chain: number | null;
  handle: string | null;
  /** For bpf filters: the filter name (`cil_from_container-lxc…`, or `bpf_lxc.o:[from-container]`). */
  name: string | null;
  directAction: boolean;
  progId: number | null;
  /** iproute2 ≥ 5.x prints the (15-char) kernel program name after `name`. */
  progName: string | null;
  tag: string | null;
}

export interface TcFilterShow {
  filters: TcFilter[];
  /** Lines of output (what `| wc -l` counts), details and stats included. */
  lineCount: number;
}

const FORMAT = "tc-filter";
const FILTER =
  /^filter (?:parent (\S+) )?protocol (\S+) pref (\d+) (\S+)(?: chain (\d+))?(?: handle (\S+))?(.*)$/;

/** A second filter line inside this one: two lines joined. */
const JOINED = /filter (?:parent \S+ )?protocol /;

/**
 * `tc filter show dev X ingress|egress` (with or without `-s`). Empty output means no filter. A chain line has
 * nothing after `chain N`; a bpf filter's `id` is a number and its `tag` 16 hex digits: a line that breaks them is
 * cut off or joined, and an error naming it. Every line counts in `lineCount`, so a last line without a newline
 * is a warning.
 */
export function parseTcFilter(input: string): TcFilterShow {
  const filters: TcFilter[] = [];
  const lines = contentLines(FORMAT, input);
  for (const line of lines) {
    mayBeCut(line);
    if (/^\s/.test(line.text)) continue; // action/stat detail lines under a filter
    const m = FILTER.exec(line.text);
    if (!m) fail(FORMAT, line, "expected `filter [parent P] protocol P pref N KIND …`");
    const handle = m[6] ?? null;
    const rest = (m[7] ?? "").trim();
    if (JOINED.test(rest)) fail(FORMAT, line, "a second filter line in this one: two lines joined?");
    if (handle === null) {
      // the chain header line that precedes each filter: nothing after `chain N`
      if (rest !== "") fail(FORMAT, line, "text after a chain line's `chain N`: two lines joined?");
      continue;
    }
    if (/\b(?:id|tag)$/.test(rest) || /\btag (?![0-9a-f]{16}(?:\s|$))/.test(rest))
      fail(FORMAT, line, "a bpf filter's id or tag cut off");
    const idm = /\bid (\d+)/.exec(rest);
    const namem = /\bname (\S+)/.exec(rest);
    const tagm = /\btag ([0-9a-f]+)/.exec(rest);
    const first = rest.split(/\s+/)[0] ?? "";
    filters.push({
      parent: m[1] ?? null,
      protocol: m[2] as string,
      pref: Number(m[3]),
      kind: m[4] as string,
      chain: m[5] !== undefined ? Number(m[5]) : null,
      handle,
      name: m[4] === "bpf" && first && first !== "direct-action" ? first : null,
      directAction: /\bdirect-action\b/.test(rest),
      progId: idm ? Number(idm[1]) : null,
      progName: namem ? (namem[1] as string) : null,
      tag: tagm ? (tagm[1] as string) : null,
    });
  }
  return { filters, lineCount: lines.length };
}
