import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LAB_DIR, LAB_SCRIPT, parseEnvFile, readLab } from "../clusters/lab.ts";
import { UserError } from "../helpers/errors.ts";
import {
  COLD_BUILD,
  coldSeconds,
  describeEstimate,
  estimateBuild,
  formatDuration,
  type LabRunDeps,
  labRun,
  ONE_VERSION_STEPS,
  type PhaseCommand,
  parseTimings,
  planLabRun,
} from "./lab-run.ts";

const cache = mkdtempSync(join(tmpdir(), "dpc-lab-run-"));
afterAll(() => rmSync(cache, { recursive: true, force: true }));
const lab = readLab({ LAB_CACHE: cache });
const versions = parseEnvFile(readFileSync(join(LAB_DIR, "versions.env"), "utf8"));
/** What `lab.sh steps` prints: the real list, from the script. */
const STEPS = execFileSync("bash", [LAB_SCRIPT, "steps"], { env: { ...process.env, LAB_CACHE: cache } })
  .toString()
  .split("\n")
  .filter(Boolean);
const NEWEST = lab.ciliumVersions[0] as string;
const OLDER = lab.ciliumVersions[1] as string;
/** A step another Cilium version than the newest needs (the run leaves them out). */
const otherVersion = (s: string) => lab.ciliumVersions.slice(1).some((v) => s.endsWith(`-${v}`));
const NOW = new Date("2026-12-03T04:05:06Z");

describe("lab.sh steps", () => {
  it("lists every step cmd_images builds, in its order", () => {
    // the names cmd_images passes to `wanted`, with its loops expanded
    const script = readFileSync(LAB_SCRIPT, "utf8");
    const body = script.slice(script.indexOf("cmd_images() {"), script.indexOf("\ncmd_status() {"));
    const loops: Record<string, string[]> = {};
    const named: string[] = [];
    for (const line of body.split("\n")) {
      const loop = /for (\w) in ([^;]+); do/.exec(line);
      if (loop?.[1] && loop[2])
        loops[loop[1]] =
          // cilium_versions: versions.env's, and those asked for (none here)
          loop[2].trim() === "$CILIUM_VERSIONS" || loop[2].trim() === "$(cilium_versions)"
            ? (versions.CILIUM_VERSIONS ?? "").split(/\s+/).filter(Boolean)
            : loop[2].trim().split(/\s+/);
      const w = /wanted "?([^"\s]+)"?/.exec(line);
      if (!w?.[1]) continue;
      const v = /\$(\w)/.exec(w[1])?.[1];
      named.push(...(v ? (loops[v] ?? []).map((x) => (w[1] as string).replace(`$${v}`, x)) : [w[1]]));
    }
    // loops run in order: group the Cilium steps per version as cmd_images does
    expect(STEPS.length).toBeGreaterThan(20);
    expect([...STEPS].sort()).toEqual([...named].sort());
    expect(STEPS.indexOf("kubernetes")).toBeLessThan(STEPS.indexOf("image-kube-apiserver"));
    expect(STEPS.at(-1)).toBe("image-node");
    for (const v of lab.ciliumVersions) expect(STEPS).toContain(`cilium-${v}`);
  });

  it("images refuses a step it does not know, naming the valid ones", () => {
    // only the tools the check needs on PATH: were it to go on, there is no docker, dockerd or apt-get to run
    const bin = join(cache, "bin-only");
    mkdirSync(bin, { recursive: true });
    for (const tool of ["bash", "mkdir", "dirname", "grep", "tr", "date", "sed", "head", "cat"])
      symlinkSync(
        execFileSync("bash", ["-c", `command -v ${tool}`])
          .toString()
          .trim(),
        join(bin, tool),
      );
    let stderr = "";
    try {
      execFileSync(join(bin, "bash"), [LAB_SCRIPT, "images", "kubernets"], {
        env: { PATH: bin, LAB_CACHE: cache, HOME: cache },
        stdio: "pipe",
      });
    } catch (err) {
      stderr = String((err as { stderr: Buffer }).stderr);
    }
    expect(stderr).toMatch(
      /error: unknown step 'kubernets'; valid: host-packages rootfs-base tools kubernetes /,
    );
  });
});

