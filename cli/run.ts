/**
 * `datapath-conformance run`: the main job as one command. Its inputs are `plan`'s (clusters/run-inputs.ts: one
 * parser, flags over the environment); it starts what `npm run test:conformance` runs (vitest, the conformance
 * project) with the environment those inputs give, then judges the bundles the run wrote with `check`'s machinery
 * (and an upgrade run with `upgrade`'s gate), and ends on a summary naming each failure and known issue with its
 * first raw line. What runs is injected (RunDeps), so the command, its environment and the summary are tested
 * without a cluster.
 */

import { join, relative } from "node:path";
import type { Provider } from "../clusters/choices.ts";
import { PARTS } from "../clusters/parts.ts";
import { type RunInputs, runEnv, testNamePattern } from "../clusters/run-inputs.ts";
import type { CheckResult } from "../helpers/check.ts";
import { UserError } from "../helpers/errors.ts";
import { type TerminalText, terminal, terminalLines } from "../helpers/output.ts";
import type { Verdict } from "../helpers/properties/judge.ts";
import { countSentence, isFailure, isKnownIssue } from "../helpers/properties/status.ts";
import { showItem } from "../helpers/records/evidence.ts";
import { formatDuration, type PhaseCommand } from "./lab-run.ts";

export interface RunOptions {
  inputs: RunInputs;
  dryRun: boolean;
}

export interface RunDeps {
  /** The repository: vitest is started there, results/ is under it. */
  root: string;
  env: NodeJS.ProcessEnv;
  now(): Date;
  /** Starts the conformance project; resolves with its exit code. */
  spawn(cmd: PhaseCommand): Promise<number>;
  /** The bundles the run wrote (under its results folder; a replay's: its newest replay folder since `since`). */
  bundles(runDir: string, provider: Provider, since: Date): string[];
  /** `check`'s judgement of one bundle. */
  check(dir: string): Promise<CheckResult>;
  /** `upgrade`'s gate of an upgrade bundle: its one-line answer and exit code (null: not an upgrade bundle). */
  gate(dir: string): Promise<{ headline: string; exitCode: number } | null>;
  /** Progress, on stderr. */
  log(line: string): void;
  /** The summary, on stdout. */
  say(text: TerminalText): void;
}

export interface RunPlan {
  runId: string;
  runDir: string;
  command: PhaseCommand;
}

/** `run-20261207-041502`: the run's results folder when RUN_ID is not set. */
export function defaultRunId(now: Date): string {
  return `run-${now.toISOString().replace(/[-:]/g, "").replace("T", "-").replace(/\..*/, "")}`;
}

/** The vitest command and its environment: what `npm run test:conformance` runs, with the run's variables. */
export function planRun(
  inputs: RunInputs,
  ctx: { root: string; env: NodeJS.ProcessEnv; now: Date },
): RunPlan {
  const runId = ctx.env.RUN_ID || defaultRunId(ctx.now);
  const results = ctx.env.CONFORMANCE_RESULTS || join(ctx.root, "results");
  const pattern = testNamePattern(inputs);
  return {
    runId,
    runDir: join(results, runId),
    command: {
      argv: [
        process.execPath,
        join(ctx.root, "node_modules", "vitest", "vitest.mjs"),
        "run",
        "--project",
        "conformance",
        ...(pattern !== undefined ? ["--testNamePattern", pattern] : []),
        ...(inputs.part !== undefined ? PARTS[inputs.part] : []),
      ],
      env: { ...runEnv(inputs), RUN_ID: runId },
    },
  };
}

/** What the run is, in one line: `kind × kpr, kube-proxy × Cilium 1.20.2 …`. */
function describe(i: RunInputs): string {
  // existing and replay read the mode and the version there: said in plan's words
  const reads = i.provider === "existing" || i.provider === "replay";
  const from = i.provider === "existing" ? "its agents report" : "the bundle recorded";
  const modes = !reads
    ? i.modes.join(", ")
    : i.mode
      ? `${i.mode} (must be the mode ${from})`
      : `the mode ${from}`;
  return [
    `${i.provider} × ${modes} × ${reads ? `the Cilium version ${from}` : `Cilium ${i.version?.version}`}`,
    ...(i.profile ? [`datapath profile ${i.profile}`] : []),
    ...(i.values ? [`your values ${i.values.file}`] : []),
    ...(i.upgradeTo
      ? [`then the upgrade to ${i.upgradeTo}${i.rollback ? " and the rollback" : ""} under load`]
      : []),
    ...(i.test !== undefined ? [`tests matching /${i.test}/`] : []),
    ...(i.skip !== undefined ? [`without those matching /${i.skip}/`] : []),
    ...(i.part !== undefined ? [`part ${i.part} of the topics`] : []),
    ...(i.keep ? ["clusters kept"] : []),
  ].join(", ");
}

