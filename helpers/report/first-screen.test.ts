/**
 * The report's first screen and what makes 35 bundles readable (issue 37), without a browser: column labels, their
 * groups, the verdict banner, the run card's wall time, the claims in each mode's own words. The layout itself
 * (first screen, overlaps, clipping) is scale.browser.test.ts's.
 */
import { describe, expect, it } from "vitest";
import { main } from "../../cli/main.ts";
import { TOPICS } from "../../suites/topics.ts";
import { bundlesOf, readMeta } from "../bundle/read.ts";
import { checkBundle } from "../check.ts";
import type { Verdict } from "../properties/judge.ts";
import { BUNDLES_DIR, shipped } from "../testing/tamper.ts";
import { CSS } from "./assets.ts";
import { leafLines } from "./column-head.ts";
import { HEADLINE, headlineCell, modeWords } from "./headline.ts";
import { buildReport, renderReport } from "./html.ts";
import { columnName, columnNames, groupedOrder } from "./labels.ts";
import { renderMatrix, rowDiffers } from "./matrix.ts";
import { phaseRows } from "./runs-table.ts";
import { renderUpgrade } from "./upgrade.ts";
import { gateWord, isoTimes, renderBanner, rowId } from "./verdict.ts";

describe("column labels: version, mode, profile, what the folder adds, provider", () => {
  it("every shipped bundle has its own label (four read alike before), grouped by version, upgrades with their legs", () => {
    const cols = bundlesOf([BUNDLES_DIR]).map((dir) => ({ dir, meta: readMeta(dir) }));
    expect(cols.length).toBeGreaterThanOrEqual(35);
    const names = columnNames(cols);
    const labels = names.map((n) => n.label);
    expect(new Set(labels).size).toBe(labels.length);
    // no label needed the folder to tell it apart
    expect(labels.filter((l) => l.includes("("))).toEqual([]);
    const at = (rel: string) => names[cols.findIndex((c) => c.dir === shipped(rel))]?.label;
    expect(at("profiles/dsr-maglev/existing-kpr")).toBe("1.20.2 / kpr / dsr-maglev · existing");
    expect(at("profiles/dsr-maglev/kpr")).toBe("1.20.2 / kpr / dsr-maglev");
    expect(at("1.19/drop-kube-proxy")).toBe("1.19.7 / kube-proxy / drop");
    expect(at("existing/kpr")).toBe("1.19.7 / kpr / existing");
    expect(at("1.20/kube-proxy")).toBe("1.20.2 / kube-proxy");
    expect(at("upgrade-1.19-1.20/kpr")).toBe("1.19.7 → 1.20.2 / kpr");
    expect(at("upgrade-1.19-1.20/kpr/after-rollback")).toBe("1.19.7 / kpr / after rollback from 1.20.2");
    // the groups: versions ascending, then each upgrade with its legs
    const order = groupedOrder(names).map((i) => names[i]?.group);
    expect([...new Set(order)]).toEqual([
      "1.18.11",
      "1.19.6",
      "1.19.7",
      "1.20.2",
      "1.18.11 → 1.19.7",
      "1.19.7 → 1.20.2",
    ]);
    // every recording of the path (the second: run 2, …), each with its two legs, in its group
    const path = cols.filter((c) => c.dir.includes("/upgrade-1.19-1.20/")).length;
    expect(path).toBeGreaterThanOrEqual(9);
    expect(order.filter((g) => g === "1.19.7 → 1.20.2")).toHaveLength(path);
    expect(at("upgrade-1.19-1.20/kpr-2/after-upgrade")).toBe(
      "1.20.2 / kpr / run 2 · after upgrade from 1.19.7",
    );
  });

  it("the columns of a group by mode, side by side; the header reads group, mode, then what tells a column apart", () => {
    const cols = bundlesOf([BUNDLES_DIR]).map((dir) => ({ dir, meta: readMeta(dir) }));
    const names = columnNames(cols);
    const order = groupedOrder(names).map((i) => names[i] as (typeof names)[number]);
    // in each group, each mode's columns are one run (one header cell spans them)
    const runs = order.map((n) => `${n.group}|${n.head[1]}`).filter((k, i, a) => k !== a[i - 1]);
    expect(new Set(runs).size).toBe(runs.length);
    const at = (rel: string) =>
      names[cols.findIndex((c) => c.dir === shipped(rel))] as (typeof names)[number];
    expect(leafLines(at("1.20/kpr"))).toEqual(["default"]);
    expect(leafLines(at("profiles/dsr-maglev/existing-kpr"))).toEqual(["dsr-maglev · existing"]);
    expect(leafLines(at("upgrade-1.19-1.20/kpr"))).toEqual(["upgrade"]);
    // a leg's version is not its group's: it is said
    expect(leafLines(at("upgrade-1.19-1.20/kpr/after-rollback"))).toEqual([
      "1.19.7",
      "after rollback from 1.20.2",
    ]);
    const m = renderMatrix(
      order.slice(0, 4).map((n) => ({
        label: n.label,
        head: n.head,
        group: n.group,
        mode: n.head[1] as string,
        verdicts: new Map(),
      })),
      TOPICS.flatMap((t) => t.properties),
      { differsFirst: true },
    ).html.text;
    expect(m).toContain('<tr class="groups"><th scope="col" class="corner" rowspan="3">property</th>');
    expect(m).toMatch(/<tr class="modes"><th scope="colgroup" class="gm g-all" colspan="\d+">kpr<\/th>/);
    expect(m).toContain('<tr class="leaves"><th scope="col" class="bh c0"');
  });

  it("what differs says how many rows and columns it hides, and links to the full matrix", () => {
    const verdicts = (status: Verdict["status"]) =>
      new Map(
        TOPICS.flatMap((t) => t.properties)
          .slice(0, 3)
          .map((p, i) => [
            p.id,
            { id: p.id, status: i === 0 ? status : "pass", observed: "x", expected: "x" } as Verdict,
          ]),
      );
    const props = TOPICS.flatMap((t) => t.properties).slice(0, 3);
    const m = renderMatrix(
      [
        { label: "a", head: ["1.20.2", "kpr", ""], group: "1.20.2", mode: "kpr", verdicts: verdicts("fail") },
        {
          label: "b",
          head: ["1.20.2", "kpr", "x"],
          group: "1.20.2",
          mode: "kpr",
          verdicts: verdicts("pass"),
        },
        {
          label: "c",
          head: ["1.20.2", "kube-proxy", ""],
          group: "1.20.2",
          mode: "kube-proxy",
          verdicts: verdicts("pass"),
        },
      ],
      props,
      { differsFirst: true },
    );
    expect(m.html.text).toContain(
      'Showing the 1 of 3 properties that differ, in the 1 of 3 bundles where they do: 2 rows and 2 columns hidden (held, or skipped, alike everywhere). <a href="#properties-all" class="show-all" data-filter-link="all">Show the full matrix: 3 properties × 3 bundles</a>',
    );
    expect(m.html.text).toContain('id="properties-all"');
    // a group whose first column what differs hides: its line on the left of its first shown column, in that view
    const g = renderMatrix(
      [
        { label: "a", head: ["1.19.7", "kpr", ""], group: "1.19.7", mode: "kpr", verdicts: verdicts("fail") },
        { label: "b", head: ["1.20.2", "kpr", ""], group: "1.20.2", mode: "kpr", verdicts: verdicts("pass") },
        {
          label: "c",
          head: ["1.20.2", "kpr", "x"],
          group: "1.20.2",
          mode: "kpr",
          verdicts: verdicts("fail"),
        },
      ],
      props,
      { differsFirst: true },
    ).html.text;
    expect(g).toContain('<th scope="col" class="bh c1 gs"');
    expect(g).toContain('<th scope="col" class="bh c2 gsd"');
    expect(g).toContain('<th scope="colgroup" class="g g-diff gs" colspan="1">1.20.2</th>');
    // the hidden columns, by the page's style, in that view only
    expect(m.css).toBe(
      'table.props[data-filter="differs"] .c1, table.props[data-filter="differs"] .c2 { display: none; }\n',
    );
  });

  it("two bundles of one configuration are told apart by their folder", () => {
    const meta = readMeta(shipped("1.20/kpr"));
    const names = columnNames([
      { dir: "/a/run-1/kpr", meta },
      { dir: "/a/run-2/kpr", meta },
    ]);
    expect(names.map((n) => n.label)).toEqual(["1.20.2 / kpr (run-1/kpr)", "1.20.2 / kpr (run-2/kpr)"]);
    expect(columnName(meta, "/x/kpr").head).toEqual(["1.20.2", "kpr", ""]);
  });

  it("a minor the suite has not declared: the variant ends with what its verdicts assumed (issue 38)", () => {
    const meta = { ...readMeta(shipped("1.20/kpr")), cilium: "1.21.0", ciliumMinor: "1.21" };
    const n = columnName(meta, "/x/kpr");
    expect(n.label).toBe("1.21.0 / kpr / assumed from 1.20");
    expect(n.head).toEqual(["1.21.0", "kpr", "assumed from 1.20"]);
    expect(n.group).toBe("1.21.0");
    const dsr = readMeta(shipped("profiles/dsr-maglev/kpr"));
    expect(columnName({ ...dsr, cilium: "1.21.0" }, "/x/profiles/dsr-maglev/kpr").label).toBe(
      "1.21.0 / kpr / dsr-maglev · assumed from 1.20",
    );
  });
});