describe("the build estimate", () => {
  it("a stamped step costs 0, else this machine's timings.tsv, else the measured cold build (docs/lab.md)", () => {
    const est = estimateBuild(
      ["tools", "kubernetes", "cilium-1.19.7"],
      new Set(["tools"]),
      new Map([["kubernetes", 592]]),
    );
    expect(est).toEqual([
      { step: "tools", seconds: 0, from: "built" },
      { step: "kubernetes", seconds: 592, from: "timings.tsv" },
      { step: "cilium-1.19.7", seconds: coldSeconds("cilium-1.19.7"), from: "measured" },
    ]);
    const cilium = formatDuration(coldSeconds("cilium-1.19.7"));
    expect(describeEstimate(est)).toBe(
      `2 of 3 steps to build, about ${formatDuration(592 + coldSeconds("cilium-1.19.7"))} (cilium-1.19.7 ${cilium}, kubernetes 9 min 52 s; from timings.tsv and the measured cold build (58 min 54 s for one Cilium version, docs/lab.md))`,
    );
    expect(describeEstimate(estimateBuild(["tools"], new Set(["tools"]), new Map()))).toBe(
      "all 1 steps built earlier: nothing to build",
    );
  });

  it("timings.tsv: the last time of a step wins; junk lines are ignored", () => {
    expect(
      parseTimings("tools\t135\t2026-12-03T03:11:53Z\nkubernetes\t700\tx\n\nbad line\nkubernetes\t592\ty\n"),
    ).toEqual(
      new Map([
        ["tools", 135],
        ["kubernetes", 592],
      ]),
    );
  });

  it("a cold cache: every step the run needs, adding up to the measured cold build (58 min 54 s for one Cilium version)", () => {
    const plan = planLabRun(
      { dryRun: false },
      { lab, root: "/repo", steps: STEPS, stamped: new Set(), timings: new Map(), now: NOW },
    );
    const needed = STEPS.filter((s) => !otherVersion(s));
    expect(plan.estimate.map((e) => e.step)).toEqual(needed);
    // the steps the estimate's scale is declared over are those lab.sh builds for one version
    expect(needed.map((s) => s.replace(NEWEST, "X"))).toEqual(ONE_VERSION_STEPS);
    expect(COLD_BUILD.seconds).toBe(58 * 60 + 54);
    expect(formatDuration(plan.estimate.reduce((t, e) => t + e.seconds, 0))).toBe("58 min 54 s");
    expect(plan.phases[0]?.says).toMatch(
      new RegExp(`^${needed.length} of ${needed.length} steps to build, about 58 min 54 s \\(`),
    );
  });
});

describe("the phase plan", () => {
  const plan = (opts: Parameters<typeof planLabRun>[0], stamped = new Set<string>()) =>
    planLabRun(opts, { lab, root: "/repo", steps: STEPS, stamped, timings: new Map(), now: NOW });

  it("images (only the run's Cilium build), engine, both modes on kind with the lab's images, report", () => {
    const p = plan({ dryRun: false });
    expect(p.runId).toBe("lab-20261203-040506");
    expect(p.cilium).toBe(NEWEST);
    expect(p.phases.map((x) => x.name)).toEqual(["images", "engine", "conformance", "report"]);
    const [images, engine, conformance, report] = p.phases;
    expect(images?.command?.argv.slice(0, 3)).toEqual(["bash", LAB_SCRIPT, "images"]);
    expect(images?.command?.argv).toContain(`cilium-${NEWEST}`);
    expect(images?.command?.argv).not.toContain(`cilium-${OLDER}`);
    expect(engine?.command?.argv).toEqual(["bash", LAB_SCRIPT, "up"]);
    expect(conformance?.command?.argv.slice(1)).toEqual([
      "/repo/node_modules/vitest/vitest.mjs",
      "run",
      "--project",
      "conformance",
    ]);
    expect(conformance?.command?.env).toEqual({
      LAB_CACHE: cache,
      LAB_IMAGES: "1",
      CLUSTER_PROVIDER: "kind",
      CILIUM_VERSION: NEWEST,
      RUN_ID: "lab-20261203-040506",
    });
    expect(conformance?.says).toMatch(/^both modes \(kpr, kube-proxy\)/);
    expect(report?.command).toBeUndefined();
    expect(report?.says).toContain("/repo/results/lab-20261203-040506/report.html");
  });

  it("--mode and --cilium narrow the run; a version versions.env does not name is built by the images phase", () => {
    const p = plan({ dryRun: false, mode: "kpr", cilium: OLDER });
    expect(p.phases[2]?.command?.env).toMatchObject({ CONFORMANCE_MODE: "kpr", CILIUM_VERSION: OLDER });
    expect(p.phases[0]?.command?.argv).toContain(`cilium-${OLDER}`);
    expect(p.phases[0]?.command?.argv).not.toContain(`cilium-${NEWEST}`);
    // the steps lab.sh lists with that version asked for (`lab.sh steps 1.20.1`): its build, not the others'
    const withIt = execFileSync("bash", [LAB_SCRIPT, "steps", "1.20.1"], {
      env: { ...process.env, LAB_CACHE: cache },
    })
      .toString()
      .split("\n")
      .filter(Boolean);
    const other = planLabRun(
      { dryRun: false, cilium: "1.20.1" },
      { lab, root: "/repo", steps: withIt, stamped: new Set(STEPS), timings: new Map(), now: NOW },
    );
    expect(other.cilium).toBe("1.20.1");
    expect(other.estimate.filter((e) => e.from !== "built").map((e) => e.step)).toEqual([
      "cilium-1.20.1",
      "image-cilium-1.20.1",
    ]);
    expect(other.phases[0]?.command?.argv).toContain("cilium-1.20.1");
    for (const v of lab.ciliumVersions) expect(other.phases[0]?.command?.argv).not.toContain(`cilium-${v}`);
    expect(other.phases[2]?.command?.env.CILIUM_VERSION).toBe("1.20.1");
    expect(() => plan({ dryRun: false, cilium: "1.17.2" })).toThrow(UserError);
    // a minor, as every other command takes it, runs the lab's build of that minor
    const minor = OLDER.split(".").slice(0, 2).join(".");
    expect(plan({ dryRun: false, cilium: minor }).cilium).toBe(OLDER);
    expect(plan({ dryRun: false, cilium: `v${OLDER}` }).cilium).toBe(OLDER);
  });

  it("with every step stamped there is nothing to build", () => {
    expect(plan({ dryRun: false }, new Set(STEPS)).phases[0]?.says).toMatch(
      /^all \d+ steps built earlier: nothing to build$/,
    );
  });
});

