/**
 * One validation for what every subcommand takes: a Cilium version, a mode, a provider, a datapath profile is
 * accepted or refused the same way by `expectations`, `plan`, `run` and `lab run` (their --dry-run: it runs nothing),
 * in the same words. The lab's cache is an empty folder of the test's (nothing of this machine's lab is read).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readLab } from "../clusters/lab.ts";
import { CILIUM_MINORS } from "../clusters/versions.ts";
import { runCli as run } from "./run-in-process.ts";

const cache = mkdtempSync(join(tmpdir(), "dpc-lab-cache-"));
const saved = process.env.LAB_CACHE;
beforeAll(() => {
  process.env.LAB_CACHE = cache;
});
afterAll(() => {
  if (saved === undefined) delete process.env.LAB_CACHE;
  else process.env.LAB_CACHE = saved;
  rmSync(cache, { recursive: true, force: true });
});

/** The three commands that take a Cilium version and a mode, each with `--cilium V` (and its other options). */
const COMMANDS: { name: string; argv: (extra: string[]) => string[] }[] = [
  { name: "expectations", argv: (x) => ["expectations", ...x] },
  { name: "plan", argv: (x) => ["plan", ...x] },
  { name: "lab run", argv: (x) => ["lab", "run", "--dry-run", ...x] },
  { name: "run", argv: (x) => ["run", "--dry-run", ...x] },
];

/** The refusal without its `datapath-conformance <command>: ` prefix. */
const said = (err: string, name: string) => err.replace(`datapath-conformance ${name}: `, "");

