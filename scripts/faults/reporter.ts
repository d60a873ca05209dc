/**
 * A vitest reporter for fault runs: one JSON line per finished test (when, state, full name, the first line of
 * its error with what it observed, or its skip note) and one at the end of the run, appended to FAULT_REPORT_FILE. The fault driver
 * reads it to tell which tests failed or were skipped, with what message, and when the first report came.
 * Added beside the default reporter (`--reporter=default --reporter=./scripts/faults/reporter.ts`).
 */
import { appendFileSync } from "node:fs";
import type { Reporter, TestCase, TestModule } from "vitest/node";

export interface ReportLine {
  event: "test" | "end";
  /** ms since the epoch. */
  at: number;
  state?: "passed" | "failed" | "skipped" | "pending";
  name?: string;
  module?: string;
  message?: string;
  /** end: why the run ended (passed, failed, interrupted). */
  reason?: string;
}

const firstLine = (s: string | undefined) =>
  (s ?? "")
    .split("\n")
    .find((l) => l.trim() !== "")
    ?.slice(0, 600);

/**
 * A failed test in one line: its error's first line and, where the assertion carries it, what was observed
 * (a property's value names the symptom — `cdc-kp-worker: NotReady during the run, …` — while its first line
 * only restates the claim).
 */
export function failureLine(errors: readonly { message?: string; actual?: unknown }[]): string | undefined {
  const head = firstLine(errors.map((e) => e.message ?? "").join("\n"));
  const actual = errors.find((e) => e.actual !== undefined)?.actual;
  const observed = actual === undefined ? "" : typeof actual === "string" ? actual : JSON.stringify(actual);
  const line = [head, observed ? `observed: ${observed.replace(/\s*\n\s*/g, " ")}` : ""]
    .filter(Boolean)
    .join(" — ");
  return line ? line.slice(0, 900) : undefined;
}

export default class FaultReporter implements Reporter {
  private readonly file = process.env.FAULT_REPORT_FILE;

  private write(line: ReportLine): void {
    if (this.file) appendFileSync(this.file, `${JSON.stringify(line)}\n`);
  }

  onTestCaseResult(t: TestCase): void {
    const r = t.result();
    const message =
      r.state === "failed"
        ? failureLine(r.errors ?? [])
        : r.state === "skipped"
          ? firstLine(r.note)
          : undefined;
    this.write({
      event: "test",
      at: Date.now(),
      state: r.state,
      name: t.fullName,
      module: t.module.moduleId,
      ...(message ? { message } : {}),
    });
  }

  onTestRunEnd(
    _modules: readonly TestModule[],
    errors: readonly { message?: string }[],
    reason: string,
  ): void {
    this.write({
      event: "end",
      at: Date.now(),
      reason,
      ...(errors.length > 0 ? { message: firstLine(errors.map((e) => e.message ?? "").join("\n")) } : {}),
    });
  }
}
