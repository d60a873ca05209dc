import { describe, expect, it } from "vitest";
import { allOrFirstFailure } from "./concurrent.ts";

const resolveAfter = (ms: number, signal: AbortSignal, value: string) =>
  new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => resolve(value), ms);
    signal.addEventListener("abort", () => {
      clearTimeout(t);
      reject(new Error(`${value} aborted`));
    });
  });

describe("allOrFirstFailure", () => {
  it("runs every task at once and gives their results in order", async () => {
    // at once: every task has started before any has ended (an order, not a time: a busy machine stretches
    // times, never this order)
    const events: string[] = [];
    const task = (ms: number, v: string) => (s: AbortSignal) => {
      events.push(`start ${v}`);
      return resolveAfter(ms, s, v).finally(() => events.push(`end ${v}`));
    };
    const r = await allOrFirstFailure([task(60, "a"), task(50, "b"), task(40, "c")]);
    expect(r).toEqual(["a", "b", "c"]);
    expect(events.slice(0, 3)).toEqual(["start a", "start b", "start c"]);
    expect(events.slice(3).sort()).toEqual(["end a", "end b", "end c"]);
  });

  it("the first failure aborts the others, waits for them to end, and is what is thrown", async () => {
    const ended: string[] = [];
    const err = await allOrFirstFailure([
      (s) => resolveAfter(5000, s, "slow").finally(() => ended.push("slow")),
      async () => {
        await new Promise((r) => setTimeout(r, 20));
        throw new Error("nodes never Ready");
      },
    ]).catch((e: unknown) => e);
    expect(String(err)).toBe("Error: nodes never Ready");
    // the sibling ended (aborted) before the caller got the error
    expect(ended).toEqual(["slow"]);
  });

  it("a parent signal (the run interrupted) aborts every task", async () => {
    const parent = new AbortController();
    setTimeout(() => parent.abort(new Error("interrupted by SIGINT")), 20);
    await expect(allOrFirstFailure([(s) => resolveAfter(5000, s, "x")], parent.signal)).rejects.toThrow(
      "interrupted by SIGINT",
    );
  });
});
