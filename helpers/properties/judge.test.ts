import { describe, expect, it } from "vitest";
import type { ConfigValues } from "./config.ts";
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
    config: "none",
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

describe("an expectation that depends on the configuration", () => {
  const base = prop({ eq: 7 });
  const p: Property = {
    ...base,
    config: {
      assumes: { kpr: { socketLB: ["on"], routing: ["tunnel"] } },
      cases: [
        {
          when: { socketLB: ["hostns-only"] },
          expect: { kpr: { eq: 28 } },
          claim: "a Pod's connect is translated per packet: exit 28",
          why: "written by us",
        },
      ],
    },
  };
  const cfg = (over: Partial<ConfigValues>): ConfigValues => ({
    routing: "tunnel",
    tunnelProtocol: "vxlan",
    hostRouting: "legacy",
    masquerading: "iptables",
    socketLB: "on",
    lbMode: "snat",
    lbAlgorithm: "random",
    deviceMode: "veth",
    kubeProxy: "none",
    ipFamilies: "ipv4",
    ...over,
  });
  it("the declared expectation where the settings are those it assumes", () => {
    expect(judge(p, "kpr", records(7), "1.20.2", cfg({})).status).toBe("pass");
  });
  it("a modelled case: its own expectation and claim", () => {
    const v = judge(p, "kpr", records(28), "1.20.2", cfg({ socketLB: "hostns-only" }));
    expect(v.status).toBe("pass");
    expect(v.configuration).toMatch(/socketLB hostns-only/);
    expect(v.message).toMatch(/holds with socketLB hostns-only: a Pod's connect is translated per packet/);
    expect(judge(p, "kpr", records(7), "1.20.2", cfg({ socketLB: "hostns-only" })).status).toBe("fail");
  });
  it("a setting it does not model: not applicable, naming the setting (never a failure, never a pass)", () => {
    const v = judge(p, "kpr", records(7), "1.20.2", cfg({ routing: "native" }));
    expect(v.status).toBe("skip");
    expect(v.reason).toBe(
      "not applicable: not modelled for routing native (the expectation assumes routing tunnel)",
    );
  });
  it("no configuration recorded (an older bundle): the declared expectation, saying what it assumed", () => {
    const v = judge(p, "kpr", records(7), "1.20.2", null);
    expect(v.status).toBe("pass");
    expect(v.configuration).toMatch(/configuration not recorded .*assumed socketLB on, routing tunnel/);
  });
  it("a setting the run could not read: the declared expectation, saying so", () => {
    const v = judge(p, "kpr", records(7), "1.20.2", cfg({ routing: null }));
    expect(v.configuration).toMatch(/could not read routing: assumed routing tunnel/);
  });
});

describe("a minor the suite has not declared: judged on the newest declared minor's expectations, marked so", () => {
  // the declared versions, written by us: 1.20 is the newest declared minor, run at 1.20.2
  const DECLARED = ["1.20.2", "1.19.7", "1.18.11"];
  const withBehaviour = prop({
    default: { eq: 7 },
    byMinor: {
      "1.20": { kind: "behaviour", expect: { eq: 5 }, claim: "exit 5 in 1.20", why: "written by us" },
    },
  });

  it("holds under the assumed expectation: a pass that says so, marked 'assumed from 1.20'", () => {
    const v = judge(withBehaviour, "kpr", records(5), "1.21.0", null, DECLARED);
    expect(v.status).toBe("pass");
    expect(v.assumedFrom).toBe("1.20");
    expect(v.cilium).toBe("1.21.0");
    expect(v.expected).toBe("5");
    expect(v.message).toMatch(
      /^\[kpr, Cilium 1\.21\.0, assumed from 1\.20\] t\.fails-fast: holds under the expectation assumed from 1\.20 for Cilium 1\.20: /,
    );
  });

  it("does not hold: its own status, changed in the new minor, never a failure of a declared version or a pass", () => {
    // the default (7) would hold: the assumption is 1.20's behaviour, not bent to what was observed
    const v = judge(withBehaviour, "kpr", records(7), "1.21.0", null, DECLARED);
    expect(v.status).toBe("changed");
    expect(v.assumedFrom).toBe("1.20");
    expect(v.message).toMatch(
      /CHANGED in the new minor \(a regression or a new behaviour, to be declared\).*\n {2}expected \(assumed from 1\.20\): 5\n {2}observed: 7/,
    );
    // the same records on a declared minor: the declared default holds
    expect(judge(withBehaviour, "kpr", records(7), "1.19.7", null, DECLARED).status).toBe("pass");
  });

  it("a known issue of the newest run patch, still shown: a known issue, assumed; gone: a pass that says so", () => {
    const known = judge(withKnownIssue, "kpr", records(28), "1.21.0", null, DECLARED);
    expect(known).toMatchObject({ status: "known-issue", assumedFrom: "1.20", expected: "7" });
    const fixed = judge(withKnownIssue, "kpr", records(7), "1.21.0", null, DECLARED);
    expect(fixed).toMatchObject({ status: "pass", assumedFrom: "1.20" });
    expect(fixed.note).toMatch(/not observed any more/);
  });

  it("a skip is marked too; a declared minor's verdicts carry no mark", () => {
    const na = judge(
      { ...withBehaviour, expect: { kpr: { na: "written by us" }, "kube-proxy": { eq: 7 } } },
      "kpr",
      records(7),
      "1.22.3",
      null,
      DECLARED,
    );
    expect(na).toMatchObject({ status: "skip", assumedFrom: "1.20" });
    expect(judge(withBehaviour, "kpr", records(7), "1.19.8", null, DECLARED)).not.toHaveProperty(
      "assumedFrom",
    );
    expect(judge(withBehaviour, "kpr", records(7), undefined, null, DECLARED)).not.toHaveProperty(
      "assumedFrom",
    );
  });
});
