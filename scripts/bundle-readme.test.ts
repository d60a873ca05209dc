/**
 * Every shipped bundle's README says what the bundle holds today (issue 35: seventeen READMEs gave skip counts
 * 10–12 lower than `check` printed): its generated part — versions, lab patch, the datapath as recorded, topics,
 * `check`'s counts, phase timings — is what scripts/bundle-readme.ts renders from the bundle now.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readMeta } from "../helpers/bundle/read.ts";
import { checkBundle } from "../helpers/check.ts";
import { bundleName, SHIPPED_BUNDLES } from "../suites/environment.ts";
import { RECORDED_FAILURES } from "../suites/recorded-failures.ts";
import { TOPICS } from "../suites/topics.ts";
import { generatedPart, NOTES_BEGIN, notesOf, renderReadme } from "./bundle-readme.ts";

describe("shipped bundles' READMEs", () => {
  it.each(
    SHIPPED_BUNDLES.map((d) => [bundleName(d), d]),
  )("%s: the generated part has not drifted", async (_n, dir) => {
    const text = readFileSync(join(dir, "README.md"), "utf8");
    const r = await checkBundle(dir, TOPICS);
    expect(text).toContain(NOTES_BEGIN);
    expect(text).toBe(renderReadme(dir, r, notesOf(text)));
  });

  it("a changed count is drift (the test can fail)", async () => {
    const dir = SHIPPED_BUNDLES[0] as string;
    const r = await checkBundle(dir, TOPICS);
    const text = readFileSync(join(dir, "README.md"), "utf8");
    const edited = text.replace(/(\d+) passed/, (_m, n) => `${Number(n) + 1} passed`);
    expect(edited).not.toBe(renderReadme(dir, r, notesOf(edited)));
    expect(generatedPart(dir, r)).toMatch(/`check` with the shipped code: \d+ passed/);
  });

  /**
   * Issue 42: notes typed by hand named the wrong node and read a stall's start as its end. The facts of a leg's
   * failures (nodes, addresses, clock times) are generated from the records into the README's generated part and
   * quoted by the gate; the notes of an upgrade bundle and the reasons suites/recorded-failures.ts keeps name none.
   */
  const FACT = /\bcdc-[a-z0-9-]+|\b\d{1,3}(?:\.\d{1,3}){3}\b|\b\d{2}:\d{2}:\d{2}\b/g;
  const facts = (text: string) => text.match(FACT) ?? [];

  it.each(
    SHIPPED_BUNDLES.filter((d) => readMeta(d).upgrade).map((d) => [bundleName(d), d]),
  )("%s: the notes state no node, address or time by hand", (_n, dir) => {
    expect(facts(notesOf(readFileSync(join(dir, "README.md"), "utf8")))).toEqual([]);
  });

  it("the kept failures' reasons state no node, address or time by hand; the check can fail", () => {
    for (const [bundle, ids] of Object.entries(RECORDED_FAILURES))
      if (bundle.startsWith("upgrade-"))
        for (const [id, why] of Object.entries(ids)) expect(facts(why), `${bundle} ${id}`).toEqual([]);
    expect(facts("a backend on cdc-kpr-worker at 10.244.2.150, from 02:20:38")).toEqual([
      "cdc-kpr-worker",
      "10.244.2.150",
      "02:20:38",
    ]);
  });
});
