/**
 * `datapath-conformance lab run`: the whole job on a machine without a registry, in four phases —
 * images (clusters/lab/lab.sh images: finished steps are skipped), engine (lab up), conformance (both modes
 * on kind with the lab's images) and report (one HTML page) — with a progress line per phase and, for a cold
 * build, an estimate. What runs is injected (LabRunDeps), so the plan, the estimate and the order are tested
 * without building or starting anything.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve as resolvePath } from "node:path";
import { pathToFileURL } from "node:url";
import { parseOptionalMode } from "../clusters/choices.ts";
import { PROFILES, parseDatapathProfile } from "../clusters/datapath-profiles.ts";
import { LAB_SCRIPT, type Lab, labCilium, readLab } from "../clusters/lab.ts";
import { findBundles } from "../helpers/bundle/read.ts";
import { UserError } from "../helpers/errors.ts";
import { ownLines, terminalText } from "../helpers/output.ts";
import { MODES } from "../helpers/properties/expectation.ts";
import type { Io } from "./io.ts";
import { printErr } from "./print.ts";

export interface LabRunOptions {
  mode?: string | undefined;
  cilium?: string | undefined;
  /** A datapath profile (DATAPATH_PROFILE): its modes unless --mode. */
  profile?: string | undefined;
  /** The user's Helm values file (CILIUM_VALUES). */
  values?: string | undefined;
  dryRun: boolean;
}

/** One external command a phase runs (its output goes straight to the terminal). */
export interface PhaseCommand {
  argv: string[];
  env: Record<string, string>;
}

export interface ReportCounts {
  label: string;
  pass: number;
  fail: number;
  /** Properties a version's known issue breaks: neither passed nor failed, always said. */
  knownIssues: number;
  skip: number;
  /** Changed in a new minor (its expectations assumed from the newest declared one): always said. */
  changed?: number;
  /** Its comparison with the nearest shipped bundle, in one line (a version the suite ships none of). */
  nearest?: string;
}

export interface LabRunDeps {
  lab: Lab;
  /** The repository (results/ is under it). */
  root: string;
  platform: NodeJS.Platform;
  isRoot: boolean;
  /**
   * Every step `lab.sh images` builds, in order (`lab.sh steps`), with the steps of Cilium `cilium` when
   * versions.env does not name it (`lab.sh steps VERSION`).
   */
  steps(cilium: string): Promise<string[]>;
  /** Steps with a stamp in $LAB_CACHE/stamps (built earlier). */
  stamped(): Set<string>;
  /** The last time each step took (seconds), from $LAB_CACHE/timings.tsv. */
  timings(): Map<string, number>;
  /** Runs one phase's command; resolves with its exit code. */
  run(cmd: PhaseCommand): Promise<number>;
  /** The evidence bundles (folders with a bundle.json) under a run's results folder. */
  bundles(runDir: string): string[];
  /** Writes the HTML report of those bundles to `out`; the verdict counts per bundle. */
  writeReport(dirs: string[], out: string): Promise<ReportCounts[]>;
  now(): Date;
  /** Progress lines. */
  log(line: string): void;
}

/**
 * The measured cold build of one Cilium version: the images phase of `lab run` from a fresh clone with an empty
 * cache, on the 2-core development machine while other builds and test runs kept it busy (2026-12-03): 58 min
 * 54 s. docs/lab.md states it (generated from this constant); `lab run --dry-run` estimates from it where this
 * machine has no timings of its own.
 */
export const COLD_BUILD = {
  seconds: 58 * 60 + 54,
  how: "the images phase of `lab run` from a fresh clone with an empty cache, one Cilium version, on 2 cores busy with other builds and test runs (2026-12-03)",
  /** The same build on fresh machines with less beside it (the estimate keeps the busy figure: the worse case). */
  quieter: [
    { seconds: 31 * 60 + 58, when: "2026-12-03, test runs beside it at times" },
    {
      seconds: 22 * 60 + 44,
      when: "2026-12-05, unit test runs beside it at times; Cilium 1.20.2 in 5 min 16 s",
    },
  ],
} as const;

/**
 * Each step's share of that cold build: the per-step cold times of docs/lab.md's table, as weights (first match
 * wins). A step's cold estimate is its weight scaled so that one Cilium version's steps add up to COLD_BUILD.
 */
