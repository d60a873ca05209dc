import { contentLines, fail, mayBeCut } from "./lines.ts";

export interface AgentConfig {
  /** NAME → value as printed; nested maps as `Parent.Child`. */
  options: Record<string, string>;
  sections: string[];
  /** The 1-based line of each option. */
  lines: Record<string, number>;
}

const FORMAT = "config";
/** `#### Read-only configurations ####` → its title; null when the line is not a run of #, a title, a run of #. */
function heading(text: string): string | null {
  let a = 0;
  while (text.charCodeAt(a) === 35) a++;
  let b = text.length;
  while (b > a && text.charCodeAt(b - 1) === 35) b--;
  if (a < 3 || text.length - b < 3) return null;
  const title = text.slice(a, b).trim();
  return title === "" || title.includes("#") ? null : title;
}
/**
 * An option's name: a Go field name (DaemonConfig's), or an option's (`k8s-configuration`). The longest
 * `config -a` prints is 45 characters; past 64 a "name" is not one (a line of garbage).
 */
const NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
/** A nested map's key (`Monitor` → `cpus`, `IPAMMultiPoolPreAllocation` → `default`). */
const NESTED_NAME = /^[A-Za-z0-9_./-]{1,64}$/;
/**
 * Inside a value, what only the next line's start looks like: a name padded to the colon's column
 * (`"%-34s: "`: `AddressScopeMax                   : 252`), or a name of 20 characters or more (padded by one
 * space, or, from 34 on, not at all: `ToFQDNsMaxDeferredConnectionDeletes: 10000`): an option line joined to the
 * one before it. (A value may hold `Key: ` itself — `map[IP: Mask:<nil>]` — but not a name that long.)
 */
const JOINED = /[A-Za-z0-9_] {2,}:( |$)|[A-Za-z0-9_.-]{20,} ?:( |$)/;

/**
 * A value Go printed whole (a bool, a number, a closed slice or map) followed by a name and nothing else: a map's
 * name line (`LogOpt`, `BPFMapEventBuffers`) joined to it. The name has a lower-case letter after its capitals, so
 * a unit (`10G`, `1000MB`) is not one.
 */
const MAP_NAME_JOINED = /(?:^true|^false|^-?\d+(?:\.\d+)?|[\]}])\s*[A-Z]+[a-z][A-Za-z0-9_.-]+$/;

/** `Name   : value` → name and value, or null (the colon is the first one; names have none). */
function split(text: string): { name: string; value: string } | null {
  const colon = text.indexOf(":");
  if (colon <= 0) return null;
  const name = text.slice(0, colon).trimEnd();
  const value = text.slice(colon + 1).replace(/^ /, "");
  return { name, value: value.trim() };
}

/** `cilium-dbg config` / `config -a` (`"%-34s: %v"` lines under `#### … ####` headings). */
export function parseConfig(input: string): AgentConfig {
  const options: Record<string, string> = {};
  const sections: string[] = [];
  const lines: Record<string, number> = {};
  let parent: string | null = null;
  for (const line of contentLines(FORMAT, input)) {
    if (line.text.startsWith("#")) {
      const title = heading(line.text);
      if (title === null) fail(FORMAT, line, "expected a `#### … ####` heading");
      mayBeCut(line);
      sections.push(title);
      parent = null;
      continue;
    }
    // a map's entry: cilium indents it by a tab; copied from a terminal, the tab is spaces
    const nested = /^[\t ]/.test(line.text);
    const kv = split(nested ? line.text.replace(/^[\t ]+/, "") : line.text);
    if (kv) {
      if (nested && !parent) fail(FORMAT, line, "an indented `name : value` under no map");
      if (!(nested ? NESTED_NAME : NAME).test(kv.name)) fail(FORMAT, line, "expected `Name : value`");
      if (JOINED.test(kv.value))
        fail(FORMAT, line, "a second `Name : value` in the value: two lines joined?");
      // a name after a value Go printed whole is the next line (a map's name alone on its line: `LogDriver : []`
      // then `LogOpt`) joined to this one
      if (MAP_NAME_JOINED.test(kv.value))
        fail(FORMAT, line, "a map's name after a closed value: two lines joined?");
      // a name may be printed in both sections (`Debug`): the later one is kept, as the agent reads them
      const key = nested ? `${parent}.${kv.name}` : kv.name;
      mayBeCut(line);
      options[key] = kv.value;
      lines[key] = line.no;
      if (!nested) parent = null;
      continue;
    }
    // a map's name alone on its line; its entries follow, indented by a tab (an empty map has none)
    if (!nested && NAME.test(line.text)) {
      mayBeCut(line);
      parent = line.text;
      options[parent] = "";
      lines[parent] = line.no;
      continue;
    }
    fail(FORMAT, line, "expected `Name : value`");
  }
  return { options, sections, lines };
}
