import { ParseError } from "../errors.ts";
import { parseServiceAddress, type ServiceAddress } from "./address.ts";
import { contentLines, fail, type Line, mayBeCut, noteUnknown, parseJsonText } from "./lines.ts";

export interface LbBackendSlot {
  address: string | null;
  protocol: string | null;
  slot: number;
  /** Set when the agent printed `backend <id> not found`. */
  missingBackendId: number | null;
  /** 1-based line of the row (1 for every row of `-o json`). */
  line: number;
  /** Fields after the known ones, kept as printed (a newer agent's addition), and reported. */
  extra?: Record<string, string>;
}

export interface LbService {
  frontend: string;
  protocol: string | null;
  scope: "external" | "internal";
  revNat: number | null;
  flags: string[];
  l7ProxyPort: number | null;
  backends: LbBackendSlot[];
  /** 1-based line of the slot-0 row; null when the listing has none for this frontend. */
  line: number | null;
  /** Fields after the known ones on the slot-0 row, kept as printed, and reported. */
  extra?: Record<string, string>;
}

export interface LbList {
  services: LbService[];
}

const FORMAT = "bpf-lb-list";
/** The header, whole: a header with anything after it is a header joined with the next line. */
const HEADER = /^SERVICE ADDRESS\s+BACKEND ADDRESS(?: \(REVNAT_ID\) \(SLOT\))?$/;
/** Text after a row's value that holds `ADDRESS:PORT… (N)`: the next row, joined to this one. */
const JOINED = /[0-9a-fA-F\]]:\d+\S* \(\d+\)/;
/** Key column: `ADDR[/PROTO][/i]` optionally followed by ` (slot)` (1.16+). */
const ROW = /^(\S+)(?: \((\d+)\))?\s{2,}(\S.*)$/;
/** `ADDR (REVNAT) (SLOT)`, then optional `[FLAGS]`, `(L7LB Proxy Port: N)`, then anything newer (kept in `extra`). */
const VALUE = /^(\S+) \((\d+)\) \((\d+)\)(?: \[([^\]]*)\])?(?: \(L7LB Proxy Port: (\d+)\))?(?:\s+(.*))?$/;
const NOT_FOUND = /^backend (\d+) not found$/;

class Builder {
  private readonly byKey = new Map<string, LbService>();
  /**
   * Each address text parsed once: a frontend's text repeats on every one of its slot rows and a backend's under
   * every Service it serves (the scale topic's listings hold thousands of rows: 1.5 s of `npm test`'s CPU).
   */
  private readonly addresses = new Map<string, ServiceAddress | null>();
  constructor(private readonly format: string) {}

  private address(text: string): ServiceAddress | null {
    let a = this.addresses.get(text);
    if (a === undefined) {
      a = parseServiceAddress(text);
      this.addresses.set(text, a);
    }
    return a;
  }

  add(line: Line, keyText: string, keySlot: number | null, value: string): void {
    const key = this.address(keyText);
    if (!key) fail(this.format, line, "service address is not IP:PORT[/PROTO][/i]");
    const id = `${key.text}/${key.protocol ?? ""}/${key.scope}`;
    let svc = this.byKey.get(id);
    if (!svc) {
      svc = {
        frontend: key.text,
        protocol: key.protocol,
        scope: key.scope,
        revNat: null,
        flags: [],
        l7ProxyPort: null,
        backends: [],
        line: null,
      };
      this.byKey.set(id, svc);
    }
    const v = VALUE.exec(value.trim());
    if (v) {
      if (v[6] && JOINED.test(v[6]))
        fail(this.format, line, "a second row after the first: two lines joined?");
      mayBeCut(line);
      const slot = Number(v[3]);
      const extra = v[6] ? { trailing: v[6] } : undefined;
      if (v[6]) noteUnknown(line.no, "trailing field", v[6]);
      if (slot === 0) {
        svc.line = line.no;
        if (extra) svc.extra = extra;
        svc.revNat = Number(v[2]);
        svc.flags = v[4]
          ? v[4]
              .split(",")
              .map((f) => f.trim())
              .filter(Boolean)
          : [];
        svc.l7ProxyPort = v[5] ? Number(v[5]) : null;
        return;
      }
      const be = this.address(v[1] as string);
      if (!be) fail(this.format, line, "backend address is not IP:PORT[/PROTO]");
      if (svc.revNat === null) svc.revNat = Number(v[2]);
      svc.backends.push({
        address: be.text,
        protocol: be.protocol,
        slot,
        missingBackendId: null,
        line: line.no,
        ...(extra ? { extra } : {}),
      });
      return;
    }
    const nf = NOT_FOUND.exec(value.trim());
    if (nf && keySlot !== null) {
      mayBeCut(line);
      svc.backends.push({
        address: null,
        protocol: null,
        slot: keySlot,
        missingBackendId: Number(nf[1]),
        line: line.no,
      });
      return;
    }
    fail(this.format, line, "backend column is not `ADDR (REVNAT) (SLOT) [FLAGS]`");
  }

  build(): LbList {
    const services = [...this.byKey.values()];
    for (const s of services) s.backends.sort((a, b) => a.slot - b.slot);
    return { services };
  }
}

/**
 * `cilium-dbg bpf lb list` (text). Accepts the 1.16+ layout (every row keyed `ADDR (slot)`), the
 * older grouped layout (continuation rows with an empty key column), random row order and padding.
 */
export function parseBpfLbList(input: string): LbList {
  const b = new Builder(FORMAT);
  let lastKey: { text: string; slot: number | null } | null = null;
  for (const line of contentLines(FORMAT, input)) {
    if (HEADER.test(line.text)) continue;
    if (/^\s/.test(line.text)) {
      if (!lastKey) fail(FORMAT, line, "continuation row before any service address");
      b.add(line, lastKey.text, null, line.text.trim());
      continue;
    }
    const m = ROW.exec(line.text);
    if (!m) fail(FORMAT, line, "expected `SERVICE-ADDRESS   BACKEND-ADDRESS (REVNAT) (SLOT)`");
    lastKey = { text: m[1] as string, slot: m[2] !== undefined ? Number(m[2]) : null };
    b.add(line, lastKey.text, lastKey.slot, m[3] as string);
  }
  return b.build();
}

/** `cilium-dbg bpf lb list -o json`: `{"<addr> (<slot>)": ["<value>", ...]}`. */
export function parseBpfLbListJson(input: string): LbList {
  const format = `${FORMAT}-json`;
  const doc = parseJsonText(format, input);
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) {
    throw new ParseError(format, 1, input.split("\n")[0] ?? "", "expected a JSON object of arrays");
  }
  const b = new Builder(format);
  for (const [key, values] of Object.entries(doc as Record<string, unknown>)) {
    const line = { no: 1, text: key };
    const k = /^(\S+)(?: \((\d+)\))?$/.exec(key.trim());
    if (!k || !Array.isArray(values)) fail(format, line, "key is not `ADDR (SLOT)` with an array value");
    for (const v of values) b.add(line, k[1] as string, k[2] !== undefined ? Number(k[2]) : null, String(v));
  }
  return b.build();
}
