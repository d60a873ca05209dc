/**
 * Where the browser tests find their browser, against files WRITTEN BY US in a temporary folder standing in
 * for each machine's: Debian's chromium, GitHub's ubuntu-24.04 image (Google Chrome; Ubuntu's chromium a snap
 * wrapper), and the CHROME_PATH / CHROMIUM_PATH overrides.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findBrowser, isSnap } from "./browser.ts";

const dir = mkdtempSync(join(tmpdir(), "dpc-browser-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string, mode = 0o755): string {
  const p = join(dir, name);
  mkdirSync(join(p, ".."), { recursive: true });
  writeFileSync(p, text);
  chmodSync(p, mode);
  return p;
}

const elf = "\x7fELF (a browser)";
const debian = file("debian/chromium", elf);
const chrome = file("ubuntu/google-chrome", elf);
// Ubuntu 24.04's /usr/bin/chromium-browser: a script that tells you to install the snap
const snapWrapper = file(
  "ubuntu/chromium",
  '#! /bin/sh\necho "Command \'/usr/bin/chromium-browser\' requires the chromium snap to be installed."\nexec /snap/bin/chromium "$@"\n',
);
const notExecutable = file("other/chromium", elf, 0o644);

describe("findBrowser", () => {
  it("Debian: /usr/bin/chromium", () => {
    expect(findBrowser({ PATH: "" }, [debian, chrome])).toEqual({ path: debian });
  });

  it("ubuntu-24.04: the snap wrapper is passed over, Google Chrome is taken", () => {
    expect(isSnap(snapWrapper)).toBe(true);
    expect(isSnap(chrome)).toBe(false);
    expect(findBrowser({ PATH: "" }, [snapWrapper, chrome])).toEqual({ path: chrome });
  });

  it("on PATH by name when none is at the usual places", () => {
    expect(findBrowser({ PATH: join(dir, "ubuntu") }, [])).toEqual({ path: chrome });
  });

  it("CHROME_PATH, then CHROMIUM_PATH, override the search; one that is not executable says so", () => {
    expect(findBrowser({ CHROME_PATH: chrome, CHROMIUM_PATH: debian }, [debian])).toEqual({ path: chrome });
    expect(findBrowser({ CHROMIUM_PATH: chrome }, [debian])).toEqual({ path: chrome });
    expect(findBrowser({ CHROME_PATH: notExecutable }, [debian])).toEqual({
      why: `CHROME_PATH=${notExecutable} is not an executable file`,
    });
  });

  it("none: one reason naming what to install, and the snap that was there", () => {
    expect(findBrowser({ PATH: "" }, [notExecutable, snapWrapper])).toEqual({
      why: `no Chromium or Google Chrome found (${snapWrapper}: a snap, not usable here): apt-get install chromium (Debian), install Google Chrome (Ubuntu), or set CHROME_PATH`,
    });
  });
});
