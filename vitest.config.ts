import { defineConfig } from "vitest/config";
import { FileNameSequencer } from "./suites/sequencer.ts";

/**
 * Four projects, one per layer:
 * - unit: pure code (parsers, records, judges, profiles, CLI), always runs;
 * - kernel: real probes against this machine's Linux kernel in network namespaces the tests create (root only);
 * - replay: every conformance spec end to end on the recorded bundles in suites/bundles (no cluster);
 * - conformance: the same specs against a real cluster (kind, k3d or an existing one); skipped with the
 *   reason when no provider can run here.
 */
export default defineConfig({
  test: {
    // vitest reads the sequencer from the root config only (a project's own was ignored, and the default
    // runs files that failed last time first): the cluster specs build on each other, in file-name order
    sequence: { sequencer: FileNameSequencer },
    // JUnit in CI, with each skip's reason in its <skipped> element (vitest's own leaves it empty)
    reporters: process.env.CI
      ? ["default", ["./helpers/testing/junit-reporter.ts", { outputFile: "results/junit.xml" }]]
      : ["default"],
    projects: [
      {
        test: {
          name: "unit",
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
          name: "kernel",
          include: ["helpers/**/*.kernel.test.ts", "clusters/**/*.kernel.test.ts"],
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: "replay",
          include: ["suites/**/*.spec.ts"],
          env: { CLUSTER_PROVIDER: "replay", VITEST_PROJECT_REPLAY: "1" },
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "conformance",
          include: ["suites/**/*.spec.ts"],
          fileParallelism: false,
          testTimeout: 15 * 60_000,
          hookTimeout: 30 * 60_000,
          globalSetup: ["suites/global-setup.ts"],
        },
      },
    ],
  },
});