export const STEP_WEIGHTS: [RegExp, number][] = [
  [/^host-packages$/, 30],
  [/^rootfs-base$/, 80],
  [/^rootfs-node$/, 63],
  [/^rootfs-cilium$/, 154],
  [/^tools$/, 135],
  [/^kubernetes$/, 592],
  [/^etcd$/, 69],
  [/^coredns$/, 353],
  [/^pause$/, 1],
  [/^cilium-/, 906],
  [/^image-cilium-/, 12],
  [/^image-node-base$/, 2],
  [/^image-node$/, 180],
  [/^image-/, 3],
];

/** The steps a cold build of one Cilium version runs (`lab.sh steps` without the other versions' builds). */
export const ONE_VERSION_STEPS = [
  "host-packages",
  "rootfs-base",
  "tools",
  "kubernetes",
  "etcd",
  "coredns",
  "pause",
  "rootfs-node",
  "rootfs-cilium",
  "image-kube-apiserver",
  "image-kube-controller-manager",
  "image-kube-scheduler",
  "image-kube-proxy",
  "image-etcd",
  "image-coredns",
  "image-pause",
  "image-agnhost",
  "image-tools",
  "image-node-base",
  "cilium-X",
  "image-cilium-X",
  "image-node",
];

const weight = (step: string) => STEP_WEIGHTS.find(([re]) => re.test(step))?.[1] ?? 60;
const COLD_SCALE = COLD_BUILD.seconds / ONE_VERSION_STEPS.reduce((t, s) => t + weight(s), 0);

/** A step's cold time on a machine without timings of its own: its share of the measured cold build. */
export function coldSeconds(step: string): number {
  return weight(step) * COLD_SCALE;
}

export interface StepEstimate {
  step: string;
  seconds: number;
  from: "built" | "timings.tsv" | "measured";
}

/** What each step will cost: 0 when stamped, else this machine's last time, else its share of the cold build. */
export function estimateBuild(
  steps: string[],
  stamped: Set<string>,
  timings: Map<string, number>,
): StepEstimate[] {
  return steps.map((step) => {
    if (stamped.has(step)) return { step, seconds: 0, from: "built" };
    const own = timings.get(step);
    if (own !== undefined) return { step, seconds: own, from: "timings.tsv" };
    return { step, seconds: coldSeconds(step), from: "measured" };
  });
}

