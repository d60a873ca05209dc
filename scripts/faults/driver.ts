/**
 * One fault run: the normal conformance specs on a lab kind cluster, one mode, as a child process; one fault
 * injected when a chosen topic starts observing (its `[kind] [<mode>] <topic>: observing` line) or after a
 * number of seconds; then what the suite did (which tests failed or were skipped, with what message, when the
 * first report came, when the run exited and with what code) and what was left (the leftover inventory before
 * and after, by name; processes of the run still alive), judged by the rule (judge.ts) and written to
 * results/faults/: one directory per run, a JSON line per run in faults.jsonl, a table row in table.md.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  collectInventory,
  diffInventories,
  formatDiff,
  type Inventory,
  type Item,
  itemName,
} from "../../clusters/leftovers.ts";
import type { Executor } from "../../helpers/exec/types.ts";
import type { Mode } from "../../helpers/properties/expectation.ts";
import { groupGone, type RunningChild, startChild } from "./child.ts";
import { clusterOf, FAULTS, type FaultName, type Injected } from "./faults.ts";
import {
  type FaultRun,
  type Judgement,
  judge,
  readReport,
  readRunLog,
  TABLE_HEADER,
  tableRow,
} from "./judge.ts";

/** Named deadlines of a fault run. */
export const FAULT_DEADLINES = {
  /** From the injection to the first failed/skipped test naming the fault: the conformance testTimeout. */
  reportS: 900,
  /** From the injection to the run's exit (the rest of the specs, each bounded, and the teardown). */
  exitS: 2400,
  /** From the start, when the injection point is never reached (the run itself is bounded by this). */
  runS: 7200,
  /** After a deadline: SIGTERM to the run's group, then SIGKILL this much later. */
  killGraceS: 60,
  /** After the run's main process exited: how long its other processes (workers) may take to go. */
  groupGoneS: 15,
};

export interface FaultOptions {
  fault: FaultName;
  mode: Mode;
  id: string;
  /** results/faults */
  resultsDir: string;
  /** Inject when this topic starts observing (a name, or its 1-based position in the run), after delayS. */
  atTopic: string;
  delayS: number;
  /** Instead: this many seconds after the run started. */
  afterS?: number;
  keep: boolean;
  pauseS: number;
  node?: string;
  signalTo?: "main" | "group";
  deadlines: typeof FAULT_DEADLINES;
  /** The run: argv and environment (the default is vitest's conformance project; tests pass a fake child). */
  argv: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** docker, kubectl, kind, ps… on this machine. */
  exec: Executor;
  log(line: string): void;
  echo?(s: string): void;
}

/** The child's argv and environment for a lab kind run of one mode. */
export function conformanceRun(o: {
  root: string;
  mode: Mode;
  id: string;
  keep: boolean;
  reportFile: string;
  filters: string[];
}): { argv: string[]; env: NodeJS.ProcessEnv } {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LAB_IMAGES: "1",
    CLUSTER_PROVIDER: "kind",
    CONFORMANCE_MODE: o.mode,
    RUN_ID: o.id,
    FAULT_REPORT_FILE: o.reportFile,
    // one topic at a time: a fault lands beside the topic it was aimed at, as when the scenarios were recorded
    // (topics observed at once would each meet it, suites/schedule.ts)
    CONFORMANCE_WORKERS: "1",
  };
  if (o.keep) env.KEEP_CLUSTER = "1";
  else delete env.KEEP_CLUSTER;
  return {
    argv: [
      process.execPath,
      join(o.root, "node_modules", "vitest", "vitest.mjs"),
      "run",
      "--project",
      "conformance",
      "--reporter=default",
      `--reporter=${join(o.root, "scripts", "faults", "reporter.ts")}`,
      ...o.filters,
    ],
    env,
  };
}

async function inventory(exec: Executor, cluster: string): Promise<Inventory> {
  const kind = await exec.run({
    target: { kind: "local" },
    argv: ["kind", "get", "clusters"],
    timeoutMs: 60_000,
  });
  const exists = kind.exitCode === 0 && kind.stdout.split("\n").includes(cluster);
  return collectInventory({ exec, ...(exists ? { context: `kind-${cluster}` } : {}) });
}

