import { ParseError } from "../errors.ts";
import { contentLines, fail, mayBeCut } from "./lines.ts";

/**
 * Our bind probe: `timeout 2 nc -l ADDR PORT; echo exit=$?` in a node's host network namespace. A socket
 * hook that refuses the port makes nc fail at once ("Address already in use"; "Operation not permitted" where
 * the hook cannot set its errno and the kernel answers EPERM, Cilium 1.18 and 1.19.0-1.19.3); a port free to
 * bind keeps nc listening until `timeout` ends it (exit 124).
 */
export interface BindProbe {
  result: "EADDRINUSE" | "EPERM" | "bound" | "error";
  exitCode: number | null;
  /** The line that decided it. */
  line: string;
  /** Its 1-based line in the output (the `exit=` line for "bound"); null: no line decided it. */
  lineNo: number | null;
}

export const BIND_PROBE_SECONDS = 2;

export function bindProbeArgv(address: string, port: number): string[] {
  return ["sh", "-c", `timeout ${BIND_PROBE_SECONDS} nc -l ${address} ${port} 2>&1; echo "exit=$?"`];
}

const FORMAT = "bind-probe";

/**
 * The probe's output ends with its `exit=N` line (our `echo`): output without one is cut off, and is an error
 * naming its last line; an `exit=N` with no newline after it may itself be cut (`exit=12` of `exit=124`).
 */
export function parseBindProbe(output: string): BindProbe {
  const content = contentLines(FORMAT, output);
  const last = content[content.length - 1];
  if (!last) throw new ParseError(FORMAT, 1, "", "no output at all: expected the probe's `exit=N` line");
  if (!/^exit=\d+$/.test(last.text.trim()))
    fail(FORMAT, last, "the output does not end with the probe's `exit=N` line (cut off?)");
  mayBeCut(last);
  const all = output.split("\n").map((l) => l.trim());
  const lines = all.filter(Boolean);
  const exitLine = last.text.trim();
  const exitCode = Number(exitLine.slice(5));
  const inUse = lines.find((l) => /Address (already )?in use/i.test(l));
  const no = (l: string | undefined) => (l === undefined ? null : all.lastIndexOf(l) + 1 || null);
  if (inUse) return { result: "EADDRINUSE", exitCode, line: inUse, lineNo: all.indexOf(inUse) + 1 };
  const refused = lines.find((l) => /Operation not permitted/i.test(l));
  if (refused) return { result: "EPERM", exitCode, line: refused, lineNo: all.indexOf(refused) + 1 };
  if (exitCode === 124)
    return { result: "bound", exitCode, line: `listened until timeout (${exitLine})`, lineNo: no(exitLine) };
  return { result: "error", exitCode, line: lines.join(" | ") || "(no output)", lineNo: no(exitLine) };
}