export function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min${s % 60 ? ` ${s % 60} s` : ""}`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** `1 of 25 steps to build, about 38 min (kubernetes 11 min, …; figures from …)`, or that nothing is missing. */
export function describeEstimate(est: StepEstimate[]): string {
  const todo = est.filter((e) => e.from !== "built");
  if (todo.length === 0) return `all ${est.length} steps built earlier: nothing to build`;
  const total = todo.reduce((t, e) => t + e.seconds, 0);
  const biggest = [...todo]
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, 3)
    .map((e) => `${e.step} ${formatDuration(e.seconds)}`);
  const sources = [
    ...new Set(
      todo.map((e) =>
        e.from === "measured"
          ? `the measured cold build (${formatDuration(COLD_BUILD.seconds)} for one Cilium version, docs/lab.md)`
          : "timings.tsv",
      ),
    ),
  ];
  return `${todo.length} of ${est.length} steps to build, about ${formatDuration(total)} (${biggest.join(", ")}${todo.length > 3 ? ", …" : ""}; from ${sources.join(" and ")})`;
}

/** The steps a run with Cilium `version` needs: all but the other Cilium versions' builds. */
export function stepsFor(steps: string[], lab: Lab, version: string): string[] {
  const others = lab.ciliumVersions.filter((v) => v !== version);
  return steps.filter((s) => !others.some((v) => s === `cilium-${v}` || s === `image-cilium-${v}`));
}

export interface Phase {
  name: "images" | "engine" | "conformance" | "report";
  /** What the progress line says it does. */
  says: string;
  command?: PhaseCommand;
}

export interface LabRunPlan {
  runId: string;
  runDir: string;
  cilium: string;
  modes: string[];
  estimate: StepEstimate[];
  phases: Phase[];
}

/**
 * The options against the lab: the Cilium version to run, validated as every command validates it
 * (resolveCilium), a minor mapped to the lab's build of it (1.19 → 1.19.7), the lab's newest unless given. The
 * version is a parameter: a patch versions.env does not name (1.19.8, 1.21.0) is built by the images phase, and
 * what the module proxy refuses of it is said there, in one line per module file.
 */
export function checkOptions(opts: LabRunOptions, lab: Lab): string {
  parseOptionalMode(opts.mode);
  return labCilium(lab, opts.cilium).version;
}

/** The four phases, their commands and the build estimate: pure. */
export function planLabRun(
  opts: LabRunOptions,
  ctx: {
    lab: Lab;
    root: string;
    steps: string[];
    stamped: Set<string>;
    timings: Map<string, number>;
    now: Date;
  },
): LabRunPlan {
  const cilium = checkOptions(opts, ctx.lab);
  const profile = parseDatapathProfile(opts.profile);
  const modes = opts.mode ? [opts.mode] : profile ? [...PROFILES[profile].modes] : [...MODES];
  const runId = `lab-${ctx.now.toISOString().replace(/[-:]/g, "").replace("T", "-").replace(/\..*/, "")}`;
  const runDir = join(ctx.root, "results", runId);
  const needed = stepsFor(ctx.steps, ctx.lab, cilium);
  const estimate = estimateBuild(needed, ctx.stamped, ctx.timings);
  const vitest = join(ctx.root, "node_modules", "vitest", "vitest.mjs");
  return {
    runId,
    runDir,
    cilium,
    modes,
    estimate,
    phases: [
      {
        name: "images",
        says: describeEstimate(estimate),
        // every step by name when the run needs fewer than all (another Cilium version's build is left out)
        command: {
          argv: ["bash", LAB_SCRIPT, "images", ...(needed.length < ctx.steps.length ? needed : [])],
          env: { LAB_CACHE: ctx.lab.cache },
        },
      },
      {
        name: "engine",
        says: "the lab's container engine (started if none runs; `lab down` stops it)",
        command: { argv: ["bash", LAB_SCRIPT, "up"], env: { LAB_CACHE: ctx.lab.cache } },
      },
      {
        name: "conformance",
        says: `${modes.length === 2 ? "both modes" : `mode ${modes[0]}`} (${modes.join(", ")}) on kind with the lab's images, Cilium ${cilium}${profile ? `, datapath profile ${profile}` : ""}, run ${runId}`,
        command: {
          argv: [process.execPath, vitest, "run", "--project", "conformance"],
          env: {
            LAB_CACHE: ctx.lab.cache,
            LAB_IMAGES: "1",
            CLUSTER_PROVIDER: "kind",
            CILIUM_VERSION: cilium,
            RUN_ID: runId,
            ...(opts.mode || modes.length === 1 ? { CONFORMANCE_MODE: modes[0] as string } : {}),
            ...(profile ? { DATAPATH_PROFILE: profile } : {}),
            ...(opts.values ? { CILIUM_VALUES: resolvePath(opts.values) } : {}),
          },
        },
      },
      { name: "report", says: `one HTML page of the run's bundles: ${join(runDir, "report.html")}` },
    ],
  };
}

/** The exit code of a phase stopped by Ctrl-C (128 + SIGINT). */
const INTERRUPTED = 130;