describe("one validation, every subcommand", { timeout: 60_000 }, () => {
  it.each([
    "1.17",
    "1.16.3",
    "2.0",
    "latest",
    "1.19.x",
    "",
  ])("--cilium %j is refused by every command, in the same line", async (v) => {
    const lines = new Set<string>();
    for (const c of COMMANDS) {
      const r = await run(c.argv(["--cilium", v]));
      expect(r.code, `${c.name}: ${r.err}`).toBe(2);
      expect(r.out).toBe("");
      lines.add(said(r.err, c.name));
    }
    // "" is no value at all: parseArgs says so before any validation, the same for all three
    expect([...lines]).toHaveLength(1);
    const valid = `valid: ${CILIUM_MINORS.join(", ")}, a patch of one (e.g. 1.20.2), or a patch of a newer minor (its expectations assumed from ${CILIUM_MINORS.at(-1)})\n`;
    // an older minor and another major say why; what is no version says what is
    if (/^1\.1[67]/.test(v))
      expect([...lines][0]).toMatch(/^Cilium \S+ is older than every minor the suite declares /);
    else if (v.startsWith("2."))
      expect([...lines][0]).toMatch(/^Cilium 2\.0 is of a major version the suite has never/);
    else if (v !== "")
      expect([...lines][0]).toBe(`unsupported Cilium version ${JSON.stringify(v)}; ${valid}`);
    if (v !== "") expect([...lines][0]?.endsWith(valid)).toBe(true);
  });

  it.each(
    CILIUM_MINORS,
  )("the supported minor %s is taken by every command (lab run: the lab's build of it)", async (minor) => {
    for (const c of COMMANDS) {
      const r = await run(c.argv(["--cilium", minor, "--mode", "kpr"]));
      expect(r.code, `${c.name}: ${r.err}`).toBe(0);
    }
    const lab = readLab();
    const build = lab.ciliumVersions.find((v) => v.startsWith(`${minor}.`));
    const dry = await run(["lab", "run", "--dry-run", "--cilium", minor]);
    expect(dry.err).toContain(`Cilium ${build}`);
    expect(dry.err).toContain(`CILIUM_VERSION=${build}`);
  });

  it("a patch of a supported minor: expectations and plan take it; lab run plans its build", async () => {
    expect((await run(["expectations", "--cilium", "1.19.3"])).code).toBe(0);
    expect((await run(["plan", "--cilium", "1.19.3", "--mode", "kpr"])).out).toContain("Cilium 1.19.3");
    for (const v of ["1.19.3", "1.21.0"]) {
      const r = await run(["lab", "run", "--dry-run", "--cilium", v]);
      expect(r.code, r.err).toBe(0);
      expect(r.err).toContain(` cilium-${v} image-cilium-${v} image-node\n`);
      expect(r.err).toContain(`CILIUM_VERSION=${v} `);
      for (const built of readLab().ciliumVersions) expect(r.err).not.toContain(`cilium-${built} `);
    }
  });

  it("a patch of a minor newer than every declared one: expectations and plan take it, saying what is assumed", async () => {
    const newest = CILIUM_MINORS.at(-1) as string;
    const newer = `1.${Number(newest.split(".")[1]) + 1}.0`;
    const e = await run(["expectations", "--cilium", newer]);
    expect(e.code).toBe(0);
    expect(e.out.split("\n")[0]).toBe(
      `Expectations for Cilium ${newer}, assumed from ${newest} (a minor the suite has not declared).`,
    );
    const p = await run(["plan", "--cilium", newer, "--mode", "kpr"]);
    expect(p.code).toBe(0);
    expect(p.out.split("\n").slice(0, 2)).toEqual([
      `# kind × kpr × Cilium ${newer} (cluster cdc-kpr, context kind-cdc-kpr)`,
      expect.stringMatching(
        new RegExp(
          `^# never run here: Cilium ${newer.replace(/\./g, "\\.")}, a minor the suite has not declared .* every expectation is assumed from ${newest.replace(".", "\\.")} `,
        ),
      ),
    ]);
    expect(p.out).toContain(`--version ${newer} `);
  });

  it("--mode: an unknown one is refused by every command in the same line; left out, each says what it does", async () => {
    for (const c of COMMANDS) {
      const r = await run(c.argv(["--mode", "kpr-ish"]));
      expect(r.code).toBe(2);
      expect(said(r.err, c.name)).toBe('unknown mode "kpr-ish"; valid: kpr, kube-proxy\n');
    }
    // without --mode: both columns, both modes' plans, both modes run
    expect((await run(["expectations", "--format", "md"])).out).toContain("`kpr` | `kube-proxy`");
    const both = await run(["plan"]);
    expect(both.code).toBe(0);
    expect(both.out.match(/^# kind × \S+ × Cilium/gm)).toEqual([
      "# kind × kpr × Cilium",
      "# kind × kube-proxy × Cilium",
    ]);
    expect((await run(["lab", "run", "--dry-run"])).err).toMatch(/both modes \(kpr, kube-proxy\)/);
  });

  it("plan --provider existing reads the mode and the version from the agents: --mode optional, --cilium refused", async () => {
    const r = await run(["plan", "--provider", "existing"]);
    expect(r.code).toBe(0);
    expect(r.out.split("\n")[0]).toBe(
      "# existing × the mode its agents report × the Cilium version its agents report (cluster (current context), context current)",
    );
    const one = await run(["plan", "--provider", "existing", "--mode", "kube-proxy"]);
    expect(one.out.split("\n")[0]).toMatch(
      /^# existing × kube-proxy \(must be the mode its agents report\) × /,
    );
    const v = await run(["plan", "--provider", "existing", "--cilium", "1.19"]);
    expect(v.code).toBe(2);
    expect(v.err).toBe(
      "datapath-conformance plan: --cilium does not apply to provider existing: the version is the one the cluster's agents run\n",
    );
  });

  it("providers and profiles: one line listing the valid ones", async () => {
    const p = await run(["plan", "--provider", "minikube"]);
    expect(p.err).toBe(
      'datapath-conformance plan: unknown provider "minikube"; valid: kind, k3d, existing, replay, none\n',
    );
    expect((await run(["plan", "--provider", "none"])).err).toBe(
      "datapath-conformance plan: provider none runs no cluster (every cluster spec is skipped): nothing to plan; valid: kind, k3d, existing, replay\n",
    );
    const unknown = await run(["plan", "--profile", "turbo"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(
      /^datapath-conformance plan: unknown datapath profile "turbo"; valid: tunnel, /,
    );
    const wrongMode = await run(["plan", "--profile", "dsr-maglev", "--mode", "kube-proxy"]);
    expect(wrongMode.err).toBe(
      "datapath-conformance plan: datapath profile dsr-maglev applies to kpr only (not kube-proxy)\n",
    );
    const ok = await run(["plan", "--profile", "dsr-maglev", "--mode", "kpr"]);
    expect(ok.out).toContain("# datapath profile dsr-maglev: ");
  });
});
