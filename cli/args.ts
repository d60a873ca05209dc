import { parseArgs } from "node:util";
import { UserError } from "../helpers/errors.ts";
import type { Command, OptionSpec, OptionValues, ParsedCommandArgs } from "./registry.ts";

/** Every command takes --help (-h): its own usage, exit 0. */
const HELP: OptionSpec = { type: "boolean", short: "h", help: "this help" };

function optionsOf(cmd: Command): Record<string, OptionSpec> {
  return { ...cmd.options, help: HELP };
}

function flagName(name: string, o: OptionSpec): string {
  return `${o.short ? `-${o.short}, ` : ""}--${name}${o.type === "string" ? ` ${o.value ?? "VALUE"}` : o.type === "pair" ? ` ${o.value ?? "A B"}` : ""}`;
}

/** `datapath-conformance check --help`: the usage line, what it does, its options and subcommands. */
export function commandUsage(cmd: Command, path: string): string {
  const opts = Object.entries(optionsOf(cmd));
  const width = Math.max(...opts.map(([n, o]) => flagName(n, o).length), 10) + 2;
  const lines = [
    `usage: datapath-conformance ${path}${cmd.synopsis ? ` ${cmd.synopsis}` : ""}`,
    "",
    cmd.summary,
  ];
  if (cmd.details) lines.push("", cmd.details);
  if (cmd.subcommands?.length) {
    lines.push("", "subcommands:");
    for (const s of cmd.subcommands)
      lines.push(`  ${path} ${s.name}${s.synopsis ? ` ${s.synopsis}` : ""}`, `      ${s.summary}`);
  }
  lines.push("", "options:");
  for (const [n, o] of opts) lines.push(`  ${flagName(n, o).padEnd(width)}${o.help}`);
  return `${lines.join("\n")}\n`;
}

/** True when the arguments ask for help (`--help` or `-h` before any `--`). */
export function wantsHelp(argv: string[]): boolean {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === "--help" || a === "-h");
}

const takesValue = (v: string) => v === "-" || !v.startsWith("-");

/**
 * A command's arguments through Node's util.parseArgs, checked against its declared options: an unknown
 * option, a missing value, a value given to a flag or one argument too many is one UserError line.
 * `pair` options (`--compare A B`) are taken out first: parseArgs gives an option one value at most.
 */
export function parseCommandArgs(cmd: Command, argv: string[]): ParsedCommandArgs {
  const options = optionsOf(cmd);
  const values: OptionValues = {};
  const end = argv.indexOf("--");
  let head = end < 0 ? [...argv] : argv.slice(0, end);
  const tail = end < 0 ? [] : argv.slice(end);
  for (const [name, o] of Object.entries(options)) {
    if (o.type !== "pair") continue;
    let at = head.indexOf(`--${name}`);
    while (at >= 0) {
      const [a, b] = head.slice(at + 1, at + 3);
      if (a === undefined || b === undefined || !takesValue(a) || !takesValue(b))
        throw new UserError(`--${name} needs two values: --${name} ${o.value ?? "A B"}`);
      values[name] = [a, b];
      head = [...head.slice(0, at), ...head.slice(at + 3)];
      at = head.indexOf(`--${name}`);
    }
  }
  const nodeOptions: Record<string, { type: "string" | "boolean"; short?: string }> = {};
  for (const [name, o] of Object.entries(options))
    if (o.type !== "pair") nodeOptions[name] = { type: o.type, ...(o.short ? { short: o.short } : {}) };
  const parsed = parseArgs({
    args: [...head, ...tail],
    options: nodeOptions,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const valid = () =>
    Object.entries(options)
      .map(([n, o]) => `--${n}${o.short ? `/-${o.short}` : ""}`)
      .join(", ");
  for (const t of parsed.tokens ?? []) {
    if (t.kind !== "option") continue;
    const o = options[t.name];
    if (!o) throw new UserError(`unknown option ${t.rawName}; valid: ${valid()}`);
    if (o.type === "boolean" && t.inlineValue) throw new UserError(`${t.rawName} takes no value`);
    if (o.type === "string") {
      if (t.value === undefined || (!t.inlineValue && !takesValue(t.value)))
        throw new UserError(`${t.rawName} needs a value${o.value ? ` (${o.value})` : ""}`);
      values[t.name] = t.value;
    }
    if (o.type === "boolean") values[t.name] = true;
  }
  if (cmd.maxPositionals !== undefined && parsed.positionals.length > cmd.maxPositionals) {
    const extra = parsed.positionals[cmd.maxPositionals] as string;
    throw new UserError(
      `unexpected argument ${JSON.stringify(extra)} (usage: ${cmd.name}${cmd.synopsis ? ` ${cmd.synopsis}` : ""})`,
    );
  }
  return { positionals: parsed.positionals, values };
}

/** A string option's value (undefined when not given). */
export function stringOption(values: OptionValues, name: string): string | undefined {
  const v = values[name];
  return typeof v === "string" ? v : undefined;
}

export function oneOf<T extends string>(
  what: string,
  value: string | undefined,
  valid: readonly T[],
): T | undefined {
  if (value === undefined) return undefined;
  if (!valid.includes(value as T))
    throw new UserError(`unknown ${what} ${JSON.stringify(value)}; valid: ${valid.join(", ")}`);
  return value as T;
}
