import { contentLines, fail, mayBeCut, noteUnknown } from "./lines.ts";

/** One program attached to a cgroup, as `bpftool cgroup show PATH` or `bpftool cgroup tree [ROOT]` prints it. */
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
  /** `bpftool cgroup tree`: the cgroup path the program is attached to (the path line above it). */
  cgroup?: string;
  /** Columns after the known ones (a newer bpftool's), kept as printed, and reported. */
  extra?: Record<string, string>;
}

const FORMAT = "bpftool-cgroup";
/** `ID  ATTACHTYPE  [FLAGS]  [NAME]`, indented by 4 under a nested cgroup of `tree`. */
const ROW = /^\s*(\d+)\s+(\S+)(?:\s+(\S+))?(?:\s+(\S+))?(?:\s+(\S.*))?$/;
/** The header, or the start of it: a header with anything else after it is a header joined with the next line. */
const HEADER = /^ID\s+AttachType(?:\s+AttachFlags(?:\s+Name)?)?$/;
const TREE_HEADER = "CgroupPath";
/** A cgroup path line of `tree` (bpftool prints nftw's path as is). */
const PATH = /^\/\S*$/;
const FLAGS = /^(?:multi|override|unknown\([0-9a-f]+\))$/;
/** bpftool's names for the cgroup attach types (libbpf's attach_type_name, and the short ones of bpftool ≤ 6.x). */
const ATTACH_TYPES = new Set([
  "ingress",
  "egress",
  "sock_create",
  "sock_ops",
  "device",
  "bind4",
  "bind6",
  "post_bind4",
  "post_bind6",
  "connect4",
  "connect6",
  "getpeername4",
  "getpeername6",
  "getsockname4",
  "getsockname6",
  "sendmsg4",
  "sendmsg6",
  "recvmsg4",
  "recvmsg6",
  "sysctl",
  "getsockopt",
  "setsockopt",
  "sock_release",
  "cgroup_inet_ingress",
  "cgroup_inet_egress",
  "cgroup_inet_sock_create",
  "cgroup_sock_ops",
  "cgroup_device",
  "cgroup_inet4_bind",
  "cgroup_inet6_bind",
  "cgroup_inet4_post_bind",
  "cgroup_inet6_post_bind",
  "cgroup_inet4_connect",
  "cgroup_inet6_connect",
  "cgroup_unix_connect",
  "cgroup_inet4_getpeername",
  "cgroup_inet6_getpeername",
  "cgroup_unix_getpeername",
  "cgroup_inet4_getsockname",
  "cgroup_inet6_getsockname",
  "cgroup_unix_getsockname",
  "cgroup_udp4_sendmsg",
  "cgroup_udp6_sendmsg",
  "cgroup_unix_sendmsg",
  "cgroup_udp4_recvmsg",
  "cgroup_udp6_recvmsg",
  "cgroup_unix_recvmsg",
  "cgroup_sysctl",
  "cgroup_getsockopt",
  "cgroup_setsockopt",
  "cgroup_inet_sock_release",
]);
/** How a newer libbpf names a cgroup attach type this list does not have yet: kept, and reported. */
const NEW_ATTACH_TYPE = /^cgroup_[a-z]+[46]?(?:_[a-z]+)+$/;
const NAME = /^[A-Za-z0-9_.]+$/;

/** `cgroup_inet4_connect` → `connect4`, `cgroup_udp6_recvmsg` → `recvmsg6`, `connect4` stays. */
export function hookOf(attachType: string): string {
  const m = /^cgroup_(?:inet|udp|unix)(4|6)_(\w+)$/.exec(attachType);
  return m ? `${m[2]}${m[1]}` : attachType;
}

/**
 * `bpftool cgroup show PATH`: a header `ID AttachType AttachFlags Name`, then one row per attached program; the
 * flags column is empty for a plain attach, the name empty where the kernel gives none (written by us from the
 * layout the kernel lab recorded). `bpftool cgroup tree [ROOT]` (what Cilium's kube-proxy-free guide runs,
 * Documentation/network/kubernetes/kubeproxy-free.rst, "Validate BPF cgroup programs attachment") prints a
 * `CgroupPath` line before that header and each cgroup's path before its rows (bpftool's cgroup.c,
 * do_show_tree_fn); rows of a nested cgroup are indented by four spaces. Each row's `cgroup` is then its path.
 */
export function parseBpftoolCgroup(input: string): { attachments: CgroupAttachment[] } {
  const attachments: CgroupAttachment[] = [];
  let cgroup: string | undefined;
  for (const line of contentLines(FORMAT, input)) {
    const text = line.text.trim();
    if (text === TREE_HEADER || HEADER.test(text)) continue;
    if (text.startsWith("/")) {
      if (!PATH.test(text)) fail(FORMAT, line, "a cgroup path with white space in it: two lines joined?");
      cgroup = text;
      mayBeCut(line);
      continue;
    }
    const m = ROW.exec(text);
    if (!m) fail(FORMAT, line, "expected `ID ATTACHTYPE [FLAGS] [NAME]` (or a cgroup path, under `tree`)");
    let attachType = m[2] as string;
    let rest = [m[3], m[4]].filter((x): x is string => x !== undefined);
    let trailing = m[5];
    // bpftool prints an attach type it has no name for as `type N`
    if (attachType === "type" && /^\d+$/.test(rest[0] ?? "")) {
      attachType = `type ${rest[0]}`;
      const more = trailing?.split(/\s+/) ?? [];
      rest = [...rest.slice(1), ...more.slice(0, 1)];
      trailing = more.length > 1 ? more.slice(1).join(" ") : undefined;
    } else if (!ATTACH_TYPES.has(attachType)) {
      if (!NEW_ATTACH_TYPE.test(attachType))
        fail(FORMAT, line, `${JSON.stringify(attachType)} is not an attach type bpftool prints`);
      noteUnknown(line.no, "attach type", attachType);
    }
    if (rest.length === 2 && !FLAGS.test(rest[0] as string))
      fail(FORMAT, line, `${JSON.stringify(rest[0])} is not an attach flag (multi, override)`);
    const flags =
      rest.length === 2 || (rest.length === 1 && FLAGS.test(rest[0] as string)) ? (rest[0] as string) : null;
    const name =
      rest.length === 2
        ? (rest[1] as string)
        : rest.length === 1 && flags === null
          ? (rest[0] as string)
          : null;
    if (name !== null && !NAME.test(name))
      fail(FORMAT, line, `${JSON.stringify(name)} is not a program name`);
    if (trailing && ROW.test(trailing) && /^\d+\s/.test(trailing))
      fail(FORMAT, line, "a second row after the first: two lines joined?");
    if (trailing) noteUnknown(line.no, "trailing column", trailing);
    mayBeCut(line);
    attachments.push({
      id: Number(m[1]),
      attachType,
      hook: hookOf(attachType),
      flags,
      name,
      line: line.no,
      ...(cgroup !== undefined ? { cgroup } : {}),
      ...(trailing ? { extra: { trailing } } : {}),
    });
  }
  return { attachments };
}
