/**
 * The fault driver end to end against a FAKE CHILD WRITTEN BY US: a small node program standing in for the
 * conformance run (it prints the harness's `[kind] [kpr] <topic>: observing` lines, writes the fault reporter's
 * JSON lines, and answers signals as global-setup does), started for real in its own process group; docker,
 * kubectl and kind are a scripted executor (the inventory finds nothing), `ps` is the real one.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LocalExecutor } from "../../helpers/exec/local.ts";
import type { ExecRequest, ExecResult, Executor } from "../../helpers/exec/types.ts";
import { FAULT_DEADLINES, type FaultOptions, runFault } from "./driver.ts";
import type { FaultName } from "./faults.ts";

const dir = mkdtempSync(join(tmpdir(), "dpc-faults-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The fake run: `behaviour` picks what it does after the holder topic starts. */
const FAKE_CHILD = `
const { appendFileSync } = require("node:fs");
const { spawn } = require("node:child_process");
const report = (o) => appendFileSync(process.env.FAULT_REPORT_FILE, JSON.stringify({ at: Date.now(), ...o }) + "\\n");
const say = (l) => process.stdout.write(l + "\\n");
const behaviour = process.env.FAKE_BEHAVIOUR;
let signalled = false;
const onSignal = (sig) => {
  if (behaviour === "hang") return;
  if (signalled) return;
  signalled = true;
  say("[conformance] " + sig + ": tearing down what this run created before exiting (send " + sig + " again to exit at once)");
  setTimeout(() => { say("[conformance] " + sig + ": teardown finished in 0.3 s; exiting with " + (sig === "SIGINT" ? 130 : 143)); process.exit(sig === "SIGINT" ? 130 : 143); }, 300);
};
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);
say("[conformance] CLUSTER_PROVIDER=kind");
setTimeout(() => { say("[kind] [kpr] iptables: observing (Cilium 1.19.7)"); report({ event: "test", state: "passed", name: "iptables.kpr-mode" }); }, 100);
if (behaviour === "early-exit") setTimeout(() => process.exit(1), 300);
setTimeout(() => say("[kind] [kpr] holder: observing (Cilium 1.19.7)"), 400);
if (behaviour === "agent-fails") setTimeout(() => {
  report({ event: "test", state: "failed", name: "holder > holder.socket-peer", message: "holder could not be observed: exec into kube-system/cilium-abcde/cilium-agent ended without an exit status: the stream closed" });
  report({ event: "end", reason: "failed" });
  process.exit(1);
}, 1500);
if (behaviour === "orphan") setTimeout(() => { spawn("sleep", ["30"], { stdio: "ignore" }).unref(); process.exit(1); }, 1500);
setInterval(() => {}, 1000);
`;

function scriptedHost(): Executor & { calls: string[] } {
  const real = new LocalExecutor();
  const calls: string[] = [];
  return {
    calls,
    run: async (req: ExecRequest): Promise<ExecResult> => {
      const cmd = req.argv.join(" ");
      calls.push(cmd);
      const ok = (stdout = ""): ExecResult => ({ stdout, stderr: "", exitCode: 0, durationMs: 1 });
      if (req.argv[0] === "ps") return real.run(req);
      if (cmd.includes("get pod holder -o jsonpath={.spec.nodeName}")) return ok("cdc-kpr-worker");
      if (cmd.includes("delete pod -l k8s-app=cilium")) return ok('pod "cilium-abcde" deleted\n');
      if (cmd === "kind get clusters") return ok("");
      if (cmd.startsWith("docker") || cmd === "ip netns list" || cmd === "ls -1 /sys/fs/bpf") return ok("");
      throw new Error(`scripted host: ${cmd}`);
    },
  };
}

