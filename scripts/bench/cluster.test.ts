/**
 * The cluster figures of `npm run bench`: what `--cluster` runs (its plan: the bare create is the suite's own
 * `kind create cluster` under another name), the order it runs in against a runner WRITTEN BY US that writes a
 * bundle as the conformance run would, and each figure with its reference and goal. No cluster is made here.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { Lab } from "../../clusters/lab.ts";
import { kindCreateArgv, makeProfile } from "../../clusters/profile.ts";
import type { BundleMeta } from "../../helpers/bundle/read.ts";
import { writeMeta } from "../../helpers/bundle/write.ts";
import type { MeasureScaleRecord } from "../../helpers/measure/records.ts";
import type { Mode } from "../../helpers/properties/expectation.ts";
import {
  apiAndConvergenceMs,
  clusterBenchArgs,
  clusterBenchPlan,
  clusterFigures,
  REFERENCE_FILE,
  readMode,
  readReference,
  runClusterBench,
} from "./cluster.ts";
import { formatFigures } from "./figures.ts";

const root = mkdtempSync(join(tmpdir(), "dpc-bench-cluster-test-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** An offline lab WRITTEN BY US (its cache does not exist: nothing here reads it). */
const LAB: Lab = {
  cache: "/nonexistent/lab",
  binDir: "/nonexistent/lab/bin",
  kubernetes: "v1.35.5",
  nodeImage: "localhost/lab/kind-node:v1.35.5",
  agnhostImage: "localhost/lab/agnhost:2.52",
  toolsImage: "localhost/lab/tools:1",
  ciliumVersions: ["1.19.7", "1.19.6"],
};

/** A mode's bundle as a run writes it (bundle.json phases, the measure-scale record), WRITTEN BY US. */
function writeBundle(dir: string, mode: Mode, phases: Record<string, number>, convergenceMs?: number): void {
  writeMeta(dir, {
    format: 1,
    mode,
    cilium: "1.19.7",
    ciliumMinor: "1.19",
    kubernetes: "v1.35.5",
    kernel: "6.1",
    attachMode: "TCX",
    provider: "kind",
    origin: "recorded",
    runId: "r",
    createdAt: "2026-12-03T10:00:00Z",
    phases,
  } as BundleMeta);
  if (convergenceMs !== undefined) {
    mkdirSync(join(dir, "records"), { recursive: true });
    writeFileSync(
      join(dir, "records", "measure-scale.json"),
      JSON.stringify({ points: [], convergence_ms: convergenceMs, suite_ms: 31_000 }),
    );
  }
}

describe("npm run bench -- --cluster: the plan", () => {
  it("the bare create is the suite's own kind create for the first mode (node image, config), under another name and kubeconfig", () => {
    const tmp = join(root, "plan");
    const plan = clusterBenchPlan({
      modes: ["kpr", "kube-proxy"],
      concurrent: true,
      runId: "bench-1",
      resultsDir: "/repo/results",
      tmp,
      lab: LAB,
      env: { PATH: "/usr/bin", HOME: "/root" },
    });
    const suite = kindCreateArgv(
      makeProfile({ provider: "kind", mode: "kpr", lab: LAB }),
      join(tmp, "kind-config.yaml"),
    );
    expect(plan.bare.create).toEqual([
      ...suite.map((w) => (w === "cdc-kpr" ? "dpc-bench-bare" : w)),
      "--kubeconfig",
      join(tmp, "kubeconfig"),
    ]);
    expect(plan.bare.create).toContain("localhost/lab/kind-node:v1.35.5");
    const config = parse(plan.bare.files[join(tmp, "kind-config.yaml")] as string);
    const own = makeProfile({ provider: "kind", mode: "kpr", lab: LAB }).kindConfig as Record<
      string,
      unknown
    >;
    expect(config).toEqual({ ...own, name: "dpc-bench-bare" });
    expect(plan.bare.remove).toEqual([
      "kind",
      "delete",
      "cluster",
      "--name",
      "dpc-bench-bare",
      "--kubeconfig",
      join(tmp, "kubeconfig"),
    ]);
    expect(plan.run.argv).toEqual(["npx", "vitest", "run", "--project", "conformance"]);
    expect(plan.run.env).toMatchObject({
      CLUSTER_PROVIDER: "kind",
      RUN_ID: "bench-1",
      MODES_CONCURRENT: "1",
      LAB_IMAGES: "1",
      PATH: "/nonexistent/lab/bin:/usr/bin",
      HOME: "/root",
    });
    expect(plan.run.env.CONFORMANCE_MODE).toBeUndefined();
    expect(plan.bundles).toEqual(["/repo/results/bench-1/kpr", "/repo/results/bench-1/kube-proxy"]);
  });

  it("one mode: that mode's create, CONFORMANCE_MODE set, no lab unless asked", () => {
    const plan = clusterBenchPlan({
      modes: ["kube-proxy"],
      concurrent: false,
      runId: "b",
      resultsDir: "/r",
      tmp: "/t",
      env: {},
    });
    expect(plan.bare.create).toContain(
      "kindest/node:v1.35.0@sha256:452d707d4862f52530247495d180205e029056831160e22870e37e3f6c1ac31f",
    );
    expect(parse(plan.bare.files["/t/kind-config.yaml"] as string).networking.kubeProxyMode).toBe("iptables");
    expect(plan.run.env).toMatchObject({ CONFORMANCE_MODE: "kube-proxy", MODES_CONCURRENT: "0" });
    expect(plan.run.env.LAB_IMAGES).toBeUndefined();
  });
});

