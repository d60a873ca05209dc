import { describe, expect, it } from "vitest";
import { TOPICS } from "../../suites/topics.ts";
import { checkBundle } from "../check.ts";
import { shipped } from "../testing/tamper.ts";
import { shownValues, templateRegex } from "./values.ts";

describe("real values instead of patterns", () => {
  it("a regular expression that held shows the observed value, the pattern kept as detail", () => {
    const v = {
      status: "pass" as const,
      expected: "/^Disabled(/|$)/",
      observed: "Disabled/Full",
      evidence: [],
    };
    expect(shownValues(v)).toEqual({
      observed: "Disabled/Full",
      expected: "Disabled/Full",
      pattern: "/^Disabled(/|$)/",
    });
  });

  it("a regular expression that failed keeps the pattern as the expectation", () => {
    const v = {
      status: "fail" as const,
      expected: "/^Disabled(/|$)/",
      observed: "Enabled/Full",
      evidence: [],
    };
    expect(shownValues(v)).toEqual({
      observed: "Enabled/Full",
      expected: "/^Disabled(/|$)/",
      pattern: "/^Disabled(/|$)/",
    });
  });

  it("a template is filled from the quoted evidence line that fits it", () => {
    const v = {
      status: "pass" as const,
      expected: "cilium_policy_v3_<id:05>",
      observed: "cilium_policy_v3_<id:05>",
      evidence: [
        { quote: '        "id": 1541,', at: { file: "raw/program/004-x.txt", line: 70 } },
        {
          quote: "cilium_policy_v3_01541     10            0            true",
          at: { file: "raw/program/008-x.txt", line: 20 },
        },
      ],
    };
    expect(shownValues(v)).toEqual({
      observed: "cilium_policy_v3_01541",
      expected: "cilium_policy_v3_01541",
      pattern: "cilium_policy_v3_<id:05>",
    });
  });

  it("a template no line fits, or a width that does not match, is left as it is", () => {
    const v = {
      status: "pass" as const,
      expected: "cilium_policy_v3_<id:05>",
      observed: "cilium_policy_v3_<id:05>",
      evidence: [{ quote: "cilium_policy_v3_0154 x", at: { file: "raw/a.txt", line: 1 } }],
    };
    expect(shownValues(v)).toEqual({
      observed: "cilium_policy_v3_<id:05>",
      expected: "cilium_policy_v3_<id:05>",
      pattern: "cilium_policy_v3_<id:05>",
    });
    expect(templateRegex("cilium_policy_v3_<id:05>")?.test("xcilium_policy_v3_01541")).toBe(false);
    expect(templateRegex("plain 4")).toBeNull();
  });

  it("a plain value is shown as it is", () => {
    expect(shownValues({ status: "pass", expected: "4", observed: "4", evidence: [] })).toEqual({
      observed: "4",
      expected: "4",
    });
  });

  it("on the shipped 1.20 bundles: no pattern is shown where the run held it (kube-proxy's Socket LB, the policy map)", async () => {
    let patterns = 0;
    for (const mode of ["kpr", "kube-proxy"] as const) {
      for (const v of (await checkBundle(shipped(`1.20/${mode}`), TOPICS)).verdicts.filter(
        (x) => x.status === "pass",
      )) {
        const s = shownValues(v);
        if (!s.pattern) continue;
        patterns++;
        expect(s.expected, v.id).not.toMatch(/^\/.*\/$|<[a-z]+(:\d+)?>/);
        expect(s.observed, v.id).not.toMatch(/<[a-z]+(:\d+)?>/);
      }
    }
    // kube-proxy's Socket LB regex and both modes' policy-map template
    expect(patterns).toBeGreaterThanOrEqual(3);
  });
});
