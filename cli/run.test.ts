/**
 * `datapath-conformance run` without a cluster: the spawner is injected, so the test sees the exact vitest
 * command and environment the run would start, and what the run wrote is a shipped bundle judged with the real
 * `check` (and the real `upgrade` gate).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PARTS } from "../clusters/parts.ts";
import { parseRunInputs } from "../clusters/run-inputs.ts";
import { checkBundle } from "../helpers/check.ts";
import { TOPICS } from "../suites/topics.ts";
import { gateUpgrade } from "./commands.ts";
import type { PhaseCommand } from "./lab-run.ts";
import { defaultRunId, firstRawLine, type RunDeps, run } from "./run.ts";
import { runCli } from "./run-in-process.ts";

const ROOT = join(import.meta.dirname, "..");
const NOW = new Date("2026-12-07T04:15:02Z");
const VITEST = [
  process.execPath,
  join(ROOT, "node_modules", "vitest", "vitest.mjs"),
  "run",
  "--project",
  "conformance",
];
/** A shipped bundle with one failing property and known issues, and an upgrade bundle whose restart leg broke. */
const FAILING = join(ROOT, "suites", "bundles", "profiles", "dual-stack", "kube-proxy");
const UPGRADE = join(ROOT, "suites", "bundles", "upgrade-1.19-1.20", "kpr-2");

function deps(over: Partial<RunDeps> & { written?: string[]; code?: number } = {}) {
  const spawned: PhaseCommand[] = [];
  const log: string[] = [];
  let out = "";
  const d: RunDeps = {
    root: ROOT,
    env: {},
    now: () => NOW,
    spawn: async (cmd) => {
      spawned.push(cmd);
      return over.code ?? 0;
    },
    bundles: () => over.written ?? [],
    check: (dir) => checkBundle(dir, TOPICS),
    gate: async (dir) => {
      const g = await gateUpgrade(dir, {});
      return { headline: g.headline, exitCode: g.exitCode };
    },
    log: (l) => log.push(l),
    say: (t) => {
      out += t;
    },
    ...over,
  };
  return { d, spawned, log, out: () => out };
}

const EMPTY = {
  CLUSTER_PROVIDER: "kind",
  CONFORMANCE_MODE: "",
  CILIUM_VERSION: "",
  DATAPATH_PROFILE: "",
  CILIUM_VALUES: "",
  UPGRADE_TO: "",
  ROLLBACK: "",
  CONFORMANCE_JUNIT: "",
  KEEP_CLUSTER: "",
};

