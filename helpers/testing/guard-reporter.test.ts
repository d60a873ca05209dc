/**
 * vitest's report of a run whose raw output is hostile (issue 45): a replay or a cluster run quotes what it read
 * in its errors, and vitest writes them as they are. A child vitest runs, with the reporters vitest.config.ts
 * names, a test file (written here) that fails the ways a harness error quoting a raw output does — a message,
 * a diff, a console line, a test name, a cause — each carrying workflow commands at a line's start and terminal
 * escapes; what it prints on stdout and stderr is read with GitHub's runner's rules.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { guardError, guardReported } from "./guard-reporter.ts";
import { BUNDLES_DIR, editJson } from "./tamper.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const tmp = mkdtempSync(join(tmpdir(), "dpc-guard-reporter-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A raw output line as a hostile bundle would serve it: commands at a line's start, OSC 52, an RLM. */
const RAW =
  "ok\n::error title=evil::pwned\n##[warning]legacy\r::add-mask::s3cret\n\u001b]52;c;cHduZWQ=\u0007\u200f";

/** The escapes a terminal would obey in `text`, but vitest's own colours (SGR: ESC [ … m). */
function obeyed(text: string): string[] {
  const sgr = new RegExp(`${"\u001b"}\\[[0-9;]*m`, "g");
  return [...text.replace(sgr, "")].filter((c) => {
    const n = c.codePointAt(0) as number;
    return (
      (n < 0x20 && c !== "\n" && c !== "\t") || (n >= 0x7f && n <= 0x9f) || c === "\u200e" || c === "\u200f"
    );
  });
}

const VITEST = join(ROOT, "node_modules", "vitest", "vitest.mjs");

/** The lines GitHub's runner takes for commands: `::` first after leading whitespace, or `##[` anywhere. */
const commands = (text: string) =>
  text.split(/\r\n|\r|\n/).filter((l) => l.trimStart().startsWith("::") || l.includes("##["));

describe("vitest's report of hostile raw output (issue 45)", () => {
  it("guardReported: shown and never obeyed, vitest's own colours kept", () => {
    expect(guardReported(`\u001b[31m${RAW}\u001b[39m`)).toBe(
      "\u001b[31mok\n\\u{3a}:error title=evil::pwned\n##\\u{5b}warning]legacy\\u{d}::add-mask::s3cret\n\\u{1b}]52;c;cHduZWQ=\\u{7}\\u{200f}\u001b[39m",
    );
    const e = { message: RAW, stack: `Error: ${RAW}\n    at x`, cause: { message: RAW } };
    guardError(e);
    expect(commands(`${e.message}\n${e.stack}\n${e.cause.message}`)).toEqual([]);
  });

  it("a child vitest with the project's reporters prints no command and no escape from a failing test's raw output", () => {
    const spec = join(tmp, "hostile.check.ts");
    writeFileSync(
      spec,
      [
        'import { expect, it } from "vitest";',
        `const RAW = ${JSON.stringify(RAW)};`,
        'it("name " + RAW, () => {',
        "  console.log(RAW);",
        "  console.error(RAW);",
        '  throw new Error("parser refused line 3: " + RAW, { cause: new Error(RAW) });',
        "});",
        'it("diff", () => { expect(RAW).toBe("x" + RAW); });',
        "",
      ].join("\n"),
    );
    const config = join(tmp, "vitest.config.mjs");
    writeFileSync(
      config,
      [
        `import base from ${JSON.stringify(join(ROOT, "vitest.config.ts"))};`,
        "export default {",
        `  test: { root: ${JSON.stringify(ROOT)}, dir: ${JSON.stringify(tmp)}, include: ["**/hostile.check.ts"],`,
        // the JUnit report CI writes too (its test case names are printed by scripts/junit-summary.ts)
        `    reporters: [...base.test.reporters, [${JSON.stringify(join(ROOT, "helpers", "testing", "junit-reporter.ts"))}, { outputFile: ${JSON.stringify(join(tmp, "junit.xml"))} }]], isolate: false },`,
        "};",
        "",
      ].join("\n"),
    );
    const env: NodeJS.ProcessEnv = { ...process.env, GITHUB_ACTIONS: "true", FORCE_COLOR: "1" };
    // no JUnit file written over the run's own (results/junit.xml): the reporters as outside CI
    delete env.CI;
    const r = spawnSync(process.execPath, [VITEST, "run", "--config", config], {
      cwd: ROOT,
      env,
      encoding: "utf8",
      timeout: 120_000,
    });
    const all = `${r.stdout}\n${r.stderr}`;
    expect(r.status, all).toBe(1);
    expect(all).toContain("parser refused line 3");
    expect(all).toContain("\\u{3a}:error title=evil::pwned");
    expect(commands(all), all).toEqual([]);
    const names = [
      ...readFileSync(join(tmp, "junit.xml"), "utf8").matchAll(/<testcase [^>]*name="([^"]*)"/g),
    ].map((m) => m[1] as string);
    expect(names.join("\n")).toContain("name ok\\u{a}");
    expect(names.filter((n) => /[\n\r]|&#(10|13);/.test(n))).toEqual([]);
    expect(obeyed(all)).toEqual([]);
  });

  it("a replay of a bundle whose folder name and version carry commands (the documented CLUSTER_PROVIDER=replay run): none reaches the log", () => {
    const copy = join(tmp, `b${RAW.replace(/\//g, "|")}`);
    cpSync(join(BUNDLES_DIR, "1.20", "kpr"), copy, { recursive: true });
    editJson(copy, "bundle.json", (m) => ({ ...m, cilium: `${m.cilium}${RAW}` }));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      GITHUB_ACTIONS: "true",
      CLUSTER_PROVIDER: "replay",
      BUNDLE: copy,
    };
    delete env.CI;
    delete env.VITEST;
    const r = spawnSync(
      process.execPath,
      [VITEST, "run", "--project", "conformance", "suites/01-iptables/iptables.spec.ts"],
      { cwd: ROOT, env, encoding: "utf8", timeout: 120_000 },
    );
    const all = `${r.stdout}\n${r.stderr}`;
    expect(all).toContain("iptables: observing (Cilium 1.20.2ok\\u{a}::error title=evil::pwned");
    expect(commands(all), all).toEqual([]);
    expect(obeyed(all)).toEqual([]);
  });
});
