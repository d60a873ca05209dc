/**
 * Reading a fault run and judging it (pure). The rule (issue 18): every fault ends in a report within its named
 * deadline — a failed or skipped test whose message names the fault's symptom — never in a hang or a pass;
 * SIGINT/SIGTERM tear down what the run created (or keep the cluster with KEEP_CLUSTER=1, saying so) and exit
 * non-zero; nothing of the suite's is left behind (the inventory after equals the one before, by name).
 */
import type { FaultName } from "./faults.ts";
import { FAULTS } from "./faults.ts";
import type { ReportLine } from "./reporter.ts";

/** What the run's own output says, line by line. */
export interface RunLog {
  /** Topics in the order they started observing, with when (ms). */
  topics: { topic: string; at: number }[];
  teardownStarted: boolean;
  teardownFinished: boolean;
  /** The one line KEEP_CLUSTER=1 prints, if it did. */
  kept: string | null;
}

const TOPIC_START = /^\[([a-z0-9-]+)\] \[(kpr|kube-proxy)\] ([a-z0-9-]+): observing\b/;

/** The topic that starts observing on this output line, or null. */
export function topicStart(line: string): string | null {
  return TOPIC_START.exec(line)?.[3] ?? null;
}

/** Reads the run's output as it came (each line with when it arrived). */
export function readRunLog(lines: { at: number; text: string }[]): RunLog {
  const log: RunLog = { topics: [], teardownStarted: false, teardownFinished: false, kept: null };
  for (const { at, text } of lines) {
    const topic = topicStart(text);
    if (topic) log.topics.push({ topic, at });
    if (/(SIGINT|SIGTERM): tearing down what this run created/.test(text)) log.teardownStarted = true;
    if (/(SIGINT|SIGTERM): teardown finished in/.test(text)) log.teardownFinished = true;
    const k = /KEEP_CLUSTER=1: keeping .*/.exec(text);
    if (k) log.kept = k[0];
  }
  return log;
}

/** The reporter's JSON lines (scripts/faults/reporter.ts); a line that is not JSON is skipped. */
export function readReport(text: string): ReportLine[] {
  return text
    .split("\n")
    .filter((l) => l.trim().startsWith("{"))
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as ReportLine];
      } catch {
        return [];
      }
    });
}

export interface FaultRun {
  id: string;
  fault: FaultName;
  mode: string;
  keep: boolean;
  /** When the run started, when the fault was injected (null: never), when the run exited (null: it did not). */
  startedAt: number;
  injectedAt: number | null;
  /** What was injected, or why it could not be. */
  injected: string;
  exit: { code: number | null; signal: string | null; at: number } | null;
  /** The driver had to kill the run at its exit deadline. */
  killed: boolean;
  reports: ReportLine[];
  log: RunLog;
  /** Names of what the suite left (inventory after minus before, expected ones excepted), and Cilium's. */
  leftovers: { ours: string[]; cilium: string[]; processes: string[] };
  deadlines: { reportS: number; exitS: number };
}

export interface Judgement {
  held: boolean;
  violations: string[];
  /** The report that counts: the first failed or skipped test after the injection naming the symptom. */
  report: { name: string; state: string; message: string; afterS: number } | null;
  timeToExitS: number | null;
  counts: { passed: number; failed: number; skipped: number };
  /** One cell for the table: what the suite did. */
  outcome: string;
}

