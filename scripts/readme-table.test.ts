import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DOCS, GENERATED_MARKER, pages, ROOT, renderAll, renderPage } from "./readme-table.ts";

/** README.md and every docs/ page: where a generated section may be. */
const ALL = [
  "README.md",
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

describe("the generated sections of README.md and docs/", () => {
  it(
    "match the declared properties, the bundles, `check` of each and the figures (run `npm run readme` after changing them)",
    { timeout: 180_000 },
    async () => {
      for (const { file, before, after } of await renderAll())
        expect(
          after === before,
          `${file}'s generated sections drifted from the topics' declarations (suites/*/*.topic.ts), the bundles in suites/bundles/ or the figures (scripts/readme-figures.ts); run \`npm run readme\``,
        ).toBe(true);
    },
  );

  it("every generated marker in a page is one `npm run readme` fills (none left stale)", () => {
    const filled = new Set(pages().flatMap((p) => p.sections.map((s) => `${p.file} ${s.begin}`)));
    for (const file of ALL) {
      const text = readFileSync(join(ROOT, file), "utf8");
      for (const m of text.matchAll(GENERATED_MARKER)) {
        const line = text.slice(m.index).split("\n")[0] as string;
        expect(filled.has(`${file} ${line}`), `${file}: ${line} is filled by no page of pages()`).toBe(true);
      }
    }
  });

  it("a section edited by hand is seen (the drift test is not vacuous)", async () => {
    const page = pages().find((p) => p.file === "README.md");
    if (!page) throw new Error("README.md is not among the generated pages");
    const text = readFileSync(join(ROOT, page.file), "utf8");
    const edited = text.replace(/(\d+) topics declare/, (_m, n: string) => `${Number(n) + 1} topics declare`);
    expect(edited).not.toBe(text);
    expect(await renderPage(page, edited)).toBe(text);
  });
});
