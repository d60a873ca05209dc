/**
 * The report at the sizes it is read at (issue 27): the pages for 2, 6 and 15 shipped bundles, opened in
 * Chromium at 1280 and 600 px. Each page is held to a size, its property matrix to headers that do not stack
 * (no header cell taller than three short lines), to cells that never wrap a value (one line each), to a scroll
 * box that stays inside the page (the page itself never scrolls sideways), and each opens on the section it
 * should: what changed with --compare, else the five claims (the upgrade view of an upgrade among many other
 * bundles follows the matrix; an upgrade report's own opening is in report.browser.test.ts). Screenshots land in results/report/scale-* (not committed) for a person to look at; the figures are
 * printed. Where no browser runs here the tests are skipped with the reason, never passed.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { TOPICS } from "../../suites/topics.ts";
import type { CheckResult } from "../check.ts";
import { findBrowser, launchChromium } from "../testing/browser.ts";
import { shipped } from "../testing/tamper.ts";
import { buildReport, renderReport } from "./html.ts";

const OUT = join(import.meta.dirname, "..", "..", "results", "report");

const SIX = ["1.18/kpr", "1.18/kube-proxy", "1.19/kpr", "1.19/kube-proxy", "1.20/kpr", "1.20/kube-proxy"];
/** Fifteen: every minor and mode, the 1.19 profile runs, four datapath profiles and an upgrade in both modes. */
const FIFTEEN = [
  ...SIX,
  "1.19/baseline-kpr",
  "1.19/drop-kpr",
  "1.19/drop-kube-proxy",
  "profiles/dsr-maglev/kpr",
  "profiles/kp-nftables/kube-proxy",
  "profiles/native-bpf/kpr",
  "profiles/native-bpf/kube-proxy",
  "upgrade-1.19-1.20/kpr",
  "upgrade-1.19-1.20/kube-proxy",
];

interface Case {
  name: string;
  bundles: string[];
  compare?: [string, string];
  /** The page's size limit in bytes (issue 27: six full bundles under ~1.5 MB; they took 5.4 MB). */
  maxBytes: number;
  /** The first section after the page's header. */
  first: string;
  /** The page's height limit at 1280 px (six bundles took 61,000 px). */
  maxHeight: number;
}

const CASES: Case[] = [
  {
    name: "2",
    bundles: ["1.20/kpr", "1.20/kube-proxy"],
    compare: ["1.19/kpr", "1.20/kpr"],
    maxBytes: 600_000,
    first: "compare",
    maxHeight: 14_000,
  },
  { name: "6", bundles: SIX, maxBytes: 1_500_000, first: "headline", maxHeight: 14_000 },
  { name: "15", bundles: FIFTEEN, maxBytes: 3_000_000, first: "headline", maxHeight: 20_000 },
];

/** No header cell of the matrix taller than this (three lines of 12 px text and the padding): none stacks. */
const MAX_HEADER_PX = 64;
/** A cell is one line: its mark and its value, never wrapped. */
const MAX_CELL_PX = 26;

interface Pages {
  context: BrowserContext | null;
  why: string;
  requests: string[];
  pages: Map<string, { file: string; bytes: number }>;
}

const test = it.extend<{ pages: Pages }>({
  pages: [
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
    async ({}, use) => {
      mkdirSync(OUT, { recursive: true });
      const pages = new Map<string, { file: string; bytes: number }>();
      // each bundle judged once for the three pages
      const judged = new Map<string, CheckResult>();
      for (const c of CASES) {
        const page = renderReport(
          await buildReport(c.bundles.map(shipped), TOPICS, {
            judged,
            ...(c.compare ? { compare: [shipped(c.compare[0]), shipped(c.compare[1])] } : {}),
          }),
        );
        const file = join(OUT, `scale-${c.name}.html`);
        writeFileSync(file, page);
        pages.set(c.name, { file, bytes: Buffer.byteLength(page) });
      }
      const found = findBrowser();
      const profile = mkdtempSync(join(tmpdir(), "dpc-chromium-"));
      const requests: string[] = [];
      const { context, why } = found.path
        ? await launchChromium(found.path, profile, requests)
        : { context: null, why: found.why ?? "" };
      try {
        await use({ context, why, requests, pages });
      } finally {
        await context?.close();
        rmSync(profile, { recursive: true, force: true });
      }
    },
    { scope: "file" },
  ],
});

