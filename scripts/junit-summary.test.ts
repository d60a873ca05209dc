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
    expect(summarize(xml)).toEqual({ passed: 2, failed: 1, skipped: 1 });
  });
});
