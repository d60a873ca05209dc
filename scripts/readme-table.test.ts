import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { README, renderReadme } from "./readme-table.ts";

describe("README expectation table", () => {
  it(
    "matches the declared properties, the bundles and the figures (run `npm run readme` after changing them)",
    { timeout: 120_000 },
    async () => {
      const readme = readFileSync(README, "utf8");
      expect(
        (await renderReadme(readme)) === readme,
        "README.md table drifted from the topics' declarations (suites/*/*.topic.ts); run `npm run readme`",
      ).toBe(true);
    },
  );
});
