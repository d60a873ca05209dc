import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TOPICS } from "../../suites/topics.ts";
import { readMeta } from "../bundle.ts";
import { checkBundle } from "../check.ts";
import { BUNDLES_DIR } from "../testing/tamper.ts";
import { renderUpgrade, upgradeView } from "./upgrade.ts";

const upgrade = await checkBundle(join(BUNDLES_DIR, "kpr-upgrade"), TOPICS);
const meta = readMeta(join(BUNDLES_DIR, "kpr-upgrade"));

describe("the upgrade view", () => {
  it("the shipped upgrade bundle: versions, the spec's time, the holder's connection and the verdicts", () => {
    const u = upgradeView(meta, upgrade.records.upgrade?.record, upgrade.verdicts);
    expect(u).toMatchObject({
      before: "1.19.6",
      after: "1.19.7",
      seconds: meta.phases["spec upgrade"],
      secondsFrom: "spec phase",
      traffic: null,
      agentVersionsAfter: [],
      connections: [
        {
          from: "holder",
          survived: true,
          backendBefore: upgrade.records.upgrade?.record.backend_before,
          backendAfter: upgrade.records.upgrade?.record.backend_after,
        },
      ],
    });
    expect(u?.verdicts.map((v) => `${v.id} ${v.status}`)).toEqual([
      "upgrade.holder-connection-survives pass",
      "upgrade.same-backend pass",
      "upgrade.new-version-running pass",
    ]);
    const html = renderUpgrade("kpr · Cilium 1.19.6", u ?? (undefined as never));
    expect(html).toContain("Upgrade leg: Cilium 1.19.6 → 1.19.7");
    expect(html).toContain("No traffic record in this bundle");
    expect(html).not.toContain("changed");
  });

  it("renders a traffic record, the agents' versions and the upgrade's own duration when a bundle has them", () => {
    const record = {
      ...upgrade.records.upgrade?.record,
      durationMs: 41_200,
      agentVersionsAfter: { "cilium-abc12": "1.19.7", "cilium-def34": "1.19.7" },
      traffic: {
        requests: 1200,
        failed: 23,
        longestGapMs: 850,
        failures: Array.from({ length: 23 }, (_, i) => ({
          t: `13:41:0${i % 10}.${i}`,
          error: "connection reset",
        })),
        connections: [
          {
            from: "holder",
            to: "web",
            survived: true,
            backendBefore: "10.0.0.1:8080",
            backendAfter: "10.0.0.1:8080",
          },
          {
            from: "client-2",
            to: "web",
            survived: false,
            backendBefore: "10.0.0.2:8080",
            backendAfter: "10.0.0.3:8080",
          },
        ],
      },
    };
    const u = upgradeView(meta, record, []);
    expect(u).toMatchObject({
      seconds: 41.2,
      secondsFrom: "record",
      traffic: { requests: 1200, failed: 23, longestGapMs: 850 },
      agentVersionsAfter: [
        { agent: "cilium-abc12", version: "1.19.7" },
        { agent: "cilium-def34", version: "1.19.7" },
      ],
    });
    const html = renderUpgrade("kpr", u ?? (undefined as never));
    expect(html).toContain("<dt>took</dt><dd>41.2 s</dd>");
    expect(html).toContain("<dt>requests during it</dt><dd>1200, 23 failed</dd>");
    expect(html).toContain("<dt>longest gap</dt><dd>850 ms</dd>");
    expect(html).toContain("cilium-abc12: 1.19.7, cilium-def34: 1.19.7");
    expect(html).toContain("<summary>23 failed requests</summary>");
    expect(html.match(/<li><code>13:41/g)).toHaveLength(20);
    expect(html).toContain("… 3 more");
    expect(html).toMatch(
      /client-2 → web<\/td><td class="verdict fail">no<\/td>.*<span class="changed">changed<\/span>/,
    );
  });

  it("tolerates what is absent or malformed, and shows nothing for a bundle without an upgrade leg", () => {
    expect(upgradeView(readMeta(join(BUNDLES_DIR, "kpr")), undefined, [])).toBeNull();
    const u = upgradeView(
      meta,
      { traffic: { requests: "many", failures: [null, { t: 1 }] }, agentVersionsAfter: ["1.19.7"] },
      [],
    );
    expect(u).toMatchObject({
      before: "1.19.6",
      after: meta.upgrade?.to,
      traffic: { requests: null, failed: null, failures: [{ t: "1", error: "?" }] },
      agentVersionsAfter: [{ agent: "agent 1", version: "1.19.7" }],
      connections: [],
    });
    expect(() => renderUpgrade("kpr", u ?? (undefined as never))).not.toThrow();
  });
});
