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
    expect(summarize(xml)).toEqual({
      passed: 2,
      failed: 1,
      skipped: 1,
      known: [],
      recorded: [],
      changed: [],
    });
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
      recorded: [],
      changed: [],
    });
  });

  it("a known issue as a skipped test case with its reason (issue 37) is counted apart, not as skipped", () => {
    const xml = `<testsuites><testsuite>
      <testcase classname="suites/07-ghost/ghost.spec.ts" name="ghost.seconds: … [1.20] [kube-proxy]" time="0.1">
        <skipped message="known issue of Cilium 1.20.2: … (PR 48578)"/>
        <properties><property name="known-issue" value="curl hangs (PR 48578)"/></properties>
      </testcase>
      <testcase classname="x" name="a"><skipped message="no cluster"/></testcase>
    </testsuite></testsuites>`;
    expect(summarize(xml)).toEqual({
      passed: 0,
      failed: 0,
      skipped: 1,
      known: ["ghost.seconds: … [1.20] [kube-proxy]"],
      recorded: [],
      changed: [],
    });
  });

  it("counts a replay that reproduced a kept recorded failure apart, not as passed", () => {
    const xml = `<testsuites><testsuite>
      <testcase classname="suites/29-upgrade/upgrade.spec.ts" name="upgrade.no-failed-requests: … [replay upgrade-1.19-1.20/kpr] [kpr]" time="0.1">
        <properties><property name="recorded-failure" value="run up-119-120-kpr-2: 2 of 570 timed out"/></properties>
      </testcase>
      <testcase classname="x" name="a"></testcase>
    </testsuite></testsuites>`;
    expect(summarize(xml)).toMatchObject({
      passed: 1,
      failed: 0,
      recorded: ["upgrade.no-failed-requests: … [replay upgrade-1.19-1.20/kpr] [kpr]"],
    });
  });

  it("names a failure of a minor the suite has not declared (changed in the new minor), counted as failed", () => {
    // written by us: the properties the harness annotates a verdict of Cilium 1.21.0 with
    const xml = `<testsuites><testsuite>
      <testcase classname="suites/06-nodeport/nodeport.spec.ts" name="nodeport.bind-protection: … [kind] [kpr]" time="0.1">
        <properties><property name="assumed-from" value="assumed from 1.20"/><property name="changed-in-new-minor" value="changed in the new minor"/></properties>
        <failure message="nodeport.bind-protection CHANGED IN THE NEW MINOR"/>
      </testcase>
      <testcase classname="x" name="b"><properties><property name="assumed-from" value="assumed from 1.20"/></properties></testcase>
    </testsuite></testsuites>`;
    expect(summarize(xml)).toEqual({
      passed: 1,
      failed: 1,
      skipped: 0,
      known: [],
      recorded: [],
      changed: ["nodeport.bind-protection: … [kind] [kpr]"],
    });
  });
});
