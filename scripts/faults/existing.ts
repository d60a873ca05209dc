/**
 * The existing provider run as a user would run it on their own cluster, against a lab kind cluster, and two
 * such runs at once (issue 18):
 *
 * - `existing`: every object of the cluster by name before (clusters/objects.ts), the suite with
 *   CLUSTER_PROVIDER=existing CONFORMANCE_EXISTING_OK=1 and a KUBECONFIG naming only that context, every object
 *   after, the differences classified (ours must be none; Cilium's identities with when they go; churn by rule),
 *   and the run's own teardown report (teardown.json in its bundle);
 * - `concurrent`: two such runs started a moment apart on the same cluster, the Lease's holder read every 2 s
 *   while they run: exactly one holds it at a time; the other waits (LEASE_WAIT_S) or stops at once naming the
 *   holder; both end; the cluster is left as it was found.
 */
import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collectInventory, diffInventories, formatDiff, itemName } from "../../clusters/leftovers.ts";
import { compareObjects, formatComparison, snapshotObjects } from "../../clusters/objects.ts";
import { UserError } from "../../helpers/errors.ts";
import type { Executor } from "../../helpers/exec/types.ts";
import { groupGone, startChild } from "./child.ts";
import { readReport } from "./judge.ts";

export interface ExistingOptions {
  context: string;
  id: string;
  /** results/existing or results/concurrent */
  resultsDir: string;
  root: string;
  /** CONFORMANCE_MODE: fail when the agents say otherwise (the provider detects the mode either way). */
  mode?: string;
  /** LAB_IMAGES=1: the node shells and workloads use the lab's images (a lab cluster has no registry). */
  labImages: boolean;
  /** vitest file filters (e.g. suites/01-iptables); none: every spec. */
  filters: string[];
  /** The whole run's deadline (s). */
  runS: number;
  exec: Executor;
  log(line: string): void;
  echo?(s: string): void;
  /** Tests: the run's argv instead of vitest's (a fake child), and the kubeconfig it gets. */
  runArgv?: (runId: string) => string[];
  kubeconfig?: (context: string) => { file: string; remove: () => void };
  /** Tests: how often the Lease's holder is read (ms). */
  leasePollMs?: number;
}

/** A kubeconfig holding only `context` (as its current context), in a private temporary directory. */
function kubeconfigFor(context: string): { file: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "dpc-kubeconfig-"));
  const file = join(dir, "config");
  let text: string;
  try {
    text = execFileSync("kubectl", ["config", "view", "--minify", "--flatten", "--context", context], {
      encoding: "utf8",
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new UserError(
      `--context ${context}: kubectl config view failed: ${String((err as { stderr?: string }).stderr ?? err)
        .trim()
        .split("\n")
        .pop()}`,
    );
  }
  writeFileSync(file, text, { mode: 0o600 });
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

function runEnv(
  o: ExistingOptions,
  runId: string,
  kubeconfig: string,
  reportFile: string,
  leaseWaitS?: number,
) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CLUSTER_PROVIDER: "existing",
    CONFORMANCE_EXISTING_OK: "1",
    KUBECONFIG: kubeconfig,
    RUN_ID: runId,
    FAULT_REPORT_FILE: reportFile,
    // one topic at a time, as the scenarios were recorded (scripts/faults/driver.ts says why)
    CONFORMANCE_WORKERS: "1",
  };
  if (o.mode) env.CONFORMANCE_MODE = o.mode;
  else delete env.CONFORMANCE_MODE;
  if (o.labImages) env.LAB_IMAGES = "1";
  if (leaseWaitS !== undefined) env.LEASE_WAIT_S = String(leaseWaitS);
  delete env.KEEP_CLUSTER;
  return env;
}

const vitestArgv = (root: string, filters: string[]) => [
  process.execPath,
  join(root, "node_modules", "vitest", "vitest.mjs"),
  "run",
  "--project",
  "conformance",
  "--reporter=default",
  `--reporter=${join(root, "scripts", "faults", "reporter.ts")}`,
  ...filters,
];

