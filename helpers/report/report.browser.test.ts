import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { TOPICS } from "../../suites/topics.ts";
import { checkBundle } from "../check.ts";
import { launchChromium } from "../testing/browser.ts";
import { BundleCopies, KUBE_SVC_LINE, shipped } from "../testing/tamper.ts";
import { HEADLINE } from "./headline.ts";
import { buildReport, renderReport } from "./html.ts";
import { cellKind } from "./matrix.ts";

/**
 * The report in a real browser: Debian's chromium driven by playwright-core, headless, with a fresh profile.
 * Where Chromium cannot start here the tests are skipped with the reason, never passed.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const OUT = join(import.meta.dirname, "..", "..", "results", "report");

/** What the tests share, made once per file and cleaned up after it (a file-scoped fixture). */
interface Browser {
  /** null when Chromium cannot run here; `why` says why. */
  context: BrowserContext | null;
  why: string;
  requests: string[];
  shippedPage: string;
  tamperedPage: string;
  tamperedDir: string;
  /** The upgrade bundle beside a partial one (the drop profile's). */
  upgradePage: string;
  open(file: string): Promise<Page>;
}

const test = it.extend<{ browser: Browser }>({
  browser: [
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
    async ({}, use) => {
      // no browser: every test here skips, saying why, so no page is built for them
      if (!existsSync(CHROMIUM)) {
        const none = async (): Promise<Page> => {
          throw new Error("no browser");
        };
        await use({
          context: null,
          why: `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`,
          requests: [],
          shippedPage: "",
          tamperedPage: "",
          tamperedDir: "",
          upgradePage: "",
          open: none,
        });
        return;
      }
      mkdirSync(OUT, { recursive: true });
      const copies = new BundleCopies();
      const profile = mkdtempSync(join(tmpdir(), "dpc-chromium-"));
      const shippedPage = join(OUT, "report.html");
      writeFileSync(
        shippedPage,
        renderReport(await buildReport([shipped("kpr"), shipped("kube-proxy")], TOPICS)),
      );
      // a kpr bundle with one kube-proxy rule added: iptables.kube-svc-lines (and two others) fail there
      const tamperedDir = copies.tampered("kpr", "iptables", ["iptables-save"], (t) =>
        t.replace("COMMIT", `${KUBE_SVC_LINE}\nCOMMIT`),
      );
      const tamperedPage = join(OUT, "report-failing.html");
      writeFileSync(
        tamperedPage,
        renderReport(await buildReport([tamperedDir, shipped("kube-proxy")], TOPICS)),
      );
      const upgradePage = join(OUT, "report-upgrade.html");
      writeFileSync(
        upgradePage,
        renderReport(await buildReport([shipped("upgrade-1.19-1.20/kpr"), shipped("drop-kpr")], TOPICS)),
      );
      const requests: string[] = [];
      const { context, why } = await launchChromium(CHROMIUM, profile, requests);
      const open = async (file: string) => {
        const page = await (context as BrowserContext).newPage();
        await page.goto(pathToFileURL(file).href);
        // the page's script has decoded the embedded evidence
        await page.waitForSelector("html[data-ready]");
        return page;
      };
      try {
        await use({ context, why, requests, shippedPage, tamperedPage, tamperedDir, upgradePage, open });
      } finally {
        await context?.close();
        rmSync(profile, { recursive: true, force: true });
        copies.cleanup();
      }
    },
    { scope: "file" },
  ],
});

const visibleRows = (page: Page) =>
  page.$$eval("tbody.prop", (bs) =>
    bs.filter((b) => (b as HTMLElement).offsetParent !== null).map((b) => (b as HTMLElement).dataset.id),
  );

