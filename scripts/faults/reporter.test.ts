/**
 * The fault reporter inside a real vitest 4.1.12 run on a throw-away project WRITTEN BY US (one test that
 * passes, one that fails, one skipped with a reason): the JSON lines the fault driver reads.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { readReport } from "./judge.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const dir = mkdtempSync(join(tmpdir(), "dpc-reporter-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it(
  "writes one line per finished test (state, full name, the error's first line or the skip's reason) and one at the end",
  { timeout: 120_000 },
  () => {
    writeFileSync(
      join(dir, "vitest.config.mjs"),
      'export default { test: { globals: true, include: ["t.test.mjs"] } };\n',
    );
    writeFileSync(
      join(dir, "t.test.mjs"),
      [
        'describe("holder [kind] [kpr]", () => {',
        '  test("holder.socket-lb: passes", () => {});',
        '  test("holder.socket-peer: fails", () => { throw new Error("holder could not be observed: exec into kube-system/cilium-a/cilium-agent ended without an exit status\\nsecond line"); });',
        '  test("holder.ct-rev-nat: skipped", (ctx) => ctx.skip("no SVC entry: the bundle predates the step"));',
        "});",
      ].join("\n"),
    );
    const report = join(dir, "report.jsonl");
    const env = Object.fromEntries(
      Object.entries(process.env).filter(
        ([k]) => !k.startsWith("VITEST") && k !== "TEST" && k !== "NODE_ENV",
      ),
    );
    try {
      execFileSync(
        process.execPath,
        [
          join(ROOT, "node_modules", "vitest", "vitest.mjs"),
          "run",
          "--root",
          dir,
          "--config",
          join(dir, "vitest.config.mjs"),
          "--reporter=default",
          `--reporter=${join(ROOT, "scripts", "faults", "reporter.ts")}`,
        ],
        { cwd: dir, env: { ...env, FAULT_REPORT_FILE: report, NO_COLOR: "1" }, stdio: "pipe" },
      );
    } catch {
      // one test fails: vitest exits 1
    }
    const lines = readReport(readFileSync(report, "utf8"));
    const tests = lines
      .filter((l) => l.event === "test")
      .map(({ state, name, message }) => ({ state, name, message }));
    expect(tests).toEqual([
      { state: "passed", name: "holder [kind] [kpr] > holder.socket-lb: passes", message: undefined },
      {
        state: "failed",
        name: "holder [kind] [kpr] > holder.socket-peer: fails",
        message:
          "holder could not be observed: exec into kube-system/cilium-a/cilium-agent ended without an exit status",
      },
      {
        state: "skipped",
        name: "holder [kind] [kpr] > holder.ct-rev-nat: skipped",
        message: "no SVC entry: the bundle predates the step",
      },
    ]);
    expect(lines.at(-1)).toMatchObject({ event: "end", reason: "failed" });
    for (const l of lines) expect(typeof l.at).toBe("number");
  },
);

it("a failed property's line carries what it observed, where the fault's symptom is named (the node-pause run on kube-proxy, 2026-12-03: its first line only restated the claim)", async () => {
  const { failureLine } = await import("./reporter.ts");
  const line = failureLine([
    {
      message:
        "invariants.nodes-stayed-ready does not hold [kube-proxy, Cilium 1.20.2]: Every node stayed Ready while the run observed it\n  source: …",
      actual: '["cdc-kp-worker: NotReady during the run, Ready again since 2026-12-03T07:43:40Z"]',
    },
  ]);
  expect(line).toBe(
    'invariants.nodes-stayed-ready does not hold [kube-proxy, Cilium 1.20.2]: Every node stayed Ready while the run observed it — observed: ["cdc-kp-worker: NotReady during the run, Ready again since 2026-12-03T07:43:40Z"]',
  );
  expect(failureLine([{ message: "holder could not be observed: no agent\nsecond" }])).toBe(
    "holder could not be observed: no agent",
  );
  expect(failureLine([])).toBeUndefined();
});
