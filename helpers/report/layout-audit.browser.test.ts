/**
 * The layout audit (helpers/report/layout-audit.ts) can fail: each check rejects a small bad page written by us
 * for it (text over text, a pill spilling out of its card, a cell's text cut, a chart's text outside its picture,
 * a page wider than the window, a wide table without its own scroll box or sticky first column, a heading, a
 * legend entry and a column said twice), and passes a page that does each of those things right. The pages are
 * opened in Chromium at 1280 px; where none runs here the tests are skipped with the reason, never passed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext } from "playwright-core";
import { describe, expect, it } from "vitest";
import { findBrowser, launchChromium } from "../testing/browser.ts";
import { type AuditCheck, audit } from "./layout-audit.ts";

const page = (body: string, style = "") =>
  `<!doctype html><html><head><meta charset="utf-8"><style>body { margin: 0; font: 14px sans-serif; } ${style}</style></head><body>${body}</body></html>`;

/** Bad pages, written by us (not the report's output), each for one check, with what it must be told apart by. */
const BAD: { name: string; html: string; check: AuditCheck; says: RegExp }[] = [
  {
    name: "two labels drawn over each other",
    html: page(
      `<div style="position: relative; height: 40px"><span style="position: absolute; left: 10px">1.20.2 / kpr</span><span style="position: absolute; left: 14px">1.20.2 / kube-proxy</span></div>`,
    ),
    check: "overlap",
    says: /"1\.20\.2 \/ kpr" × .*"1\.20\.2 \/ kube-proxy"/,
  },
  {
    name: "a pill over a heading",
    html: page(
      `<h2 style="margin: 0">The runs</h2><span class="pill" style="position: relative; top: -22px; left: 10px; border: 1px solid; border-radius: 9px; padding: 0 6px">12 passed</span>`,
    ),
    check: "overlap",
    says: /"The runs" × .*"12 passed"/,
  },
  {
    name: "a pill spilling out of its card",
    html: page(
      `<div class="card" style="width: 160px; border: 1px solid; padding: 4px"><span class="pill" style="display: inline-block; white-space: nowrap; border: 1px solid; border-radius: 9px">102 passed, 0 failed, 3 known issues, 48 skipped</span></div>`,
    ),
    check: "clipped",
    says: /div\.card .*spills out/,
  },
  {
    name: "a cell's text cut without an ellipsis",
    html: page(
      `<div class="value" style="width: 80px; overflow: hidden; white-space: nowrap">[0.000858,0.000873,0.000912]</div>`,
    ),
    check: "clipped",
    says: /div\.value .*\(cut\)/,
  },
  {
    name: "a chart's label outside its picture",
    html: page(
      `<svg width="200" height="60" viewBox="0 0 200 60"><text x="150" y="30" font-size="12">1.20.2 / kpr / dsr-maglev · existing</text></svg>`,
    ),
    check: "clipped",
    says: /svg text "1\.20\.2 \/ kpr \/ dsr-maglev · existing" outside its picture/,
  },
  {
    name: "a page wider than the window",
    html: page(`<div style="width: 3000px">wide</div>`),
    check: "wide-page",
    says: /the page is 3000 px wide in a 1280 px window/,
  },
  {
    name: "a wide table in a scroll box without a sticky first column",
    html: page(
      `<div style="overflow-x: auto"><table class="props" style="width: 3000px"><thead><tr><th>property</th><th>a</th></tr></thead><tbody><tr><th>ghost.errno</th><td>EPERM</td></tr></tbody></table></div>`,
    ),
    check: "wide-table",
    says: /table\.props: 3000 px in \d+ px, a scroll box, no sticky first column/,
  },
  {
    name: "a wide table without a scroll box",
    html: page(
      `<div style="overflow: hidden"><table class="claims" style="width: 3000px"><tbody><tr><th style="position: sticky; left: 0">claim</th><td>x</td></tr></tbody></table></div>`,
    ),
    check: "wide-table",
    says: /table\.claims: 3000 px in \d+ px, no scroll box of its own, a sticky first column/,
  },
  {
    name: "a heading said twice",
    html: page(`<h2>Measurements</h2><p>one</p><h2>Measurements</h2>`),
    check: "duplicate",
    says: /headings: "Measurements" 2 times/,
  },
  {
    name: "a legend entry said twice",
    html: page(
      `<figure><svg width="300" height="80"><text x="4" y="14">Rules</text><g class="legend-item"><text x="4" y="40">1.20.2 / kpr</text></g><g class="legend-item"><text x="4" y="60">1.20.2 / kpr</text></g></svg></figure>`,
    ),
    check: "duplicate",
    says: /legend of "Rules.*": "1\.20\.2 \/ kpr" 2 times/,
  },
  {
    name: "two columns whose headers read the same",
    html: page(
      `<table class="props"><thead><tr><th rowspan="2">property</th><th colspan="2">1.20.2</th></tr><tr><th>kpr</th><th>kpr</th></tr></thead><tbody><tr><th>x</th><td>1</td><td>2</td></tr></tbody></table>`,
    ),
    check: "duplicate",
    says: /columns of table\.props: "1\.20\.2 \/ kpr" 2 times/,
  },
];

