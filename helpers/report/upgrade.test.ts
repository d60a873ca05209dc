import { describe, expect, it } from "vitest";
import type { UpgradeRecord } from "../../suites/29-upgrade/upgrade.records.ts";
import { kprRecords } from "../../suites/example-records.ts";
import { readMeta } from "../bundle/read.ts";
import { shipped } from "../testing/tamper.ts";
import { renderUpgrade, upgradeView } from "./upgrade.ts";
import { gatePart } from "./verdict.ts";

const meta = readMeta(shipped("kpr"));
const record = kprRecords().upgrade?.record as UpgradeRecord;

describe("the upgrade view (records written by us: suites/example-records.ts)", () => {
  it("every leg: versions, the rollout's time, the traffic, the connections and the agents after", () => {
    const u = upgradeView(meta, record, []);
    expect(u?.legs.map((l) => `${l.kind} ${l.from} → ${l.to}`)).toEqual([
      "upgrade 1.19.7 → 1.20.2",
      "rollback 1.20.2 → 1.19.7",
    ]);
    const html = renderUpgrade("kpr", u, [], "HELD").text;
    expect(html).toContain('<span class="word v-pass">HELD</span> Upgrade under load');
    expect(html).toContain("Upgrade under load: Cilium 1.19.7 → 1.20.2");
    expect(html).toContain("<h4>Rollback: Cilium 1.20.2 → 1.19.7</h4>");
    expect(html).toContain("<dt>rollout took</dt><dd>95.2 s");
    expect(html).toContain("<dt>requests during it</dt><dd>550, 0 failed");
    expect(html).toContain("<dt>longest outage</dt><dd>none: no request failed</dd>");
    // one outage figure (issue 42): the raw longest gap is no second "longest" row beside it
    expect(html).not.toContain("<dt>longest gap</dt>");
    expect(html).toContain("cdc-kpr-worker: 1.19.7");
    expect(html).not.toContain("changed");
  });

  it("failures with their times, a broken connection, a changed backend and the drops are shown", () => {
    const leg = record.legs[0] as UpgradeRecord["legs"][number];
    const broken: UpgradeRecord = {
      ...record,
      legs: [
        {
          ...leg,
          requests: {
            ...leg.requests,
            failed: 23,
            failures: Array.from({ length: 23 }, (_, i) => ({
              t: Date.UTC(2026, 11, 3, 4, 35, 11, i * 100),
              to: "nodeport",
              error: "ETIMEDOUT",
              raw: "{}",
            })),
          },
          connections: leg.connections.map((c) => ({ ...c, closed_events: 1, backend_after: "web-other" })),
          drops: [
            {
              node: "w2",
              reason: "Policy denied",
              direction: "ingress",
              file: "bpf_lxc.c",
              line: 2032,
              packets: 3,
            },
          ],
        },
      ],
    };
    const html = renderUpgrade("kpr", upgradeView(meta, broken, []), [], "BROKEN").text;
    expect(html).toContain("<summary>23 failed requests</summary>");
    // each failure at its ISO timestamp (issue 37: whole, not the time of day)
    expect(html).toContain("<li><code>2026-12-03T04:35:11.000Z</code> nodeport: ETIMEDOUT</li>");
    expect(html.match(/<li><code>2026-12-03T04:35/g)).toHaveLength(20);
    expect(html).toContain("… 3 more");
    expect(html).toContain("no: 1 close, 0 error");
    expect(html).toContain('<span class="changed">changed</span>');
    expect(html).toContain('w2: 3 × Policy denied <span class="muted">(ingress, bpf_lxc.c:2032)</span>');
  });

  it("a bundle without an upgrade record has no view; its section says so, with the verdicts that say why", () => {
    expect(upgradeView(meta, undefined, [])).toBeNull();
    const v = {
      id: "upgrade.connections-survive",
      topic: "upgrade",
      claim: "Every long-lived connection survives",
      status: "fail",
      expected: "true",
      observed: "(not observed: record upgrade was not collected)",
    } as unknown as Parameters<typeof renderUpgrade>[2][number];
    const html = renderUpgrade("kpr", null, [v], "BROKEN", true).text;
    expect(html).toMatch(/^<details class="upgrade"/);
    expect(html).toContain(
      '<span class="word v-fail">BROKEN</span> Upgrade under load: its record could not be read',
    );
    expect(html).toContain("observed (not observed: record upgrade was not collected)");
  });

  it("a card's title names the part its word is about, not just the upgrade (issue 44)", () => {
    const item = (what: string) => ({ what, id: "x", expected: "0", observed: "1", line: "" });
    expect(gatePart({ word: "BROKEN", broken: [item("restart")], inconclusive: [], unjudged: [] })).toBe(
      "in the restart leg",
    );
    expect(
      gatePart({
        word: "INCONCLUSIVE",
        broken: [],
        inconclusive: [item("rollback")],
        unjudged: [item("after the upgrade")],
      }),
    ).toBe("in the rollback leg, after the upgrade");
    expect(gatePart({ word: "REGRESSED", broken: [], inconclusive: [], unjudged: [] })).toBe(
      "known issues new on the target",
    );
    expect(gatePart({ word: "HELD", broken: [], inconclusive: [], unjudged: [] })).toBeNull();
    const html = renderUpgrade("kpr", null, [], "BROKEN", false, "in the restart leg").text;
    expect(html).toContain(
      '<span class="word v-fail">BROKEN</span> <span class="gate-part">in the restart leg</span> · Upgrade under load',
    );
  });
});