/** The verdict's first raw line (a quoted line, else its first item), shown at its place. */
export function firstRawLine(v: Pick<Verdict, "evidence">): string {
  const items = Array.isArray(v.evidence) ? v.evidence : [];
  const item = items.find((e) => typeof e === "object" && e !== null && "quote" in e) ?? items[0];
  if (item === undefined) return "(no evidence)";
  return typeof item === "string" ? item : showItem(item);
}

const INTERRUPTED = 130;

/** A word as a shell would need it (quoted when it holds more than letters, digits and `/._=:,@+-`). */
const shellWord = (w: string) => (/^[\w/.=:,@+-]+$/.test(w) ? w : `'${w.replaceAll("'", "'\\''")}'`);

/** Counts of one judged bundle, as `check` ends. */
function counts(r: CheckResult): string {
  return countSentence(r.verdicts);
}

/** The closing summary: every bundle's counts, each failure and known issue with its first raw line, the gates. */
export function formatSummary(
  runId: string,
  what: string,
  judged: { dir: string; result: CheckResult }[],
  gates: { dir: string; headline: string; exitCode: number }[],
  next: string | null,
): TerminalText {
  const width = judged.reduce((w, j) => Math.max(w, j.dir.length), 0);
  const lines: TerminalText[] = [
    terminal``,
    terminal`run ${runId}: ${what}`,
    ...judged.map((j) => terminal`  ${j.dir.padEnd(width)}  ${counts(j.result)}`),
  ];
  const listed = (which: (s: Verdict["status"]) => boolean, title: string, tag: string) => {
    const vs = judged.flatMap((j) =>
      j.result.verdicts.filter((v) => which(v.status)).map((v) => ({ dir: j.dir, v })),
    );
    if (vs.length === 0) return;
    lines.push(terminal``, terminal`${title} (${vs.length}):`);
    for (const { dir, v } of vs) {
      lines.push(terminal`  ${tag} ${dir}  ${v.id}: expected ${v.expected}, observed ${v.observed}`);
      lines.push(terminal`        ${firstRawLine(v)}`);
    }
  };
  listed(isFailure, "failures", "FAIL ");
  listed(isKnownIssue, "known issues (a bug declared for the version, with its upstream reference)", "KNOWN");
  for (const g of gates) lines.push(terminal``, terminal`upgrade ${g.dir}: ${g.headline}`);
  if (next) lines.push(terminal``, terminal`${next}`);
  return terminalLines([...lines, terminal``]);
}

