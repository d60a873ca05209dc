/**
 * The cluster figures of `npm run bench` (issue 20), each beside a reference measured in the same run:
 * - create cluster, against a bare `kind create cluster` with the same node image and config (goal ≤ 1.2×);
 * - Cilium ready, against the agents' own start: the slowest agent's time from its Pod's start to its first
 *   `cilium-dbg status --brief` OK (bundle.json phases["agents' own start (max)"]; goal ≤ 1.2×);
 * - measure-scale, the suite's time for the topic against the convergence it measured (goal ≤ 1.5×);
 * - one mode end to end (goal ≤ 4 min) and both modes' wall (goal ≤ 6 min, against the two modes one after the
 *   other).
 * `--bundle`/`--run` read a recorded run; `--cluster` makes one: the bare create (then deleted), then the
 * conformance run, timed, its reference written beside its bundles (bench-reference.json).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { stringify } from "yaml";
import { type Lab, labPath } from "../../clusters/lab.ts";
import { kindCreateArgv, makeProfile } from "../../clusters/profile.ts";
import { type BundleMeta, readMeta, readRecords } from "../../helpers/bundle/read.ts";
import { UserError } from "../../helpers/errors.ts";
import type { MeasureScaleRecord } from "../../helpers/measure/records.ts";
import type { Mode } from "../../helpers/properties/expectation.ts";
import { isSpecPhase, specsSeconds } from "../../helpers/report/runs-table.ts";
import { RECORDS } from "../../suites/topics.ts";
import type { Figure } from "./figures.ts";

/** What `--cluster` measured beside the run's bundles: the references that are not in a bundle. */
export interface BenchReference {
  /** When the bench ran, and how. */
  at: string;
  runId: string;
  modes: Mode[];
  concurrent: boolean;
  /** A bare `kind create cluster` with the same node image and config, timed in the same run (s). */
  bareKindCreate: { seconds: number; exit: number | null; argv: string[] } | null;
  /** The conformance run (vitest) from its start to its exit (s). */
  runWall: { seconds: number; exit: number | null } | null;
}

export const REFERENCE_FILE = "bench-reference.json";
const BARE_CLUSTER = "dpc-bench-bare";

/** A recorded mode: bundle.json and, when it ran measure-scale, its record. */
export interface MeasuredMode {
  dir: string;
  meta: BundleMeta;
  scaling: MeasureScaleRecord | null;
}

export function readMode(dir: string): MeasuredMode {
  const meta = readMeta(dir);
  const scaling = readRecords(dir, RECORDS).scaling?.record ?? null;
  return { dir, meta, scaling };
}

/**
 * Per point, from the first create request to the last agent converged and from the first delete to the last
 * agent clean, added up: the part of measure-scale the API server and the agents take (null for a record
 * without apply_ms/delete_ms). Beside convergence_ms it shows how much of the topic's time is the API server's.
 */
export function apiAndConvergenceMs(r: MeasureScaleRecord | null): number | null {
  const parts = (p: MeasureScaleRecord["points"][number]) => [
    p.apply_ms,
    p.converged_ms,
    p.delete_ms,
    p.gone_ms,
  ];
  if (!r || r.points.length === 0 || r.points.some((p) => parts(p).some((v) => v === undefined))) return null;
  return r.points.reduce((sum, p) => sum + parts(p).reduce((a: number, v) => a + (v as number), 0), 0);
}

/** Every mode's bundle in a run's folder (results/<run>/), in the modes' order. */
export function runBundles(run: string): string[] {
  if (!existsSync(run)) throw new UserError(`--run ${run}: no such folder`);
  const dirs = readdirSync(run)
    .filter((d) => existsSync(join(run, d, "bundle.json")))
    .sort((a, b) => (a === "kpr" ? -1 : b === "kpr" ? 1 : a.localeCompare(b)));
  if (dirs.length === 0)
    throw new UserError(`--run ${run}: no evidence bundle in it (no <mode>/bundle.json)`);
  return dirs.map((d) => join(run, d));
}

/** The reference `--cluster` wrote beside a run's bundles, or null when that run was not made by the bench. */
export function readReference(bundleDir: string): BenchReference | null {
  const file = join(dirname(bundleDir), REFERENCE_FILE);
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as BenchReference;
  } catch {
    throw new UserError(`${file} is not valid JSON`);
  }
}

/** Every phase of the mode's run but the reference recorded among them (s); the specs by their wall time. */
export function phasesSum(meta: BundleMeta): number {
  return (
    Object.entries(meta.phases)
      .filter(([name]) => name !== "agents' own start (max)" && !isSpecPhase(name))
      .reduce((a, [, s]) => a + s, 0) + specsSeconds(meta.phases)
  );
}

const NOT_MEASURED = "none: not measured in this run (`npm run bench -- --cluster` measures it)";