describe("npm run bench -- --cluster: the run", () => {
  it("bare create, its delete, then the conformance run; the reference beside the bundles; each figure against its reference", async () => {
    const results = join(root, "results");
    const ran: string[] = [];
    const r = await runClusterBench(
      {
        modes: ["kpr"],
        concurrent: false,
        runId: "bench-2",
        resultsDir: results,
        tmp: mkdtempSync(join(root, "t-")),
        env: {},
      },
      async (argv, env) => {
        ran.push(argv.slice(0, 3).join(" "));
        if (argv[0] === "kind" && argv[1] === "create") return { seconds: 41, exit: 0 };
        if (argv[0] === "kind") return { seconds: 3, exit: 0 };
        // the conformance run writes its bundle
        writeBundle(
          join(results, env.RUN_ID as string, "kpr"),
          "kpr",
          {
            "create cluster": 45.1,
            "install Cilium": 5,
            "Cilium ready": 60,
            "agents' own start (max)": 55,
            "drop baseline": 4,
            "spec measure-scale": 30,
          },
          25_000,
        );
        return { seconds: 210, exit: 0 };
      },
      () => {},
    );
    expect(ran).toEqual(["kind create cluster", "kind delete cluster", "npx vitest run"]);
    const ref = readReference(join(results, "bench-2", "kpr"));
    expect(ref).toMatchObject({
      runId: "bench-2",
      modes: ["kpr"],
      bareKindCreate: { seconds: 41, exit: 0 },
      runWall: { seconds: 210, exit: 0 },
    });
    expect(JSON.parse(readFileSync(join(results, "bench-2", REFERENCE_FILE), "utf8"))).toEqual(r.reference);
    expect(formatFigures(r.figures).split("\n").slice(2, 6)).toEqual([
      "| create cluster (kpr) | 45.1 s | bare `kind create cluster`, same node image and config: 41.0 s | 1.1× | ≤ 1.2× ✔ |",
      "| Cilium ready (kpr) | 60.0 s | agents' own start (Pod start → first status OK, slowest agent): 55.0 s | 1.1× | ≤ 1.2× ✔ |",
      "| measure-scale (kpr): the suite's time for the topic | 30.0 s | the convergence it measured (agents programming and dropping the Services): 25.0 s | 1.2× | ≤ 1.5× ✔ |",
      "| one mode end to end (kpr) | 210.0 s |  |  | ≤ 240 s ✔ |",
    ]);
  });

  it("a run that wrote no bundle is one line saying so", async () => {
    await expect(
      runClusterBench(
        {
          modes: ["kpr"],
          concurrent: false,
          runId: "bench-3",
          resultsDir: join(root, "results"),
          tmp: mkdtempSync(join(root, "t-")),
          env: {},
        },
        async () => ({ seconds: 1, exit: 1 }),
        () => {},
      ),
    ).rejects.toThrow(/the conformance run wrote no bundle under .*bench-3 \(exit 1\); see its output above/);
  });
});

