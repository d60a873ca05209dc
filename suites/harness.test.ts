import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { noSleep, nothingSpent, type RunContext } from "../helpers/observe/context.ts";
import type { TopicDeclaration } from "../helpers/topic.ts";
import type { ModeTarget } from "./environment.ts";
import { Observations } from "./harness.ts";
import { Turns } from "./schedule.ts";

/** Two modes' targets WRITTEN BY US: each observation takes 100 ms and says when it started and ended. */
function targets(events: string[]): ModeTarget[] {
  return (["kpr", "kube-proxy"] as const).map((mode) => ({
    mode,
    ciliumMinor: "1.19",
    label: "test",
    meta: () => ({ cilium: "1.19.7" }) as ReturnType<ModeTarget["meta"]>,
    recordPhase: () => {},
    holds: () => true,
    skipReason: () => null,
    context: () => ({
      ctx: {
        exec: { run: async () => ({ stdout: "", stderr: "", exitCode: 0, durationMs: 0 }) },
        mode,
        ciliumMinor: "1.19",
        namespace: "cca-dp",
        replay: true,
        log: () => {},
        sleep: noSleep,
        now: Date.now,
        recordedAt: Date.now,
        spent: nothingSpent,
        runStartedAt: "",
        earlierRecords: () => ({}),
      } satisfies RunContext,
      outDir: "/nonexistent",
      close: async () => void events.push(`${mode} closed`),
    }),
  }));
}

const topic = (events: string[]): TopicDeclaration =>
  ({
    name: "kube-dns",
    properties: [],
    schedule: { after: [], why: "written by us: reads kube-dns only" },
    observe: async (ctx: RunContext) => {
      events.push(`${ctx.mode} started`);
      await new Promise((r) => setTimeout(r, 100));
      events.push(`${ctx.mode} ended`);
      throw new Error("nothing to observe here");
    },
  }) as unknown as TopicDeclaration;

describe("the harness's observations of a topic", () => {
  it("one mode at a time by default: the other mode's starts when its first test asks", async () => {
    const events: string[] = [];
    const [kpr, kp] = targets(events) as [ModeTarget, ModeTarget];
    const o = new Observations();
    await o.of(kpr, topic(events));
    await o.of(kp, topic(events));
    expect(events).toEqual(["kpr started", "kpr ended", "kube-proxy started", "kube-proxy ended"]);
  });

  it("MODES_CONCURRENT=1: the first test starts every mode's observation at once; each is made once, closed once", async () => {
    const events: string[] = [];
    const all = targets(events);
    const [kpr, kp] = all as [ModeTarget, ModeTarget];
    const o = new Observations();
    const first = await o.of(kpr, topic(events), all);
    expect(first.failure?.message).toBe("nothing to observe here");
    await o.of(kp, topic(events), all);
    // at once: both started before either ended (an order, not a time bound a busy machine could stretch)
    expect(events.slice(0, 2)).toEqual(["kpr started", "kube-proxy started"]);
    await o.close();
    expect(events.filter((e) => e.endsWith("started"))).toHaveLength(2);
    expect(events.filter((e) => e.endsWith("closed"))).toEqual(["kpr closed", "kube-proxy closed"]);
  });

  it("in a cluster run a topic waits for those its schedule names: kube-dns after config (alone), then settles even when it failed", async () => {
    const events: string[] = [];
    const dir = mkdtempSync(join(tmpdir(), "harness-turns-"));
    try {
      const turns = new Turns(dir, 10);
      const [kpr] = targets(events) as [ModeTarget];
      const target = { ...kpr, turns };
      const o = new Observations(() => ({ topics: ["config", "kube-dns"], filtered: false }));
      const made = o.of(target, topic(events));
      await new Promise((r) => setTimeout(r, 150));
      expect(events).toEqual([]);
      turns.settled("config");
      const r = await made;
      expect(events).toEqual(["kpr started", "kpr ended"]);
      expect(r.failure?.message).toBe("nothing to observe here");
      expect(existsSync(join(dir, "kube-dns.settled"))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a test-name filter (files run but topics unobserved) orders nothing: the topic starts at once", async () => {
    const events: string[] = [];
    const dir = mkdtempSync(join(tmpdir(), "harness-turns-"));
    try {
      const [kpr] = targets(events) as [ModeTarget];
      const o = new Observations(() => ({ topics: ["config", "kube-dns"], filtered: true }));
      await o.of({ ...kpr, turns: new Turns(dir, 10) }, topic(events));
      expect(events).toEqual(["kpr started", "kpr ended"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