describe("the HTML report in Chromium", { timeout: 120_000 }, () => {
  test("every declared property appears with its verdict in both bundle columns", async ({
    browser,
    skip,
  }) => {
    if (!browser.context) return skip(browser.why);
    const page = await browser.open(browser.shippedPage);
    const shown = await page.$$eval("tbody.prop", (bs) =>
      bs.map((b) => ({
        id: (b as HTMLElement).dataset.id,
        verdicts: [...b.querySelectorAll("button.m")].map((m) => [
          (m as HTMLElement).dataset.mode,
          (m as HTMLElement).dataset.status,
        ]),
      })),
    );
    const ids = TOPICS.flatMap((x) => x.properties.map((p) => p.id));
    expect(shown.map((s) => s.id).sort()).toEqual([...ids].sort());
    const judged = {
      kpr: await checkBundle(shipped("kpr"), TOPICS),
      "kube-proxy": await checkBundle(shipped("kube-proxy"), TOPICS),
    };
    for (const s of shown)
      expect(s.verdicts, s.id).toEqual(
        (["kpr", "kube-proxy"] as const).map((m) => [
          m,
          cellKind(judged[m].verdicts.find((v) => v.id === s.id)),
        ]),
      );
    await page.screenshot({ path: join(OUT, "report-1280.png"), fullPage: false });
    await page.close();
  });

  test("the failed-only filter hides passing rows and keeps the failing one (reached with Tab, toggled with Enter)", async ({
    browser,
    skip,
  }) => {
    if (!browser.context) return skip(browser.why);
    const page = await browser.open(browser.tamperedPage);
    const all = await visibleRows(page);
    expect(all.length).toBe(TOPICS.flatMap((x) => x.properties).length);
    // failures first
    expect(all[0]).toBe("iptables.kube-svc-lines");
    expect(all.at(-1)).not.toBe("iptables.kube-svc-lines");
    // Tab through the page (past the headline's links to raw lines and the run cards' expanders) until the first filter has the focus
    const focused = () => page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.filter);
    for (let i = 0; i < 100 && (await focused()) !== "fail"; i++) await page.keyboard.press("Tab");
    expect(await focused()).toBe("fail");
    await page.keyboard.press("Enter");
    // the rows that fail in the tampered bundle (one added KUBE-SVC rule fails three iptables properties)
    const failing = (await checkBundle(browser.tamperedDir, TOPICS)).verdicts
      .filter((v) => v.status === "fail")
      .map((v) => v.id);
    expect(failing).toContain("iptables.kube-svc-lines");
    expect(await visibleRows(page)).toEqual(failing);
    // next: the known issues (none in a kpr bundle of 1.19), then the skipped
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("known-issue");
    await page.keyboard.press("Space");
    expect(await visibleRows(page)).toEqual([]);
    // an empty filter says so in a word, not an empty table
    expect(await page.locator('tbody.none[data-none="known-issue"]').isVisible()).toBe(true);
    expect(await page.locator('tbody.none[data-none="known-issue"]').textContent()).toBe(
      "No known issue showed in these bundles.",
    );
    await page.keyboard.press("Tab");
    await page.keyboard.press("Space");
    const skipped = await visibleRows(page);
    expect(skipped.length).toBeGreaterThan(0);
    expect(skipped).not.toContain("iptables.kpr-mode");
    await page.click('button[data-filter="all"]');
    expect((await visibleRows(page)).length).toBe(all.length);
    await page.close();
  });

  test("opening a cell shows that bundle's verdict (expected vs observed, evidence, raw outputs), without moving the columns", async ({
    browser,
    skip,
  }) => {
    if (!browser.context) return skip(browser.why);
    const page = await browser.open(browser.tamperedPage);
    const columns = () =>
      page.$$eval("table.props thead th", (ths) =>
        ths.map((th) => {
          const r = th.getBoundingClientRect();
          return [Math.round(r.left), Math.round(r.width)];
        }),
      );
    const before = await columns();
    const cell = page.locator('tbody[data-id="iptables.kube-svc-lines"] button.m[data-mode="kpr"]');
    expect(await cell.getAttribute("data-status")).toBe("fail");
    // in page coordinates: focusing the button may scroll it into view (the headline is above it)
    const rowTop = () => cell.evaluate((b) => b.getBoundingClientRect().top + window.scrollY);
    const top = await rowTop();
    await cell.focus();
    await page.keyboard.press("Enter");
    const evidence = page.locator("#ev-iptables-kube-svc-lines");
    expect(await evidence.isVisible()).toBe(true);
    const text = (await evidence.textContent()) ?? "";
    expect(text).toContain(KUBE_SVC_LINE);
    // expected vs observed, and the message
    expect(await evidence.locator("dl").textContent()).toMatch(/observed1expected0/);
    expect(await evidence.locator("p.message").textContent()).toMatch(
      /FAILS[\s\S]*expected: 0[\s\S]*observed: 1/,
    );
    // the raw output it came from, with its command, target node and exit code
    expect(text).toMatch(/raw\/iptables\/\d+-iptables-save\.txt/);
    expect(text).toMatch(/iptables-save on node\/\S+, exit 0/);
    expect(await columns()).toEqual(before);
    expect(await rowTop()).toBe(top);
    // the other bundle's cell in the same row shows that bundle's verdict in its place
    await page.locator('tbody[data-id="iptables.kube-svc-lines"] button.m[data-mode="kube-proxy"]').click();
    expect(await evidence.locator("h4").textContent()).toMatch(/^1\.19\.7 \/ kube-proxy: ✔ pass$/);
    expect(await cell.getAttribute("aria-expanded")).toBe("false");
    await page.locator('tbody[data-id="iptables.kube-svc-lines"] button.m[data-mode="kube-proxy"]').click();
    expect(await evidence.isVisible()).toBe(false);
    await page.close();
  });

  test("an evidence line links to its raw output, which opens scrolled to that line and highlights it", async ({
    browser,
    skip,
  }) => {
    if (!browser.context) return skip(browser.why);
    const page = await browser.open(browser.tamperedPage);
    await page.locator('tbody[data-id="iptables.kube-svc-lines"] button.m[data-mode="kpr"]').click();
    const link = page.locator("#ev-iptables-kube-svc-lines li.q a.at").first();
    const place = (await link.textContent()) ?? "";
    expect(place).toMatch(/^raw\/iptables\/\d+-iptables-save\.txt(\.gz)?:\d+$/);
    const quoted = await page.locator("#ev-iptables-kube-svc-lines li.q code").first().textContent();
    expect(quoted).toBe(KUBE_SVC_LINE);
    await link.click();
    const id = decodeURIComponent(new URL(page.url()).hash.slice(1));
    const line = page.locator(`[id="${id}"]`);
    // the output it is in is open, the line is in view, highlighted, and reads what the evidence quoted
    expect(await line.evaluate((el) => (el.closest("details") as HTMLDetailsElement).open)).toBe(true);
    expect(await line.isVisible()).toBe(true);
    expect(await line.evaluate((el) => el.matches(":target"))).toBe(true);
    expect(await line.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe("rgb(255, 213, 74)");
    const box = await line.boundingBox();
    const viewport = page.viewportSize();
    expect(box && viewport && box.y >= 0 && box.y + box.height <= viewport.height).toBe(true);
    expect(await line.textContent()).toBe(KUBE_SVC_LINE);
    expect(await line.getAttribute("data-n")).toBe(place.split(":").at(-1) as string);
    await page.screenshot({ path: join(OUT, "report-raw-line.png") });
    await page.close();
  });

  test("reads at 600 px wide without sideways scrolling; no network request was made", async ({
    browser,
    skip,
  }) => {
    if (!browser.context) return skip(browser.why);
    const page = await browser.open(browser.shippedPage);
    await page.setViewportSize({ width: 600, height: 900 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(600);
    await page.screenshot({ path: join(OUT, "report-600.png"), fullPage: false });
    await page.locator("#measurements").scrollIntoViewIfNeeded();
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.locator("#chart-scaling").screenshot({ path: join(OUT, "chart-scaling.png") });
    await page.locator("#chart-map-latency").screenshot({ path: join(OUT, "chart-map-latency.png") });
    await page.close();
    expect(browser.requests.length).toBeGreaterThan(0);
    expect(browser.requests.filter((u) => !u.startsWith("file://"))).toEqual([]);
  });

  test("opens on the headline: five claims per mode, visible above the fold at 1280 and 600 px, nothing wider than the page", async ({
    browser,
    skip,
  }) => {
    if (!browser.context) return skip(browser.why);
    const page = await browser.open(browser.shippedPage);
    // each cell's verdict: the worst of its properties' (fail, else pass when one was judged, else skip)
    const judged = {
      kpr: await checkBundle(shipped("kpr"), TOPICS),
      "kube-proxy": await checkBundle(shipped("kube-proxy"), TOPICS),
    };
    const expected = HEADLINE.map((h) => [
      h.key,
      (["kpr", "kube-proxy"] as const).map((m) => {
        const st = h.properties.map((p) => judged[m].verdicts.find((v) => v.id === p.id)?.status);
        return st.includes("fail") ? "fail" : st.some((x) => x === "pass") ? "pass" : "skip";
      }),
    ]);
    for (const width of [1280, 600]) {
      await page.setViewportSize({ width, height: 900 });
      await page.evaluate(() => window.scrollTo(0, 0));
      const layout = await page.evaluate(() => {
        const rows = [...document.querySelectorAll("#headline tr[data-claim]")];
        const top = (e: Element | null) => (e ? e.getBoundingClientRect().top : Number.POSITIVE_INFINITY);
        return {
          scrollWidth: document.documentElement.scrollWidth,
          fold: window.innerHeight,
          title: top(document.querySelector("#headline-title")),
          firstRow: top(rows[0] ?? null),
          firstRowBottom: rows[0]?.getBoundingClientRect().bottom ?? Number.POSITIVE_INFINITY,
          headlineBeforeRuns: top(document.querySelector("#headline")) < top(document.querySelector("#runs")),
          rows: rows.map((r) => [
            (r as HTMLElement).dataset.claim,
            [...r.querySelectorAll("td.hl-cell")].map((td) => (td as HTMLElement).dataset.status),
          ]),
          // any element of the headline wider than the box it sits in
          overflowing: [...document.querySelectorAll("#headline *")]
            .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
            .map((e) => e.tagName + (e.className ? `.${String(e.className)}` : "")),
          pictures: [...document.querySelectorAll("#headline figure.picture svg")].map((svg) => {
            const r = svg.getBoundingClientRect();
            const f = (svg.closest("figure") as HTMLElement).getBoundingClientRect();
            return { width: Math.round(r.width), fits: r.width <= f.width + 1 && r.height > 0 };
          }),
        };
      });
      expect(layout.scrollWidth, `${width} px`).toBeLessThanOrEqual(width);
      expect(layout.overflowing, `${width} px`).toEqual([]);
      expect(layout.headlineBeforeRuns).toBe(true);
      expect(layout.title).toBeLessThan(layout.fold);
      // the first claim is read whole without scrolling, at both widths
      expect(layout.firstRowBottom, `${width} px`).toBeLessThan(layout.fold);
      expect(layout.rows).toEqual(expected);
      expect(layout.pictures).toHaveLength(2);
      for (const p of layout.pictures) expect(p.fits && p.width > 200, `${width} px`).toBe(true);
      await page.screenshot({ path: join(OUT, `report-headline-${width}.png`), fullPage: false });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.locator("#headline").screenshot({ path: join(OUT, "headline-1280.png") });
    // the pictures as drawn: where each mode's verdicts place the translation
    const at = (mode: string) =>
      page.$$eval(`figure.picture[data-mode="${mode}"] g.path`, (gs) =>
        gs.map((g) => `${(g as HTMLElement).dataset.path} ${(g as HTMLElement).dataset.at}`),
      );
    expect(await at("kpr")).toEqual(["pod socket", "host socket", "nodeport tc"]);
    expect(await at("kube-proxy")).toEqual(["pod tc", "host iptables", "nodeport iptables"]);
    await page.close();
  });

  test("an upgrade bundle beside a partial one: the verdict, then the upgrade view; the skipped claims read at 600 px", async ({
    browser,
    skip,
  }) => {
    if (!browser.context) return skip(browser.why);
    const page = await browser.open(browser.upgradePage);
    // its title names the upgrade; the page opens on the verdict (the gate's word), then the upgrade
    expect(await page.title()).toContain("1.19.7 → 1.20.2 / kpr");
    const sections = await page.evaluate(() =>
      [...document.querySelectorAll("main > section")].slice(0, 2).map((s) => s.id),
    );
    expect(sections).toEqual(["verdict", "upgrades"]);
    const up = await checkBundle(shipped("upgrade-1.19-1.20/kpr"), TOPICS);
    const word = await page.locator("#verdict .gate").getAttribute("data-word");
    expect(["HELD", "BROKEN", "INCONCLUSIVE"]).toContain(word);
    expect(await page.locator("#verdict .gate .word").textContent()).toBe(word);
    for (const width of [1280, 600]) {
      await page.setViewportSize({ width, height: 900 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      const upgrade = page.locator("section.upgrade");
      expect(await upgrade.count()).toBe(1);
      // the word, then the part it is about, then the upgrade (issue 44)
      expect(await upgrade.locator("h3").textContent()).toMatch(
        new RegExp(`^${word} (.+ · )?Upgrade under load`),
      );
      if (up.records.upgrade) {
        // the legs as recorded
        expect(await upgrade.locator("h3").textContent()).toContain("Cilium 1.19.7 → 1.20.2");
        expect(await upgrade.locator("h4").allTextContents()).toEqual([
          "Upgrade: Cilium 1.19.7 → 1.20.2",
          "Rollback: Cilium 1.20.2 → 1.19.7",
        ]);
        const survived = await upgrade.locator("table.upgrade-conns td.verdict").allTextContents();
        expect(survived.length).toBeGreaterThanOrEqual(8);
      } else {
        // a record the code of today cannot derive from the bundle's outputs: said, with the verdicts that say why
        expect(await upgrade.textContent()).toContain("its record could not be read");
        expect(await upgrade.locator(".upgrade-verdicts li").count()).toBeGreaterThan(0);
      }
      await upgrade.scrollIntoViewIfNeeded();
      await upgrade.screenshot({ path: join(OUT, `upgrade-${width}.png`) });
    }
    // the upgrade bundle has none of the five claims' topics: named under the claims, not a column of skips; the drop
    // profile's bundle has no iptables topic: that claim is skipped there, with the reason
    expect(await page.locator("#headline thead th").allTextContents()).toEqual([
      "claim",
      "1.19.7 / kpr / drop",
    ]);
    expect(await page.locator("#headline .hl-none").textContent()).toContain("1.19.7 → 1.20.2 / kpr");
    const skipped = page.locator('tr[data-claim="no-kube-proxy-rules"] td.hl-cell[data-status="skip"]');
    expect(await skipped.count()).toBe(1);
    expect(await skipped.textContent()).toContain("has no recorded calls for iptables");
    await page.close();
  });
});
