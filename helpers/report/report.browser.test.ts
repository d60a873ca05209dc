import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { TOPICS } from "../../suites/topics.ts";
import { checkBundle } from "../check.ts";
import { BUNDLES_DIR, BundleCopies, KUBE_SVC_LINE } from "../testing/tamper.ts";
import { buildReport, renderReport } from "./html.ts";

/**
 * The report in a real browser: Debian's chromium driven by playwright-core, headless, with a fresh profile.
 * Where Chromium cannot start here the tests are skipped with the reason, never passed.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const OUT = join(import.meta.dirname, "..", "..", "results", "report");
const ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
];

/** What the tests share, made once per file and cleaned up after it (a file-scoped fixture). */
interface Browser {
  /** null when Chromium cannot run here; `why` says why. */
  context: BrowserContext | null;
  why: string;
  requests: string[];
  shippedPage: string;
  tamperedPage: string;
  tamperedDir: string;
  open(file: string): Promise<Page>;
}

const test = it.extend<{ browser: Browser }>({
  browser: [
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
    async ({}, use) => {
      mkdirSync(OUT, { recursive: true });
      const copies = new BundleCopies();
      const profile = mkdtempSync(join(tmpdir(), "dpc-chromium-"));
      const shippedPage = join(OUT, "report.html");
      writeFileSync(
        shippedPage,
        renderReport(await buildReport([join(BUNDLES_DIR, "kpr"), join(BUNDLES_DIR, "kube-proxy")], TOPICS)),
      );
      // a kpr bundle with one kube-proxy rule added: iptables.kube-svc-lines (and two others) fail there
      const tamperedDir = copies.tampered("kpr", "iptables", ["iptables-save"], (t) =>
        t.replace("COMMIT", `${KUBE_SVC_LINE}\nCOMMIT`),
      );
      const tamperedPage = join(OUT, "report-failing.html");
      writeFileSync(
        tamperedPage,
        renderReport(await buildReport([tamperedDir, join(BUNDLES_DIR, "kube-proxy")], TOPICS)),
      );
      const requests: string[] = [];
      let context: BrowserContext | null = null;
      let why = existsSync(CHROMIUM)
        ? ""
        : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
      if (!why) {
        try {
          context = await chromium.launchPersistentContext(profile, {
            executablePath: CHROMIUM,
            headless: true,
            args: ARGS,
            viewport: { width: 1280, height: 900 },
          });
          context.on("request", (r) => requests.push(r.url()));
        } catch (err) {
          why = `Chromium at ${CHROMIUM} did not start: ${(err instanceof Error ? err.message : String(err)).split("\n")[0]}`;
        }
      }
      const open = async (file: string) => {
        const page = await (context as BrowserContext).newPage();
        await page.goto(pathToFileURL(file).href);
        return page;
      };
      try {
        await use({ context, why, requests, shippedPage, tamperedPage, tamperedDir, open });
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
  test("every declared property appears with its verdict in both mode columns", async ({ browser, skip }) => {
    if (!browser.context) return skip(browser.why);
    const page = await browser.open(browser.shippedPage);
    const shown = await page.$$eval("tbody.prop", (bs) =>
      bs.map((b) => ({
        id: (b as HTMLElement).dataset.id,
        verdicts: [...b.querySelectorAll("td.verdict")].map((td) => [
          (td as HTMLElement).dataset.mode,
          td.textContent?.replace(/^\W+/, "").trim(),
        ]),
      })),
    );
    const ids = TOPICS.flatMap((x) => x.properties.map((p) => p.id));
    expect(shown.map((s) => s.id).sort()).toEqual([...ids].sort());
    const judged = {
      kpr: await checkBundle(join(BUNDLES_DIR, "kpr"), TOPICS),
      "kube-proxy": await checkBundle(join(BUNDLES_DIR, "kube-proxy"), TOPICS),
    };
    for (const s of shown)
      expect(s.verdicts, s.id).toEqual(
        (["kpr", "kube-proxy"] as const).map((m) => [
          m,
          judged[m].verdicts.find((v) => v.id === s.id)?.status,
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
    // Tab through the page (past the run cards' expanders) until the first filter has the focus
    const focused = () => page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.filter);
    for (let i = 0; i < 10 && (await focused()) !== "fail"; i++) await page.keyboard.press("Tab");
    expect(await focused()).toBe("fail");
    await page.keyboard.press("Enter");
    // the rows that fail in the tampered bundle (one added KUBE-SVC rule fails three iptables properties)
    const failing = (await checkBundle(browser.tamperedDir, TOPICS)).verdicts
      .filter((v) => v.status === "fail")
      .map((v) => v.id);
    expect(failing).toContain("iptables.kube-svc-lines");
    expect(await visibleRows(page)).toEqual(failing);
    await page.keyboard.press("Tab");
    await page.keyboard.press("Space");
    const skipped = await visibleRows(page);
    expect(skipped.length).toBeGreaterThan(0);
    expect(skipped).not.toContain("iptables.kpr-mode");
    await page.click('button[data-filter="all"]');
    expect((await visibleRows(page)).length).toBe(all.length);
    await page.close();
  });

  test("expanding a property shows its evidence lines and raw outputs, without moving the columns", async ({
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
    const button = page.locator('tbody[data-id="iptables.kube-svc-lines"] button.expander');
    const rowTop = async () => (await button.boundingBox())?.y;
    const top = await rowTop();
    await button.focus();
    await page.keyboard.press("Enter");
    const evidence = page.locator("#ev-iptables-kube-svc-lines");
    expect(await evidence.isVisible()).toBe(true);
    const text = (await evidence.textContent()) ?? "";
    expect(text).toContain(KUBE_SVC_LINE);
    // the raw output it came from, with its command, target node and exit code
    expect(text).toMatch(/raw\/iptables\/\d+-iptables-save\.txt/);
    expect(text).toMatch(/iptables-save on node\/\S+, exit 0/);
    expect(await columns()).toEqual(before);
    expect(await rowTop()).toBe(top);
    await page.keyboard.press("Space");
    expect(await evidence.isVisible()).toBe(false);
    await page.close();
  });

  test("an evidence line links to its raw output, which opens scrolled to that line and highlights it", async ({
    browser,
    skip,
  }) => {
    if (!browser.context) return skip(browser.why);
    const page = await browser.open(browser.tamperedPage);
    await page.locator('tbody[data-id="iptables.kube-svc-lines"] button.expander').click();
    const link = page.locator("#ev-iptables-kube-svc-lines li.q a.at").first();
    const place = (await link.textContent()) ?? "";
    expect(place).toMatch(/^raw\/iptables\/\d+-iptables-save\.txt:\d+$/);
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
});
