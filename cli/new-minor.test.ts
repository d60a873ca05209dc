/**
 * A Cilium minor nobody has declared yet, end to end (issue 38, items 1, 2 and 4): the shipped 1.20 bundles
 * copied and relabelled by us as Cilium 1.21.0 (bundle.json's cilium and ciliumMinor; the raw outputs are the
 * real 1.20.2 run's), then `check`, `declare-minor` and the report, as a platform engineer would run them on a
 * release candidate. One copy also has one raw output edited by us (the policy map under its pre-1.20 name), so
 * a property does not hold under the expectation assumed from 1.20.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readStoredVerdicts } from "../helpers/bundle/read.ts";
import { appendVerdicts } from "../helpers/bundle/write.ts";
import { checkBundle, compareStored } from "../helpers/check.ts";
import { formatStored } from "../helpers/check-format.ts";
import { buildReport, renderReport } from "../helpers/report/html.ts";
import { BundleCopies, editJson } from "../helpers/testing/tamper.ts";
import { TOPICS } from "../suites/topics.ts";
import { runCli as run } from "./run-in-process.ts";

const copies = new BundleCopies();
afterAll(() => copies.cleanup());

/** bundle.json relabelled as another Cilium version (what a run of it would have written). */
const relabel = (dir: string, cilium: string) => {
  editJson(dir, "bundle.json", (m) => ({
    ...m,
    cilium,
    ciliumMinor: cilium.split(".").slice(0, 2).join("."),
  }));
  return dir;
};

const MAP_LIST = ["cilium-dbg", "map", "list"];

