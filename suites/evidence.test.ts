import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { storedVerdicts } from "../helpers/bundle/read.ts";
import { checkBundle } from "../helpers/check.ts";
import { isEvidenceItem } from "../helpers/records/evidence.ts";
import { BundleFiles, tallyEvidence } from "../helpers/records/verify-evidence.ts";
import { bundleName, SHIPPED_BUNDLES } from "./environment.ts";
import { TOPICS } from "./topics.ts";

/**
 * Issue 19: every evidence item in every bundle under suites/bundles/ (whatever is shipped there: the set is
 * re-recorded for new Cilium versions) is a raw line found verbatim at its place, or a derived value whose
 * every source exists. `check` re-judges each bundle from its raw outputs with this code, so its evidence is
 * the current code's; a bundle's stored verdicts are held to the same rule when they are in this format.
 */
const ROOT = join(import.meta.dirname, "bundles");
const BUNDLES = SHIPPED_BUNDLES.map(bundleName);

describe("evidence is quoted verbatim at its place, or derived from named places", () => {
  it("there are bundles to hold to it", () => expect(BUNDLES.length).toBeGreaterThan(0));

  it.each(BUNDLES)("%s: every item check gives (verdicts and records)", async (name) => {
    const dir = join(ROOT, ...name.split("/"));
    const r = await checkBundle(dir, TOPICS);
    const files = new BundleFiles(dir);
    const verdicts = tallyEvidence(
      files,
      r.verdicts.flatMap((v) => v.evidence),
    );
    const records = tallyEvidence(
      files,
      Object.values(r.records).flatMap((e) => Object.values(e?.evidence ?? {}).flat()),
    );
    expect(verdicts.faults.map((f) => f.why)).toEqual([]);
    expect(records.faults.map((f) => f.why)).toEqual([]);
    // a judged property shows something: at least one item (a pass or a fail never comes with nothing)
    const bare = r.verdicts.filter((v) => v.status !== "skip" && v.evidence.length === 0).map((v) => v.id);
    expect(bare).toEqual([]);
    expect(verdicts.quoted).toBeGreaterThan(0);
  });

  for (const name of BUNDLES)
    it(`${name}: the stored verdicts.jsonl, when recorded in this format`, (ctx) => {
      const dir = join(ROOT, ...name.split("/"));
      const stored = storedVerdicts(dir);
      if (!stored) return ctx.skip("the bundle stores no verdicts");
      const items = [...stored.values()].flatMap((v) => v.evidence as unknown[]);
      if (!items.every(isEvidenceItem))
        return ctx.skip(
          "recorded with an older suite: its stored evidence is plain lines (check re-judges it above, verbatim at place)",
        );
      expect(tallyEvidence(new BundleFiles(dir), items).faults.map((f) => f.why)).toEqual([]);
    });
});

describe("the check catches evidence that is not at its place (a tampered copy, written by us)", () => {
  it("a quote whose line differs, a place past the end, a derived value with no source, a plain line", () => {
    const files = new BundleFiles(join(ROOT, BUNDLES[0] as string));
    const calls = readdirSync(join(files.dir, "calls"))[0] as string;
    const raw = JSON.parse((files.fileLines(`calls/${calls}`) as string[])[0] as string).stdoutFile as string;
    const lines = files.fileLines(raw) as string[];
    const t = tallyEvidence(files, [
      { quote: `${lines[0]} (edited)`, at: { file: raw, line: 1 } },
      { quote: lines[0], at: { file: raw, line: lines.length + 5 } },
      { quote: "x", at: { file: "raw/none/001-missing.txt", line: 1 } },
      { derived: "3 of 3", from: [] },
      { derived: "3 of 3", from: [{ file: `calls/${calls}`, call: 99_999 }] },
      "a plain line, as bundles before issue 19 stored it",
    ]);
    expect(t.faults.map((f) => f.why)).toEqual([
      expect.stringMatching(/^raw\/.*:1 reads .* not the quoted/),
      expect.stringMatching(/is past its \d+ lines$/),
      "the bundle has no raw/none/001-missing.txt",
      'derived value "3 of 3" names no source',
      expect.stringMatching(/has no call 99999$/),
      expect.stringMatching(/^not an evidence item/),
    ]);
    expect(t.quoted + t.derived).toBe(0);
  });
});
