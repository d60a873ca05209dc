/**
 * A vitest reporter for fault runs: one JSON line per finished test (when, state, full name, the first line of
 * its error or its skip note) and one at the end of the run, appended to FAULT_REPORT_FILE. The fault driver
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

export default class FaultReporter implements Reporter {
  private readonly file = process.env.FAULT_REPORT_FILE;

  private write(line: ReportLine): void {
    if (this.file) appendFileSync(this.file, `${JSON.stringify(line)}\n`);
  }

  onTestCaseResult(t: TestCase): void {
    const r = t.result();
    const message =
      r.state === "failed"
        ? firstLine(r.errors?.map((e) => e.message).join("\n"))
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
