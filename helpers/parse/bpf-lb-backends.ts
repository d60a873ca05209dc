import { isIp } from "./address.ts";
import { contentLines, fail, mayBeCut, noteUnknown } from "./lines.ts";

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
/** The header, whole: a header with anything after it is a header joined with the next line. */
const HEADER = /^ID\s+BACKEND ADDRESS(?:\s+\(REVNAT_ID\)\s+\(SLOT\))?$/;
/** A trailing field that is itself a row: two lines joined. */
const JOINED = /^\d+\s+(?:[A-Z]+:\/\/)?[0-9a-fA-F:.[\]]+(?:\s|$)/;

/**
 * `cilium-dbg bpf lb list --backends`: header `ID  BACKEND ADDRESS (REVNAT_ID) (SLOT)` (the header text is
 * not what the rows hold), rows `<id>  <PROTO>://<ip>` (Backend4ValueV3.String() in cilium pkg/loadbalancer/maps; written by us).
 */
export function parseBpfLbBackends(input: string): { backends: LbBackendRow[] } {
  const backends: LbBackendRow[] = [];
  for (const line of contentLines(FORMAT, input)) {
    if (HEADER.test(line.text)) continue;
    const m = ROW.exec(line.text.trim());
    if (!m) fail(FORMAT, line, "expected `ID [PROTO://]ADDRESS`");
    const address = (m[3] as string).replace(/^\[|\]$/g, "");
    if (!isIp(address)) fail(FORMAT, line, `${JSON.stringify(address)} is not an IP address`);
    if (m[5] && JOINED.test(m[5])) fail(FORMAT, line, "a second row after the first: two lines joined?");
    if (m[5]) noteUnknown(line.no, "trailing field", m[5]);
    mayBeCut(line);
    backends.push({
      id: Number(m[1]),
      protocol: m[2] ?? null,
      address,
      zone: m[4] ?? null,
      line: line.no,
      ...(m[5] ? { extra: { trailing: m[5] } } : {}),
    });
  }
  return { backends };
}