/** Runs the plan phase by phase; stops at a failed build or engine; writes the report whatever the verdicts. */
export async function labRun(opts: LabRunOptions, deps: LabRunDeps): Promise<number> {
  const cilium = checkOptions(opts, deps.lab);
  if (!opts.dryRun) {
    if (deps.platform !== "linux") throw new UserError("the offline lab builds on Linux only");
    if (!deps.isRoot)
      throw new UserError(
        "the offline lab needs root (it installs Debian packages and starts dockerd); run as root",
      );
  }
  const plan = planLabRun(opts, {
    lab: deps.lab,
    root: deps.root,
    steps: await deps.steps(cilium),
    stamped: deps.stamped(),
    timings: deps.timings(),
    now: deps.now(),
  });
  const n = plan.phases.length;
  const say = (i: number, line: string) => deps.log(`[lab run ${i + 1}/${n}] ${line}`);
  // a path under the working directory as the user would type it, any other in full
  const shown = (p: string) => {
    const rel = relative(process.cwd(), p);
    return rel && !rel.startsWith("..") ? rel : p;
  };
  if (opts.dryRun) {
    plan.phases.forEach((p, i) => {
      say(i, `${p.name}: ${p.says}`);
      if (p.command)
        deps.log(
          `    ${Object.entries(p.command.env)
            .map(([k, v]) => `${k}=${v}`)
            .join(" ")} ${p.command.argv.join(" ")}`,
        );
    });
    return 0;
  }
  let verdictsFailed = 0;
  for (const [i, p] of plan.phases.entries()) {
    const t0 = deps.now().getTime();
    const took = () => formatDuration((deps.now().getTime() - t0) / 1000);
    say(i, `${p.name}: ${p.says}`);
    if (p.command) {
      const code = await deps.run(p.command);
      if (code === INTERRUPTED) {
        say(i, `${p.name}: interrupted after ${took()}; nothing further runs`);
        return code;
      }
      if (p.name === "conformance") {
        verdictsFailed = code;
        say(
          i,
          `${p.name}: ${code === 0 ? "every spec passed" : `exit ${code} (a property failed or a spec could not run)`} after ${took()}`,
        );
        continue;
      }
      if (code !== 0) {
        say(i, `${p.name}: FAILED (exit ${code}) after ${took()}; nothing further runs`);
        return code;
      }
      say(i, `${p.name}: done in ${took()}`);
      continue;
    }
    const dirs = deps.bundles(plan.runDir);
    if (dirs.length === 0) {
      say(i, `${p.name}: the conformance phase left no bundle under ${shown(plan.runDir)}: no report`);
      return verdictsFailed || 1;
    }
    const out = join(plan.runDir, "report.html");
    const counts = await deps.writeReport(dirs, out);
    for (const c of counts) {
      // the label and the comparison carry a bundle's strings (its version, its profile): each one line, shown
      const label = terminalText(c.label);
      say(
        i,
        `${label}: ${c.pass} passed, ${c.fail} failed, ${c.changed ? `${c.changed} changed in the new minor, ` : ""}${c.knownIssues > 0 ? `${c.knownIssues} known issue${c.knownIssues === 1 ? "" : "s"}, ` : ""}${c.skip} skipped`,
      );
      // a version the suite ships no bundle of: what changed from the nearest shipped one (the page opens on it)
      if (c.nearest) say(i, `${label}: ${terminalText(c.nearest)}`);
    }
    say(i, `${p.name}: written in ${took()}: ${shown(out)} (${pathToFileURL(out).href})`);
  }
  return verdictsFailed;
}

/** timings.tsv: `step<TAB>seconds<TAB>when` lines; the last line of a step wins. */
export function parseTimings(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of text.split("\n")) {
    const [step, secs] = line.split("\t");
    if (step && secs && /^\d+$/.test(secs)) m.set(step, Number(secs));
  }
  return m;
}

export async function realLabRunDeps(io: Required<Io>): Promise<LabRunDeps> {
  const { execa } = await import("execa");
  const lab = readLab();
  const root = join(import.meta.dirname, "..");
  return {
    lab,
    root,
    platform: process.platform,
    isRoot: process.getuid?.() === 0,
    steps: async (cilium) => {
      const extra = lab.ciliumVersions.includes(cilium) ? [] : [cilium];
      const r = await execa("bash", [LAB_SCRIPT, "steps", ...extra], {
        env: { LAB_CACHE: lab.cache },
        reject: false,
      });
      if (r.exitCode !== 0) throw new UserError(`${LAB_SCRIPT} steps failed: ${r.stderr.split("\n")[0]}`);
      return r.stdout.split("\n").filter(Boolean);
    },
    stamped: () => {
      const dir = join(lab.cache, "stamps");
      return new Set(existsSync(dir) ? readdirSync(dir).filter((f) => !f.startsWith(".")) : []);
    },
    timings: () => {
      const file = join(lab.cache, "timings.tsv");
      return existsSync(file) ? parseTimings(readFileSync(file, "utf8")) : new Map();
    },
    run: async (cmd) => {
      const [bin, ...args] = cmd.argv as [string, ...string[]];
      // Ctrl-C reaches the phase's process too: it cleans up (the conformance project tears its clusters
      // down) and exits; this process waits for it instead of leaving it behind
      const wait = () => {};
      process.on("SIGINT", wait);
      try {
        const r = await execa(bin, args, { env: cmd.env, stdio: "inherit", reject: false, cwd: root });
        return r.exitCode ?? (r.signal ? INTERRUPTED : 1);
      } finally {
        process.off("SIGINT", wait);
      }
    },
    bundles: (runDir) => findBundles(runDir),
    writeReport: async (dirs, out) => {
      const { TOPICS } = await import("../suites/topics.ts");
      const { writeReport } = await import("../helpers/report/write.ts");
      return (await writeReport(dirs, TOPICS, out)).columns;
    },
    now: () => new Date(),
    log: (line) => printErr(io, ownLines(`${line}\n`)),
  };
}
