/**
 * The Chromium-family browser the report's browser tests drive (playwright-core, headless), found where the
 * machines that run them have one: CHROME_PATH or CHROMIUM_PATH when set; Debian's `chromium`; Google Chrome
 * (what GitHub's ubuntu-24.04 runner image ships, /usr/bin/google-chrome); then any of these on PATH. Ubuntu's
 * own `chromium`/`chromium-browser` are snap wrappers (a snap browser cannot read a profile under /tmp from a
 * root test run), so they are not taken: the reason says what to install instead.
 *
 * `node --import tsx helpers/testing/browser.ts` prints the path found (exit 0) or the reason (exit 1): what
 * `.ci/run` uses to point the tests at the runner's browser.
 */
import { accessSync, constants, readFileSync, realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { which } from "../which.ts";

/** Where each machine we run on keeps its browser, in the order they are tried. */
export const BROWSER_PATHS = [
  "/usr/bin/chromium",
  "/usr/bin/google-chrome",
  "/usr/bin/google-chrome-stable",
  "/opt/google/chrome/chrome",
];
/** The same browsers by name on PATH (a Homebrew or a user install). */
export const BROWSER_NAMES = ["chromium", "google-chrome", "google-chrome-stable", "chrome"];

export type BrowserFound = { path: string; why?: undefined } | { path?: undefined; why: string };

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A snap's wrapper (`/snap/bin/…`, or Ubuntu's /usr/bin/chromium-browser script that asks for the snap). */
export function isSnap(file: string): boolean {
  try {
    if (realpathSync(file).startsWith("/snap/")) return true;
    const head = readFileSync(file).subarray(0, 4096).toString("latin1");
    return head.startsWith("#!") && /\bsnap\b/.test(head);
  } catch {
    return false;
  }
}

export function findBrowser(
  env: NodeJS.ProcessEnv = process.env,
  paths: readonly string[] = BROWSER_PATHS,
): BrowserFound {
  for (const name of ["CHROME_PATH", "CHROMIUM_PATH"]) {
    const given = env[name];
    if (given === undefined || given === "") continue;
    return executable(given) ? { path: given } : { why: `${name}=${given} is not an executable file` };
  }
  const snaps: string[] = [];
  const candidates = [
    ...paths,
    ...BROWSER_NAMES.map((n) => which(n, env.PATH ?? "")).filter((p): p is string => p !== null),
  ];
  for (const p of candidates) {
    if (!executable(p)) continue;
    if (isSnap(p)) {
      snaps.push(p);
      continue;
    }
    return { path: p };
  }
  const snapNote = snaps.length > 0 ? ` (${snaps.join(", ")}: a snap, not usable here)` : "";
  return {
    why: `no Chromium or Google Chrome found${snapNote}: apt-get install chromium (Debian), install Google Chrome (Ubuntu), or set CHROME_PATH`,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const found = findBrowser();
  if (found.path) process.stdout.write(`${found.path}\n`);
  else {
    process.stderr.write(`${found.why}\n`);
    process.exitCode = 1;
  }
}

/**
 * The flags the report's browser tests start Chromium with: headless, no network of its own, a fresh profile; and
 * one renderer process for every page (the pages are local files, opened one after another, and site isolation
 * is not what they test): a renderer started per page was a quarter of Chromium's CPU in `npm test` (report's
 * file: 6.9 s -> 5.0 s).
 */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-site-isolation-trials",
  "--disable-features=site-per-process,IsolateOrigins",
  "--renderer-process-limit=1",
];

/**
 * A headless persistent context of the browser at `executablePath` on `profile`, every request it makes pushed
 * to `requests`; or why it did not start (the tests skip with it, never pass). playwright-core is loaded here,
 * not when `.ci/run` asks this file for the browser's path.
 */
export async function launchChromium(
  executablePath: string,
  profile: string,
  requests: string[],
): Promise<{ context: import("playwright-core").BrowserContext | null; why: string }> {
  const { chromium } = await import("playwright-core");
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 900 },
    });
    context.on("request", (r) => requests.push(r.url()));
    return { context, why: "" };
  } catch (err) {
    return {
      context: null,
      why: `${executablePath} did not start: ${(err instanceof Error ? err.message : String(err)).split("\n")[0]}`,
    };
  }
}
