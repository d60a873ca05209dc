import { contentLines, fail } from "./lines.ts";

export interface AgentConfig {
  /** NAME → value as printed; nested maps as `Parent.Child`. */
  options: Record<string, string>;
  sections: string[];
  /** The 1-based line of each option. */
  lines: Record<string, number>;
}

const FORMAT = "config";
const SECTION = /^#{3,}\s*(.*?)\s*#{3,}$/;
const OPTION = /^(\S[^:]*?)\s*: ?(.*)$/;
const NESTED = /^\t(\S[^:]*?)\s*: ?(.*)$/;
const BARE_KEY = /^([A-Za-z][\w.-]*)$/;

/** `cilium-dbg config` / `config -a` (`"%-34s: %v"` lines under `#### … ####` headings). */
export function parseConfig(input: string): AgentConfig {
  const options: Record<string, string> = {};
  const sections: string[] = [];
  const lines: Record<string, number> = {};
  let parent: string | null = null;
  for (const line of contentLines(input)) {
    const s = SECTION.exec(line.text);
    if (s) {
      sections.push(s[1] as string);
      parent = null;
      continue;
    }
    const n = NESTED.exec(line.text);
    if (n && parent) {
      options[`${parent}.${n[1]}`] = (n[2] as string).trim();
      lines[`${parent}.${n[1]}`] = line.no;
      continue;
    }
    const o = OPTION.exec(line.text);
    if (o) {
      options[o[1] as string] = (o[2] as string).trim();
      lines[o[1] as string] = line.no;
      parent = null;
      continue;
    }
    const bare = BARE_KEY.exec(line.text);
    if (bare) {
      parent = bare[1] as string;
      options[parent] = "";
      lines[parent] = line.no;
      continue;
    }
    fail(FORMAT, line, "expected `Name : value`");
  }
  return { options, sections, lines };
}