const v = (id: string, status: Verdict["status"], expected = "0", observed = "1") =>
  ({ id, status, expected, observed, evidence: [], message: "", claim: id }) as unknown as Verdict;

describe("the verdict banner", () => {
  it('"n failed, k known issues", the failures named in red with expected and observed, each a link to its row', () => {
    const out = renderBanner(
      [
        { label: "1.20.2 / kpr", verdicts: [v("a.one", "fail", "0", "<1>"), v("b.two", "pass")] },
        { label: "1.20.2 / kube-proxy", verdicts: [v("c.three", "known-issue"), v("d", "skip")] },
      ],
      [],
    ).text;
    expect(out).toMatch(/^<section id="verdict" class="banner"/);
    expect(out).toContain(
      '<div class="counts v-fail"><p class="gate-title"><span class="word v-fail">1 failed, 1 known issue</span>',
    );
    expect(out).toContain("in 2 bundles (1 bundle with a failure): 1 passed, 1 skipped");
    expect(out).toContain(
      `<a href="#${rowId("a.one")}"><code>a.one</code></a> in <b>1.20.2 / kpr</b>: expected 0, observed &lt;1&gt;`,
    );
    expect(out).toContain(`<a href="#${rowId("c.three")}"><code>c.three</code></a>`);
    const green = renderBanner([{ label: "x", verdicts: [v("b", "pass")] }], []).text;
    expect(green).toContain('<span class="word v-pass">0 failed, 0 known issues</span>');
  });

  it("a change in a new minor is a failure: counted, red, named with what it was assumed from (issue 38)", () => {
    const changed = { ...v("program.policy-map", "changed", "v3", "v2"), assumedFrom: "1.20" } as Verdict;
    const out = renderBanner(
      [
        {
          label: "1.21.0 / kpr / assumed from 1.20",
          verdicts: [changed, v("b", "pass"), v("c", "known-issue")],
        },
      ],
      [],
    ).text;
    expect(out).toContain('<div class="counts v-fail"');
    expect(out).toContain('<span class="word v-fail">1 failed, 1 known issue</span>');
    expect(out).toContain("1 of the failed changed in the new minor");
    expect(out).toContain(
      `<a href="#${rowId("program.policy-map")}"><code>program.policy-map</code></a> in <b>1.21.0 / kpr / assumed from 1.20</b>: changed in the new minor: expected v3 (assumed from 1.20), observed v2`,
    );
    // the matrix: what differs and Failed list it; the upgrade view gives expected and observed as for a failure
    expect(rowDiffers(["changed", "pass"])).toBe(true);
    expect(rowDiffers(["changed"])).toBe(true);
    expect(rowDiffers(["pass", "skip", "na"])).toBe(false);
    const m = renderMatrix(
      [
        { label: "a", head: ["1.21.0", "kpr", ""], mode: "kpr", verdicts: new Map([[changed.id, changed]]) },
        { label: "b", head: ["1.20.2", "kpr", ""], mode: "kpr", verdicts: new Map() },
      ],
      TOPICS.flatMap((t) => t.properties).filter((p) => p.id === "program.policy-map"),
      { differsFirst: true },
    ).html.text;
    expect(m).toContain("Failed (1)");
    expect(m).toContain("What differs (1)");
    expect(m).toMatch(/<tbody class="prop"[^>]*data-differs[^>]*data-fail/);
    expect(m).toContain("Δ changed in the new minor");
    const up = renderUpgrade("x", null, [{ ...changed, topic: "upgrade" } as Verdict], "BROKEN").text;
    expect(up).toContain(
      '<span class="verdict fail">expected v3, observed v2 (changed in the new minor)</span>',
    );
  });

  it("an upgrade's gate comes first with the word `upgrade` answers, HELD, BROKEN or INCONCLUSIVE", async () => {
    const dir = shipped("upgrade-1.19-1.20/kpr");
    const input = await buildReport([dir], TOPICS);
    expect(input.gates?.map((g) => g.column)).toEqual([0]);
    const g = input.gates?.[0]?.gate;
    const page = renderReport(input);
    const word = gateWord(g as NonNullable<typeof g>);
    expect(page).toContain(`<div class="gate v-`);
    expect(page).toMatch(
      new RegExp(`data-word="${word}"[^>]*><p class="gate-title"><span class="word v-\\w+">${word}</span>`),
    );
    // the same answer, in the same words, as `datapath-conformance upgrade BUNDLE`
    let out = "";
    await main(["upgrade", dir], {
      out: (t: string) => {
        out += t;
      },
      err: () => {},
      readStdin: async () => "",
    });
    expect(out.split("\n")[0]).toBe(`${g?.headline}`);
    expect(page.indexOf('id="verdict"')).toBeLessThan(page.indexOf('id="upgrades"'));
    expect(page.indexOf('id="upgrades"')).toBeLessThan(page.indexOf('id="headline"'));
    expect(gateWord({ word: "INCONCLUSIVE" })).toBe("INCONCLUSIVE");
    expect(gateWord({ word: "REGRESSED" })).toBe("REGRESSED");
  });

  it("a gate that held says HELD, names the known issues new on the target and what the rollback left; BROKEN names what broke", () => {
    const held = {
      word: "HELD" as const,
      held: true,
      broken: [],
      inconclusive: [],
      unjudged: [],
      leftovers: [{ node: "w1", maps: ["cilium_lb4_new"] }],
      newKnownIssues: [{ id: "ghost.fails-fast", detail: "curl hangs (PR 48578)" }],
      knownUnjudgedBefore: [],
      knownOfBoth: [],
      goneKnownIssues: [],
      exitCode: 0 as const,
      headline:
        "Upgrade Cilium 1.19.7 → 1.20.2 → 1.19.7 (rollback), kpr: HELD, with 1 known issue(s) new on the target",
      summary: "" as never,
      text: "" as never,
    };
    const out = renderBanner(
      [{ label: "1.19.7 → 1.20.2 / kpr", verdicts: [] }],
      [{ column: 0, gate: held }],
    ).text;
    expect(out).toContain('<div class="gate v-known" data-word="HELD"');
    expect(out).toContain("<code>ghost.fails-fast</code>: curl hangs (PR 48578)");
    expect(out).toContain("w1: cilium_lb4_new");
    // what the rollback left is its own neutral list, never the gate's red one, even in a gate that broke
    expect(out).toContain('<ul class="gate-list left"><li>w1: cilium_lb4_new</li></ul>');
    const red = renderBanner(
      [{ label: "x", verdicts: [] }],
      [{ column: 0, gate: { ...held, word: "REGRESSED" as const, held: false } }],
    ).text;
    expect(red).toContain('<div class="gate v-fail" data-word="REGRESSED"');
    expect(red).toContain('<ul class="gate-list left"><li>w1: cilium_lb4_new</li></ul>');
    expect(CSS).toContain(".gate.v-fail .gate-list:not(.left) li { color: var(--fail); }");
    const broken = {
      ...held,
      word: "BROKEN" as const,
      held: false,
      leftovers: [],
      newKnownIssues: [],
      knownUnjudgedBefore: [],
      knownOfBoth: [],
      broken: [
        {
          what: "upgrade",
          id: "upgrade.no-failed-requests",
          expected: "0",
          observed: "2",
          line: "2 requests started between 1796321262433 and 1796321340829",
        },
      ],
      headline: "Upgrade Cilium 1.19.7 → 1.20.2, kpr: BROKEN: 1 thing(s) broke",
    };
    const b = renderBanner([{ label: "x", verdicts: [] }], [{ column: 0, gate: broken }]).text;
    expect(b).toContain('<div class="gate v-fail" data-word="BROKEN"');
    expect(b).toContain("<code>upgrade.no-failed-requests</code> expected 0, observed 2");
    expect(b).toContain("started between 2026-12-03T18:07:42.433Z and 2026-12-03T18:09:00.829Z");
  });

  it("epoch milliseconds a recorded sentence holds are shown as ISO timestamps", () => {
    expect(isoTimes("2 requests started between 1796321262433 and 1796321340829 (the leg)")).toBe(
      "2 requests started between 2026-12-03T18:07:42.433Z and 2026-12-03T18:09:00.829Z (the leg)",
    );
    expect(isoTimes("1796321262433 ms")).toBe("1796321262433 ms");
  });
});

