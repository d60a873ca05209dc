import { describe, expect, it } from "vitest";
import {
  KNOWN_ISSUES_SHOWN,
  reasonInName,
  SKIP_REASONS_SHOWN,
  skipReasonKey,
  skipSummary,
} from "./skip-reporter.ts";

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
      "  1 × known issue of Cilium 1.20.2: curl hangs (PR 48578)",
      "  5 × not root: the kernel tests need network namespaces",
      "  3 × no cluster: CLUSTER_PROVIDER=none",
      "  1 × (no reason given)",
    ]);
    expect(skipSummary([])).toEqual([]);
  });

  it("a test skipped by skipIf (which takes no note) gives the reason its own or its suite's name carries", () => {
    expect(
      reasonInName(
        "parsers on real samples (skipped: no ../shared/samples here) > bpf-lb-list: every sample parses",
      ),
    ).toBe("no ../shared/samples here");
    expect(reasonInName("connections on the real kernel (skipped: not root) > connect() to a ghost")).toBe(
      "not root",
    );
    expect(reasonInName("a test without one")).toBeUndefined();
  });

  it("one reason for every property and bundle it skips; a known issue once, whatever each bundle observed", () => {
    expect(
      skipReasonKey(
        "[kube-proxy, Cilium 1.20.2] measure.ghost-drop-timeout: skipped: runs in the drop profile only",
      ),
    ).toBe("skipped: runs in the drop profile only");
    expect(
      skipReasonKey(
        "known issue of Cilium 1.20.2: curl hangs (PR 48578) — expected each ≤ 0.1, observed [5.001431,5.001039]",
      ),
    ).toBe("known issue of Cilium 1.20.2: curl hangs (PR 48578)");
    const lines = skipSummary([
      { note: "known issue of Cilium 1.20.2: curl hangs (PR 48578) — expected 7, observed 28" },
      { note: "known issue of Cilium 1.20.2: curl hangs (PR 48578) — expected 7, observed 6" },
      { note: "[kpr, Cilium 1.19.7] a.b: skipped: no such topic" },
      { note: "[kube-proxy, Cilium 1.20.2] c.d: skipped: no such topic" },
    ]);
    expect(lines.slice(1)).toEqual([
      "  2 × known issue of Cilium 1.20.2: curl hangs (PR 48578)",
      "  2 × skipped: no such topic",
    ]);
  });

  it("stays short: known issues do not crowd out the other reasons; one line counts the rest; a long reason is cut, a control character shown", () => {
    const known = Array.from({ length: KNOWN_ISSUES_SHOWN + 2 }, (_, i) => ({
      note: `known issue of Cilium 1.20: k${i}`,
    }));
    const many = Array.from({ length: SKIP_REASONS_SHOWN + 3 }, (_, i) => ({ note: `reason ${i}` }));
    const lines = skipSummary([...known, ...many, { note: `${"x".repeat(400)}\u001b[2J\nsecond line` }]);
    expect(lines).toHaveLength(KNOWN_ISSUES_SHOWN + SKIP_REASONS_SHOWN + 2);
    expect(lines.filter((l) => l.includes("× reason "))).toHaveLength(SKIP_REASONS_SHOWN);
    expect(lines.at(-1)).toBe("  … 6 more reasons (6 tests): the verbose reporter or JUnit names each");
    const long = skipSummary([{ note: `${"y".repeat(400)}` }, { note: "a\u001b[2J\nb" }]);
    expect(long[1]).toBe("  1 × a\\u{1b}[2J");
    expect(long[2]?.length).toBeLessThanOrEqual(160);
    expect(long[2]).toMatch(/y…$/);
    expect(long.join("\n")).not.toContain("\u001b");
  });
});