/** The cluster figures of a run's modes, each with its reference where the run measured it. */
export function clusterFigures(modes: MeasuredMode[], ref: BenchReference | null): Figure[] {
  const out: Figure[] = [];
  for (const m of modes) {
    const ph = m.meta.phases;
    const mode = m.meta.mode;
    const create = ph["create cluster"];
    if (create !== undefined)
      out.push({
        what: `create cluster (${mode})`,
        seconds: create,
        ...(ref?.bareKindCreate && ref.bareKindCreate.exit === 0
          ? {
              reference: {
                what: "bare `kind create cluster`, same node image and config",
                seconds: ref.bareKindCreate.seconds,
              },
            }
          : {
              noReference: ref?.bareKindCreate
                ? `none: the bare create exited ${ref.bareKindCreate.exit}`
                : NOT_MEASURED,
            }),
        goalRatio: 1.2,
      });
    const ready = ph["Cilium ready"];
    const own = ph["agents' own start (max)"];
    if (ready !== undefined)
      out.push({
        what: `Cilium ready (${mode})`,
        seconds: ready,
        ...(own !== undefined
          ? {
              reference: {
                what: "agents' own start (Pod start → first status OK, slowest agent)",
                seconds: own,
              },
            }
          : {
              noReference:
                "none: the bundle predates the agents' own start (recorded by the readiness gates from issue 20 on)",
            }),
        goalRatio: 1.2,
      });
    const spec = ph["spec measure-scale"];
    const suite = spec ?? (m.scaling?.suite_ms !== undefined ? m.scaling.suite_ms / 1000 : undefined);
    if (suite !== undefined)
      out.push({
        what: `measure-scale (${mode}): the suite's time for the topic`,
        seconds: suite,
        ...(m.scaling?.convergence_ms !== undefined
          ? {
              reference: {
                what: "the convergence it measured (agents programming and dropping the Services)",
                seconds: m.scaling.convergence_ms / 1000,
              },
            }
          : { noReference: "none: the record predates convergence_ms (re-record the bundle)" }),
        goalRatio: 1.5,
      });
    const api = apiAndConvergenceMs(m.scaling);
    if (suite !== undefined && api !== null)
      out.push({
        what: `measure-scale (${mode}): the suite's time for the topic`,
        seconds: suite,
        reference: {
          what: "the API server taking and removing the Services plus the agents' convergence (create → converged, delete → gone, every point)",
          seconds: api / 1000,
        },
      });
    const single = ref?.runWall && ref.modes.length === 1 && ref.modes[0] === mode;
    out.push({
      what: `one mode end to end (${mode})${single ? "" : ", the sum of its phases"}`,
      seconds: single ? (ref?.runWall?.seconds as number) : phasesSum(m.meta),
      ...(single && ref?.runWall?.exit !== 0 ? { note: `the run exited ${ref?.runWall?.exit}` } : {}),
      goalSeconds: 240,
    });
  }
  if (ref?.runWall && ref.modes.length > 1) {
    const sum = modes.reduce((a, m) => a + phasesSum(m.meta), 0);
    out.push({
      what: `both modes, wall (${ref.concurrent ? "MODES_CONCURRENT=1" : "one after the other"})`,
      seconds: ref.runWall.seconds,
      reference: { what: "the modes' phases added up (one after the other)", seconds: sum },
      goalSeconds: 360,
      ...(ref.runWall.exit !== 0 ? { note: `the run exited ${ref.runWall.exit}` } : {}),
    });
  }
  return out;
}

export interface ClusterBenchOptions {
  modes: Mode[];
  concurrent: boolean;
  runId: string;
  /** Where the suite writes its results (the repository's results/). */
  resultsDir: string;
  /** A scratch folder for the bare create's config and kubeconfig. */
  tmp: string;
  cilium?: string;
  lab?: Lab;
  env: NodeJS.ProcessEnv;
}

export interface ClusterBenchPlan {
  /** The bare create: the suite's own `kind create cluster` for the first mode, under another name. */
  bare: { files: Record<string, string>; create: string[]; remove: string[] };
  /** The conformance run, as `npm run test:conformance` runs it. */
  run: { argv: string[]; env: NodeJS.ProcessEnv };
  bundles: string[];
}

/** What `--cluster` runs, in order; nothing runs here. */
export function clusterBenchPlan(o: ClusterBenchOptions): ClusterBenchPlan {
  const mode = o.modes[0] as Mode;
  const p = makeProfile({
    provider: "kind",
    mode,
    ...(o.cilium ? { cilium: o.cilium } : {}),
    ...(o.lab ? { lab: o.lab } : {}),
  });
  const config = join(o.tmp, "kind-config.yaml");
  const kubeconfig = join(o.tmp, "kubeconfig");
  const bareProfile = { ...p, cluster: BARE_CLUSTER };
  const env: NodeJS.ProcessEnv = {
    ...o.env,
    CLUSTER_PROVIDER: "kind",
    RUN_ID: o.runId,
    ...(o.modes.length === 1 ? { CONFORMANCE_MODE: mode } : {}),
    MODES_CONCURRENT: o.concurrent ? "1" : "0",
    ...(o.cilium ? { CILIUM_VERSION: o.cilium } : {}),
    ...(o.lab ? { LAB_IMAGES: "1", PATH: labPath(o.lab, o.env.PATH ?? "") } : {}),
  };
  return {
    bare: {
      files: { [config]: stringify({ ...p.kindConfig, name: BARE_CLUSTER }) },
      // its own kubeconfig, so it touches nothing of yours; the same flags as the suite's create
      create: [...kindCreateArgv(bareProfile, config), "--kubeconfig", kubeconfig],
      remove: ["kind", "delete", "cluster", "--name", BARE_CLUSTER, "--kubeconfig", kubeconfig],
    },
    run: { argv: ["npx", "vitest", "run", "--project", "conformance"], env },
    bundles: o.modes.map((m) => join(o.resultsDir, o.runId, m)),
  };
}

