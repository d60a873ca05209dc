import { describe, expect, it } from "vitest";
import { SKIP_REASONS_SHOWN, skipSummary } from "./skip-reporter.ts";

const n = (note: string | undefined, times: number) => Array.from({ length: times }, () => ({ note }));

describe("skip reasons in npm test's default output", () => {
  it("each reason once, known issues first, then the most frequent, with its count", () => {
    expect(
      skipSummary([
        ...n("no cluster: CLUSTER_PROVIDER=none", 3),
        ...n("known issue of Cilium 1.20.2: curl hangs (PR 48578) — expected 7, observed 28", 1),
        ...n("not root: the kernel tests need network namespaces", 5),
        ...n(undefined, 1),
      ]),
    ).toEqual([
      "Skipped 10 tests, 1 of them known issues (neither passed nor failed), by reason:",
      "  1 × known issue of Cilium 1.20.2: curl hangs (PR 48578) — expected 7, observed 28",
      "  5 × not root: the kernel tests need network namespaces",
      "  3 × no cluster: CLUSTER_PROVIDER=none",
      "  1 × (no reason given)",
    ]);
    expect(skipSummary([])).toEqual([]);
  });

  it("stays short: past the shown reasons, one line counts the rest; a long reason is cut, a control character shown", () => {
    const many = Array.from({ length: SKIP_REASONS_SHOWN + 3 }, (_, i) => ({ note: `reason ${i}` }));
    const lines = skipSummary([...many, { note: `${"x".repeat(400)}\u001b[2J\nsecond line` }]);
    expect(lines).toHaveLength(SKIP_REASONS_SHOWN + 2);
    expect(lines.at(-1)).toBe("  … 4 more reasons (4 tests): the verbose reporter or JUnit names each");
    const long = skipSummary([{ note: `${"y".repeat(400)}` }, { note: "a\u001b[2J\nb" }]);
    expect(long[1]).toBe("  1 × a\\u{1b}[2J");
    expect(long[2]?.length).toBeLessThanOrEqual(160);
    expect(long[2]).toMatch(/y…$/);
    expect(long.join("\n")).not.toContain("\u001b");
  });
});