async function runOne(
  o: ExistingOptions,
  dir: string,
  runId: string,
  kubeconfig: string,
  leaseWaitS?: number,
): Promise<{
  code: number | null;
  lines: string[];
  reportFile: string;
  startedAt: number;
  at: number;
  left: string[];
}> {
  const reportFile = join(dir, `${runId}.report.jsonl`);
  writeFileSync(reportFile, "");
  const startedAt = Date.now();
  const child = startChild({
    argv: o.runArgv ? o.runArgv(runId) : vitestArgv(o.root, o.filters),
    env: runEnv(o, runId, kubeconfig, reportFile, leaseWaitS),
    cwd: o.root,
    logFile: join(dir, `${runId}.log`),
    ...(o.echo ? { echo: (s: string) => o.echo?.(`[${runId}] ${s}`) } : {}),
  });
  const timer = setTimeout(() => {
    o.log(`${runId}: still running ${o.runS} s after its start: SIGTERM to its process group`);
    child.kill("SIGTERM", "group");
  }, o.runS * 1000);
  const exit = await child.exited;
  clearTimeout(timer);
  const left = await groupGone(o.exec, child.pid, o.runArgv ? 2000 : 15_000);
  if (left.length > 0) child.kill("SIGKILL", "group");
  return { code: exit.code, lines: child.lines.map((l) => l.text), reportFile, startedAt, at: exit.at, left };
}

/** The existing-provider run with the before/after comparison of every object. */
export async function runExisting(o: ExistingOptions): Promise<{ clean: boolean; dir: string }> {
  const dir = join(o.resultsDir, o.id);
  mkdirSync(dir, { recursive: true });
  const kc = (o.kubeconfig ?? kubeconfigFor)(o.context);
  try {
    o.log(`existing-provider run ${o.id} against context ${o.context}: every object before…`);
    const before = await snapshotObjects(o.exec, o.context);
    writeFileSync(join(dir, "objects-before.json"), `${JSON.stringify(before)}\n`);
    const invBefore = await collectInventory({ exec: o.exec, context: o.context });
    o.log(
      `${before.objects.length} objects of ${before.resources.length} types; running the suite (CLUSTER_PROVIDER=existing)…`,
    );
    const run = await runOne(o, dir, o.id, kc.file);
    o.log(
      `the run exited ${run.code} after ${Math.round((run.at - run.startedAt) / 1000)} s; every object after…`,
    );
    const after = await snapshotObjects(o.exec, o.context);
    writeFileSync(join(dir, "objects-after.json"), `${JSON.stringify(after)}\n`);
    const invAfter = await collectInventory({ exec: o.exec, context: o.context });
    const cmp = compareObjects(before, after);
    const inv = diffInventories(invBefore, invAfter);
    const mode =
      run.lines.map((l) => /mode (kpr|kube-proxy): the agents report/.exec(l)?.[1]).find(Boolean) ?? "?";
    const teardownFile = join(o.root, "results", o.id, mode, "teardown.json");
    const teardown = existsSync(teardownFile)
      ? (JSON.parse(readFileSync(teardownFile, "utf8")) as Record<string, unknown>)
      : null;
    const reports = readReport(readFileSync(run.reportFile, "utf8")).filter((r) => r.event === "test");
    const count = (s: string) => reports.filter((r) => r.state === s).length;
    const clean = cmp.clean && inv.oursLeft.length === 0 && run.left.length === 0;
    const md = [
      `# existing provider, for real: ${o.id}`,
      "",
      `context ${o.context}, mode ${mode} (detected from the agents), exit ${run.code}, ${count("passed")} passed, ${count("failed")} failed, ${count("skipped")} skipped, ${Math.round((run.at - run.startedAt) / 1000)} s`,
      `bundle: results/${o.id}/${mode}; the run's teardown: ${teardown ? JSON.stringify(teardown) : "(no teardown.json)"}`,
      "",
      "## every object before and after, by name",
      "",
      formatComparison(cmp),
      "## the leftover inventory",
      "",
      "```",
      formatDiff(inv).trimEnd(),
      "```",
      ...(run.left.length > 0
        ? ["", `processes of the run still alive after it exited: ${run.left.join("; ")}`]
        : []),
      "",
    ].join("\n");
    writeFileSync(join(dir, "comparison.md"), md);
    appendFileSync(
      join(o.resultsDir, "existing.jsonl"),
      `${JSON.stringify({ id: o.id, context: o.context, mode, exitCode: run.code, clean, passed: count("passed"), failed: count("failed"), skipped: count("skipped"), differences: cmp.differences.length, ours: inv.oursLeft.map(itemName), cilium: inv.ciliumLeft.map(itemName), teardown })}\n`,
    );
    o.log(`${clean ? "clean" : "NOT clean"}: ${formatComparison(cmp).split("\n")[0]}`);
    o.log(
      `results: ${dir} (comparison.md, objects-before.json, objects-after.json, ${o.id}.log, ${o.id}.report.jsonl); bundle results/${o.id}/${mode}`,
    );
    return { clean, dir };
  } finally {
    kc.remove();
  }
}