/** Deps that record what would run; `codes` gives each phase's exit code. */
function fakeDeps(
  codes: Record<string, number> = {},
  bundles = ["/repo/results/x/kpr", "/repo/results/x/kube-proxy"],
) {
  const ran: string[] = [];
  const lines: string[] = [];
  const reports: { dirs: string[]; out: string }[] = [];
  let t = NOW.getTime();
  const deps: LabRunDeps = {
    lab,
    root: "/repo",
    platform: "linux",
    isRoot: true,
    steps: async () => STEPS,
    stamped: () => new Set(STEPS.filter((s) => s !== "image-node")),
    timings: () => new Map([["image-node", 95]]),
    run: async (cmd: PhaseCommand) => {
      const phase = cmd.argv.includes("up")
        ? "engine"
        : cmd.argv.includes("images")
          ? "images"
          : "conformance";
      ran.push(phase);
      t += 61_000;
      return codes[phase] ?? 0;
    },
    bundles: () => bundles,
    writeReport: async (dirs, out) => {
      reports.push({ dirs, out });
      return [
        { label: "kpr · Cilium 1.19.7", pass: 60, fail: 0, knownIssues: 0, skip: 4 },
        { label: "kube-proxy · Cilium 1.19.7", pass: 55, fail: 1, knownIssues: 4, skip: 4 },
      ];
    },
    now: () => new Date(t),
    log: (l) => lines.push(l),
  };
  return { deps, ran, lines, reports };
}

