import { contentLines, fail, noteUnknown } from "./lines.ts";

/** One program attached to a cgroup, as `bpftool cgroup show PATH` prints it. */
export interface CgroupAttachment {
  id: number;
  /** As printed: `connect4` (older bpftool) or `cgroup_inet4_connect` (newer). */
  attachType: string;
  /** The hook, the same whatever bpftool printed: connect4, sendmsg4, recvmsg4, getpeername4, post_bind4, … */
  hook: string;
  flags: string | null;
  /** Program name; bpftool shows at most 15 characters unless it reads the full name from BTF. */
  name: string | null;
  /** 1-based line. */
  line: number;
  /** Columns after the known ones (a newer bpftool's), kept as printed, and reported. */
  extra?: Record<string, string>;
}

const FORMAT = "bpftool-cgroup";
const ROW = /^(\d+)\s+(\S+)(?:\s+(\S+))?(?:\s+(\S+))?(?:\s+(\S.*))?$/;
const FLAGS = new Set(["multi", "override"]);

/** `cgroup_inet4_connect` → `connect4`, `cgroup_udp6_recvmsg` → `recvmsg6`, `connect4` stays. */
export function hookOf(attachType: string): string {
  const m = /^cgroup_(?:inet|udp|unix)(4|6)_(\w+)$/.exec(attachType);
  return m ? `${m[2]}${m[1]}` : attachType;
}

/**
 * `bpftool cgroup show PATH`: a header `ID AttachType AttachFlags Name`, then one row per attached program;
 * the flags column is empty for a plain attach (written by us from the layout the kernel lab recorded).
 */
export function parseBpftoolCgroup(input: string): { attachments: CgroupAttachment[] } {
  const attachments: CgroupAttachment[] = [];
  for (const line of contentLines(input)) {
    if (/^ID\s+AttachType/.test(line.text)) continue;
    const m = ROW.exec(line.text.trim());
    if (!m) fail(FORMAT, line, "expected `ID ATTACHTYPE [FLAGS] [NAME]`");
    const rest = [m[3], m[4]].filter((x): x is string => x !== undefined);
    const flags =
      rest.length === 2 || (rest.length === 1 && FLAGS.has(rest[0] as string)) ? (rest[0] as string) : null;
    const name =
      rest.length === 2
        ? (rest[1] as string)
        : rest.length === 1 && flags === null
          ? (rest[0] as string)
          : null;
    if (m[5]) noteUnknown(line.no, "trailing column", m[5]);
    attachments.push({
      id: Number(m[1]),
      attachType: m[2] as string,
      hook: hookOf(m[2] as string),
      flags,
      name,
      line: line.no,
      ...(m[5] ? { extra: { trailing: m[5] } } : {}),
    });
  }
  return { attachments };
}