describe(
  "a minor the suite has not declared: a shipped 1.20 bundle relabelled 1.21.0",
  { timeout: 60_000 },
  () => {
    const kubeProxy = relabel(copies.copy("1.20/kube-proxy"), "1.21.0");

    it("check: every verdict assumed from 1.20, known issues of 1.20.2 still known issues, compared with the shipped 1.20 bundle first", async () => {
      const r = await run(["check", kubeProxy]);
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      const lines = r.out.split("\n");
      expect(lines[1]).toMatch(
        /^expectations: assumed from 1\.20 — Cilium 1\.21\.0 is of a minor the suite has not declared/,
      );
      // the comparison opens the check, before the verdicts
      const compared = lines.findIndex((l) =>
        l.includes("compared with the shipped bundle of the nearest declared version"),
      );
      expect(lines[compared]).toBe(
        "Cilium 1.21.0 is of a minor the suite has not declared: compared with the shipped bundle of the nearest declared version, suites/bundles/1.20/kube-proxy (kube-proxy, Cilium 1.20.2)",
      );
      expect(lines[compared + 1]).toMatch(
        /^ {2}No verdict regression, no new known issue, no behaviour change\. \(\d+ properties unchanged\)$/,
      );
      const verdicts = lines.filter((l) => /^ {2}(PASS|FAIL|SKIP|KNOWN|CHANGED) /.test(l));
      expect(compared).toBeLessThan(lines.indexOf(verdicts[0] as string));
      expect(verdicts.length).toBe(TOPICS.flatMap((t) => t.properties).length);
      for (const l of verdicts) expect(l).toMatch(/ \(assumed from 1\.20\)$/);
      expect(verdicts.filter((l) => l.startsWith("  KNOWN")).map((l) => l.split(/\s+/)[2])).toEqual([
        "ghost.fails-fast",
        "ghost.errno",
        "ghost.seconds",
        "traffic-policy.itp-far",
        "measure.ghost-fail-fast-p90",
      ]);
      expect(r.out).toMatch(
        /\n\d+ passed, 0 failed, 5 known issues, \d+ skipped; every expectation assumed from 1\.20\n/,
      );
    });

    it("the verdicts: each marked assumedFrom 1.20, the same statuses as the 1.20.2 run they were recorded by", async () => {
      const relabelled = await checkBundle(kubeProxy, TOPICS);
      const shipped = await checkBundle(join("suites", "bundles", "1.20", "kube-proxy"), TOPICS);
      expect(relabelled.assumedFrom).toBe("1.20");
      expect(relabelled.verdicts.every((v) => v.assumedFrom === "1.20" && v.cilium === "1.21.0")).toBe(true);
      expect(shipped.verdicts.some((v) => v.assumedFrom !== undefined)).toBe(false);
      expect(relabelled.verdicts.map((v) => `${v.id} ${v.status}`)).toEqual(
        shipped.verdicts.map((v) => `${v.id} ${v.status}`),
      );
      // a run's verdicts.jsonl keeps the mark (the harness appends what judge returns), and check's comparison
      // with the stored verdicts reproduces it exactly (a folder of ours holding only verdicts.jsonl)
      const stored = mkdtempSync(join(tmpdir(), "dpc-new-minor-stored-"));
      try {
        appendVerdicts(stored, relabelled.verdicts);
        expect(readStoredVerdicts(stored)?.every((v) => v.assumedFrom === "1.20")).toBe(true);
        const again = compareStored(stored, relabelled.verdicts, TOPICS, new Set(relabelled.topics));
        expect(formatStored(again)).toEqual(["stored verdicts.jsonl: reproduced exactly"]);
        // the same verdicts stored, judged as a declared minor's now: one line for all of them
        const declared = compareStored(stored, shipped.verdicts, TOPICS, new Set(shipped.topics));
        expect(formatStored(declared)[1]).toMatch(
          /^ {2}\(\d+ verdicts\) +assumed: assumed from 1\.20 → declared {2}\(Cilium 1\.20\.2's minor was declared after the recording/,
        );
      } finally {
        rmSync(stored, { recursive: true, force: true });
      }
      // the 1.20.2 run's own stored verdicts were judged as declared: one line says so
      expect((await run(["check", kubeProxy])).out).toMatch(
        /\n {2}\(\d+ verdicts\) +assumed: declared → assumed from 1\.20 {2}\(Cilium 1\.21\.0 is of a minor the suite does not declare/,
      );
    });

    it("the report opens on the verdict, then the comparison with the shipped 1.20 bundle; its column says assumed from 1.20", async () => {
      const page = renderReport(await buildReport([kubeProxy], TOPICS));
      const nearest = page.indexOf('<section id="nearest-0"');
      const banner = page.indexOf('<section id="verdict"');
      expect(banner).toBeGreaterThan(0);
      expect(nearest).toBeGreaterThan(banner);
      expect(nearest).toBeLessThan(page.indexOf('<section id="headline"'));
      expect(page.slice(nearest, page.indexOf("</section>", nearest))).toContain(
        "compared with the shipped bundle of the nearest declared version, suites/bundles/1.20/kube-proxy (kube-proxy, Cilium 1.20.2)",
      );
      // the variant names the copy's folder too (helpers/report/labels.ts), then what the verdicts assumed
      expect(page).toMatch(
        /<title>Datapath conformance: 1\.21\.0 \/ kube-proxy \/ [^<]*assumed from 1\.20<\/title>/,
      );
      // without it, the verdict is followed by the five claims
      const plain = renderReport(await buildReport([kubeProxy], TOPICS, { nearest: false }));
      expect(plain).not.toContain('id="nearest-0"');
    });

    it("a property that does not hold under the assumed expectation: changed in the new minor, exit 1, a regression against 1.20, and declare-minor lists it with its raw line", async () => {
      const kpr = relabel(
        copies.tampered("1.20/kpr", "program", MAP_LIST, (t) =>
          t.replaceAll("cilium_policy_v3_", "cilium_policy_v2_"),
        ),
        "1.21.0",
      );
      const c = await run(["check", kpr]);
      expect(c.code).toBe(1);
      expect(c.out).toMatch(
        /\n {2}CHANGED {2}program\.policy-map +expected cilium_policy_v3_<id:05>, observed cilium_policy_v2_<id:05> \(assumed from 1\.20\)\n/,
      );
      expect(c.out).toMatch(
        /\n {2}REGRESSION program\.policy-map +pass \(cilium_policy_v3_<id:05>\) → changed in the new minor \(cilium_policy_v2_<id:05>\): /,
      );
      expect(c.out).toContain(
        "Changed in the new minor — a regression or a new behaviour, to be declared (`datapath-conformance declare-minor ",
      );
      expect(c.out).toMatch(
        /, 1 changed in the new minor, 1 known issue, \d+ skipped; every expectation assumed from 1\.20\n/,
      );
      const d = await run(["declare-minor", kpr]);
      expect(d.code).toBe(0);
      const first = d.out.slice(d.out.indexOf("1. Changed"), d.out.indexOf("2. Held only"));
      expect(first).toMatch(
        /^1\. Changed in the new minor — a regression or a new behaviour, to be declared \(1\)\./,
      );
      expect(first).toContain("  program.policy-map  (suites/05-program/program.topic.ts)");
      expect(first).toContain("    expected (assumed from 1.20): cilium_policy_v3_<id:05>");
      expect(first).toContain("    observed: cilium_policy_v2_<id:05>");
      expect(first).toMatch(
        /\n {6}raw\/program\/008-cilium-dbg-map-list\.txt:\d+ {2}cilium_policy_v2_\d{5} /,
      );
      // the pre-1.20 name is the property's default: declaring 1.21 with nothing for it would do, if intended
      expect(first).toContain(
        "    declare: nothing for 1.21 if the change is intended: the default (cilium_policy_v2_<id:05>) holds",
      );
    });

    it("declare-minor on the unedited copy: what held only through 1.20's own declarations, to declare again for 1.21", async () => {
      const d = await run(["declare-minor", kubeProxy]);
      expect(d.code).toBe(0);
      const second = d.out.slice(d.out.indexOf("2. Held only"), d.out.indexOf("3. Held under"));
      expect(second.match(/^ {2}\S+ {2}\(suites\//gm)).toEqual([
        "  program.policy-map  (suites/",
        "  ghost.fails-fast  (suites/",
        "  ghost.errno  (suites/",
        "  ghost.seconds  (suites/",
        "  traffic-policy.itp-far  (suites/",
        "  measure.ghost-fail-fast-p90  (suites/",
      ]);
      expect(second).toContain(
        'declare: expect["kube-proxy"].byMinor["1.21"] = { kind: "known-issue", expect: <as 1.20.2 declares it: 28>',
      );
      // a bundle of a declared minor has nothing to declare: one line, exit 2
      const declared = await run(["declare-minor", join("suites", "bundles", "1.20", "kpr")]);
      expect(declared.code).toBe(2);
      expect(declared.err).toBe(
        "datapath-conformance declare-minor: suites/bundles/1.20/kpr: Cilium 1.20.2 is of a declared minor: nothing was assumed, so there is nothing to declare (declare-minor reads a run of a minor newer than every declared one)\n",
      );
    });

    it("the new minor's strings are shown, never obeyed: the assumed-from line, the comparison and declare-minor (a version label WRITTEN BY US)", async () => {
      // what a hostile bundle.json could say its version is: still a 1.21 patch, with a terminal escape, a line
      // that would be a runner command, the older command syntax and markup behind it
      const evil = relabel(
        copies.copy("1.20/kube-proxy"),
        "1.21.0\u001b[2J\n::error title=evil::pwned\r##[warning]x\u2028<img src=x> @octocat",
      );
      const [text, md, decl] = await Promise.all([
        run(["check", evil]),
        run(["check", evil, "--markdown"]),
        run(["declare-minor", evil]),
      ]);
      for (const [what, r] of [
        ["check", text],
        ["check --markdown", md],
        ["declare-minor", decl],
      ] as const) {
        expect(r.code, `${what}: ${r.err}`).toBe(0);
        for (const c of ["\u001b", "\r", "\u2028", "##["]) expect(r.out, what).not.toContain(c);
        expect(
          r.out.split("\n").filter((l) => l.trimStart().startsWith("::")),
          what,
        ).toEqual([]);
      }
      // each in its place, as text
      expect(text.out).toContain(
        "expectations: assumed from 1.20 — Cilium 1.21.0\\u{1b}[2J\\u{a}::error title=evil::pwned",
      );
      expect(text.out).toMatch(
        /\nCilium 1\.21\.0\\u\{1b\}\[2J\\u\{a\}::error is of a minor the suite has not declared: compared with the shipped bundle of the nearest declared version, suites\/bundles\/1\.20\/kube-proxy/,
      );
      expect(md.out).toContain("&lt;img src=x&gt; @\u200boctocat");
      expect(md.out).not.toContain("<img");
      expect(md.out).toContain("compared with the shipped bundle of the nearest declared version");
      expect(decl.out).toMatch(
        /^Declaring Cilium 1\.21 from \S+ \(mode kube-proxy, Cilium 1\.21\.0\\u\{1b\}/,
      );
    });

    it("an older minor's bundle is refused in one line, saying why", async () => {
      const old = relabel(copies.copy("1.20/kpr"), "1.17.4");
      const r = await run(["check", old]);
      expect(r.code).toBe(2);
      expect(r.out).toBe("");
      expect(r.err).toMatch(
        /^datapath-conformance check: \S+: Cilium 1\.17\.4 is older than every minor the suite declares \(oldest: 1\.18\): refused, since /,
      );
      expect(r.err.trimEnd()).not.toContain("\n");
    });
  },
);
