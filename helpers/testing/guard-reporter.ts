/**
 * What a run's raw output puts into vitest's own report, shown and never obeyed (issue 45). A replay
 * (`CLUSTER_PROVIDER=replay BUNDLE=…`) serves a bundle's outputs back, and a cluster run reads the cluster's: the
 * harness's error messages quote them (a parser's refusal, a command's stderr, an observed value), and vitest's
 * reporters write an error's message, stack and diff, a test's name and a console line as they are, to a terminal
 * or a CI log where `::error …`, `##[` and `ESC ]52` at a line's start are obeyed.
 *
 * This reporter runs first (vitest calls its reporters in order, each hook synchronously started before the next
 * reporter's): it rewrites those strings in place, through the terminal channel's last guard (`guardLines`:
 * control and invisible characters shown, `##[` broken, a line's leading `::` shown), so every reporter after it —
 * the default one, the skip reasons, JUnit — reads the guarded text. vitest's own colours in a diff (SGR
 * sequences, `ESC [ … m`) are kept; every other escape is shown.
 */
import type { Reporter, SerializedError, TestCase, TestModule } from "vitest/node";
import { guardLines } from "../output.ts";

/** vitest's own colours: `ESC [ 31 m`. Only these escapes stay raw in what is reported. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape is what is matched
const SGR = /(\u001b\[[0-9;]*m)/;

/** One reported string: guardLines on everything but vitest's colour sequences. */
export function guardReported(s: string): string {
  return s
    .split(SGR)
    .map((part, i) => (i % 2 === 1 ? part : guardLines(part)))
    .join("");
}

/** The fields of a serialized error a reporter prints (its cause too, and so on down). */
const ERROR_FIELDS = [
  "message",
  "stack",
  "diff",
  "name",
  "codeFrame",
  "frame",
  "expected",
  "actual",
] as const;

/** An error as vitest serialized it, its printed fields guarded in place. */
export function guardError(e: unknown, depth = 0): void {
  if (typeof e !== "object" || e === null || depth > 8) return;
  const err = e as Record<string, unknown>;
  for (const f of ERROR_FIELDS) if (typeof err[f] === "string") err[f] = guardReported(err[f] as string);
  guardError(err.cause, depth + 1);
}

interface TaskLike {
  name?: unknown;
  fullName?: unknown;
  fullTestName?: unknown;
  result?: { errors?: unknown[]; note?: unknown };
  tasks?: TaskLike[];
}

/**
 * The task behind a reported entity: vitest's `TestCase` and `TestModule` are views of it, and its objects are
 * the ones every reporter prints (`task` is there, not in the public types).
 */
const taskOf = (entity: TestCase | TestModule) => (entity as unknown as { task?: TaskLike }).task;

type ConsoleLog = Parameters<NonNullable<Reporter["onUserConsoleLog"]>>[0];

/** A task (a file, a suite, a test) and every task below it: its name, its errors, its note. */
function guardTask(task: TaskLike | undefined): void {
  if (!task) return;
  // a name is one line (a console line's header, a row of the tree, a JUnit test case that
  // scripts/junit-summary.ts prints): its newlines shown too; the full names are kept beside it
  for (const key of ["name", "fullName", "fullTestName"] as const) {
    const v = task[key];
    if (typeof v === "string") task[key] = guardReported(v).replace(/\n/g, "\\u{a}");
  }
  for (const e of task.result?.errors ?? []) guardError(e);
  if (task.result && typeof task.result.note === "string") task.result.note = guardReported(task.result.note);
  for (const t of task.tasks ?? []) guardTask(t);
}

export default class GuardReported implements Reporter {
  // names as soon as they are known: a console line a test prints is headed by its name
  onTestModuleCollected(module: TestModule): void {
    guardTask(taskOf(module));
  }

  onTestCaseResult(test: TestCase): void {
    guardTask(taskOf(test));
  }

  onTestModuleEnd(module: TestModule): void {
    guardTask(taskOf(module));
  }

  onTestRunEnd(modules: readonly TestModule[], unhandledErrors: readonly SerializedError[]): void {
    for (const m of modules) guardTask(taskOf(m));
    for (const e of unhandledErrors) guardError(e);
  }

  onUserConsoleLog(log: ConsoleLog): void {
    log.content = guardReported(log.content);
  }
}
