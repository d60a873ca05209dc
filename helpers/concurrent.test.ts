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
    const t0 = performance.now();
    const r = await allOrFirstFailure([
      (s) => resolveAfter(60, s, "a"),
      (s) => resolveAfter(50, s, "b"),
      (s) => resolveAfter(40, s, "c"),
    ]);
    expect(r).toEqual(["a", "b", "c"]);
    expect(performance.now() - t0).toBeLessThan(150);
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
