import { describe, expect, it } from "vitest";
import { DeadlineError, pollUntil, ReplayExhausted } from "./poll.ts";

describe("pollUntil", () => {
  it("returns as soon as done, without sleeping first", async () => {
    let calls = 0;
    const r = await pollUntil({
      what: "x",
      deadlineMs: 1000,
      intervalMs: 100,
      probe: async () => ++calls,
      done: (v) => v >= 3,
      show: String,
      sleep: async () => {},
    });
    expect(r).toMatchObject({ value: 3, attempts: 3 });
  });

  it("times out naming what it waited for and the last observation, with progress lines", async () => {
    let t = 0;
    const lines: string[] = [];
    const err = await pollUntil({
      what: "4 backend slots",
      deadlineMs: 30_000,
      intervalMs: 5_000,
      probe: async () => 2,
      done: (v) => v === 4,
      show: (v) => `${v} slots`,
      sleep: async (ms) => {
        t += ms;
      },
      now: () => t,
      progress: (l) => lines.push(l),
      progressEveryMs: 10_000,
    }).catch((e) => e);
    expect(err).toBeInstanceOf(DeadlineError);
    expect(err.message).toBe("timed out after 30 s waiting for 4 backend slots; last observation: 2 slots");
    expect(lines[0]).toMatch(/^still waiting for 4 backend slots \(10 s of 30 s; last: 2 slots\)$/);
  });

  it("keeps the last probe error", async () => {
    let t = 0;
    const err = await pollUntil({
      what: "agent",
      deadlineMs: 10,
      intervalMs: 5,
      probe: async () => {
        throw new Error("connection refused");
      },
      done: () => true,
      show: String,
      sleep: async (ms) => {
        t += ms;
      },
      now: () => t,
    }).catch((e) => e);
    expect(err.message).toContain("last observation: error: connection refused");
  });

  it("a permanent error (a replay that never recorded the call) ends the poll at once, even on a clock that never moves", async () => {
    let attempts = 0;
    const permanent = Object.assign(new Error("bundle x has no recording of kubectl get pod"), {
      permanent: true,
    });
    const err = await pollUntil({
      what: "Pod bind-probe Ready",
      deadlineMs: 10,
      intervalMs: 5,
      probe: async () => {
        attempts++;
        throw permanent;
      },
      done: () => true,
      show: String,
      sleep: async () => {},
      now: () => 0,
    }).catch((e) => e);
    expect(err).toBe(permanent);
    expect(attempts).toBe(1);
  });

  it("a replayed probe served after its recordings ran out ends the wait with the last observation, to be judged", async () => {
    let served = 0;
    const recorded = 2;
    const lines: string[] = [];
    const r = await pollUntil({
      what: "4 KUBE-SEP chains",
      deadlineMs: 30_000,
      intervalMs: 1000,
      probe: async () => {
        served++;
        return 1;
      },
      done: (v) => v === 4,
      show: (v) => `${v} KUBE-SEP chains`,
      sleep: async () => {},
      progress: (l) => lines.push(l),
      // a replay's clock stands still once the recordings repeat
      now: () => 0,
      spent: () => ({ count: Math.max(0, served - recorded), key: 'node/n1 ["iptables-save"]' }),
    });
    expect(r).toMatchObject({ value: 1, exhausted: true, attempts: 3 });
    expect(lines).toEqual([
      'the bundle\'s recordings of node/n1 ["iptables-save"] ran out while waiting for 4 KUBE-SEP chains: judging the last observation (1 KUBE-SEP chains)',
    ]);
    expect(served).toBe(3);
  });

  it("a replay that ran out on a failing probe has nothing to judge: ReplayExhausted names the wait", async () => {
    let served = 0;
    const err = await pollUntil({
      what: "the holder's log",
      deadlineMs: 30_000,
      intervalMs: 1000,
      probe: async () => {
        served++;
        throw new Error("container not found");
      },
      done: () => true,
      show: () => "",
      sleep: async () => {},
      now: () => 0,
      spent: () => ({ count: served, key: "kubectl logs holder" }),
    }).catch((e) => e);
    expect(err).toBeInstanceOf(ReplayExhausted);
    expect(err.message).toBe(
      "the bundle's recordings of kubectl logs holder ran out while waiting for the holder's log; last observation: error: container not found",
    );
  });
});
