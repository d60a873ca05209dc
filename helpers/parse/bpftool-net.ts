import { ParseError } from "../errors.ts";
import { contentLines, fail, type Line, mayBeCut, noteUnknown, parseJsonText } from "./lines.ts";

export interface BpfAttachment {
  device: string;
  ifindex: number;
  /** `tcx/ingress`, `tcx/egress`, `clsact/ingress`, `clsact/egress`, `xdp`, … as bpftool prints it. */
  attach: string;
  /** `tcx` (link-based), `tc` (legacy cls_bpf filter), `xdp`, or another section name. */
  kind: "tcx" | "tc" | "xdp" | "other";
  /** Cilium program name with the legacy `-<dev>` filter suffix removed. */
  program: string;
  /** The name exactly as printed (a legacy filter name, or `file.o:[section]`). */
  rawName: string;
  progId: number | null;
  linkId: number | null;
  /** 1-based line (0 from JSON). */
  line: number;
  /** `key value` pairs after the known ones (a newer bpftool's), kept as printed, and reported. */
  extra?: Record<string, string>;
}

export interface BpftoolNet {
  attachments: BpfAttachment[];
  /** Section headings seen (`xdp`, `tc`, `flow_dissector`, `netfilter`). */
  sections: string[];
}

const FORMAT = "bpftool-net";
const SECTION = /^(xdp|tc|flow_dissector|netfilter):$/;
const TC_ROW = /^(\S+)\((\d+)\) (\S+) (\S+)((?: \S+ \S+)*)\s*$/;
const XDP_ROW = /^(\S+)\((\d+)\) (\S+) id (\d+)((?: \S+ \S+)*)\s*$/;
/** The `key value` pairs bpftool ≤ 7.5 prints after a program's name. */
const KNOWN_TAIL = new Set(["prog_id", "id", "prog_flags", "link_id", "link_flags"]);

/** A network device's name as bpftool prints it before `(ifindex)`. */
const DEVICE = /^[A-Za-z0-9_.:@-]+$/;
/** Tail fields whose value is a number. */
const NUMERIC_TAIL = new Set(["prog_id", "id", "link_id"]);
const TAIL_KEY = /^[a-z][a-z0-9_]*$/;

/**
 * `prog_id 105 link_id 89 …` → known values, and the rest kept (and reported) as extra. A key without its value,
 * a key twice, a value that is not a number where bpftool prints one, or a token that is not a key: the line is
 * cut off or two lines were joined, and it is an error naming the line.
 */
function tail(text: string, line: Line): { fields: Record<string, string>; extra?: Record<string, string> } {
  const t = text.trim().split(/\s+/).filter(Boolean);
  if (t.length % 2 === 1) fail(FORMAT, line, `${JSON.stringify(t[t.length - 1])} without a value (cut off?)`);
  const fields: Record<string, string> = {};
  const extra: Record<string, string> = {};
  for (let i = 0; i + 1 < t.length; i += 2) {
    const k = t[i] as string;
    const v = t[i + 1] as string;
    if (!TAIL_KEY.test(k)) fail(FORMAT, line, `${JSON.stringify(k)} is not a field name: two lines joined?`);
    if (k in fields || k in extra) fail(FORMAT, line, `${k} twice: two lines joined?`);
    if (NUMERIC_TAIL.has(k) && !/^\d+$/.test(v))
      fail(FORMAT, line, `${k} ${JSON.stringify(v)} is not a number`);
    if (KNOWN_TAIL.has(k)) fields[k] = v;
    else {
      extra[k] = v;
      noteUnknown(line.no, `field ${JSON.stringify(k)}`, `${k} ${v}`);
    }
  }
  return Object.keys(extra).length > 0 ? { fields, extra } : { fields };
}

export function programName(rawName: string, device: string): string {
  const suffix = `-${device}`;
  return rawName.endsWith(suffix) ? rawName.slice(0, -suffix.length) : rawName;
}

function kindOf(attach: string): BpfAttachment["kind"] {
  if (attach.startsWith("tcx/")) return "tcx";
  if (attach.startsWith("clsact/") || attach === "ingress" || attach === "egress") return "tc";
  if (attach.startsWith("xdp") || attach === "driver" || attach === "generic" || attach === "offload")
    return "xdp";
  return "other";
}

/** A markdown list marker or indentation before a pasted line (`- lxc…(12) tcx/ingress …`). */
const PASTED = /^\s*(?:[-*+]\s+)?/;

