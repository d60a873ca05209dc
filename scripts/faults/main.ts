/**
 * Fault runs and the existing provider, for real (issue 18). Opt-in: never part of `npm test` or `.ci/run`.
 *
 *   npm run faults -- run --fault F --mode kpr|kube-proxy [--at-topic T|N] [--delay-s S] [--after-s S] [--keep]
 *                     [--pause-s 60] [--node NODE] [--signal-to main|group] [--report-deadline-s 900]
 *                     [--exit-deadline-s 2400] [--id ID] [-- vitest file filters]
 *   npm run faults -- all [--mode M] [--keep]          every fault, one run each (both modes without --mode)
 *   npm run faults -- table [FILE]                     the README table from results/faults/faults.jsonl (or FILE)
 *   npm run faults -- existing --context C [--mode M] [--no-lab] [-- filters]
 *   npm run faults -- concurrent --context C [--lease-wait-s 0] [--stagger-s 2] [--no-lab] [-- filters]
 *
 * --dry-run checks the arguments and says what would run, starting nothing.
 * Faults: agent-delete, node-pause, node-stop, apiserver-kill, sigint, sigterm, outside-net (faults.ts). A run is
 * LAB_IMAGES=1 CLUSTER_PROVIDER=kind with one mode; the kind cluster is created and deleted by the run itself.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { labPath, readLab } from "../../clusters/lab.ts";
import { UserError } from "../../helpers/errors.ts";
import { LocalExecutor } from "../../helpers/exec/local.ts";
import { MODES, type Mode } from "../../helpers/properties/expectation.ts";
import { oneOf, scriptArgs } from "../args.ts";
import { conformanceRun, FAULT_DEADLINES, runFault } from "./driver.ts";
import { runConcurrent, runExisting } from "./existing.ts";
import { FAULT_NAMES, FAULTS, parseFault } from "./faults.ts";
import { TABLE_HEADER } from "./judge.ts";

const ROOT = join(import.meta.dirname, "..", "..");

const num = (v: string | boolean | undefined, flag: string, fallback: number): number => {
  if (v === undefined) return fallback;
  if (typeof v !== "string" || !/^\d+$/.test(v))
    throw new UserError(
      `--${flag} takes a whole number of seconds, got ${JSON.stringify(typeof v === "string" ? v : "")}`,
    );
  return Number(v);
};
const str = (v: string | boolean | undefined, _flag: string): string | undefined =>
  typeof v === "string" ? v : undefined;
const stamp = () => new Date().toISOString().replace(/[-:]/g, "").replace(/\..*/, "").toLowerCase();

export interface MainIo {
  out(s: string): void;
  err(s: string): void;
  resultsDir?: string;
}

/** The latest row per fault × mode from faults.jsonl, in the faults' order, as the README's table. */
export function faultTable(jsonl: string): string {
  const latest = new Map<string, string>();
  for (const line of jsonl.split("\n")) {
    if (!line.trim().startsWith("{")) continue;
    try {
      const r = JSON.parse(line) as { fault: string; mode: string; row: string };
      latest.set(`${r.fault} ${r.mode}`, r.row);
    } catch {
      // a torn line is skipped
    }
  }
  const rows: string[] = [];
  for (const f of FAULT_NAMES)
    for (const m of MODES) {
      const row = latest.get(`${f} ${m}`);
      if (row) rows.push(row);
    }
  return `${TABLE_HEADER}\n${rows.join("\n")}\n`;
}

