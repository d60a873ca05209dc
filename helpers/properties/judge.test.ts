import { describe, expect, it } from "vitest";
import { judge, skipReason } from "./judge.ts";
import type { Property } from "./types.ts";

/** A property written by us for the judge's own tests: it observes a value given in its record. */
function prop(expectKpr: Property["expect"]["kpr"]): Property {
  return {
    id: "t.fails-fast",
    topic: "ghost",
    claim: "the probe fails at once with exit 7",
    source: { doc: "lab", where: "step 7" },
    expect: { kpr: expectKpr, "kube-proxy": { eq: 7 } },
    needs: ["ghost"],
    observe: (r) => ({ value: r.get("ghost").curl_exit, evidence: [] }),
  };
}
const records = (exit: number) =>
  ({ ghost: { record: { curl_exit: exit }, evidence: {} } }) as unknown as Parameters<typeof judge>[2];

const withKnownIssue = prop({
  default: { eq: 7 },
  byPatch: [
    {
      from: "1.20.2",
      to: "1.20.2",
      kind: "known-issue",
      expect: { eq: 28 },
      claim: "the probe hangs until curl's limit (exit 28)",
      why: "written by us",
      upstream: "cilium PR 48578",
    },
  ],
});

describe("a known issue is its own verdict", () => {
  it("observed on its version: known issue, expected what the version is meant to do, never 'holds'", () => {
    const v = judge(withKnownIssue, "kpr", records(28), "1.20.2");
    expect(v.status).toBe("known-issue");
    expect(v.expected).toBe("7");
    expect(v.observed).toBe("28");
    expect(v.message).not.toMatch(/holds/);
    expect(v.message).toMatch(/KNOWN ISSUE of Cilium 1\.20\.2: the probe hangs/);
    expect(v.message).toMatch(/does not hold here: the probe fails at once/);
    expect(v.deviation).toMatchObject({
      kind: "known-issue",
      versions: "1.20.2",
      upstream: "cilium PR 48578",
    });
  });

  it("not observed any more on its version (the fix landed): a pass that says so", () => {
    const v = judge(withKnownIssue, "kpr", records(7), "1.20.2");
    expect(v.status).toBe("pass");
    expect(v.note).toMatch(/known issue declared for Cilium 1\.20\.2 is not observed any more/);
    expect(v.message).toMatch(/not observed any more/);
  });

  it("neither the known issue nor the intended value: a failure naming both", () => {
    const v = judge(withKnownIssue, "kpr", records(6), "1.20.2");
    expect(v.status).toBe("fail");
    expect(v.message).toMatch(/FAILS: the probe fails at once/);
    expect(v.message).toMatch(/known issue declared for Cilium 1\.20\.2 would show 28/);
  });

  it("another version that shows the known issue fails, with a note naming it", () => {
    const v = judge(withKnownIssue, "kpr", records(28), "1.20.3");
    expect(v.status).toBe("fail");
    expect(v.note).toMatch(/what the known issue of Cilium 1\.20\.2 makes it/);
  });
});

describe("a behaviour of a version is checked in the version's own words", () => {
  const p = prop({
    default: { eq: 7 },
    byMinor: {
      "1.18": {
        kind: "behaviour",
        expect: { eq: 5 },
        claim: "on 1.18 the probe exits 5",
        why: "written by us",
      },
    },
  });
  it("passes with the version's claim", () => {
    const v = judge(p, "kpr", records(5), "1.18.11");
    expect(v.status).toBe("pass");
    expect(v.checked).toBe("on 1.18 the probe exits 5");
    expect(v.message).toMatch(/holds for Cilium 1\.18: on 1\.18 the probe exits 5/);
    expect(v.message).not.toMatch(/holds: the probe fails at once/);
  });
  it("fails with the version's claim", () => {
    const v = judge(p, "kpr", records(7), "1.18.11");
    expect(v.status).toBe("fail");
    expect(v.message).toMatch(/FAILS for Cilium 1\.18: on 1\.18 the probe exits 5/);
  });
});

describe("skip reasons", () => {
  it("a skip carries its reason; an older stored skip's reason is read from its message", () => {
    const na = judge(prop({ na: "no such thing here" }), "kpr", records(7));
    expect(na.status).toBe("skip");
    expect(skipReason(na)).toBe("not applicable: no such thing here");
    expect(skipReason({ message: "[kpr] x.y: skipped: predates the probe" })).toBe("predates the probe");
  });
});
