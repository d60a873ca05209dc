/**
 * What a user names on the command line: a folder of bundles (`check suites/bundles/1.19`) stands for each bundle
 * in it, and `parse` reads the `.txt.gz` raw outputs the bundles ship. The folders here are copies of shipped
 * bundles arranged by us in a temporary directory (a bundle's own files are not changed).
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { bundlesOf, findBundles } from "../helpers/bundle/read.ts";
import { BUNDLES_ROOT, SHIPPED_BUNDLES } from "../suites/environment.ts";
import { runCli as run } from "./run-in-process.ts";

const tmp = mkdtempSync(join(tmpdir(), "dpc-bundles-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// two small recorded bundles, one of them a level deeper, beside a folder that holds none
const folder = join(tmp, "runs");
cpSync(join(BUNDLES_ROOT, "1.19", "drop-kpr"), join(folder, "b-drop"), { recursive: true });
cpSync(join(BUNDLES_ROOT, "1.19", "drop-kube-proxy"), join(folder, "a", "drop-kp"), { recursive: true });
mkdirSync(join(folder, "c-empty", "deeper"), { recursive: true });
const empty = join(tmp, "nothing-here");
mkdirSync(join(empty, "x"), { recursive: true });

describe("a folder of bundles", () => {
  it("findBundles: every folder holding a bundle.json, in sorted path order, not looking into a bundle", () => {
    expect(findBundles(folder)).toEqual([join(folder, "a", "drop-kp"), join(folder, "b-drop")]);
    expect(findBundles(join(folder, "b-drop"))).toEqual([join(folder, "b-drop")]);
    expect(findBundles(empty)).toEqual([]);
    expect(findBundles(join(tmp, "not-there"))).toEqual([]);
    // the shipped ones: every minor's, upgrade's and existing's, none from the fault record
    expect(findBundles(BUNDLES_ROOT)).toEqual(SHIPPED_BUNDLES);
    expect(findBundles(join(BUNDLES_ROOT, "1.19")).map((b) => b.slice(BUNDLES_ROOT.length + 1))).toEqual([
      "1.19/drop-kpr",
      "1.19/drop-kube-proxy",
      "1.19/kpr",
      "1.19/kube-proxy",
    ]);
  });

  it("bundlesOf: a bundle stands for itself, a folder for its bundles; a folder with none is one line", () => {
    const drop = join(folder, "b-drop");
    expect(bundlesOf([drop, folder])).toEqual([drop, join(folder, "a", "drop-kp"), drop]);
    expect(() => bundlesOf([empty])).toThrow(
      `${empty} holds no evidence bundle (no bundle.json in it or in any folder below it)`,
    );
    // not there: left to readMeta, which names it as no bundle
    expect(bundlesOf(["/nonexistent"])).toEqual(["/nonexistent"]);
  });

  it("check DIR judges each bundle inside, naming each, and ends with one line per bundle", async () => {
    const r = await run(["check", folder]);
    expect(r.code).toBe(0);
    const named = r.out.split("\n").filter((l) => l.startsWith(folder));
    expect(named).toEqual([
      `${join(folder, "a", "drop-kp")}: mode kube-proxy, Cilium 1.19.7 (recorded)`,
      `${join(folder, "b-drop")}: mode kpr, Cilium 1.19.7 (recorded)`,
    ]);
    const tail = r.out.slice(r.out.lastIndexOf("2 bundles:\n"));
    expect(tail).toMatch(
      new RegExp(
        `^2 bundles:\\n  ${join(folder, "a", "drop-kp")}\\s+\\d+ passed, 0 failed, \\d+ skipped\\n  ${join(folder, "b-drop")}\\s+\\d+ passed, 0 failed, \\d+ skipped\\n$`,
      ),
    );
  });

  it("check, report and summary of a folder with no bundle: one line, exit 2", async () => {
    for (const cmd of [["check"], ["summary"], ["report", "-o", join(tmp, "r.html")]]) {
      const r = await run([...cmd, empty]);
      expect(r.code).toBe(2);
      expect(r.out).toBe("");
      expect(r.err).toBe(
        `datapath-conformance ${cmd[0]}: ${empty} holds no evidence bundle (no bundle.json in it or in any folder below it)\n`,
      );
    }
  });
});

describe("parse reads gzip", () => {
  const raw = join(BUNDLES_ROOT, "1.20", "kpr", "raw", "holder");
  const ct = join(raw, "010-cilium-dbg-bpf-ct-list-global.txt.gz");

  it("a bundle's .txt.gz raw output parses as its text would, as one document and streamed", async () => {
    const plain = join(tmp, "ct.txt");
    const text = (await import("node:zlib")).gunzipSync(readFileSync(ct)).toString("utf8");
    writeFileSync(plain, text);
    const fromGz = await run(["parse", "bpf-ct-list", ct]);
    const fromText = await run(["parse", "bpf-ct-list", plain]);
    expect(fromGz.code).toBe(0);
    expect(JSON.parse(fromGz.out).entries.length).toBeGreaterThan(0);
    expect(fromGz.out).toBe(fromText.out);
    const streamed = await run(["parse", "bpf-ct-list", ct, "--ndjson"]);
    expect(streamed.code).toBe(0);
    expect(
      streamed.out
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toEqual(JSON.parse(fromText.out).entries);
  });

  it("gzip is known by its bytes, not its name; a broken archive is one line, exit 2", async () => {
    const renamed = join(tmp, "ss-output");
    writeFileSync(renamed, gzipSync("LISTEN 0 128 0.0.0.0:30780 0.0.0.0:*\n"));
    const r = await run(["parse", "ss", renamed]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).sockets[0].local).toBe("0.0.0.0:30780");
    const broken = join(tmp, "broken.txt.gz");
    writeFileSync(broken, readFileSync(ct).subarray(0, 40));
    for (const extra of [[], ["--ndjson"]]) {
      const b = await run(["parse", "bpf-ct-list", broken, ...extra]);
      expect(b.code).toBe(2);
      expect(b.err).toMatch(
        new RegExp(`^datapath-conformance parse: cannot read ${broken}: not valid gzip \\(.+\\)\\n$`),
      );
    }
  });
});
