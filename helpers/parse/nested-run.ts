import type { NestedVerdict } from "../records/types.ts";

/**
 * What scripts/conformance-here.mjs prints: `bundle LABEL exit CODE` (or `exit none (why)`, or a code with why the
 * run left no bundle), then one JSON line per verdict of the nested run.
 */
export interface NestedRun {
  label: string;
  exit: string;
  /** The first line has no "(…)" after the code: the nested run left a bundle. */
  complete: boolean;
  verdicts: (NestedVerdict & { line: number })[];
  /** Lines that are neither (numbered from 1), for the judge to show. */
  unreadable: { line: number; text: string }[];
}

const HEAD = /^bundle (\S+) exit (\S+)(?: \((.*)\))?$/;

export function parseNestedRun(text: string): NestedRun {
  const lines = text.split("\n");
  const head = HEAD.exec((lines[0] ?? "").trim());
  if (!head)
    throw new Error(
      `not the output of scripts/conformance-here.mjs: its first line is ${JSON.stringify(lines[0] ?? "")}, not "bundle LABEL exit CODE"`,
    );
  const out: NestedRun = {
    label: head[1] as string,
    exit: head[3] ? `${head[2]} (${head[3]})` : (head[2] as string),
    complete: head[3] === undefined,
    verdicts: [],
    unreadable: [],
  };
  lines.slice(1).forEach((text, i) => {
    if (!text.trim()) return;
    const line = i + 2;
    try {
      const v = JSON.parse(text) as Partial<NestedVerdict>;
      if (typeof v.id !== "string" || typeof v.status !== "string") throw new Error("no id or status");
      out.verdicts.push({
        id: v.id,
        status: v.status,
        expected: String(v.expected ?? ""),
        observed: String(v.observed ?? ""),
        ...(v.reason ? { reason: String(v.reason) } : {}),
        ...(v.upstream ? { upstream: String(v.upstream) } : {}),
        line,
      });
    } catch {
      out.unreadable.push({ line, text });
    }
  });
  return out;
}
