import { contentLines, fail, noteUnknown } from "./lines.ts";

/** One row of `cilium-dbg bpf lb list --backends`: the backend map's id and address (no port is printed). */
export interface LbBackendRow {
  id: number;
  protocol: string | null;
  address: string;
  zone: string | null;
  /** 1-based line. */
  line: number;
  /** Text after the known columns (a newer agent's), kept as printed, and reported. */
  extra?: Record<string, string>;
}

const FORMAT = "bpf-lb-backends";
/** `13   TCP://10.244.1.174` or `13   10.244.1.174` (older), optionally `[zone]`. */
const ROW = /^(\d+)\s+(?:([A-Z]+):\/\/)?(\[[0-9a-fA-F:.]+\]|[0-9a-fA-F:.]+)(?:\s*\[(\S+)\])?(?:\s+(\S.*))?$/;

/**
 * `cilium-dbg bpf lb list --backends`: header `ID  BACKEND ADDRESS (REVNAT_ID) (SLOT)` (the header text is
 * not what the rows hold), rows `<id>  <PROTO>://<ip>` (knowledge output-formats.md §2; written by us).
 */
export function parseBpfLbBackends(input: string): { backends: LbBackendRow[] } {
  const backends: LbBackendRow[] = [];
  for (const line of contentLines(input)) {
    if (/^ID\s+BACKEND/.test(line.text)) continue;
    const m = ROW.exec(line.text.trim());
    if (!m) fail(FORMAT, line, "expected `ID [PROTO://]ADDRESS`");
    if (m[5]) noteUnknown(line.no, "trailing field", m[5]);
    backends.push({
      id: Number(m[1]),
      protocol: m[2] ?? null,
      address: (m[3] as string).replace(/^\[|\]$/g, ""),
      zone: m[4] ?? null,
      line: line.no,
      ...(m[5] ? { extra: { trailing: m[5] } } : {}),
    });
  }
  return { backends };
}
