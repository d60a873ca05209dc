/**
 * The only module of the CLI that writes what a command says (cli/output-discipline.test.ts fails on a write
 * anywhere else in the CLI's code). Each function takes text made for its channel (helpers/output.ts): a bundle's
 * strings reach the terminal, a CI log, a step summary or the runner's command parser only through the escaper
 * of that channel, and every line is guarded once more here (`guardLines`: no control character, no line
 * starting with `::`, no `##[`), so that the annotations `printAnnotations` writes are the only workflow commands
 * the CLI ever prints.
 */
import { appendFileSync } from "node:fs";
import {
  annotation,
  capMarkdown,
  guardLines,
  jsonText,
  type MarkdownText,
  type TerminalText,
  terminalText,
  type WorkflowCommand,
} from "../helpers/output.ts";
import type { Io } from "./io.ts";

/** Terminal text on standard output. */
export function printOut(io: Io, text: TerminalText): void {
  io.out(guardLines(text));
}

/** Terminal text on standard error (what was written where, a parser's notes, a lab phase). */
export function printErr(io: Io, text: TerminalText): void {
  io.err(guardLines(text));
}

/**
 * A markdown document on standard output (a step summary is made of it: `check --markdown >>
 * $GITHUB_STEP_SUMMARY`), cut with a note past its share of GitHub's 1 MiB.
 */
export function printMarkdown(io: Io, md: MarkdownText): void {
  io.out(guardLines(capMarkdown(md)));
}

/**
 * A markdown document appended to a step summary file (`upgrade --step-summary $GITHUB_STEP_SUMMARY`), as
 * printMarkdown prints it, a blank line after: the command writes the summary itself, so the job's script never
 * copies a program's raw output (its error lines among it) into markdown (issue 45).
 */
export function appendStepSummary(path: string, md: MarkdownText): void {
  appendFileSync(path, `${guardLines(capMarkdown(md))}\n\n`);
}

/** A value as JSON on standard output (`parse`, `expectations --format json`): the same data, inert on a terminal. */
export function printJson(io: Io, value: unknown): void {
  io.out(`${jsonText(JSON.stringify(value, null, 2))}\n`);
}

/** JSON lines streamed to standard output (`parse --ndjson`), with backpressure. */
export async function writeJsonLines(io: Required<Io>, json: string | Uint8Array): Promise<void> {
  await io.write(jsonText(typeof json === "string" ? json : Buffer.from(json).toString("utf8")));
}

/**
 * A command's one-line error (`datapath-conformance check: bundle …: why`): the message is shown as terminal
 * text whole (a bundle's strings in it cannot make a second line), and in a GitHub Actions step it is an error
 * annotation too.
 */
export function printError(io: Io, command: string | null, message: string): void {
  io.err(`datapath-conformance${command ? ` ${terminalText(command)}` : ""}: ${terminalText(message)}\n`);
  if (io.githubActions)
    printAnnotations(io, [annotation("error", command ?? "datapath-conformance", message)]);
}

/** Annotations, in a GitHub Actions step only: on standard error (standard output may be a step summary). */
export function printAnnotations(io: Io, commands: readonly WorkflowCommand[]): void {
  if (!io.githubActions || commands.length === 0) return;
  io.err(`${commands.join("\n")}\n`);
}

/** An unforeseen error's stack, for DATAPATH_CONFORMANCE_DEBUG=1 (shown as terminal text, line by line). */
export function printDebugStack(err: unknown): void {
  const text = (err as Error)?.stack ?? String(err);
  process.stderr.write(`${guardLines(text)}\n`);
}
