import { describe, expect, it } from "vitest";
import { DeadlineError, pollUntil } from "./poll.ts";

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
});