const secs = (ms: number) => Math.round(ms / 100) / 10;
const clip = (s: string, n = 140) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export function judge(r: FaultRun): Judgement {
  const f = FAULTS[r.fault];
  const violations: string[] = [];
  const tests = r.reports.filter((x) => x.event === "test");
  const counts = {
    passed: tests.filter((t) => t.state === "passed").length,
    failed: tests.filter((t) => t.state === "failed").length,
    skipped: tests.filter((t) => t.state === "skipped").length,
  };
  const timeToExitS = r.exit && r.injectedAt !== null ? secs(r.exit.at - r.injectedAt) : null;
  if (r.injectedAt === null) violations.push(`the fault was never injected: ${r.injected}`);
  if (!r.exit || r.killed)
    violations.push(
      `hang: the run did not exit within ${r.deadlines.exitS} s of the injection${r.killed ? " (killed by the driver)" : ""}`,
    );
  else if (timeToExitS !== null && timeToExitS > r.deadlines.exitS)
    violations.push(
      `the run exited ${timeToExitS} s after the injection, past its ${r.deadlines.exitS} s deadline`,
    );

  let report: Judgement["report"] = null;
  if (f.symptom === null) {
    // a signal: the run tears down and exits 128 + the signal's number
    const want = r.fault === "sigint" ? 130 : 143;
    if (r.exit && r.exit.code !== want)
      violations.push(
        `exit code ${r.exit.code ?? `(signal ${r.exit.signal})`}, not ${want} (${r.fault.toUpperCase()})`,
      );
    if (!r.log.teardownStarted) violations.push("the run never said it was tearing down after the signal");
    else if (!r.log.teardownFinished)
      violations.push("the teardown after the signal did not finish before the run exited");
    if (r.keep && !r.log.kept)
      violations.push("KEEP_CLUSTER=1, but the run did not say which cluster it keeps");
    const last = tests.filter(
      (t) => r.injectedAt !== null && t.at >= r.injectedAt && t.state !== "passed",
    )[0];
    if (r.injectedAt !== null && r.exit)
      report = {
        name: "(the run)",
        state: "interrupted",
        message: `exit ${r.exit.code}`,
        afterS: secs(r.exit.at - r.injectedAt),
      };
    if (last && r.injectedAt !== null)
      report = {
        name: last.name ?? "",
        state: last.state ?? "",
        message: last.message ?? "",
        afterS: secs(last.at - r.injectedAt),
      };
  } else {
    if (r.exit && r.exit.code === 0) violations.push("false pass: the run passed with the fault injected");
    const after = tests.filter(
      (t) => r.injectedAt !== null && t.at >= r.injectedAt && (t.state === "failed" || t.state === "skipped"),
    );
    const named = after.find((t) => f.symptom?.test(t.message ?? ""));
    if (named && r.injectedAt !== null) {
      report = {
        name: named.name ?? "",
        state: named.state ?? "",
        message: named.message ?? "",
        afterS: secs(named.at - r.injectedAt),
      };
      if (report.afterS > r.deadlines.reportS)
        violations.push(
          `the first report naming the fault came ${report.afterS} s after it, past the ${r.deadlines.reportS} s deadline`,
        );
    } else if (r.injectedAt !== null) {
      violations.push(
        after.length === 0
          ? "no test failed or was skipped after the injection"
          : `no failed or skipped test names the fault's symptom (${f.symptom}); first: ${clip(`${after[0]?.name}: ${after[0]?.message ?? ""}`)}`,
      );
    }
  }
  if (r.leftovers.ours.length > 0) violations.push(`left behind: ${r.leftovers.ours.join(", ")}`);
  if (r.leftovers.processes.length > 0)
    violations.push(`processes of the run still alive: ${r.leftovers.processes.join("; ")}`);

  const outcome =
    f.symptom === null
      ? `exit ${r.exit?.code ?? "none"}${r.log.teardownFinished ? ", torn down" : ""}${r.log.kept ? ", cluster kept" : ""}`
      : `${counts.failed} failed, ${counts.skipped} skipped, ${counts.passed} passed${report ? `; ${report.state}: ${clip(`${report.name}: ${report.message}`, 160)}` : ""}`;
  return { held: violations.length === 0, violations, report, timeToExitS, counts, outcome };
}

/** One row of the README's fault table: fault, mode, outcome, time to report, leftovers. */
export function tableRow(r: FaultRun, j: Judgement): string {
  const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");
  const left =
    r.leftovers.ours.length === 0 && r.leftovers.processes.length === 0
      ? `none${r.leftovers.cilium.length > 0 ? ` (Cilium's: ${r.leftovers.cilium.length} identities, collected later)` : ""}${r.keep ? " (cluster kept: KEEP_CLUSTER=1)" : ""}`
      : [...r.leftovers.ours, ...r.leftovers.processes].join(", ");
  const verdict = j.held ? "rule held" : `RULE BROKEN: ${j.violations.join("; ")}`;
  return `| ${r.fault} | ${r.mode} | ${cell(`${j.outcome} — ${verdict}`)} | ${j.report ? `${j.report.afterS} s` : "none"}${j.timeToExitS !== null ? ` (exit after ${j.timeToExitS} s)` : ""} | ${cell(left)} |`;
}

export const TABLE_HEADER = "| fault | mode | outcome | time to report | leftovers |\n|---|---|---|---|---|";
