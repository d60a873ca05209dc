import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { README, renderReadme } from "./readme-table.ts";

describe("README expectation table", () => {
  it("matches the declared properties (run `npm run readme` after changing a declaration)", () => {
    const readme = readFileSync(README, "utf8");
    expect(
      renderReadme(readme) === readme,
      "README.md table drifted from the topics' declarations (suites/*/*.topic.ts); run `npm run readme`",
    ).toBe(true);
  });
});