/** Runs a command with the bench's env and output to the terminal: its wall seconds and exit code. */
export type Runner = (
  argv: string[],
  env: NodeJS.ProcessEnv,
) => Promise<{ seconds: number; exit: number | null }>;

/**
 * `--cluster`: the bare create (deleted right after; the machine is the same for both), then the conformance
 * run, timed; the reference written beside the run's bundles; the figures of its modes.
 */
export async function runClusterBench(
  o: ClusterBenchOptions,
  run: Runner,
  say: (line: string) => void,
): Promise<{ figures: Figure[]; reference: BenchReference }> {
  const plan = clusterBenchPlan(o);
  for (const [file, text] of Object.entries(plan.bare.files)) writeFileSync(file, text);
  const benchEnv = plan.run.env;
  say(`bare kind create (the reference for create cluster): ${plan.bare.create.join(" ")}`);
  const bare = await run(plan.bare.create, benchEnv);
  say(`bare kind create: ${bare.seconds.toFixed(1)} s (exit ${bare.exit}); deleting it`);
  const removed = await run(plan.bare.remove, benchEnv);
  if (removed.exit !== 0)
    say(
      `could not delete ${BARE_CLUSTER} (exit ${removed.exit}): delete it with ${plan.bare.remove.join(" ")}`,
    );
  say(
    `the conformance run ${o.runId} (${o.modes.join(", ")}${o.modes.length > 1 ? `, ${o.concurrent ? "at once" : "one after the other"}` : ""}): ${plan.run.argv.join(" ")}`,
  );
  const wall = await run(plan.run.argv, benchEnv);
  say(`the conformance run: ${wall.seconds.toFixed(1)} s (exit ${wall.exit})`);
  const reference: BenchReference = {
    at: new Date().toISOString(),
    runId: o.runId,
    modes: o.modes,
    concurrent: o.concurrent,
    bareKindCreate: { seconds: Math.round(bare.seconds * 10) / 10, exit: bare.exit, argv: plan.bare.create },
    runWall: { seconds: Math.round(wall.seconds * 10) / 10, exit: wall.exit },
  };
  const found = plan.bundles.filter((b) => existsSync(join(b, "bundle.json")));
  if (found.length === 0)
    throw new UserError(
      `the conformance run wrote no bundle under ${join(o.resultsDir, o.runId)} (exit ${wall.exit}); see its output above`,
    );
  writeFileSync(join(o.resultsDir, o.runId, REFERENCE_FILE), `${JSON.stringify(reference, null, 2)}\n`);
  return { figures: clusterFigures(found.map(readMode), reference), reference };
}

/** `npm run bench -- --bundle/--run/--cluster …`: what the arguments ask for, or one line saying what is wrong. */
export interface ClusterBenchArgs {
  bundles: string[];
  cluster: boolean;
  modes: Mode[];
  concurrent: boolean;
}

export function clusterBenchArgs(
  flags: Record<string, string | boolean | undefined>,
): ClusterBenchArgs | null {
  const bundle = typeof flags.bundle === "string" ? flags.bundle : undefined;
  const run = typeof flags.run === "string" ? flags.run : undefined;
  const cluster = flags.cluster === true;
  if (!bundle && !run && !cluster) {
    if (flags.mode !== undefined || flags.concurrent)
      throw new UserError("--mode and --concurrent go with --cluster (a run the bench makes)");
    return null;
  }
  if ([bundle, run, cluster || undefined].filter(Boolean).length > 1)
    throw new UserError("one of --bundle DIR[,DIR], --run DIR or --cluster");
  if (!cluster && (flags.mode !== undefined || flags.concurrent))
    throw new UserError("--mode and --concurrent go with --cluster (a recorded run says its own)");
  const mode = flags.mode;
  if (mode !== undefined && mode !== "kpr" && mode !== "kube-proxy")
    throw new UserError(`unknown mode ${JSON.stringify(mode)}; valid: kpr, kube-proxy`);
  const modes: Mode[] = mode ? [mode] : ["kpr", "kube-proxy"];
  if (flags.concurrent && modes.length === 1)
    throw new UserError("--concurrent runs both modes at once: leave --mode out");
  const bundles = bundle ? bundle.split(",").filter(Boolean) : run ? runBundles(run) : [];
  for (const b of bundles)
    if (!existsSync(join(b, "bundle.json")))
      throw new UserError(`--bundle ${b}: not an evidence bundle (no bundle.json)`);
  return { bundles, cluster, modes, concurrent: flags.concurrent === true };
}
