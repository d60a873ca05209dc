import { describe, expect, it } from "vitest";
import type { Verdict } from "../properties/judge.ts";
import { addSkipMessages } from "./junit-reporter.ts";
import "./matchers.ts";
import { parseXmlStrictly } from "./xml.ts";

const verdict = (status: Verdict["status"]): Verdict => ({
  id: "iptables.kube-svc-lines",
  topic: "iptables",
  claim: "Lines containing KUBE-SVC in iptables-save",
  source: "lab step 1",
  mode: "kpr",
  cilium: "1.19",
  status,
  expected: "0",
  observed: "1",
  evidence: [
    {
      quote: "-A KUBE-SERVICES -d 10.96.44.2/32 -j KUBE-SVC-XYZ",
      at: { file: "raw/iptables/009-iptables-save.txt", line: 61 },
    },
  ],
  message: "",
});

describe("toHoldProperty", () => {
  it("passes on a passing verdict", () => {
    expect({ ...verdict("pass"), observed: "0" }).toHoldProperty();
  });

  it("a failing verdict fails with expected and observed as the diff, and the evidence under it", () => {
    let caught: unknown;
    try {
      expect(verdict("fail")).toHoldProperty();
    } catch (err) {
      caught = err;
    }
    const e = caught as { message: string; expected: unknown; actual: unknown };
    expect(e.expected).toBe("0");
    expect(e.actual).toBe("1");
    expect(e.message).toContain("iptables.kube-svc-lines does not hold [kpr, Cilium 1.19]");
    // the raw line, at its place
    expect(e.message).toContain(
      "raw/iptables/009-iptables-save.txt:61  -A KUBE-SERVICES -d 10.96.44.2/32 -j KUBE-SVC-XYZ",
    );
    expect(e.message).toContain("source: lab step 1");
  });
});

describe("JUnit skip reasons", () => {
  const xml = [
    '<testcase classname="suites/04-holder/holder.spec.ts" name="holder [kind] [kpr] &gt; holder.x: it&apos;s &quot;so&quot; [kind] [kpr]" time="0">',
    "    <skipped/>",
    "</testcase>",
    '<testcase classname="suites/04-holder/holder.spec.ts" name="other" time="0">',
    "    <skipped/>",
    "</testcase>",
  ].join("\n");

  it("the reason lands in the matching test case's <skipped>, escaped; a case without a reason is left alone", () => {
    const notes = new Map([
      [
        `suites/04-holder/holder.spec.ts\u0000holder [kind] [kpr] > holder.x: it's "so" [kind] [kpr]`,
        "no upgrade leg in this run: set UPGRADE_TO <x>",
      ],
    ]);
    const out = addSkipMessages(xml, notes);
    expect(out).toContain(
      '<skipped message="no upgrade leg in this run: set UPGRADE_TO &lt;x&gt;">no upgrade leg in this run: set UPGRADE_TO &lt;x&gt;</skipped>',
    );
    expect(out.match(/<skipped\/>/g)).toHaveLength(1);
  });

  it("a reason naming a bundle folder with characters XML forbids leaves the report well-formed (issue 36)", () => {
    const notes = new Map([
      [
        `suites/04-holder/holder.spec.ts\u0000holder [kind] [kpr] > holder.x: it's "so" [kind] [kpr]`,
        "no bundle at results/b\u0001\u001b[2J\uFFFE\uFFFF\ud800x/kpr ]]> <!-- &",
      ],
    ]);
    const out = addSkipMessages(xml, notes);
    expect(() => parseXmlStrictly(`<testsuites>${out}</testsuites>`)).not.toThrow();
    expect(out).toContain(
      "no bundle at results/b\uFFFD\uFFFD[2J\uFFFD\uFFFD\uFFFDx/kpr ]]&gt; &lt;!-- &amp;",
    );
  });
});