function options(
  fault: FaultName,
  behaviour: string,
  over: Partial<FaultOptions> = {},
): FaultOptions & { lines: string[]; host: ReturnType<typeof scriptedHost> } {
  const lines: string[] = [];
  const host = scriptedHost();
  // a folder of its own: the tests run at once
  const results = mkdtempSync(join(dir, `${fault}-`));
  const child = join(results, "fake-run.cjs");
  writeFileSync(child, FAKE_CHILD);
  return {
    fault,
    mode: "kpr",
    id: `${fault}-${behaviour}`,
    resultsDir: results,
    atTopic: "holder",
    delayS: 0,
    keep: false,
    pauseS: 60,
    deadlines: { ...FAULT_DEADLINES, exitS: 20, killGraceS: 1, groupGoneS: 2 },
    argv: [process.execPath, child],
    env: { ...process.env, FAKE_BEHAVIOUR: behaviour },
    cwd: results,
    exec: host,
    log: (l) => lines.push(l),
    lines,
    host,
    ...over,
  };
}

// the tests run at once (each its own folder and fake run): most of their time is the fake run's timers and the
// driver's deadlines
describe.concurrent("the fault driver with a fake run", { timeout: 60_000 }, () => {
  it("sigint at the holder topic, to the process group: teardown seen, exit 130, rule held; results written", async () => {
    const o = options("sigint", "normal");
    const { record, judgement } = await runFault(o);
    expect(record.log.topics.map((t) => t.topic)).toEqual(["iptables", "holder"]);
    expect(record.injectedAt).toBeGreaterThanOrEqual(record.log.topics[1]?.at ?? Number.POSITIVE_INFINITY);
    expect(record.exit?.code).toBe(130);
    expect(judgement.violations).toEqual([]);
    expect(o.lines).toContain("fault: SIGINT sent to the run's process group");
    const jsonl = readFileSync(join(o.resultsDir, "faults.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(jsonl.at(-1)).toMatchObject({ fault: "sigint", mode: "kpr", held: true, exitCode: 130 });
    expect(readFileSync(join(o.resultsDir, "table.md"), "utf8")).toMatch(
      /^\| fault \| mode \| outcome \| time to report \| leftovers \|\n\|---\|.*\n\| sigint \| kpr \| exit 130, torn down — rule held \| /,
    );
    expect(readFileSync(join(o.resultsDir, "sigint-normal", "run.log"), "utf8")).toContain(
      "SIGINT: teardown finished",
    );
  });

  it("agent-delete: the holder's node is found, its agent deleted, and the failed test naming it is the report", async () => {
    const o = options("agent-delete", "agent-fails");
    const { record, judgement } = await runFault(o);
    expect(o.host.calls).toContain(
      "kubectl --context kind-cdc-kpr -n kube-system delete pod -l k8s-app=cilium --field-selector spec.nodeName=cdc-kpr-worker --wait=false",
    );
    expect(record.injected).toBe("deleted the cilium agent Pod on cdc-kpr-worker (the holder's node)");
    expect(judgement.held).toBe(true);
    expect(judgement.report?.name).toBe("holder > holder.socket-peer");
    expect(judgement.report?.afterS).toBeLessThan(5);
  });

  it("a run that ignores SIGTERM and never exits is a hang: killed at its deadline and judged so", async () => {
    const o = options("sigterm", "hang", {
      deadlines: { ...FAULT_DEADLINES, exitS: 2, killGraceS: 1, groupGoneS: 2 },
    });
    const { record, judgement } = await runFault(o);
    expect(record.killed).toBe(true);
    expect(judgement.violations[0]).toBe(
      "hang: the run did not exit within 2 s of the injection (killed by the driver)",
    );
    expect(o.lines.some((l) => l.startsWith("hang: the run has not exited 2 s after the injection"))).toBe(
      true,
    );
  });

  it("a process of the run that outlives it is a leftover; a run that ends before the topic was never injected", async () => {
    const o = options("agent-delete", "orphan");
    const { judgement } = await runFault(o);
    expect(judgement.violations.some((v) => /^processes of the run still alive: \d+ sleep 30$/.test(v))).toBe(
      true,
    );
    const e = options("node-stop", "early-exit");
    const r = await runFault(e);
    expect(r.judgement.violations[0]).toBe(
      "the fault was never injected: the injection point was never reached",
    );
    expect(e.host.calls.some((c) => c.startsWith("docker stop"))).toBe(false);
  });
});
