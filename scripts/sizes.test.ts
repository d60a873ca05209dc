/**
 * No source file over ~450 lines without a reason (issue 43): a file that long says at its top, in one line, why
 * it is one file (`// One file over 450 lines: …`), or it is split where it divides naturally. The shipped
 * bundles and the installed packages are not sources.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");
const DIRS = ["helpers", "clusters", "suites", "cli", "scripts", "manifests", "bin"];
const MAX_LINES = 450;
const REASON = /^\/\/ One file over 450 lines: .{20,}/;

function sources(): string[] {
  return DIRS.flatMap((d) =>
    readdirSync(join(ROOT, d), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && /\.(ts|mts|mjs)$/.test(e.name))
      .map((e) => relative(ROOT, join(e.parentPath, e.name)))
      .filter((f) => !f.includes("node_modules") && !f.startsWith("suites/bundles/")),
  );
}

/** The long files that give no reason at their top. */
function unexplained(files: { file: string; text: string }[]): string[] {
  return files
    .filter(({ text }) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0) > MAX_LINES)
    .filter(({ text }) => !REASON.test(text))
    .map(({ file }) => file);
}

describe("source sizes", () => {
  it("a long file without its reason is found; one with it, or a short one, is not", () => {
    const long = `${"x\n".repeat(MAX_LINES + 1)}`;
    expect(
      unexplained([
        { file: "a.ts", text: long },
        {
          file: "b.ts",
          text: `// One file over 450 lines: one parser of one format, its cases together\n${long}`,
        },
        { file: "c.ts", text: "x\n".repeat(MAX_LINES) },
      ]),
    ).toEqual(["a.ts"]);
  });

  it(`every source over ${MAX_LINES} lines says at its top why it is one file`, () => {
    const files = sources().map((file) => ({ file, text: readFileSync(join(ROOT, file), "utf8") }));
    expect(files.length).toBeGreaterThan(200);
    expect(unexplained(files)).toEqual([]);
  });
});
