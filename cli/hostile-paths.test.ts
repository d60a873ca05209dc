/**
 * Issue 45, paths: what a bundle names on the disk is resolved without following a link and stays inside the
 * bundle or suites/bundles/. Copies of shipped bundles (WRITTEN BY US, changed here; nothing hostile is
 * committed): an upgrade bundle whose leg folder is a link to a bundle outside it, bundle.json minors that climb
 * out of suites/bundles/, and raw outputs linked to /proc files, whose resolved target a refusal must not echo.
 */
import { cpSync, mkdtempSync, renameSync, rmSync, symlinkSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { shippedBundle } from "../helpers/bundle/read.ts";
import { BUNDLES_DIR, BundleCopies, editJson, editJsonLines } from "../helpers/testing/tamper.ts";
import { runCli as run } from "./run-in-process.ts";

const copies = new BundleCopies();
const tmp = mkdtempSync(join(tmpdir(), "dpc-hostile-paths-"));
afterAll(() => {
  copies.cleanup();
  rmSync(tmp, { recursive: true, force: true });
});

/** exit 2, one line naming what `names` matches, nothing on stdout. */
function refused(r: { code: number; out: string; err: string }, cmd: string, names: RegExp) {
  expect(r.code, r.err).toBe(2);
  expect(r.err.trimEnd().split("\n"), r.err).toHaveLength(1);
  expect(r.err).toMatch(new RegExp(`^datapath-conformance ${cmd}: `));
  expect(r.err).toMatch(names);
  expect(r.out).toBe("");
}

/** A marker the outside folder's bundle carries: seen in any output, the link was followed. */
const OUTSIDE = "outside-the-bundle-run";

describe("paths from a bundle stay in it (issue 45)", { timeout: 120_000 }, () => {
  it("a leg folder (after-upgrade, after-rollback) that is a link to a bundle outside: refused, never judged or embedded", async () => {
    const outside = join(tmp, "elsewhere");
    cpSync(join(BUNDLES_DIR, "upgrade-1.19-1.20", "kpr", "after-upgrade"), outside, { recursive: true });
    editJson(outside, "bundle.json", (m) => ({ ...m, runId: OUTSIDE }));
    for (const leg of ["after-upgrade", "after-rollback"]) {
      const dir = copies.copy("upgrade-1.19-1.20/kpr");
      rmSync(join(dir, leg), { recursive: true });
      symlinkSync(outside, join(dir, leg));
      const names = new RegExp(`${leg}/: is a symbolic link`);
      for (const args of [
        ["upgrade", dir],
        ["check", dir],
        ["report", dir, "-o", join(tmp, `${leg}.html`)],
      ]) {
        const r = await run(args);
        refused(r, args[0] as string, names);
        expect(r.err).not.toContain(outside);
        expect(r.err).not.toContain(OUTSIDE);
      }
    }
  });

  it("a minor that is not X.Y (upgrade.toMinor, upgrade.fromMinor, ciliumMinor) is refused at the door", async () => {
    const dir = copies.copy("upgrade-1.19-1.20/kpr");
    for (const [field, edit] of [
      [
        "upgrade.toMinor",
        (m: Record<string, unknown>) => ({
          ...m,
          upgrade: { ...(m.upgrade as object), toMinor: "../../../../tmp/x" },
        }),
      ],
      [
        "upgrade.fromMinor",
        (m: Record<string, unknown>) => ({
          ...m,
          upgrade: { ...(m.upgrade as object), fromMinor: "1.20/../1.19" },
        }),
      ],
      ["ciliumMinor", (m: Record<string, unknown>) => ({ ...m, ciliumMinor: "/etc" })],
    ] as const) {
      const saved = join(tmp, "bundle.json.saved");
      cpSync(join(dir, "bundle.json"), saved);
      editJson(dir, "bundle.json", edit);
      const key = field
        .split(".")
        .map((k) => `"${k}"`)
        .join(".");
      for (const cmd of ["upgrade", "check"]) {
        const r = await run([cmd, dir]);
        refused(
          r,
          cmd,
          new RegExp(`bundle\\.json:\\d+: ${key.replace(/\./g, "\\.")}: expected a Cilium minor \\(X\\.Y`),
        );
      }
      renameSync(saved, join(dir, "bundle.json"));
    }
  });

  it("the shipped fresh bundle a minor names: only suites/bundles/<X.Y>/<mode>, never through a link", () => {
    expect(shippedBundle("1.20", "kpr")).toBe(join(BUNDLES_DIR, "1.20", "kpr"));
    for (const minor of ["..", "../..", "1.20/..", "/tmp", "1.20/../1.19", ""])
      expect(shippedBundle(minor, "kpr"), minor).toBeNull();
    expect(shippedBundle("1.20", "../../1.19/kpr")).toBeNull();
  });

  it("a raw output linked to /proc/self/environ or /proc/self/cwd: the refusal names the entry, not the target", async () => {
    for (const target of [
      "/proc/self/environ",
      "/proc/self/cwd/package.json",
      `/proc/${process.pid}/environ`,
    ]) {
      const dir = copies.copy("1.20/kpr");
      let file = "";
      editJsonLines(dir, "calls/iptables.jsonl", (c, i) => {
        if (i === 1) file = String(c.stdoutFile);
        return undefined;
      });
      unlinkSync(join(dir, file));
      symlinkSync(target, join(dir, file));
      const r = await run(["check", dir]);
      refused(
        r,
        "check",
        /calls\/iptables\.jsonl:2: stdoutFile: "raw\/iptables\/[^"]+" is a link out of the bundle/,
      );
      expect(r.err).not.toContain("/proc");
      expect(r.err).not.toContain(process.cwd());
    }
  });
});