/** What the layout tests read of a page at one width. */
function layout(page: Page) {
  return page.evaluate(() => {
    const box = (e: Element) => e.getBoundingClientRect();
    const wrap = document.querySelector(".matrix-wrap") as HTMLElement;
    const header = document.querySelector("main > header") as HTMLElement;
    let first = header.nextElementSibling;
    while (first && first.tagName !== "SECTION") first = first.nextElementSibling;
    return {
      height: document.documentElement.scrollHeight,
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
      first: first?.id ?? "",
      wrapRight: box(wrap).right,
      wrapScroll: wrap.scrollWidth > wrap.clientWidth,
      headers: [...document.querySelectorAll("table.props thead th.bh")].map((th) => ({
        text: th.textContent ?? "",
        height: Math.round(box(th).height),
      })),
      cells: [...document.querySelectorAll("table.props button.m")].map((b) => Math.round(box(b).height)),
      columns: document.querySelectorAll("table.props thead th.bh").length,
      rows: document.querySelectorAll("table.props tbody.prop").length,
    };
  });
}

describe("the report at 2, 6 and 15 bundles, 1280 and 600 px", { timeout: 300_000 }, () => {
  for (const c of CASES)
    test(`${c.name} bundles: under its size, opens on ${c.first}, the matrix readable at both widths`, async ({
      pages,
      skip,
    }) => {
      const made = pages.pages.get(c.name) as { file: string; bytes: number };
      expect(made.bytes, `${c.name} bundles: bytes`).toBeLessThan(c.maxBytes);
      if (!pages.context) return skip(pages.why);
      const page = await pages.context.newPage();
      await page.goto(pathToFileURL(made.file).href);
      await page.waitForSelector("html[data-ready]");
      for (const width of [1280, 600]) {
        await page.setViewportSize({ width, height: 900 });
        await page.evaluate(() => window.scrollTo(0, 0));
        const l = await layout(page);
        const at = `${c.name} bundles at ${width} px`;
        console.log(`${at}: ${made.bytes} bytes, ${l.height} px tall, ${l.rows} rows × ${l.columns} columns`);
        expect(l.first, at).toBe(c.first);
        expect(l.columns, at).toBe(c.bundles.length);
        expect(l.rows, at).toBe(TOPICS.flatMap((t) => t.properties).length);
        // the page never scrolls sideways; the matrix's box stays inside it (scrolling within itself when wide)
        expect(l.scrollWidth, at).toBeLessThanOrEqual(l.clientWidth);
        expect(l.wrapRight, at).toBeLessThanOrEqual(l.clientWidth + 1);
        const tall = l.headers.filter((h) => h.height > MAX_HEADER_PX);
        expect(tall, at).toEqual([]);
        expect(Math.max(...l.cells), at).toBeLessThanOrEqual(MAX_CELL_PX);
        if (width === 1280) expect(l.height, at).toBeLessThan(c.maxHeight);
        await page.screenshot({ path: join(OUT, `scale-${c.name}-${width}.png`) });
        await page.locator("#properties").scrollIntoViewIfNeeded();
        await page.evaluate(() => document.getElementById("properties")?.scrollIntoView());
        await page.screenshot({ path: join(OUT, `scale-${c.name}-${width}-matrix.png`) });
      }
      await page.close();
      expect(pages.requests.filter((u) => !u.startsWith("file://"))).toEqual([]);
    });

  test("15 bundles at 600 px: a cell at the far right opens its verdict inside the matrix's visible box", async ({
    pages,
    skip,
  }) => {
    if (!pages.context) return skip(pages.why);
    const page = await pages.context.newPage();
    await page.setViewportSize({ width: 600, height: 900 });
    await page.goto(pathToFileURL((pages.pages.get("15") as { file: string }).file).href);
    await page.waitForSelector("html[data-ready]");
    const cell = page.locator('tbody[data-id="ghost.fails-fast"] button.m').last();
    await cell.scrollIntoViewIfNeeded();
    await cell.click();
    const block = page.locator("#ev-ghost-fails-fast .vd");
    expect(await block.isVisible()).toBe(true);
    expect(await block.locator("h4").textContent()).toMatch(/^kube-proxy · Cilium 1\.19\.7 → 1\.20\.2: /);
    const fit = await page.evaluate(() => {
      const w = (document.querySelector(".matrix-wrap") as HTMLElement).getBoundingClientRect();
      const b = (document.querySelector("#ev-ghost-fails-fast .vd") as HTMLElement).getBoundingClientRect();
      return { left: b.left >= w.left - 1, right: b.right <= w.right + 1, width: b.width };
    });
    expect(fit).toEqual({ left: true, right: true, width: expect.any(Number) });
    expect(fit.width).toBeGreaterThan(300);
    await block.screenshot({ path: join(OUT, "scale-15-600-verdict.png") });
    await page.close();
  });
});