/** Reads, every 2 s, which run holds the Lease (the timeline of holders while two runs compete). */
function watchLease(
  exec: Executor,
  context: string,
  everyMs = 2000,
): { stop: () => Promise<{ at: number; holder: string }[]> } {
  const timeline: { at: number; holder: string }[] = [];
  let on = true;
  const loop = (async () => {
    while (on) {
      const r = await exec.run({
        target: { kind: "local" },
        argv: [
          "kubectl",
          "--context",
          context,
          "-n",
          "default",
          "get",
          "lease",
          "cilium-datapath-conformance",
          "-o",
          "jsonpath={.spec.holderIdentity}",
          "--ignore-not-found",
        ],
        timeoutMs: 30_000,
      });
      const holder = r.exitCode === 0 ? r.stdout.trim() || "(none)" : "(unreadable)";
      if (timeline.at(-1)?.holder !== holder) timeline.push({ at: Date.now(), holder });
      await new Promise((res) => setTimeout(res, everyMs));
    }
  })();
  return {
    stop: async () => {
      on = false;
      await loop;
      return timeline;
    },
  };
}

export interface ConcurrentVerdict {
  held: boolean;
  violations: string[];
  winner: string | null;
  loser: string | null;
}

/**
 * Two runs on one cluster (pure): the Lease never had a third holder and never went back to a run that had let
 * it go; the loser's output names the winner — `another run (<winner>) holds Lease` when it stopped at once,
 * `waiting for run <winner>` then `took Lease` when it waited; both exited; nothing left.
 */
export function judgeConcurrent(i: {
  a: string;
  b: string;
  leaseWaitS: number;
  timeline: { at: number; holder: string }[];
  logs: Record<string, string[]>;
  exits: Record<string, number | null>;
  left: string[];
}): ConcurrentVerdict {
  const v: string[] = [];
  const holders = i.timeline.map((t) => t.holder).filter((h) => h !== "(none)" && h !== "(unreadable)");
  const strangers = holders.filter((h) => h !== i.a && h !== i.b);
  if (strangers.length > 0)
    v.push(`the Lease was held by another run too: ${[...new Set(strangers)].join(", ")}`);
  const order = holders.filter((h, k) => holders[k - 1] !== h);
  if (order.length > 2 || (order.length === 2 && order[0] === order[1]))
    v.push(`the Lease changed hands back and forth: ${order.join(" → ")}`);
  const says = (run: string, re: RegExp) => (i.logs[run] ?? []).some((l) => re.test(l));
  const refused = [i.a, i.b].filter((r) =>
    says(r, /another run \((\S+)\) holds Lease default\/cilium-datapath-conformance/),
  );
  const waited = [i.a, i.b].filter((r) => says(r, /waiting for run \S+ to release Lease/));
  let winner: string | null = null;
  let loser: string | null = null;
  if (i.leaseWaitS === 0) {
    if (refused.length !== 1)
      v.push(`expected exactly one run to be refused the Lease at once, got ${refused.length}`);
    else {
      loser = refused[0] as string;
      winner = loser === i.a ? i.b : i.a;
      if (!says(loser, new RegExp(`another run \\(${winner}\\) holds Lease`)))
        v.push(`${loser}'s refusal does not name ${winner}`);
      if (i.exits[loser] === 0) v.push(`${loser} was refused the Lease but exited 0`);
    }
  } else {
    if (waited.length !== 1) v.push(`expected exactly one run to wait for the Lease, got ${waited.length}`);
    else {
      loser = waited[0] as string;
      winner = loser === i.a ? i.b : i.a;
      if (!says(loser, new RegExp(`waiting for run ${winner} to release Lease`)))
        v.push(`${loser}'s wait does not name ${winner}`);
      if (!says(loser, /took Lease default\/cilium-datapath-conformance after/) && refused.length === 0)
        v.push(`${loser} neither took the Lease after waiting nor gave up naming the holder`);
      if (order.length === 2 && order[0] !== winner) v.push(`${loser} held the Lease before ${winner}`);
    }
  }
  for (const r of [i.a, i.b]) {
    if (i.exits[r] === undefined) v.push(`${r} did not exit`);
    else if (i.exits[r] === null) v.push(`${r} was ended by a signal (its deadline)`);
  }
  if (i.left.length > 0) v.push(`left behind: ${i.left.join(", ")}`);
  return { held: v.length === 0, violations: v, winner, loser };
}