describe("lab run", () => {
  it("runs the phases in order with a progress line each, and prints where the report is", async () => {
    const f = fakeDeps();
    expect(await labRun({ dryRun: false }, f.deps)).toBe(0);
    expect(f.ran).toEqual(["images", "engine", "conformance"]);
    expect(f.reports).toEqual([
      {
        dirs: ["/repo/results/x/kpr", "/repo/results/x/kube-proxy"],
        out: "/repo/results/lab-20261203-040506/report.html",
      },
    ]);
    expect(f.lines[0]).toBe(
      `[lab run 1/4] images: 1 of ${STEPS.filter((s) => !otherVersion(s)).length} steps to build, about 1 min 35 s (image-node 1 min 35 s; from timings.tsv)`,
    );
    expect(f.lines).toContain("[lab run 1/4] images: done in 1 min 1 s");
    expect(f.lines).toContain("[lab run 2/4] engine: done in 1 min 1 s");
    expect(f.lines).toContain("[lab run 3/4] conformance: every spec passed after 1 min 1 s");
    expect(f.lines).toContain("[lab run 4/4] kpr · Cilium 1.19.7: 60 passed, 0 failed, 4 skipped");
    // a known issue is neither a pass nor a failure: the summary says how many (run lab-20261205-125648 did not)
    expect(f.lines).toContain(
      "[lab run 4/4] kube-proxy · Cilium 1.19.7: 55 passed, 1 failed, 4 known issues, 4 skipped",
    );
    expect(f.lines.at(-1)).toMatch(
      /^\[lab run 4\/4\] report: written in 0 s: \/repo\/results\/lab-20261203-040506\/report\.html \(file:\/\/\/repo\/results\/lab-20261203-040506\/report\.html\)$/,
    );
  });

  it("a version the suite ships no bundle of: the report's counts, its changes and its comparison with the nearest shipped one", async () => {
    const f = fakeDeps();
    // what writeReport returns for a run of an undeclared minor (counts written by us)
    f.deps.writeReport = async () => [
      {
        label: "kpr · Cilium 1.21.0 · assumed from 1.20",
        pass: 58,
        fail: 0,
        changed: 2,
        knownIssues: 0,
        skip: 4,
        nearest:
          "Cilium 1.21.0 is of a minor the suite has not declared: compared with the shipped bundle of the nearest declared version, suites/bundles/1.20/kpr (kpr, Cilium 1.20.2): Regression: 2 verdict regressions.",
      },
    ];
    expect(await labRun({ dryRun: false }, f.deps)).toBe(0);
    expect(f.lines).toContain(
      "[lab run 4/4] kpr · Cilium 1.21.0 · assumed from 1.20: 58 passed, 0 failed, 2 changed in the new minor, 4 skipped",
    );
    expect(f.lines).toContain(
      "[lab run 4/4] kpr · Cilium 1.21.0 · assumed from 1.20: Cilium 1.21.0 is of a minor the suite has not declared: compared with the shipped bundle of the nearest declared version, suites/bundles/1.20/kpr (kpr, Cilium 1.20.2): Regression: 2 verdict regressions.",
    );
  });

  it("a failed build stops the run with its exit code; nothing further starts", async () => {
    const f = fakeDeps({ images: 3 });
    expect(await labRun({ dryRun: false }, f.deps)).toBe(3);
    expect(f.ran).toEqual(["images"]);
    expect(f.reports).toEqual([]);
    expect(f.lines.at(-1)).toBe(
      "[lab run 1/4] images: FAILED (exit 3) after 1 min 1 s; nothing further runs",
    );
  });

  it("failed properties still get their report, and the run exits with the conformance phase's code", async () => {
    const f = fakeDeps({ conformance: 1 });
    expect(await labRun({ dryRun: false }, f.deps)).toBe(1);
    expect(f.reports).toHaveLength(1);
    expect(f.lines).toContain(
      "[lab run 3/4] conformance: exit 1 (a property failed or a spec could not run) after 1 min 1 s",
    );
  });

  it("Ctrl-C during a phase: the run stops there, without a report", async () => {
    const f = fakeDeps({ conformance: 130 });
    expect(await labRun({ dryRun: false }, f.deps)).toBe(130);
    expect(f.reports).toEqual([]);
    expect(f.lines.at(-1)).toBe(
      "[lab run 3/4] conformance: interrupted after 1 min 1 s; nothing further runs",
    );
  });

  it("no bundle written: no report, a line saying so and a non-zero exit", async () => {
    const f = fakeDeps({}, []);
    expect(await labRun({ dryRun: false }, f.deps)).toBe(1);
    expect(f.reports).toEqual([]);
    expect(f.lines.at(-1)).toMatch(
      /report: the conformance phase left no bundle under \S+lab-20261203-040506: no report$/,
    );
  });

  it("--dry-run prints the phases and their commands and runs nothing (root or not)", async () => {
    const f = fakeDeps();
    f.deps.isRoot = false;
    expect(await labRun({ dryRun: true }, f.deps)).toBe(0);
    expect(f.ran).toEqual([]);
    expect(f.lines.filter((l) => l.startsWith("[lab run"))).toHaveLength(4);
    expect(f.lines).toContain(`    LAB_CACHE=${cache} bash ${LAB_SCRIPT} up`);
  });

  it("not root, or not Linux: one line before anything runs", async () => {
    const f = fakeDeps();
    f.deps.isRoot = false;
    await expect(labRun({ dryRun: false }, f.deps)).rejects.toThrow(/needs root/);
    f.deps.isRoot = true;
    f.deps.platform = "darwin";
    await expect(labRun({ dryRun: false }, f.deps)).rejects.toThrow("the offline lab builds on Linux only");
    expect(f.ran).toEqual([]);
  });
});
