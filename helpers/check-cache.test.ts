import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { TOPICS } from "../suites/topics.ts";
import { judgeBundle } from "./check.ts";
import { cachedCheck, checkKey, checkoutTopics } from "./check-cache.ts";

const SHIPPED = join(import.meta.dirname, "..", "suites", "bundles", "1.20", "kpr");
const temps: string[] = [];
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  temps.push(d);
  return d;
};
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

describe("judged bundles shared by a test run's processes", () => {
  it("a judgement survives JSON exactly (what a hit returns is what a miss computed)", async () => {
    const r = await judgeBundle(SHIPPED, TOPICS, () => {});
    expect(isDeepStrictEqual(JSON.parse(JSON.stringify(r)), r)).toBe(true);
  });

  it("the key changes with any byte of the bundle, its path, and the topics passed", () => {
    const copy = join(temp("dpc-key-"), "kpr");
    cpSync(SHIPPED, copy, { recursive: true });
    const before = checkKey(copy, TOPICS);
    expect(checkKey(copy, TOPICS)).toBe(before);
    writeFileSync(join(copy, "raw", "extra.txt"), "x");
    expect(checkKey(copy, TOPICS)).not.toBe(before);
    expect(checkKey(SHIPPED, TOPICS)).not.toBe(checkKey(`${SHIPPED}/`, TOPICS));
    const [first, ...rest] = TOPICS;
    expect(checkKey(SHIPPED, rest)).not.toBe(checkKey(SHIPPED, TOPICS));
    // the same topic with another function body keys apart (a test's own topic named like the suite's)
    const other = { ...first, observe: async () => ({}) } as (typeof TOPICS)[number];
    expect(checkKey(SHIPPED, [other, ...rest])).not.toBe(checkKey(SHIPPED, TOPICS));
  });

  it("the checkout's own topics key by name, not by their functions' text (the CLI's bundle prints it otherwise)", () => {
    const [first, ...rest] = TOPICS;
    // as the CLI's bundle has it: the same declaration, its functions printed by another transform
    const bundled = checkoutTopics([{ ...first, observe: async () => ({}) } as (typeof TOPICS)[number]]);
    expect(checkKey(SHIPPED, [...bundled, ...rest])).toBe(checkKey(SHIPPED, TOPICS));
    // still apart by which topics, and in which order
    expect(checkKey(SHIPPED, [...rest, ...bundled])).not.toBe(checkKey(SHIPPED, TOPICS));
  });

  it("judged once for the run: a second call is served from the directory; no directory, no cache", async () => {
    const cache = temp("dpc-cache-");
    let computed = 0;
    const compute = async () => {
      computed++;
      return { n: computed };
    };
    expect(await cachedCheck(SHIPPED, TOPICS, compute, cache)).toEqual({ n: 1 });
    expect(await cachedCheck(SHIPPED, TOPICS, compute, cache)).toEqual({ n: 1 });
    expect(computed).toBe(1);
    expect(readdirSync(cache).filter((f) => f.endsWith(".json"))).toHaveLength(1);
    // "" is no cache (never undefined here: that would be the run's own directory, shared with other files)
    expect(await cachedCheck(SHIPPED, TOPICS, compute, "")).toEqual({ n: 2 });
    expect(await cachedCheck(SHIPPED, TOPICS, compute, join(cache, "absent"))).toEqual({ n: 3 });
  });

  it("two callers at once: one judges, the other waits for its result; a failure is not stored", async () => {
    const cache = temp("dpc-cache-");
    let computed = 0;
    const slow = async () => {
      computed++;
      await new Promise((r) => setTimeout(r, 300));
      return { n: computed };
    };
    const [a, b] = await Promise.all([
      cachedCheck(SHIPPED, TOPICS, slow, cache),
      cachedCheck(SHIPPED, TOPICS, slow, cache),
    ]);
    expect([a, b]).toEqual([{ n: 1 }, { n: 1 }]);
    expect(computed).toBe(1);

    const failing = temp("dpc-cache-");
    await expect(
      cachedCheck(
        SHIPPED,
        TOPICS,
        async () => {
          throw new Error("unreadable");
        },
        failing,
      ),
    ).rejects.toThrow("unreadable");
    expect(readdirSync(failing)).toEqual([]);
  });
});
