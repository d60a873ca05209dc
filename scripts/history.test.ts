/**
 * Habits a CI that pins the suite relies on (issue 43): the CHANGELOG's newest entry is the version package.json
 * says, and every commit since this test was added has a subject of at most 72 characters (the detail in its
 * body), so `git log --oneline` reads. Older commits are left as they were.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");
/** The subject of the commit that added this test: the commits after it are held to the rule. */
const ANCHOR = "CHANGELOG and 0.2.0; commit subjects held to 72 characters";

function subjectsSince(anchor: string): string[] | null {
  let log: string;
  try {
    log = execFileSync("git", ["log", "--format=%s"], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch {
    return null;
  }
  const subjects = log.split("\n").filter(Boolean);
  const at = subjects.indexOf(anchor);
  return at < 0 ? null : subjects.slice(0, at + 1);
}

describe("the suite's history", () => {
  it("CHANGELOG.md's newest entry is package.json's version", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    const first = /^## (\d+\.\d+\.\d+)\b/m.exec(readFileSync(join(ROOT, "CHANGELOG.md"), "utf8"));
    expect(first?.[1]).toBe(pkg.version);
  });

  const since = subjectsSince(ANCHOR);
  it.skipIf(since === null)(
    "every commit since the rule has a subject of at most 72 characters (skipped: no git history with the anchor commit here)",
    () => {
      const long = (since ?? []).filter((s) => s.length > 72);
      expect(long).toEqual([]);
    },
  );
});