describe("the run card's timings add up", () => {
  it("wall time: the specs by their wall time with each topic nested, the agents' start nested in Cilium ready", () => {
    const { rows, total } = phaseRows(readMeta(shipped("1.20/kpr")).phases);
    expect(rows.map((r) => r.name)).toEqual([
      "create cluster",
      "install Cilium",
      "Cilium ready",
      "drop baseline",
      "specs (wall)",
    ]);
    expect(rows.find((r) => r.name === "Cilium ready")?.within.map((w) => w.name)).toEqual([
      "agents' own start (max)",
    ]);
    expect(rows.find((r) => r.name === "specs (wall)")?.within.length).toBeGreaterThan(10);
    // 65 + 5.6 + 92.5 + 1.8 + 159 (run lab-20261206-011154; the sum of every phase would count the nested ones twice)
    expect(total).toBeCloseTo(323.9, 5);
  });

  it("topics run one after another (no wall time recorded): their sum, nested under it", () => {
    const { rows, total } = phaseRows({ "create cluster": 10, "spec a": 2, "spec b": 3 });
    expect(rows.map((r) => [r.name, r.seconds])).toEqual([
      ["create cluster", 10],
      ["specs (one after another)", 5],
    ]);
    expect(total).toBe(15);
  });
});

describe("the five claims in each mode's own words", () => {
  it("a kube-proxy column does not read 'No kube-proxy rules ✔ pass': its own claim is shown, and a version's known issue in its words", async () => {
    const kp = await checkBundle(shipped("1.20/kube-proxy"), TOPICS);
    const claim = HEADLINE.find((h) => h.key === "no-kube-proxy-rules") as (typeof HEADLINE)[number];
    expect(modeWords(claim, "kube-proxy")).toMatch(/^kube-proxy's rules are there/);
    expect(modeWords(claim, "kpr")).toBe("No kube-proxy rules");
    const socket = HEADLINE.find((h) => h.key === "socket-at-pod-ip") as (typeof HEADLINE)[number];
    expect(modeWords(socket, "kube-proxy")).toMatch(/stays at the ClusterIP/);
    const ghost = HEADLINE.find((h) => h.key === "ghost-fails-fast") as (typeof HEADLINE)[number];
    const cell = headlineCell(ghost, (id) => kp.verdicts.find((x) => x.id === id));
    expect(cell.status).toBe("known-issue");
    expect(cell.own).toContain("hangs until its 5 s limit");
    const page = renderReport(await buildReport([shipped("1.20/kpr"), shipped("1.20/kube-proxy")], TOPICS));
    const row = page.slice(
      page.indexOf('data-claim="no-kube-proxy-rules"'),
      page.indexOf('data-claim="backend-slots"'),
    );
    const kpCell = row.slice(row.indexOf('data-mode="kube-proxy"'));
    expect(kpCell).toContain("kube-proxy's rules are there");
    expect(page).toContain("1.20.2: curl to the ghost ClusterIP hangs until its 5 s limit");
  });
});