/** A page that does each right: what the audit must pass. */
const GOOD = page(
  `<h2>Properties</h2>
<div style="overflow-x: auto"><table class="props" style="border-collapse: separate"><thead><tr><th class="corner" rowspan="2" style="position: sticky; left: 0; background: #fff">property</th><th colspan="2">1.20.2</th></tr><tr><th>kpr</th><th>kube-proxy</th></tr></thead>
<tbody><tr><th style="position: sticky; left: 0; background: #fff; min-width: 200px">ghost.errno</th><td style="min-width: 1600px"><span style="display: inline-block; max-width: 90px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap">[0.000858,0.000873,0.000912]</span></td><td>EPERM</td></tr></tbody></table></div>
<h2>The runs</h2><div style="width: 220px; border: 1px solid; padding: 4px"><b>1.18.11 / kpr</b> <span style="display: block; overflow-wrap: anywhere">102 passed, 0 failed, 3 known issues, 48 skipped</span></div>
<details><summary>which 24 bundles</summary><div style="position: relative"><span style="position: absolute">a</span><span style="position: absolute">b</span></div><h2>Properties</h2></details>
<h2>Measurements</h2><figure><svg width="300" height="80"><text x="4" y="14">Rules</text><g class="legend-item"><text x="4" y="40">default</text></g><g class="legend-item"><text x="4" y="60">existing</text></g></svg></figure>`,
);

interface Browser {
  context: BrowserContext | null;
  why: string;
}

const test = it.extend<{ browser: Browser }>({
  browser: [
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
    async ({}, use) => {
      const found = findBrowser();
      if (!found.path) {
        await use({ context: null, why: found.why ?? "no browser" });
        return;
      }
      const profile = mkdtempSync(join(tmpdir(), "dpc-chromium-"));
      const { context, why } = await launchChromium(found.path, profile, []);
      try {
        await use({ context, why });
      } finally {
        await context?.close();
        rmSync(profile, { recursive: true, force: true });
      }
    },
    { scope: "file" },
  ],
});

async function findings(context: BrowserContext, html: string) {
  const p = await context.newPage();
  await p.setViewportSize({ width: 1280, height: 900 });
  await p.setContent(html);
  const f = await audit(p);
  await p.close();
  return f;
}

describe(
  "the layout audit rejects each bad page written for it, and passes a good one",
  { timeout: 60_000 },
  () => {
    for (const b of BAD)
      test(`${b.check}: ${b.name}`, async ({ browser, skip }) => {
        if (!browser.context) return skip(browser.why);
        const f = await findings(browser.context, b.html);
        const mine = f.filter((x) => x.check === b.check);
        expect(mine.map((x) => x.what).join("\n"), JSON.stringify(f)).toMatch(b.says);
      });

    test("a page that does each right: no finding (a closed <details> is not drawn, an ellipsis is a cut on purpose)", async ({
      browser,
      skip,
    }) => {
      if (!browser.context) return skip(browser.why);
      expect(await findings(browser.context, GOOD)).toEqual([]);
    });
  },
);
