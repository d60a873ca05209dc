import { UserError } from "../helpers/errors.ts";

export interface ParsedArgs {
  positional: string[];
  flags: Record<string, string | true>;
}

/** `--key value`, `--key=value` and boolean `--flag`; `booleans` lists flags that take no value. */
export function parseArgs(argv: string[], booleans: string[] = []): ParsedArgs {
  const positional: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === "-" || !a.startsWith("-")) {
      positional.push(a);
      continue;
    }
    const [key, inline] = a.replace(/^--?/, "").split(/=(.*)/s, 2) as [string, string | undefined];
    if (inline !== undefined) flags[key] = inline;
    else if (booleans.includes(key)) flags[key] = true;
    else {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith("--") && next !== "-"))
        throw new UserError(`--${key} needs a value`);
      flags[key] = next;
      i++;
    }
  }
  return { positional, flags };
}

export function oneOf<T extends string>(
  what: string,
  value: string | true | undefined,
  valid: readonly T[],
): T | undefined {
  if (value === undefined) return undefined;
  if (value === true || !valid.includes(value as T)) {
    throw new UserError(
      `unknown ${what} ${JSON.stringify(value === true ? "" : value)}; valid: ${valid.join(", ")}`,
    );
  }
  return value as T;
}
