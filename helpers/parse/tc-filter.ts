import { contentLines, fail } from "./lines.ts";

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

/** `tc filter show dev X ingress|egress` (with or without `-s`). Empty output means no filter. */
export function parseTcFilter(input: string): TcFilterShow {
  const filters: TcFilter[] = [];
  const lines = contentLines(input);
  for (const line of lines) {
    if (/^\s/.test(line.text)) continue; // action/stat detail lines under a filter
    const m = FILTER.exec(line.text);
    if (!m) fail(FORMAT, line, "expected `filter [parent P] protocol P pref N KIND …`");
    const handle = m[6] ?? null;
    if (handle === null) continue; // the chain header line that precedes each filter
    const rest = (m[7] ?? "").trim();
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