describe("cluster figures of a recorded run", () => {
  it("both modes: each mode's figures, then the wall of both against the modes one after the other", () => {
    const run = join(root, "both");
    writeBundle(join(run, "kpr"), "kpr", { "create cluster": 50, "Cilium ready": 40, "spec iptables": 10 });
    writeBundle(join(run, "kube-proxy"), "kube-proxy", {
      "create cluster": 60,
      "Cilium ready": 45,
      "spec iptables": 12,
    });
    writeFileSync(
      join(run, REFERENCE_FILE),
      JSON.stringify({
        runId: "x",
        modes: ["kpr", "kube-proxy"],
        concurrent: true,
        bareKindCreate: null,
        runWall: { seconds: 150, exit: 0 },
      }),
    );
    const modes = [readMode(join(run, "kpr")), readMode(join(run, "kube-proxy"))];
    const figs = clusterFigures(modes, readReference(join(run, "kpr")));
    expect(figs.map((f) => f.what)).toEqual([
      "create cluster (kpr)",
      "Cilium ready (kpr)",
      "one mode end to end (kpr), the sum of its phases",
      "create cluster (kube-proxy)",
      "Cilium ready (kube-proxy)",
      "one mode end to end (kube-proxy), the sum of its phases",
      "both modes, wall (MODES_CONCURRENT=1)",
    ]);
    expect(figs.at(-1)).toMatchObject({ seconds: 150, reference: { seconds: 217 }, goalSeconds: 360 });
    expect(figs[0]?.noReference).toMatch(/^none: not measured in this run/);
  });
});

describe("the bench's cluster arguments", () => {
  it("read a run, a bundle list, or make one; anything else is one line", () => {
    expect(clusterBenchArgs({})).toBeNull();
    expect(clusterBenchArgs({ cluster: true })).toEqual({
      bundles: [],
      cluster: true,
      modes: ["kpr", "kube-proxy"],
      concurrent: false,
    });
    expect(clusterBenchArgs({ cluster: true, mode: "kpr" })?.modes).toEqual(["kpr"]);
    expect(() => clusterBenchArgs({ cluster: true, mode: "ebpf" })).toThrow(
      'unknown mode "ebpf"; valid: kpr, kube-proxy',
    );
    expect(() => clusterBenchArgs({ cluster: true, mode: "kpr", concurrent: true })).toThrow(
      /leave --mode out/,
    );
    expect(() => clusterBenchArgs({ cluster: true, run: "x" })).toThrow(
      "one of --bundle DIR[,DIR], --run DIR or --cluster",
    );
    expect(() => clusterBenchArgs({ bundle: join(root, "none") })).toThrow(/not an evidence bundle/);
    expect(() => clusterBenchArgs({ run: join(root, "none") })).toThrow(/no such folder/);
    expect(() => clusterBenchArgs({ concurrent: true })).toThrow(/go with --cluster/);
  });
});

describe("measure-scale's second reference: the API server's part beside the agents'", () => {
  const point = (services: number, apply: number, conv: number, del: number, gone: number) => ({
    services,
    endpoints: services * 4,
    kube_proxy_lines: 0,
    lb_entries: {},
    programmed_ms: apply + conv,
    apply_ms: apply,
    converged_ms: conv,
    delete_ms: del,
    gone_ms: gone,
  });
  it("adds create → converged and delete → gone over every point (the 1.20.2 run's 200-Service point: 12.2 s to create, 1.6 s to converge)", () => {
    const r = {
      endpoints_per_service: 4,
      points: [point(1, 248, 1995, 97, 1341), point(200, 12_180, 1649, 12_011, 2106)],
      convergence_ms: 7091,
      suite_ms: 40_000,
    } as unknown as MeasureScaleRecord;
    expect(apiAndConvergenceMs(r)).toBe(248 + 1995 + 97 + 1341 + 12_180 + 1649 + 12_011 + 2106);
  });
  it("is none for a record without the create and delete times (recorded before them)", () => {
    const old = {
      points: [{ ...point(1, 1, 1, 1, 1), apply_ms: undefined }],
    } as unknown as MeasureScaleRecord;
    expect(apiAndConvergenceMs(old)).toBeNull();
    expect(apiAndConvergenceMs(null)).toBeNull();
  });
});
