/** Judging fault runs, concurrent runs and the fault table (pure; run records written by us). */
import { describe, expect, it } from "vitest";
import { judgeConcurrent } from "./existing.ts";
import { type FaultRun, judge, readReport, readRunLog, tableRow, topicStart } from "./judge.ts";
import { faultTable } from "./main.ts";
import type { ReportLine } from "./reporter.ts";

const T0 = Date.parse("2026-12-02T10:00:00Z");
const at = (s: number) => T0 + s * 1000;

function run(over: Partial<FaultRun> = {}): FaultRun {
  return {
    id: "r1",
    fault: "agent-delete",
    mode: "kpr",
    keep: false,
    startedAt: at(0),
    injectedAt: at(300),
    injected: "deleted the cilium agent Pod on cdc-kpr-worker (the holder's node)",
    exit: { code: 1, signal: null, at: at(900) },
    killed: false,
    reports: [],
    log: { topics: [], teardownStarted: false, teardownFinished: false, kept: null },
    leftovers: { ours: [], cilium: [], processes: [] },
    deadlines: { reportS: 900, exitS: 2400 },
    ...over,
  };
}
const test = (s: number, state: ReportLine["state"], name: string, message?: string): ReportLine => ({
  event: "test",
  at: at(s),
  state,
  name,
  ...(message ? { message } : {}),
});

describe("the run's output and report", () => {
  it("topic starts as the harness prints them; teardown and KEEP lines", () => {
    expect(topicStart("[kind] [kpr] holder: observing (Cilium 1.19.7)")).toBe("holder");
    expect(topicStart("[kind] [kube-proxy] measure-scale: observing (Cilium 1.19.7)")).toBe("measure-scale");
    expect(topicStart("[kind] [kpr] holder: observed in 12.3 s")).toBeNull();
    const log = readRunLog([
      { at: at(1), text: "[kind] [kpr] iptables: observing (Cilium 1.19.7)" },
      { at: at(9), text: "[kind] [kpr] holder: observing (Cilium 1.19.7)" },
      {
        at: at(20),
        text: "[conformance] SIGINT: tearing down what this run created before exiting (send SIGINT again to exit at once)",
      },
      {
        at: at(30),
        text: "[conformance] [kind] [kpr] KEEP_CLUSTER=1: keeping cdc-kpr (context kind-cdc-kpr); the next run reuses them by name",
      },
      { at: at(31), text: "[conformance] SIGINT: teardown finished in 11.0 s; exiting with 130" },
    ]);
    expect(log.topics).toEqual([
      { topic: "iptables", at: at(1) },
      { topic: "holder", at: at(9) },
    ]);
    expect(log).toMatchObject({ teardownStarted: true, teardownFinished: true });
    expect(log.kept).toMatch(/^KEEP_CLUSTER=1: keeping cdc-kpr/);
    expect(
      readReport('{"event":"test","at":1,"state":"passed","name":"a"}\n{"event":"te\nnot json\n'),
    ).toEqual([{ event: "test", at: 1, state: "passed", name: "a" }]);
  });
});

