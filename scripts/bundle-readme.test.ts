/**
 * Every shipped bundle's README says what the bundle holds today (issue 35: seventeen READMEs gave skip counts
 * 10–12 lower than `check` printed): its generated part — versions, lab patch, the datapath as recorded, topics,
 * `check`'s counts, phase timings — is what scripts/bundle-readme.ts renders from the bundle now.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkBundle } from "../helpers/check.ts";
import { bundleName, SHIPPED_BUNDLES } from "../suites/environment.ts";
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
});
