/**
 * Arguments of the scripts (leftovers, faults) through Node's util.parseArgs: declared options only, each bad
 * input one UserError line. Kept apart from cli/ so the scripts do not follow the CLI's changes.
 */
import { parseArgs } from "node:util";
import { UserError } from "../helpers/errors.ts";

export interface ScriptArgs {
  positional: string[];
  flags: Record<string, string | boolean | undefined>;
  /** What came after `--` (vitest file filters). */
  rest: string[];
}

/** `strings` take a value, `booleans` do not; anything else is an error naming the valid options. */
export function scriptArgs(argv: string[], strings: string[], booleans: string[] = []): ScriptArgs {
  const end = argv.indexOf("--");
  const head = end < 0 ? argv : argv.slice(0, end);
  const rest = end < 0 ? [] : argv.slice(end + 1);
  const options: Record<string, { type: "string" | "boolean" }> = {};
  for (const s of strings) options[s] = { type: "string" };
  for (const b of booleans) options[b] = { type: "boolean" };
  try {
    const { values, positionals } = parseArgs({ args: head, options, strict: true, allowPositionals: true });
    return { positional: positionals, flags: values as ScriptArgs["flags"], rest };
  } catch (err) {
    const valid = [...strings.map((s) => `--${s} VALUE`), ...booleans.map((b) => `--${b}`)].join(", ");
    const why = (err instanceof Error ? err.message : String(err))
      .split("\n")[0]
      ?.replace(/\. To specify .*$/, "");
    throw new UserError(`${why}; valid: ${valid}`);
  }
}

/** `value` when it is one of `valid`, undefined when absent; anything else names the valid ones. */
export function oneOf<T extends string>(
  what: string,
  value: string | boolean | undefined,
  valid: readonly T[],
): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !valid.includes(value as T))
    throw new UserError(
      `unknown ${what} ${JSON.stringify(typeof value === "string" ? value : "")}; valid: ${valid.join(", ")}`,
    );
  return value as T;
}
