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

  it("outside the generated sections no page states a count of the shipped bundles or their verdicts by hand", () => {
    // what once drifted: speed.md counted 40 shipped bundles where README (generated) said 39, and status.md said
    // "no property failed" beside a table with failures; such counts live in a generated section now
    const stated = /\b\d+ (shipped|evidence|recorded) bundles\b|\bno property failed\b/;
    for (const file of ALL) {
      const text = readFileSync(join(ROOT, file), "utf8");
      const hand = text.replace(/<!-- ([\w-]+):begin \(generated[\s\S]*?<!-- \1:end -->/g, "");
      for (const [i, line] of hand.split("\n").entries())
        expect(
          line,
          `${file}: a count stated by hand (${i + 1}th line outside the generated sections)`,
        ).not.toMatch(stated);
    }
    expect("39 shipped bundles").toMatch(stated);
  });

  it("status.md names every bundle that fails a property today, beside the table that counts them", async () => {
    const status = readFileSync(join(DOCS, "status.md"), "utf8");
    const found = status.slice(status.indexOf("<!-- found:begin"), status.indexOf("<!-- found:end"));
    const table = status.slice(status.indexOf("<!-- runs:begin"), status.indexOf("<!-- runs:end"));
    // every row whose `check` counts show a failure names a bundle the paragraph names
    for (const row of table.split("\n").filter((l) => /\| \d+ \/ [1-9]\d* \/ \d+ \/ \d+ \|/.test(l))) {
      const bundle = /\[suites\/bundles\/([^\]]+)\]/.exec(row)?.[1];
      expect(found, `${bundle} fails a property in the table`).toContain(`\`${bundle}\``);
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