/** Runs the conformance project, judges what it wrote, ends on the summary; the exit code is the worst. */
export async function run(opts: RunOptions, deps: RunDeps): Promise<number> {
  const start = deps.now();
  const plan = planRun(opts.inputs, { root: deps.root, env: deps.env, now: start });
  const phases = opts.inputs.upgradeTo ? 3 : 2;
  const say = (i: number, line: string) => deps.log(`[run ${i}/${phases}] ${line}`);
  const shown = (p: string) => {
    const rel = relative(process.cwd(), p);
    return rel && !rel.startsWith("..") ? rel : p;
  };
  const what = describe(opts.inputs);
  for (const note of opts.inputs.notes) deps.log(`[run] ${note}`);
  say(1, `conformance: ${what}; bundles in ${shown(plan.runDir)}`);
  if (opts.dryRun) {
    const env = Object.entries(plan.command.env)
      .filter(([, v]) => v !== "")
      .map(([k, v]) => `${k}=${shellWord(v)}`);
    deps.log(`    ${env.join(" ")} ${plan.command.argv.map(shellWord).join(" ")}`);
    say(2, "check: every bundle the run wrote, judged as `check` judges it");
    if (phases === 3)
      say(3, "upgrade: the gate `upgrade BUNDLE` gives (HELD, BROKEN, REGRESSED or INCONCLUSIVE)");
    return 0;
  }
  const code = await deps.spawn(plan.command);
  const took = formatDuration((deps.now().getTime() - start.getTime()) / 1000);
  if (code === INTERRUPTED) {
    say(1, `conformance: interrupted after ${took}; nothing further runs`);
    return code;
  }
  say(
    1,
    `conformance: ${code === 0 ? "every spec passed" : `exit ${code} (a property failed or a spec could not run)`} after ${took}`,
  );
  const dirs = deps.bundles(plan.runDir, opts.inputs.provider, start);
  if (dirs.length === 0) {
    say(
      2,
      `check: the run left no bundle under ${shown(plan.runDir)}: nothing to judge (its output above says why)`,
    );
    return code || 1;
  }
  const judged: { dir: string; result: CheckResult }[] = [];
  let unread = 0;
  for (const dir of dirs) {
    // a bundle that cannot be read is one line, and the others are still judged
    let result: CheckResult;
    try {
      result = await deps.check(dir);
    } catch (err) {
      if (!(err instanceof UserError)) throw err;
      unread++;
      say(2, `check: ${shown(dir)}: ${err.message}`);
      continue;
    }
    judged.push({ dir: shown(dir), result });
    say(2, `check: ${shown(dir)}: ${counts(result)}`);
  }
  const gates: { dir: string; headline: string; exitCode: number }[] = [];
  if (phases === 3)
    for (const dir of dirs) {
      let g: Awaited<ReturnType<RunDeps["gate"]>>;
      try {
        g = await deps.gate(dir);
      } catch (err) {
        if (!(err instanceof UserError)) throw err;
        gates.push({ dir: shown(dir), headline: `not judged: ${err.message}`, exitCode: 1 });
        say(3, `upgrade: ${shown(dir)}: not judged: ${err.message}`);
        continue;
      }
      if (!g) continue;
      gates.push({ dir: shown(dir), ...g });
      say(3, `upgrade: ${shown(dir)}: ${g.headline}`);
    }
  const top = dirs.filter((d) => !/after-(upgrade|rollback)$/.test(d)).map(shown);
  const next = `the report: datapath-conformance report ${top.join(" ")} -o ${shown(join(plan.runDir, "report.html"))}`;
  deps.say(formatSummary(plan.runId, what, judged, gates, next));
  const failed = judged.some((j) => j.result.verdicts.some((v) => isFailure(v.status)));
  return Math.max(code, failed || unread > 0 ? 1 : 0, ...gates.map((g) => g.exitCode));
}

/** The real dependencies: vitest started in the repository, the bundles read with `check` and `upgrade`. */
export async function realRunDeps(io: {
  env: NodeJS.ProcessEnv;
  log(line: string): void;
  say(text: TerminalText): void;
}): Promise<RunDeps> {
  const { execa } = await import("execa");
  const { existsSync, readdirSync, statSync } = await import("node:fs");
  const { findBundles } = await import("../helpers/bundle/read.ts");
  const { checkBundle } = await import("../helpers/check.ts");
  const { TOPICS } = await import("../suites/topics.ts");
  const { gateUpgrade, readingBundles } = await import("./commands.ts");
  const { readMeta } = await import("../helpers/bundle/read.ts");
  const root = join(import.meta.dirname, "..");
  return {
    root,
    env: io.env,
    now: () => new Date(),
    spawn: async (cmd) => {
      const [bin, ...args] = cmd.argv as [string, ...string[]];
      // Ctrl-C reaches vitest too: it tears its clusters down and exits 130; this process waits for it
      const wait = () => {};
      process.on("SIGINT", wait);
      try {
        const r = await execa(bin, args, {
          env: { ...io.env, ...cmd.env },
          extendEnv: false,
          stdio: "inherit",
          reject: false,
          cwd: root,
        });
        return r.exitCode ?? (r.signal ? INTERRUPTED : 1);
      } finally {
        process.off("SIGINT", wait);
      }
    },
    bundles: (runDir, provider, since) => {
      if (provider !== "replay") return findBundles(runDir);
      // a replay writes to results/replay-<ms>/: the newest since the start
      const results = join(runDir, "..");
      const mine = existsSync(results)
        ? readdirSync(results)
            .filter((d) => /^replay-\d+$/.test(d) && statSync(join(results, d)).mtimeMs >= since.getTime())
            .sort()
        : [];
      return mine.length ? findBundles(join(results, mine.at(-1) as string)) : [];
    },
    check: (dir) => readingBundles([dir], () => checkBundle(dir, TOPICS)),
    gate: async (dir) => {
      if (!(await readingBundles([dir], async () => readMeta(dir))).upgrade) return null;
      const g = await gateUpgrade(dir, {});
      return { headline: g.headline, exitCode: g.exitCode };
    },
    log: io.log,
    say: io.say,
  };
}
