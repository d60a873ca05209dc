/**
 * The unsafe way is hard to write (issue 36): every module the CLI is built from (the inputs esbuild bundled for
 * bin/datapath-conformance.mjs, so a helper a command imports counts) writes to the streams only through
 * cli/print.ts, whose functions take text made for a channel (helpers/output.ts), and makes that text only with
 * the channels' tags: a bare `console.log`, `process.stdout.write`, `io.out(…)`, or a cast to one of the text
 * types, anywhere else, fails here naming the file and line.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { freshBundle } from "../bin/load-cli.mjs";

const ROOT = join(import.meta.dirname, "..");

/** Where each kind of write may be: the printer, and the process's own streams behind it. */
const ALLOWED: Record<string, readonly string[]> = {
  write: ["cli/print.ts", "cli/io.ts"],
  cast: ["helpers/output.ts"],
};

const WRITES =
  /\bconsole\s*\.\s*(log|error|warn|info|debug|trace|dir|table)\s*\(|\bprocess\s*\.\s*std(out|err)\s*\.\s*write\b|\b\w*[iI]o\s*\.\s*(out|err|write)\s*\(/g;
const CASTS = /\bas\s+(TerminalText|MarkdownText|WorkflowCommand)\b/g;

/** The source without its comments and its quoted strings (a command line in a string is not a write). */
function code(text: string): string {
  return text.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\/|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/g, (m) =>
    m.replace(/[^\n]/g, " "),
  );
}

/** Each direct write or cast in `text` (a file at `path`) outside where it is allowed: `path:line: what`. */
function offences(path: string, text: string): string[] {
  const src = code(text);
  const out: string[] = [];
  const line = (at: number) => src.slice(0, at).split("\n").length;
  for (const [kind, re] of [
    ["write", WRITES],
    ["cast", CASTS],
  ] as const) {
    if (ALLOWED[kind]?.includes(path)) continue;
    for (const m of src.matchAll(re)) out.push(`${path}:${line(m.index ?? 0)}: ${m[0].trim()}`);
  }
  return out;
}

describe("the CLI writes only through cli/print.ts", () => {
  it("no module the CLI is built from writes to a stream, or makes channel text, by itself", async () => {
    const { entry } = await freshBundle();
    const manifest = JSON.parse(readFileSync(join(dirname(dirname(entry)), "cli.json"), "utf8")) as {
      inputs: Record<string, string>;
    };
    const files = Object.keys(manifest.inputs);
    // the commands, the printer, and the helpers they print from
    for (const f of ["cli/commands.ts", "cli/print.ts", "helpers/check.ts", "helpers/upgrade-gate.ts"])
      expect(files).toContain(f);
    expect(files.flatMap((f) => offences(f, readFileSync(join(ROOT, f), "utf8")))).toEqual([]);
  });

  it("finds a write or a cast that slipped in (the scan can fail)", () => {
    const slipped = [
      "export async function run(io) {",
      '  const note = "console.log(x) in a string is a command line, not a write"; // io.out(x) in a comment',
      "  io.out(bundle.cilium + NEWLINE);",
      "  process.stdout.write(r.observed);",
      "  console.log(v.id);",
      "  deps.io.err(v.message);",
      "  return r.cilium as TerminalText;",
      "}",
    ].join("\n");
    expect(offences("cli/commands.ts", slipped)).toEqual([
      "cli/commands.ts:3: io.out(",
      "cli/commands.ts:4: process.stdout.write",
      "cli/commands.ts:5: console.log(",
      "cli/commands.ts:6: io.err(",
      "cli/commands.ts:7: as TerminalText",
    ]);
    expect(offences("cli/print.ts", "io.out(guardLines(text));")).toEqual([]);
  });
});
