import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { clusterRun, conformanceWorkers } from "./suites/run-state.ts";
import { FileNameSequencer } from "./suites/sequencer.ts";

/**
 * Four projects, one per layer:
 * - unit: pure code (parsers, records, judges, profiles, CLI), always runs;
 * - kernel: real probes against this machine's Linux kernel in network namespaces the tests create (root only);
 * - replay: every conformance spec end to end on the recorded bundles in suites/bundles (no cluster);
 * - conformance: the same specs against a real cluster (kind, k3d or an existing one); skipped with the
 *   reason when no provider can run here.
 */
/**
 * One module graph per worker, not one per test file (every project): every spec file imports the harness and
 * the topics (and through them, until issue 27 made it lazy, @kubernetes/client-node, ~1 s to import), and a
 * fresh graph per file made
 * importing most of `npm test`'s time (issue 20). No test relies on a fresh graph: module state is interning
 * caches only, and a test that changes process.env puts it back. (A project does not inherit the root's test
 * options, so each says it.)
 */
const shared = { isolate: false } as const;

/**
 * unit and replay run side by side, in at least three workers (vitest's default on 2 cores is one): many files
 * wait on processes, Chromium and timers, and a third worker fills a core while one waits (issue 27, measured on 2
 * idle cores with tsc beside: 2 workers 89 s, 3 workers 77 s, 4 workers 72 s on 2026-12-03; on 2026-12-05 with 34
 * bundles, unit and replay alone, 3 workers 53.3-63.5 s and 4 workers 52.9-59.9 s: within the noise, so three;
 * later that day, the whole run: 2 workers 50.6-53.6 s, 3 workers 44.4-46.7 s, 4 workers 42.4-47.4 s).
 * The readiness test that had stalled past its 20 s under load fired its timers out of order; it chains them now.
 * The kernel project's files (each in network namespaces of its own) and, without a cluster, the conformance
 * project's skipping specs run in the same group (vitest runs a group's projects together only when their worker
 * counts match): they had run one file at a time after the others, 5 s at the end of every run.
 */
const parallel = { maxWorkers: Math.max(3, availableParallelism() - 1), sequence: { groupOrder: 0 } };

export default defineConfig({
  test: {
    // vitest reads the sequencer from the root config only (a project's own was ignored, and the default
    // runs files that failed last time first): the cluster specs build on each other, in file-name order
    sequence: { sequencer: FileNameSequencer },
    // why tests were skipped, each reason once with its count (vitest's default reporter only counts them), printed
    // before vitest's totals; JUnit in CI, with each skip's reason in its <skipped> element (vitest's own leaves it
    // empty)
    // first of all (issue 45), the guard: what a run's raw output put into an error, a test's name or a console
    // line is shown, never obeyed, by every reporter after it (a replay's or a cluster's output quoted in a
    // harness error reached the log raw: `::error`, `##[`, OSC 52 at a line's start).
    // (CONFORMANCE_JUNIT=FILE, which `datapath-conformance run --junit FILE` sets, writes it anywhere, CI or not)
    reporters:
      process.env.CI || process.env.CONFORMANCE_JUNIT
        ? [
            "./helpers/testing/guard-reporter.ts",
            "./helpers/testing/skip-reporter.ts",
            "default",
            [
              "./helpers/testing/junit-reporter.ts",
              { outputFile: process.env.CONFORMANCE_JUNIT || "results/junit.xml" },
            ],
          ]
        : ["./helpers/testing/guard-reporter.ts", "./helpers/testing/skip-reporter.ts", "default"],
    projects: [
      {
        test: {
          ...shared,
          ...parallel,
          name: "unit",
          globalSetup: ["helpers/testing/check-cache-setup.ts", "cli/bundle-setup.ts"],
          // bounded, but not by vitest's 5 s / 10 s defaults: on a 2-core machine running a lab cluster beside
          // them, files that start real processes (bash sandboxes, the CLI, Chromium) took 5-12 s
          testTimeout: 20_000,
          hookTimeout: 30_000,
          include: [
            "helpers/**/*.test.ts",
            "clusters/**/*.test.ts",
            "cli/**/*.test.ts",
            "scripts/**/*.test.ts",
            "manifests/**/*.test.ts",
            "suites/**/*.test.ts",
          ],
          exclude: ["**/*.kernel.test.ts", "node_modules/**"],
        },
      },
      {
        test: {
          ...shared,
          ...parallel,
          name: "kernel",
          include: ["helpers/**/*.kernel.test.ts", "clusters/**/*.kernel.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          ...shared,
          ...parallel,
          name: "replay",
          globalSetup: ["helpers/testing/check-cache-setup.ts"],
          include: ["suites/**/*.spec.ts"],
          env: { CLUSTER_PROVIDER: "replay", VITEST_PROJECT_REPLAY: "1" },
          testTimeout: 30_000,
        },
      },
      {
        test: {
          ...shared,
          name: "conformance",
          include: ["suites/**/*.spec.ts"],
          // topics observed at once within a mode: each waits for the topics its schedule names (suites/
          // schedule.ts), so a worker per topic that may overlap; CONFORMANCE_WORKERS=1 runs them one by one.
          // Without a cluster every spec only says why it skips: those run beside the unit files (group 0)
          ...(clusterRun(process.env, process.argv)
            ? { maxWorkers: conformanceWorkers(process.env.CONFORMANCE_WORKERS), sequence: { groupOrder: 2 } }
            : parallel),
          // the upgrade topic waits for the restart leg, then runs two legs and every topic after each: 968 s on
          // the 2-core lab (run up-119-120-kp-d, beside kube-proxy on 1.20.2, whose probes wait out 5 s)
          testTimeout: 30 * 60_000,
          hookTimeout: 30 * 60_000,
          globalSetup: ["suites/global-setup.ts"],
        },
      },
    ],
  },
});
