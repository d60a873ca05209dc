import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { RECORDS } from "../suites/topics.ts";
import { readRecords } from "./bundle/read.ts";
import { bundleLockFile, withBundleLock, writeRecords } from "./bundle/write.ts";

const run = promisify(execFile);
const BUNDLE_TS = join(import.meta.dirname, "bundle", "write.ts");

/**
 * A cluster run observes topics in several worker processes at once (suites/schedule.ts): the writes that read
 * what is there first (bundle.json's phases, the merged datapath record) hold the bundle's lock. Processes
 * here, as in a run, not promises: the lock is between processes.
 */
describe("withBundleLock", () => {
  const dir = mkdtempSync(join(tmpdir(), "bundle-lock-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("three processes each adding 200 phases to one bundle.json at the same time: none is lost", async () => {
    writeFileSync(join(dir, "bundle.json"), `${JSON.stringify({ phases: {} })}\n`);
    const script = (w: number, module: string, at: number) => `
      const { withBundleLock } = await import(${JSON.stringify(module)});
      const { readFileSync, writeFileSync } = await import("node:fs");
      const f = ${JSON.stringify(join(dir, "bundle.json"))};
      // asleep until then (a loop that polled the clock burnt 2.5 s of CPU in each process)
      await new Promise((r) => setTimeout(r, Math.max(0, ${at} - Date.now())));
      for (let i = 0; i < 200; i++)
        (process.env.NO_LOCK ? (_d, fn) => fn() : withBundleLock)(${JSON.stringify(dir)}, () => {
          const m = JSON.parse(readFileSync(f, "utf8"));
          m.phases["w${w}-" + i] = i;
          writeFileSync(f, JSON.stringify(m));
        });`;
    // helpers/bundle/write.ts built once for the three (esbuild, as the CLI's bundle is): through tsx each process
    // spent most of its time loading it. Inside the checkout, as the CLI's bundle is: its packages (valibot)
    // resolve from the checkout's node_modules
    const cache = join(import.meta.dirname, "..", "node_modules", ".cache");
    mkdirSync(cache, { recursive: true });
    const builtDir = mkdtempSync(join(cache, "bundle-lock-"));
    onTestFinished(() => rmSync(builtDir, { recursive: true, force: true }));
    const built = join(builtDir, "bundle.mjs");
    const { build } = await import("esbuild");
    await build({
      entryPoints: [BUNDLE_TS],
      bundle: true,
      format: "esm",
      platform: "node",
      packages: "external",
      outfile: built,
      logLevel: "silent",
    });
    // all three start writing at one moment, well after each has started (without the lock, most are lost): a
    // process of the built module starts in under 0.1 s idle, 0.3 s with the machine busy
    const at = Date.now() + 1000;
    await Promise.all(
      [1, 2, 3].map((w) =>
        run(process.execPath, ["--input-type=module", "-e", script(w, built, at)], {
          cwd: join(import.meta.dirname, ".."),
        }),
      ),
    );
    const phases = JSON.parse(readFileSync(join(dir, "bundle.json"), "utf8")).phases;
    expect(Object.keys(phases)).toHaveLength(600);
  }, 30_000);

  it("a lock left by a process that died is taken over once it is stale; the lock is released after a throw", () => {
    const lock = bundleLockFile(dir);
    mkdirSync(dirname(lock), { recursive: true });
    writeFileSync(lock, "");
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    expect(withBundleLock(dir, () => "taken over")).toBe("taken over");
    expect(existsSync(lock)).toBe(false);
    expect(() =>
      withBundleLock(dir, () => {
        throw new Error("inside");
      }),
    ).toThrow("inside");
    expect(withBundleLock(dir, () => 42)).toBe(42);
  });

  it("the datapath record merges what two topics wrote, one after the other", () => {
    const d = mkdtempSync(join(tmpdir(), "bundle-merge-"));
    try {
      writeRecords(d, { datapath: { record: { a: 1 }, evidence: {} } } as never, RECORDS);
      writeRecords(d, { datapath: { record: { b: 2 }, evidence: {} } } as never, RECORDS);
      expect(readRecords(d, RECORDS).datapath?.record).toMatchObject({ a: 1, b: 2 });
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});