export async function faultsMain(argv: string[], io: MainIo): Promise<number> {
  const {
    positional,
    flags,
    rest: filters,
  } = scriptArgs(
    argv,
    [
      "fault",
      "mode",
      "at-topic",
      "delay-s",
      "after-s",
      "pause-s",
      "node",
      "signal-to",
      "report-deadline-s",
      "exit-deadline-s",
      "run-deadline-s",
      "id",
      "context",
      "lease-wait-s",
      "stagger-s",
    ],
    ["keep", "no-lab", "dry-run"],
  );
  // --dry-run: the arguments checked and what would run said, nothing started (the README's fault commands are
  // tested this way: they need root, the lab and a cluster)
  const dry = flags["dry-run"] === true;
  const [sub] = positional;
  const results = io.resultsDir ?? join(ROOT, "results");
  const log = (l: string) => io.err(`[faults] ${l}\n`);
  const exec = new LocalExecutor();
  // kind, kubectl and helm as the lab built them, for the driver's own commands (the run sets its PATH itself)
  const useLab = () => {
    const lab = readLab();
    process.env.PATH = labPath(lab);
  };
  switch (sub) {
    case "run":
    case "all": {
      const only = oneOf("mode", flags.mode, MODES);
      if (sub === "run" && !only) throw new UserError(`run: which mode? --mode ${MODES.join("|")}`);
      const faults = sub === "run" ? [parseFault(flags.fault)] : [...FAULT_NAMES];
      if (!dry) useLab();
      const modes: Mode[] = only ? [only] : [...MODES];
      const signalTo = oneOf("signal-to", flags["signal-to"], ["main", "group"] as const);
      let broken = 0;
      for (const mode of modes)
        for (const fault of faults) {
          const f = FAULTS[fault];
          const given = str(flags.id, "id");
          const id = sub === "run" && given ? given : `${given ?? "fault"}-${fault}-${mode}-${stamp()}`;
          const keep = flags.keep === true;
          const dir = join(results, "faults", id);
          const run = conformanceRun({
            root: ROOT,
            mode,
            id,
            keep,
            reportFile: join(dir, "report.jsonl"),
            filters,
          });
          const afterS = flags["after-s"] === undefined ? undefined : num(flags["after-s"], "after-s", 0);
          const pauseS = num(flags["pause-s"], "pause-s", 60);
          const node = str(flags.node, "node");
          if (dry) {
            const reportS = num(flags["report-deadline-s"], "report-deadline-s", FAULT_DEADLINES.reportS);
            const exitS = num(flags["exit-deadline-s"], "exit-deadline-s", FAULT_DEADLINES.exitS);
            const at =
              afterS !== undefined
                ? `${afterS} s after the start`
                : `when ${str(flags["at-topic"], "at-topic") ?? f.atTopic} starts observing, ${num(flags["delay-s"], "delay-s", f.delayS)} s later`;
            io.out(
              `would run ${id}: fault ${fault} ${at}, mode ${mode}${keep ? ", cluster kept" : ""}; report within ${reportS} s, exit within ${exitS} s; results ${dir}\n`,
            );
            continue;
          }
          const { judgement } = await runFault({
            fault,
            mode,
            id,
            resultsDir: join(results, "faults"),
            atTopic: str(flags["at-topic"], "at-topic") ?? f.atTopic,
            delayS: num(flags["delay-s"], "delay-s", f.delayS),
            ...(afterS !== undefined ? { afterS } : {}),
            keep,
            pauseS,
            ...(node ? { node } : {}),
            ...(signalTo ? { signalTo } : {}),
            deadlines: {
              ...FAULT_DEADLINES,
              reportS: num(flags["report-deadline-s"], "report-deadline-s", FAULT_DEADLINES.reportS),
              exitS: num(flags["exit-deadline-s"], "exit-deadline-s", FAULT_DEADLINES.exitS),
            },
            argv: run.argv,
            env: run.env,
            cwd: ROOT,
            exec,
            log,
            echo: (s) => io.out(s),
          });
          if (!judgement.held) broken++;
        }
      return broken === 0 ? 0 : 1;
    }
    case "table": {
      // the recorded runs (results/faults/faults.jsonl), or a file named (the shipped record:
      // suites/bundles/faults/faults.jsonl)
      const file = positional[1] ?? join(results, "faults", "faults.jsonl");
      if (!existsSync(file))
        throw new UserError(
          `no fault runs recorded yet (${file}); run: npm run faults -- run --fault sigint --mode kpr`,
        );
      io.out(faultTable(readFileSync(file, "utf8")));
      return 0;
    }
    case "existing":
    case "concurrent": {
      const context = str(flags.context, "context");
      if (!context)
        throw new UserError(
          `${sub}: which cluster? --context C (e.g. kind-cdc-kpr; kubectl config get-contexts)`,
        );
      const mode = oneOf("mode", flags.mode, MODES);
      if (dry) {
        const wait = sub === "concurrent" ? num(flags["lease-wait-s"], "lease-wait-s", 0) : 0;
        io.out(
          `would run ${sub === "existing" ? "the suite" : "two runs 2 s apart"} against context ${context} (CLUSTER_PROVIDER=existing${mode ? `, mode ${mode}` : ", the mode its agents report"}${flags["no-lab"] === true ? "" : ", the lab's images"}${sub === "concurrent" ? `, LEASE_WAIT_S=${wait}` : ""}), listing every object before and after\n`,
        );
        return 0;
      }
      if (flags["no-lab"] !== true) useLab();
      const base = {
        context,
        id: str(flags.id, "id") ?? `${sub}-${stamp()}`,
        resultsDir: join(results, sub),
        root: ROOT,
        ...(mode ? { mode } : {}),
        labImages: flags["no-lab"] !== true,
        filters,
        runS: num(flags["run-deadline-s"], "run-deadline-s", FAULT_DEADLINES.runS),
        exec,
        log,
        echo: (s: string) => io.out(s),
      };
      if (sub === "existing") return (await runExisting(base)).clean ? 0 : 1;
      const r = await runConcurrent({
        ...base,
        leaseWaitS: num(flags["lease-wait-s"], "lease-wait-s", 0),
        staggerS: num(flags["stagger-s"], "stagger-s", 2),
      });
      return r.held ? 0 : 1;
    }
    default:
      throw new UserError(
        `${sub ? `unknown subcommand ${JSON.stringify(sub)}` : "which subcommand?"}; valid: run, all, table, existing, concurrent (faults: ${FAULT_NAMES.join(", ")})`,
      );
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  faultsMain(process.argv.slice(2), {
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
  })
    .then((code) => {
      process.exitCode = code;
    })
    .catch((err: unknown) => {
      if (err instanceof UserError) {
        process.stderr.write(`faults: ${err.message}\n`);
        process.exitCode = err.exitCode;
        return;
      }
      throw err;
    });
}
