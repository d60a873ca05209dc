/**
 * `plan` and `run` agree on every input: generated flags and environments (each input absent, a flag, a variable
 * or both, valid or not) go through both commands as a user would type them (`run --dry-run` starts nothing). Both
 * refuse the same inputs in the same line, or both accept them and name the same provider, modes and Cilium
 * version; and the environment `run` starts the conformance project with reads back as the same inputs.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { RUN_INPUTS } from "../clusters/run-input-list.ts";
import { parseRunInputs, runEnv } from "../clusters/run-inputs.ts";
import { runCli } from "./run-in-process.ts";

const dir = mkdtempSync(join(tmpdir(), "dpc-run-inputs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const VALUES = join(dir, "values.yaml");
writeFileSync(VALUES, "bpf:\n  masquerade: true\n");

/** The values each input is tried with: valid ones and one or two that are refused. */
const TRIED: Record<string, readonly string[]> = {
  provider: ["kind", "k3d", "existing", "replay", "none", "minikube"],
  mode: ["kpr", "kube-proxy", "both"],
  cilium: ["1.19", "1.20", "1.19.3", "1.21.0", "1.17", "banana"],
  profile: ["native-bpf", "kp-nftables", "dsr-maglev", "turbo"],
  values: [VALUES, join(dir, "missing.yaml")],
  "upgrade-to": ["1.20", "1.19.9", "1.18", "latest"],
  rollback: ["1", "0", "yes"],
  test: ["nodeport", "("],
  skip: ["outside"],
  part: ["disruptions", "without-disruptions", "first-half"],
  junit: ["results/j.xml"],
  keep: ["1"],
};

interface Case {
  argv: string[];
  env: Record<string, string>;
}

/** Each input: absent, a flag, its variable, or both (the flag with another value). */
const one = (flag: string): fc.Arbitrary<{ flag?: string; env?: string }> => {
  const values = TRIED[flag] as readonly string[];
  const v = fc.constantFrom(...values);
  const hasEnv = RUN_INPUTS.find((i) => i.flag === flag)?.env !== undefined;
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant({}) },
    { weight: 2, arbitrary: v.map((f) => ({ flag: f })) },
    ...(hasEnv
      ? [
          { weight: 2, arbitrary: v.map((e) => ({ env: e })) },
          { weight: 1, arbitrary: fc.tuple(v, v).map(([f, e]) => ({ flag: f, env: e })) },
        ]
      : []),
  );
};

const CASES: fc.Arbitrary<Case> = fc
  .record(Object.fromEntries(Object.keys(TRIED).map((f) => [f, one(f)])))
  .map((r) => {
    const argv: string[] = [];
    const env: Record<string, string> = {};
    for (const [flag, given] of Object.entries(r as Record<string, { flag?: string; env?: string }>)) {
      const input = RUN_INPUTS.find((i) => i.flag === flag);
      if (!input) continue;
      if (given.flag !== undefined)
        argv.push(
          ...(input.type === "boolean"
            ? given.flag === "1"
              ? [`--${flag}`]
              : []
            : [`--${flag}`, given.flag]),
        );
      if (given.env !== undefined && input.env) env[input.env] = given.env;
    }
    return { argv, env };
  });