/**
 * `bpftool net show [dev X]` text, bpftool 7.1 (no tcx) and ≥7.3 (tcx lines with prog_id/link_id). Excerpts
 * pasted from a `grep` (no `xdp:`/`tc:` heading, lines indented or in a markdown list) parse too: the line's
 * own shape tells its section (`DEV(N) MODE id N` is xdp, `DEV(N) ATTACH NAME prog_id|id N` is tc/tcx).
 */
export function parseBpftoolNet(input: string): BpftoolNet {
  const attachments: BpfAttachment[] = [];
  const sections: string[] = [];
  let section: string | null = null;
  for (const raw of contentLines(FORMAT, input)) {
    const line = { ...raw, text: raw.text.replace(PASTED, "") };
    const s = SECTION.exec(line.text);
    if (s) {
      mayBeCut(line);
      section = s[1] as string;
      sections.push(section);
      continue;
    }
    const inferred = section ?? (XDP_ROW.test(line.text) ? "xdp" : "tc");
    if (inferred === "xdp") {
      const x = XDP_ROW.exec(line.text);
      if (!x) fail(FORMAT, line, "expected `DEV(IFINDEX) MODE id N` under xdp:");
      const more = tail(x[5] ?? "", line);
      if (!DEVICE.test(x[1] as string)) fail(FORMAT, line, `${JSON.stringify(x[1])} is not a device name`);
      mayBeCut(line);
      attachments.push({
        device: x[1] as string,
        ifindex: Number(x[2]),
        attach: `xdp/${x[3]}`,
        kind: "xdp",
        program: "",
        rawName: "",
        progId: Number(x[4]),
        linkId: null,
        line: line.no,
        ...(more.extra ? { extra: more.extra } : {}),
      });
      continue;
    }
    const m = TC_ROW.exec(line.text);
    const more = m ? tail(m[5] ?? "", line) : null;
    const progId = more?.fields.prog_id ?? more?.fields.id;
    if (!m || !more || progId === undefined || !/^\d+$/.test(progId)) {
      fail(
        FORMAT,
        line,
        section === null
          ? "expected a `DEV(IFINDEX) ATTACH NAME prog_id N|id N` line (or an `xdp:`/`tc:` heading)"
          : `expected \`DEV(IFINDEX) ATTACH NAME prog_id N|id N\` under ${section}:`,
      );
    }
    mayBeCut(line);
    const device = m[1] as string;
    if (!DEVICE.test(device)) fail(FORMAT, line, `${JSON.stringify(device)} is not a device name`);
    const attach = m[3] as string;
    attachments.push({
      device,
      ifindex: Number(m[2]),
      attach,
      kind: kindOf(attach),
      program: programName(m[4] as string, device),
      rawName: m[4] as string,
      progId: Number(progId),
      linkId: more.fields.link_id !== undefined ? Number(more.fields.link_id) : null,
      line: line.no,
      ...(more.extra ? { extra: more.extra } : {}),
    });
  }
  if (sections.length === 0 && attachments.length === 0)
    throw new ParseError(
      FORMAT,
      1,
      input.split("\n")[0] ?? "",
      "no bpftool net sections and no attachment lines",
    );
  return { attachments, sections };
}

type Json = Record<string, unknown>;

/** `bpftool -j net show`: `[{"xdp":[…],"tc":[{devname,ifindex,kind,name,prog_id|id,link_id?}],…}]`. */
export function parseBpftoolNetJson(input: string): BpftoolNet {
  const format = `${FORMAT}-json`;
  const doc = parseJsonText(format, input);
  const blocks = Array.isArray(doc) ? (doc as Json[]) : [doc as Json];
  const attachments: BpfAttachment[] = [];
  const sections = new Set<string>();
  for (const block of blocks) {
    if (!block || typeof block !== "object")
      throw new ParseError(format, 1, String(block), "expected an object");
    for (const [section, rows] of Object.entries(block)) {
      sections.add(section);
      if (!Array.isArray(rows)) continue;
      for (const r of rows as Json[]) {
        const device = String(r.devname ?? "");
        const attach = section === "xdp" ? `xdp/${String(r.mode ?? "driver")}` : String(r.kind ?? section);
        const rawName = String(r.name ?? "");
        const progId = r.prog_id ?? r.id;
        attachments.push({
          device,
          ifindex: Number(r.ifindex),
          attach,
          kind: section === "xdp" ? "xdp" : kindOf(attach),
          program: programName(rawName, device),
          rawName,
          progId: typeof progId === "number" ? progId : null,
          linkId: typeof r.link_id === "number" ? r.link_id : null,
          line: 0,
        });
      }
    }
  }
  return { attachments, sections: [...sections] };
}