/** Two existing-provider runs at once on the same cluster. */
export async function runConcurrent(
  o: ExistingOptions & { leaseWaitS: number; staggerS: number },
): Promise<{ held: boolean; dir: string }> {
  const dir = join(o.resultsDir, o.id);
  mkdirSync(dir, { recursive: true });
  const kc = (o.kubeconfig ?? kubeconfigFor)(o.context);
  const a = `${o.id}-a`;
  const b = `${o.id}-b`;
  try {
    const before = await snapshotObjects(o.exec, o.context);
    const invBefore = await collectInventory({ exec: o.exec, context: o.context });
    o.log(
      `two runs on ${o.context}: ${a} now, ${b} ${o.staggerS} s later (LEASE_WAIT_S=${o.leaseWaitS} for both)`,
    );
    const lease = watchLease(o.exec, o.context, o.leasePollMs);
    const runA = runOne(o, dir, a, kc.file, o.leaseWaitS);
    await new Promise((r) => setTimeout(r, o.staggerS * 1000));
    const runB = runOne(o, dir, b, kc.file, o.leaseWaitS);
    const [ra, rb] = await Promise.all([runA, runB]);
    const timeline = await lease.stop();
    const after = await snapshotObjects(o.exec, o.context);
    const invAfter = await collectInventory({ exec: o.exec, context: o.context });
    const cmp = compareObjects(before, after);
    const inv = diffInventories(invBefore, invAfter);
    const verdict = judgeConcurrent({
      a,
      b,
      leaseWaitS: o.leaseWaitS,
      timeline,
      logs: { [a]: ra.lines, [b]: rb.lines },
      exits: { [a]: ra.code, [b]: rb.code },
      left: [
        ...inv.oursLeft.map(itemName),
        ...cmp.differences
          .filter((d) => d.class === "ours" || d.class === "unexplained")
          .map((d) => `${d.change} ${d.ref.kind} ${d.ref.namespace}/${d.ref.name}`),
        ...ra.left,
        ...rb.left,
      ],
    });
    const summary = {
      id: o.id,
      context: o.context,
      leaseWaitS: o.leaseWaitS,
      runs: {
        [a]: { exit: ra.code, seconds: Math.round((ra.at - ra.startedAt) / 1000) },
        [b]: { exit: rb.code, seconds: Math.round((rb.at - rb.startedAt) / 1000) },
      },
      timeline: timeline.map((t) => ({ at: new Date(t.at).toISOString(), holder: t.holder })),
      ...verdict,
    };
    writeFileSync(join(dir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
    writeFileSync(join(dir, "comparison.md"), formatComparison(cmp));
    appendFileSync(join(o.resultsDir, "concurrent.jsonl"), `${JSON.stringify(summary)}\n`);
    o.log(`Lease holders over time: ${timeline.map((t) => t.holder).join(" → ")}`);
    o.log(
      `${a} exited ${ra.code}, ${b} exited ${rb.code}; ${verdict.held ? `rule held: ${verdict.winner} held the Lease, ${verdict.loser} ${o.leaseWaitS > 0 ? "waited for it" : "stopped at once naming it"}; nothing left` : `RULE BROKEN:\n  ${verdict.violations.join("\n  ")}`}`,
    );
    o.log(`results: ${dir} (summary.json, comparison.md, ${a}.log, ${b}.log)`);
    return { held: verdict.held, dir };
  } finally {
    kc.remove();
  }
}
