import type { Io } from "./io.ts";

/** One option of a command, as `--help` shows it and the parser checks it. */
export interface OptionSpec {
  /** `string` takes one value, `boolean` none, `pair` two (`--compare A B`). */
  type: "string" | "boolean" | "pair";
  short?: string;
  /** The value's name in the usage line (`FILE`, `kpr|kube-proxy`). */
  value?: string;
  help: string;
}

export type OptionValues = Record<string, string | boolean | [string, string] | undefined>;

export interface ParsedCommandArgs {
  positionals: string[];
  values: OptionValues;
}

export interface Command {
  name: string;
  /** What follows the command's name in its usage line, e.g. `BUNDLE… [--markdown]`. */
  synopsis: string;
  /** One line: what it does. */
  summary: string;
  /** Further paragraphs of `--help`. */
  details?: string;
  options?: Record<string, OptionSpec>;
  /** The most positional arguments it takes (unbounded when absent). */
  maxPositionals?: number;
  /** Subcommands (`lab images`, `lab run`): the first argument names one. */
  subcommands?: Command[];
  run?(args: ParsedCommandArgs, io: Required<Io>): Promise<number>;
}

export const COMMANDS = new Map<string, Command>();

export function registerCommand(c: Command): void {
  COMMANDS.set(c.name, c);
}

/** The top-level usage: every command's usage line and summary. */
export function usage(): string {
  const lines = [...COMMANDS.values()].flatMap((c) => [
    `  ${c.name}${c.synopsis ? ` ${c.synopsis}` : ""}`,
    `      ${c.summary}`,
  ]);
  return [
    "usage: datapath-conformance COMMAND [ARGS…]",
    "       datapath-conformance COMMAND --help    a command's own usage",
    "       datapath-conformance --version         this suite's version and the Cilium versions it declares",
    "",
    "commands:",
    ...lines,
    "",
  ].join("\n");
}
