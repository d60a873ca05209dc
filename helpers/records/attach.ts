import type { BpftoolNet } from "../parse/bpftool-net.ts";
import type { TcFilterShow } from "../parse/tc-filter.ts";

/** `bpftool version` → "7.1.0" (null when it printed no version). */
export function bpftoolVersion(text: string): string | null {
  return /bpftool v(\d+\.\d+\.\d+)/.exec(text)?.[1] ?? null;
}

/** tcx links in `bpftool link show`: 7.1 prints `type 11`, ≥ 7.3 prints `tcx`. */
export function tcxLinkCount(linkShow: string): number {
  return linkShow.split("\n").filter((l) => /^\d+: (tcx|type 11)\s/.test(l)).length;
}

function atLeast(version: string | null, major: number, minor: number): boolean {
  if (!version) return false;
  const [a, b] = version.split(".").map(Number);
  return (a ?? 0) > major || ((a ?? 0) === major && (b ?? 0) >= minor);
}

export interface AttachmentVerdict {
  /** What was seen on the device; `unknown` when the tools in use cannot see a tcx attachment. */
  seen: "tcx" | "tc" | "none" | "unknown";
  attach: string | null;
  program: string | null;
  message: string;
}

/**
 * What is attached at a device's ingress, judged from `bpftool net show dev`, `tc filter show` and the
 * bpftool version. bpftool < 7.3 and tc cannot see tcx links: with them, "nothing attached" is reported
 * as unknown, never as "no program".
 */
export function attachmentVerdict(v: {
  device: string;
  bpftoolVersion: string | null;
  net: BpftoolNet;
  tcFilter: TcFilterShow;
  tcxLinks?: number | null;
}): AttachmentVerdict {
  const at = v.net.attachments.filter((a) => a.device === v.device && a.attach.endsWith("ingress"));
  const first = at[0];
  if (first) {
    return {
      seen: first.kind === "tcx" ? "tcx" : "tc",
      attach: first.attach,
      program: first.program,
      message: `${v.device}: ${first.attach} ${first.program}`,
    };
  }
  const bpfFilter = v.tcFilter.filters.find((f) => f.kind === "bpf");
  if (bpfFilter) {
    return {
      seen: "tc",
      attach: "clsact/ingress",
      program: bpfFilter.name,
      message: `${v.device}: tc shows bpf filter ${bpfFilter.name} (bpftool did not list it)`,
    };
  }
  if (!atLeast(v.bpftoolVersion, 7, 3)) {
    const links = v.tcxLinks ? `; bpftool link show lists ${v.tcxLinks} tcx link(s) on this host` : "";
    return {
      seen: "unknown",
      attach: null,
      program: null,
      message: `${v.device}: nothing seen, but bpftool ${v.bpftoolVersion ?? "(unknown version)"} and tc cannot show tcx attachments (bpftool gained tcx in 7.3)${links}; use a newer bpftool, e.g. the cilium-agent image's, before concluding there is no program`,
    };
  }
  return {
    seen: "none",
    attach: null,
    program: null,
    message: `${v.device}: no program at ingress (bpftool ${v.bpftoolVersion} sees tcx and legacy tc)`,
  };
}