describe("run: the command it starts", () => {
  it("no flag: vitest's conformance project, kind, both modes, the run id from the clock", async () => {
    const { d, spawned, log } = deps();
    expect(await run({ inputs: parseRunInputs({}, {}), dryRun: false }, d)).toBe(1);
    expect(spawned).toEqual([{ argv: VITEST, env: { ...EMPTY, RUN_ID: "run-20261207-041502" } }]);
    expect(defaultRunId(NOW)).toBe("run-20261207-041502");
    expect(log[0]).toMatch(
      /^\[run 1\/2\] conformance: kind × kpr, kube-proxy × Cilium \d+\.\d+\.\d+; bundles in /,
    );
    // nothing written: said, and no pass
    expect(log.at(-1)).toMatch(
      /^\[run 2\/2\] check: the run left no bundle under .*run-20261207-041502: nothing/,
    );
  });

  it("every flag: its variable, the name filter as one pattern, paths made absolute", async () => {
    const { d, spawned } = deps({ env: { RUN_ID: "mine" } });
    const inputs = parseRunInputs(
      {
        provider: "k3d",
        mode: "kube-proxy",
        cilium: "1.19",
        profile: "native-bpf",
        "upgrade-to": "1.20",
        rollback: true,
        test: "nodeport|ghost",
        skip: "outside",
        junit: "out/j.xml",
        keep: true,
      },
      {},
    );
    await run({ inputs, dryRun: false }, d);
    expect(spawned).toEqual([
      {
        argv: [...VITEST, "--testNamePattern", "^(?!.*(?:outside))(?=.*(?:nodeport|ghost))"],
        env: {
          CLUSTER_PROVIDER: "k3d",
          CONFORMANCE_MODE: "kube-proxy",
          CILIUM_VERSION: "1.19",
          DATAPATH_PROFILE: "native-bpf",
          CILIUM_VALUES: "",
          UPGRADE_TO: "1.20",
          ROLLBACK: "1",
          CONFORMANCE_JUNIT: join(process.cwd(), "out", "j.xml"),
          KEEP_CLUSTER: "1",
          RUN_ID: "mine",
        },
      },
    ]);
  });

  it("--part: one of a mode's two parts, the arguments package.json's test:conformance:<part> passes", async () => {
    const { readFileSync } = await import("node:fs");
    const scripts = (
      JSON.parse(readFileSync(join(import.meta.dirname, "..", "package.json"), "utf8")) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    for (const part of Object.keys(PARTS) as (keyof typeof PARTS)[]) {
      const { d, spawned } = deps({ env: { RUN_ID: "mine" } });
      await run({ inputs: parseRunInputs({ part }, {}), dryRun: false }, d);
      expect(spawned[0]?.argv).toEqual([...VITEST, ...PARTS[part]]);
      // the script says the same, its globs quoted for the shell
      const quoted = PARTS[part].map((a) => (a.includes("*") ? `'${a}'` : a)).join(" ");
      expect(scripts[`test:conformance:${part}`]).toBe(`vitest run --project conformance ${quoted}`);
    }
    expect((await runCli(["run", "--part", "first-half", "--dry-run"])).err).toBe(
      "datapath-conformance run: --part first-half: valid parts are disruptions and without-disruptions\n",
    );
  });

  it("the pattern vitest gets keeps --test and leaves out --skip", () => {
    const re = /^(?!.*(?:outside))(?=.*(?:nodeport|ghost))/;
    expect(re.test("nodeport [kind] [kpr] > nodeport.http-200: …")).toBe(true);
    expect(re.test("nodeport [kind] [kpr] > nodeport.outside-http-200: …")).toBe(false);
    expect(re.test("holder [kind] [kpr] > holder.app-sees-clusterip: …")).toBe(false);
  });

  it("--dry-run prints the phases and the command, starts nothing", async () => {
    const r = await runCli(["run", "--dry-run", "--cilium", "1.19", "--upgrade-to", "1.20", "--mode", "kpr"]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe("");
    const lines = r.err.split("\n");
    expect(lines[0]).toMatch(
      /^\[run 1\/3\] conformance: kind × kpr × Cilium 1\.19\.\d+, then the upgrade to 1\.20 under load; bundles in results\/run-/,
    );
    expect(lines[1]).toMatch(
      /^ {4}CLUSTER_PROVIDER=kind CONFORMANCE_MODE=kpr CILIUM_VERSION=1\.19 UPGRADE_TO=1\.20 RUN_ID=run-\S+ \S+ \S+vitest\.mjs run --project conformance$/,
    );
    expect(lines[2]).toMatch(/^\[run 2\/3\] check: /);
    expect(lines[3]).toMatch(/^\[run 3\/3\] upgrade: /);
  });

  it("refuses what plan refuses, in one line", async () => {
    const r = await runCli(["run", "--dry-run"], "", { CILIUM_VERSION: "banana" });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /^datapath-conformance run: CILIUM_VERSION=banana: unsupported Cilium version "banana"; valid: [^\n]*\n$/,
    );
    expect((await runCli(["run", "--rollback", "--dry-run"])).err).toMatch(
      /^datapath-conformance run: ROLLBACK=1 \(--rollback\) rolls back after the upgrade leg: give --upgrade-to/,
    );
    expect((await runCli(["run", "--test", "(", "--dry-run"])).err).toMatch(
      /^datapath-conformance run: --test \(: not a regular expression \(/,
    );
  });

  it("--help lists every flag and every environment variable docs/running.md documents for a run", async () => {
    const { readFileSync } = await import("node:fs");
    const help = (await runCli(["run", "--help"])).out;
    for (const f of [
      "provider",
      "mode",
      "cilium",
      "profile",
      "values",
      "test",
      "skip",
      "junit",
      "keep",
      "upgrade-to",
      "rollback",
    ])
      expect(help).toContain(`--${f}`);
    const running = readFileSync(join(ROOT, "docs", "running.md"), "utf8");
    const table = running.slice(running.indexOf("## Environment variables"));
    const vars = [
      ...table.slice(0, table.indexOf("\n## ", 5)).matchAll(/^\| (`[A-Z_]+`(?:, `[A-Z_]+`)*) \|/gm),
    ].flatMap((m) => (m[1] as string).split(", ").map((v) => v.replaceAll("`", "")));
    expect(vars.length).toBeGreaterThan(15);
    // REPLAY_BUNDLES is npm test's replay project's, not a run's
    for (const v of vars.filter((x) => x !== "REPLAY_BUNDLES")) expect(help, v).toContain(v);
  });
});

describe("run: the summary, from the bundles the run wrote", { timeout: 120_000 }, () => {
  it("names each failure and known issue with its first raw line; exit 1 on a failure", async () => {
    const { d, log, out } = deps({ written: [FAILING], code: 1 });
    const inputs = parseRunInputs({ mode: "kube-proxy", profile: "dual-stack" }, {});
    expect(await run({ inputs, dryRun: false }, d)).toBe(1);
    const r = await checkBundle(FAILING, TOPICS);
    const fails = r.verdicts.filter((v) => v.status === "fail");
    const known = r.verdicts.filter((v) => v.status === "known-issue");
    expect(fails.length).toBeGreaterThan(0);
    expect(known.length).toBeGreaterThan(0);
    expect(log).toContain(
      "[run 1/2] conformance: exit 1 (a property failed or a spec could not run) after 0 s",
    );
    expect(log.some((l) => l.startsWith("[run 2/2] check: ") && l.includes(`${fails.length} failed`))).toBe(
      true,
    );
    const text = out();
    expect(text).toContain(`failures (${fails.length}):`);
    expect(text).toContain(
      `known issues (a bug declared for the version, with its upstream reference) (${known.length}):`,
    );
    for (const v of [...fails, ...known]) {
      expect(text).toContain(`${v.id}: expected ${v.expected}, observed ${v.observed}`.split("\n")[0]);
      expect(text).toContain(firstRawLine(v).split("\n")[0]);
    }
    expect(text).toMatch(/the report: datapath-conformance report \S+ -o \S+report\.html\n$/);
  });

  it("an upgrade run gets the gate's answer as a third phase", async () => {
    const { d, log, out } = deps({ written: [UPGRADE] });
    const inputs = parseRunInputs({ mode: "kpr", cilium: "1.19", "upgrade-to": "1.20", rollback: true }, {});
    const code = await run({ inputs, dryRun: false }, d);
    const g = await gateUpgrade(UPGRADE, {});
    expect(code).toBe(Math.max(1, g.exitCode));
    expect(log.filter((l) => l.startsWith("[run 3/3] upgrade: "))).toEqual([
      `[run 3/3] upgrade: ${UPGRADE.replace(`${process.cwd()}/`, "")}: ${g.headline}`,
    ]);
    expect(out()).toContain(`: ${g.headline}`);
  });

  it("a bundle that cannot be read is one line; the others are still judged; exit 1", async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const broken = mkdtempSync(join(tmpdir(), "dpc-run-broken-"));
    writeFileSync(join(broken, "bundle.json"), "{ not json");
    try {
      const { d, log, out } = deps({ written: [broken, FAILING] });
      expect(await run({ inputs: parseRunInputs({}, {}), dryRun: false }, d)).toBe(1);
      const line = log.find((l) => l.startsWith(`[run 2/2] check: ${broken}`));
      expect(line).toMatch(/^\[run 2\/2\] check: \S+: [^\n]+$/);
      expect(log.some((l) => /profiles\/dual-stack\/kube-proxy: \d+ passed/.test(l))).toBe(true);
      expect(out()).toMatch(/^failures \(\d+\):$/m);
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
  });

  it("Ctrl-C: the conformance project's 130, nothing judged", async () => {
    const { d, log, out } = deps({ written: [FAILING], code: 130 });
    expect(await run({ inputs: parseRunInputs({}, {}), dryRun: false }, d)).toBe(130);
    expect(log.at(-1)).toMatch(/conformance: interrupted after 0 s; nothing further runs$/);
    expect(out()).toBe("");
  });
});