/** KEEP_CLUSTER=1: the kept cluster, its nodes and what lives in it are expected after the run — never the Lease. */
export const keptExpected = (keep: boolean, cluster: string) => (i: Item) =>
  keep && i.kind !== "Lease" && (i.where === "cluster" || i.name.startsWith(cluster));

export async function runFault(
  o: FaultOptions,
): Promise<{ record: FaultRun; judgement: Judgement; dir: string }> {
  const f = FAULTS[o.fault];
  const cluster = clusterOf(o.mode);
  const dir = join(o.resultsDir, o.id);
  mkdirSync(dir, { recursive: true });
  const reportFile = join(dir, "report.jsonl");
  writeFileSync(reportFile, "");
  const say = (l: string) => {
    o.log(l);
    appendFileSync(join(dir, "driver.log"), `${new Date().toISOString()} ${l}\n`);
  };

  say(`fault run ${o.id}: ${o.fault} (${f.summary}), mode ${o.mode}, cluster ${cluster}`);
  say("leftover inventory before the run…");
  const before = await inventory(o.exec, cluster);
  writeFileSync(join(dir, "before.json"), `${JSON.stringify(before, null, 2)}\n`);
  if (before.items.some((i) => i.kind === "kind cluster" && i.name === cluster))
    say(
      `note: ${cluster} exists already; the run reuses it${o.keep ? "" : " and, without KEEP_CLUSTER=1, deletes it at the end"}`,
    );

  const startedAt = Date.now();
  const child: RunningChild = startChild({
    argv: o.argv,
    env: { ...o.env, FAULT_REPORT_FILE: reportFile },
    cwd: o.cwd,
    logFile: join(dir, "run.log"),
    ...(o.echo ? { echo: o.echo } : {}),
  });
  say(
    `run started (pid ${child.pid}, its own process group); injecting ${o.afterS !== undefined ? `${o.afterS} s after the start` : `${o.delayS} s after topic ${o.atTopic} starts observing`}`,
  );

  let injectedAt: number | null = null;
  let injected = "the injection point was never reached";
  let injection: Injected | undefined;
  let armed = false;
  let topicsSeen = 0;
  let killed = false;
  const timers: NodeJS.Timeout[] = [];
  const exitedOrTimeout = (ms: number) =>
    new Promise<"exited" | "timeout">((resolve) => {
      const t = setTimeout(() => resolve("timeout"), ms);
      timers.push(t);
      void child.exited.then(() => {
        clearTimeout(t);
        resolve("exited");
      });
    });
  const kill = async (why: string) => {
    killed = true;
    say(
      `${why}: SIGTERM to the run's process group, SIGKILL ${o.deadlines.killGraceS} s later if it is still there`,
    );
    child.kill("SIGTERM", "group");
    if ((await exitedOrTimeout(o.deadlines.killGraceS * 1000)) === "timeout") child.kill("SIGKILL", "group");
  };
  const inject = async () => {
    if (injectedAt !== null) return;
    injectedAt = Date.now();
    say(`injecting ${o.fault} at +${((injectedAt - startedAt) / 1000).toFixed(1)} s`);
    try {
      injection = await f.inject({
        mode: o.mode,
        cluster,
        context: `kind-${cluster}`,
        ...(o.node ? { node: o.node } : {}),
        pauseS: o.pauseS,
        exec: o.exec,
        sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
        log: say,
        signal: (sig, to) => child.kill(sig, to),
        ...(o.signalTo ? { signalTo: o.signalTo } : {}),
      });
      injected = injection.what;
      if (injection.commands.some((c) => c.exitCode !== 0))
        injected += ` (a command failed: ${injection.commands.map((c) => `\`${c.argv.join(" ")}\` exited ${c.exitCode}`).join(", ")})`;
      say(`injected: ${injected}`);
      // from now on the run has its exit deadline
      void exitedOrTimeout(o.deadlines.exitS * 1000).then((r) => {
        if (r === "timeout")
          void kill(`hang: the run has not exited ${o.deadlines.exitS} s after the injection`);
      });
    } catch (err) {
      injectedAt = null;
      injected = `the injection failed: ${err instanceof Error ? err.message : String(err)}`;
      say(injected);
    }
  };
  const arm = () => {
    if (armed) return;
    armed = true;
    const t = setTimeout(() => void inject(), (o.afterS ?? o.delayS) * 1000);
    timers.push(t);
  };
  if (o.afterS !== undefined) arm();
  else
    child.onLine((text) => {
      const m = /^\[[a-z0-9-]+\] \[(kpr|kube-proxy)\] ([a-z0-9-]+): observing\b/.exec(text);
      if (!m) return;
      topicsSeen++;
      if (m[2] === o.atTopic || String(topicsSeen) === o.atTopic) arm();
    });
  void exitedOrTimeout(o.deadlines.runS * 1000).then((r) => {
    if (r === "timeout" && !killed) void kill(`the run has not exited ${o.deadlines.runS} s after its start`);
  });

  const exit = await child.exited;
  for (const t of timers) clearTimeout(t);
  say(
    `run exited with ${exit.code ?? `signal ${exit.signal}`} at +${((exit.at - startedAt) / 1000).toFixed(1)} s${injectedAt !== null ? ` (${((exit.at - injectedAt) / 1000).toFixed(1)} s after the injection)` : ""}`,
  );
  const processes = await groupGone(o.exec, child.pid, o.deadlines.groupGoneS * 1000);
  if (processes.length > 0) {
    say(
      `processes of the run still alive ${o.deadlines.groupGoneS} s after it exited: ${processes.join("; ")}; killing them`,
    );
    child.kill("SIGKILL", "group");
  }
  await injection?.cleanup?.().catch((err: unknown) => say(`fault clean-up: ${String(err)}`));

  say("leftover inventory after the run…");
  const after = await inventory(o.exec, cluster);
  writeFileSync(join(dir, "after.json"), `${JSON.stringify(after, null, 2)}\n`);
  const diff = diffInventories(before, after, keptExpected(o.keep, cluster));
  writeFileSync(join(dir, "leftovers.txt"), formatDiff(diff));

  const record: FaultRun = {
    id: o.id,
    fault: o.fault,
    mode: o.mode,
    keep: o.keep,
    startedAt,
    injectedAt,
    injected,
    exit: killed ? null : exit,
    killed,
    reports: readReport(existsSync(reportFile) ? readFileSync(reportFile, "utf8") : ""),
    log: readRunLog(child.lines),
    leftovers: {
      ours: diff.oursLeft.map(itemName),
      cilium: diff.ciliumLeft.map(itemName),
      processes,
    },
    deadlines: { reportS: o.deadlines.reportS, exitS: o.deadlines.exitS },
  };
  const judgement = judge(record);
  writeFileSync(join(dir, "record.json"), `${JSON.stringify({ record, judgement }, null, 2)}\n`);
  appendFileSync(
    join(o.resultsDir, "faults.jsonl"),
    `${JSON.stringify({
      id: o.id,
      fault: o.fault,
      mode: o.mode,
      keep: o.keep,
      at: new Date(startedAt).toISOString(),
      injected,
      injectedAfterS: injectedAt !== null ? Math.round((injectedAt - startedAt) / 100) / 10 : null,
      exitCode: record.exit?.code ?? null,
      killed,
      held: judgement.held,
      violations: judgement.violations,
      report: judgement.report,
      timeToExitS: judgement.timeToExitS,
      counts: judgement.counts,
      leftovers: record.leftovers,
      row: tableRow(record, judgement),
    })}\n`,
  );
  const table = join(o.resultsDir, "table.md");
  if (!existsSync(table)) writeFileSync(table, `${TABLE_HEADER}\n`);
  appendFileSync(table, `${tableRow(record, judgement)}\n`);

  say(`${o.fault} (${o.mode}): ${judgement.outcome}`);
  say(
    judgement.held
      ? "rule held: a report naming the fault in time, no hang, no false pass, nothing left"
      : `RULE BROKEN:\n  ${judgement.violations.join("\n  ")}`,
  );
  if (record.leftovers.ours.length > 0)
    say(
      `left behind (remove by hand): ${record.leftovers.ours.join(", ")}${diff.oursLeft.some((i) => i.kind === "kind cluster") ? `; e.g. kind delete cluster --name ${cluster}` : ""}`,
    );
  say(
    `results: ${dir} (run.log, report.jsonl, before.json, after.json, leftovers.txt, record.json), ${table}`,
  );
  return { record, judgement, dir };
}