describe("the rule", () => {
  it("held: a failed test after the injection names the symptom, in time; nothing left", () => {
    const r = run({
      reports: [
        test(100, "passed", "iptables.kpr-mode"),
        // a skip before the injection does not count
        test(200, "skipped", "upgrade.same-backend", "no upgrade leg in this run"),
        test(
          312,
          "failed",
          "holder > holder.socket-peer",
          "holder could not be observed: exec into kube-system/cilium-abcde/cilium-agent ended without an exit status: the stream closed",
        ),
      ],
      leftovers: { ours: [], cilium: ["CiliumIdentity 4242"], processes: [] },
    });
    const j = judge(r);
    expect(j.violations).toEqual([]);
    expect(j.held).toBe(true);
    expect(j.report).toMatchObject({ name: "holder > holder.socket-peer", afterS: 12 });
    expect(j.timeToExitS).toBe(600);
    expect(tableRow(r, j)).toBe(
      "| agent-delete | kpr | 1 failed, 1 skipped, 1 passed; failed: holder > holder.socket-peer: holder could not be observed: exec into kube-system/cilium-abcde/cilium-agent ended without an exit status: the stream closed — rule held | 12 s (exit after 600 s) | none (Cilium's: 1 identities, collected later) |",
    );
  });

  it("a false pass, a hang, a report that names something else, one past its deadline, leftovers", () => {
    expect(
      judge(run({ exit: { code: 0, signal: null, at: at(900) }, reports: [test(400, "passed", "x")] }))
        .violations,
    ).toEqual([
      "false pass: the run passed with the fault injected",
      "no test failed or was skipped after the injection",
    ]);
    expect(judge(run({ exit: null, killed: true })).violations[0]).toBe(
      "hang: the run did not exit within 2400 s of the injection (killed by the driver)",
    );
    expect(
      judge(run({ reports: [test(310, "failed", "scale > scale.four-slots", "expected 4, observed 3")] }))
        .violations,
    ).toEqual([
      expect.stringMatching(
        /^no failed or skipped test names the fault's symptom .*; first: scale > scale.four-slots: expected 4, observed 3$/,
      ),
    ]);
    expect(
      judge(
        run({
          fault: "node-stop",
          reports: [
            test(
              1300,
              "failed",
              "n",
              "node/cdc-kpr-worker2: `ss -Htln` exited 1: Error response from daemon: container 1234 is not running",
            ),
          ],
        }),
      ).violations,
    ).toEqual(["the first report naming the fault came 1000 s after it, past the 900 s deadline"]);
    expect(
      judge(
        run({
          reports: [test(310, "failed", "h", "no running cilium agent Pod on node cdc-kpr-worker")],
          leftovers: { ours: ["kind cluster cdc-kpr"], cilium: [], processes: ["4242 node vitest"] },
        }),
      ).violations,
    ).toEqual(["left behind: kind cluster cdc-kpr", "processes of the run still alive: 4242 node vitest"]);
    expect(
      judge(run({ injectedAt: null, injected: "the injection point was never reached" })).violations[0],
    ).toBe("the fault was never injected: the injection point was never reached");
  });

  it("signals: exit 128+n after a finished teardown; KEEP_CLUSTER=1 must say what it keeps", () => {
    const torn = { topics: [], teardownStarted: true, teardownFinished: true, kept: null };
    const ok = judge(run({ fault: "sigint", exit: { code: 130, signal: null, at: at(340) }, log: torn }));
    expect(ok).toMatchObject({ held: true, outcome: "exit 130, torn down" });
    expect(ok.report).toMatchObject({ state: "interrupted", afterS: 40 });
    expect(judge(run({ fault: "sigterm", exit: { code: 1, signal: null, at: at(301) } })).violations).toEqual(
      ["exit code 1, not 143 (SIGTERM)", "the run never said it was tearing down after the signal"],
    );
    expect(
      judge(run({ fault: "sigterm", keep: true, exit: { code: 143, signal: null, at: at(340) }, log: torn }))
        .violations,
    ).toEqual(["KEEP_CLUSTER=1, but the run did not say which cluster it keeps"]);
    expect(
      judge(
        run({
          fault: "sigint",
          exit: { code: 130, signal: null, at: at(340) },
          log: { ...torn, teardownFinished: false },
        }),
      ).violations,
    ).toEqual(["the teardown after the signal did not finish before the run exited"]);
  });

  it("the table keeps the latest row per fault and mode, in the faults' order", () => {
    const line = (fault: string, mode: string, row: string) => JSON.stringify({ fault, mode, row });
    const t = faultTable(
      [
        line("sigint", "kpr", "| sigint | kpr | old |"),
        line("agent-delete", "kube-proxy", "| a | kp |"),
        line("sigint", "kpr", "| sigint | kpr | new |"),
        "torn{",
      ].join("\n"),
    );
    expect(t.split("\n").slice(2)).toEqual(["| a | kp |", "| sigint | kpr | new |", ""]);
  });
});

describe("two runs on one cluster", () => {
  const base = { a: "c-a", b: "c-b", left: [] as string[] };
  it("without waiting: the second is refused at once naming the first, exits non-zero; the first runs", () => {
    const v = judgeConcurrent({
      ...base,
      leaseWaitS: 0,
      timeline: [
        { at: 1, holder: "(none)" },
        { at: 2, holder: "c-a" },
        { at: 9, holder: "(none)" },
      ],
      logs: {
        "c-a": ["[conformance] mode kpr: the agents report KubeProxyReplacement True"],
        "c-b": [
          "Error: another run (c-a) holds Lease default/cilium-datapath-conformance until 2026-12-02T10:10:00.000Z; wait for it",
        ],
      },
      exits: { "c-a": 0, "c-b": 1 },
    });
    expect(v).toEqual({ held: true, violations: [], winner: "c-a", loser: "c-b" });
  });

  it("waiting: the second waits naming the first, then takes the Lease after it; never back and forth", () => {
    const logs = {
      "c-a": [],
      "c-b": [
        "[conformance] waiting for run c-a to release Lease default/cilium-datapath-conformance (held until …; 0 s of LEASE_WAIT_S=900 s)",
        "[conformance] took Lease default/cilium-datapath-conformance after 41 s",
      ],
    };
    const timeline = ["c-a", "(none)", "c-b", "(none)"].map((holder, at) => ({ at, holder }));
    expect(
      judgeConcurrent({ ...base, leaseWaitS: 900, timeline, logs, exits: { "c-a": 0, "c-b": 0 } }).held,
    ).toBe(true);
    const flipped = ["c-a", "c-b", "c-a"].map((holder, at) => ({ at, holder }));
    expect(
      judgeConcurrent({ ...base, leaseWaitS: 900, timeline: flipped, logs, exits: { "c-a": 0, "c-b": 0 } })
        .violations,
    ).toEqual(["the Lease changed hands back and forth: c-a → c-b → c-a"]);
    expect(
      judgeConcurrent({
        ...base,
        leaseWaitS: 0,
        timeline,
        logs: { "c-a": [], "c-b": [] },
        exits: { "c-a": 0, "c-b": null },
        left: ["Namespace cca-dp-c-b"],
      }).violations,
    ).toEqual([
      "expected exactly one run to be refused the Lease at once, got 0",
      "c-b was ended by a signal (its deadline)",
      "left behind: Namespace cca-dp-c-b",
    ]);
  });
});
