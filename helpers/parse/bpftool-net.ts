import { ParseError } from "../errors.ts";
import { contentLines, fail, parseJsonText } from "./lines.ts";

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
}

export interface BpftoolNet {
  attachments: BpfAttachment[];
  /** Section headings seen (`xdp`, `tc`, `flow_dissector`, `netfilter`). */
  sections: string[];
}

const FORMAT = "bpftool-net";
const SECTION = /^(xdp|tc|flow_dissector|netfilter):$/;
const TC_ROW =
  /^(\S+)\((\d+)\) (\S+) (\S+)(?: prog_id (\d+))?(?: id (\d+))?(?: prog_flags [^ ]+)?(?: link_id (\d+))?(?: link_flags \S+)?\s*$/;
const XDP_ROW = /^(\S+)\((\d+)\) (\S+) id (\d+)$/;

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
  for (const raw of contentLines(input)) {
    const line = { ...raw, text: raw.text.replace(PASTED, "") };
    const s = SECTION.exec(line.text);
    if (s) {
      section = s[1] as string;
      sections.push(section);
      continue;
    }
    const inferred = section ?? (XDP_ROW.test(line.text) ? "xdp" : "tc");
    if (inferred === "xdp") {
      const x = XDP_ROW.exec(line.text);
      if (!x) fail(FORMAT, line, "expected `DEV(IFINDEX) MODE id N` under xdp:");
      attachments.push({
        device: x[1] as string,
        ifindex: Number(x[2]),
        attach: `xdp/${x[3]}`,
        kind: "xdp",
        program: "",
        rawName: "",
        progId: Number(x[4]),
        linkId: null,
      });
      continue;
    }
    const m = TC_ROW.exec(line.text);
    if (!m || (m[5] === undefined && m[6] === undefined)) {
      fail(
        FORMAT,
        line,
        section === null
          ? "expected a `DEV(IFINDEX) ATTACH NAME prog_id N|id N` line (or an `xdp:`/`tc:` heading)"
          : `expected \`DEV(IFINDEX) ATTACH NAME prog_id N|id N\` under ${section}:`,
      );
    }
    const device = m[1] as string;
    const attach = m[3] as string;
    attachments.push({
      device,
      ifindex: Number(m[2]),
      attach,
      kind: kindOf(attach),
      program: programName(m[4] as string, device),
      rawName: m[4] as string,
      progId: Number(m[5] ?? m[6]),
      linkId: m[7] !== undefined ? Number(m[7]) : null,
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
        });
      }
    }
  }
  return { attachments, sections: [...sections] };
}
