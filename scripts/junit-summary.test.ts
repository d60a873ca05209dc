import { describe, expect, it } from "vitest";
import { summarize } from "./junit-summary.ts";

describe("junit summary", () => {
  it("counts passed, failed and skipped test cases", () => {
    const xml = `<testsuites><testsuite>
      <testcase name="a"></testcase>
      <testcase name="b"><failure message="x"/></testcase>
      <testcase name="c"><skipped/></testcase>
      <testcase name="d"/>
    </testsuite></testsuites>`;
    expect(summarize(xml)).toEqual({ passed: 2, failed: 1, skipped: 1, known: [] });
  });

  it("counts a test case with a known-issue property apart, by its name, not as passed", () => {
    const xml = `<testsuites><testsuite>
      <testcase classname="suites/07-ghost/ghost.spec.ts" name="ghost.fails-fast: curl … [1.20] [kube-proxy]" time="0.1">
        <properties><property name="known-issue" value="curl hangs (PR 48578)"/></properties>
      </testcase>
      <testcase classname="x" name="a"></testcase>
    </testsuite></testsuites>`;
    expect(summarize(xml)).toEqual({
      passed: 1,
      failed: 0,
      skipped: 0,
      known: ["ghost.fails-fast: curl … [1.20] [kube-proxy]"],
    });
  });
});