/** What each command says it would run: provider, modes and Cilium version, from its own words. */
function planSays(out: string): string[] {
  return [...out.matchAll(/^# (\S+) × (.+?) × (Cilium \S+|the Cilium version [a-z ]+?) \(/gm)].map(
    (m) => `${m[1]} ${m[2]} ${m[3]}`,
  );
}
function runSays(err: string): string[] {
  const m =
    /^\[run 1\/\d\] conformance: (\S+) × (.+?) × (Cilium \S+?|the Cilium version [a-z ]+?)(?:,|;)/m.exec(err);
  if (!m) return [];
  return (m[2] as string).split(", ").map((mode) => `${m[1]} ${mode} ${m[3]}`);
}

describe("plan and run: one parser", { timeout: 300_000 }, () => {
  /** Both commands on one input: the same exit code, the same refusal, or the same run named. */
  async function agree({ argv, env }: Case): Promise<boolean> {
    const plan = await runCli(["plan", ...argv], "", env);
    const run = await runCli(["run", "--dry-run", ...argv], "", env);
    const where = `argv ${JSON.stringify(argv)} env ${JSON.stringify(env)}\nplan: ${plan.err}\nrun: ${run.err}`;
    expect(run.code, where).toBe(plan.code);
    if (plan.code !== 0) {
      expect(run.err.replace("datapath-conformance run: ", ""), where).toBe(
        plan.err.replace("datapath-conformance plan: ", ""),
      );
      expect(plan.err.split("\n"), where).toHaveLength(2);
      return false;
    }
    const said = planSays(plan.out);
    expect(said.length, where).toBeGreaterThan(0);
    // existing and replay read the mode and version there: both say so in the same words
    expect(runSays(run.err), where).toEqual(said);
    return true;
  }

  it("each input alone, every value tried, as a flag and as its variable", async () => {
    for (const input of RUN_INPUTS)
      for (const v of TRIED[input.flag] ?? []) {
        const flag =
          input.type === "boolean" ? (v === "1" ? [`--${input.flag}`] : []) : [`--${input.flag}`, v];
        await agree({ argv: flag, env: {} });
        if (input.env) await agree({ argv: [], env: { [input.env]: v } });
      }
  });

  it("refuse the same inputs in the same line, and accept the rest naming the same run", async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(CASES, async (c) => {
        if (await agree(c)) accepted++;
      }),
      { numRuns: 250, seed: 44 },
    );
    // the generated inputs are not all refusals
    expect(accepted).toBeGreaterThan(25);
  });

  it("the environment run starts vitest with reads back as the same inputs (the setup parses it so)", () => {
    fc.assert(
      fc.property(CASES, ({ argv, env }) => {
        const flags: Record<string, string | boolean> = {};
        for (let i = 0; i < argv.length; i++) {
          const name = (argv[i] as string).slice(2);
          const input = RUN_INPUTS.find((x) => x.flag === name);
          if (input?.type === "boolean") flags[name] = true;
          else flags[name] = argv[++i] as string;
        }
        let first: ReturnType<typeof parseRunInputs>;
        try {
          first = parseRunInputs(flags, env);
        } catch {
          return;
        }
        const started = runEnv(first);
        const again = parseRunInputs({}, { ...env, ...started });
        expect(runEnv(again)).toEqual(started);
        expect(again.modes).toEqual(first.modes);
        expect(again.version).toEqual(first.version);
      }),
      { numRuns: 300, seed: 44 },
    );
  });

  it("the environment alone: CILIUM_VERSION=1.19 and CLUSTER_PROVIDER=k3d are planned, banana is refused", async () => {
    const p = await runCli(["plan", "--mode", "kpr"], "", {
      CILIUM_VERSION: "1.19",
      CLUSTER_PROVIDER: "k3d",
    });
    expect(p.code, p.err).toBe(0);
    expect(p.out).toMatch(/^# k3d × kpr × Cilium 1\.19\.\d+ /);
    const b = await runCli(["plan"], "", { CILIUM_VERSION: "banana" });
    expect(b.code).toBe(2);
    expect(b.err).toMatch(
      /^datapath-conformance plan: CILIUM_VERSION=banana: unsupported Cilium version "banana"; valid: /,
    );
    // a flag wins over its variable
    const f = await runCli(["plan", "--mode", "kpr", "--cilium", "1.18"], "", { CILIUM_VERSION: "1.19" });
    expect(f.out).toMatch(/^# kind × kpr × Cilium 1\.18\.\d+ /);
  });

  it("a patch the suite has not run is said by both", async () => {
    const p = await runCli(["plan", "--mode", "kpr", "--cilium", "1.19.3"]);
    const r = await runCli(["run", "--dry-run", "--mode", "kpr", "--cilium", "1.19.3"]);
    const line = "never run here: Cilium 1.19.3; the expectations of 1.19 apply";
    expect(p.out).toContain(`# ${line}`);
    expect(r.err).toContain(`[run] ${line}`);
  });
});
