// One file over 450 lines: one hostile case per way a bundle can lie, each through the CLI against one copied bundle
/**
 * A bundle is untrusted input (issue 26): copies of the shipped 1.20 kpr bundle, each changed one way by the
 * test (WRITTEN BY US: nothing hostile is committed), given to `check`, `compare`, `report` and `summary`
 * through the CLI. Each is refused with exit 2 and one line naming the bundle's entry (file and line), never a
 * stack trace, never read outside the bundle, never answered with a verdict.
 */
import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { LIMITS } from "../helpers/bundle/files.ts";
import type { CallRecord } from "../helpers/exec/record.ts";
import { guardLines } from "../helpers/output.ts";
import { SHOWN_VALUE_CHARS } from "../helpers/records/evidence.ts";
import { decodeData, REPORT_EVIDENCE_ITEMS } from "../helpers/report/data.ts";
import { MAX_EMBEDDED_LINES } from "../helpers/report/provenance.ts";
import { BundleCopies, editJson, editJsonLines } from "../helpers/testing/tamper.ts";
import { parseXmlStrictly } from "../helpers/testing/xml.ts";
import { runCli as run } from "./run-in-process.ts";

const copies = new BundleCopies();
const out = mkdtempSync(join(tmpdir(), "dpc-hostile-out-"));
afterAll(() => {
  copies.cleanup();
  rmSync(out, { recursive: true, force: true });
});

const SOURCE = "1.20/kpr";

/**
 * One copy of the bundle serves every variant (copying and removing a whole bundle per variant took most of
 * this file's time on a loaded disk): what a variant may change is saved first and put back before the next.
 */
const base = copies.copy(SOURCE);
/** An unchanged copy, beside a changed one (compare). */
const pristine = copies.copy(SOURCE);
const TOUCHED = ["bundle.json", "calls", "verdicts.jsonl", "baseline", "raw/iptables"];
let undo: (() => void) | null = null;

/** The bundle changed by `change` (given its folder); the change before it undone first. */
function hostile(change: (dir: string) => void): string {
  undo?.();
  const saved = mkdtempSync(join(out, "saved-"));
  for (const [i, rel] of TOUCHED.entries())
    cpSync(join(base, rel), join(saved, String(i)), { recursive: true });
  undo = () => {
    TOUCHED.forEach((rel, i) => {
      rmSync(join(base, rel), { recursive: true, force: true });
      renameSync(join(saved, String(i)), join(base, rel));
    });
    rmSync(saved, { recursive: true, force: true });
    undo = null;
  };
  change(base);
  return base;
}

const topicCalls = (dir: string) =>
  readFileSync(join(dir, "calls", "iptables.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as CallRecord);

/** The 1-based line of the first iptables call whose stdout is compressed (the topic reads it). */
const gzCall = (dir: string) => {
  const i = topicCalls(dir).findIndex((c) => c.stdoutFile.endsWith(".gz"));
  return { line: i + 1, file: (topicCalls(dir)[i] as CallRecord).stdoutFile };
};

/** exit 2 and exactly one line, the command's, naming what `names` matches; no stack frame anywhere. */
function refused(r: { code: number; out: string; err: string }, cmd: string, names: RegExp) {
  expect(r.code, r.err).toBe(2);
  expect(r.err.endsWith("\n")).toBe(true);
  expect(r.err.trimEnd().split("\n"), r.err).toHaveLength(1);
  expect(r.err).toMatch(new RegExp(`^datapath-conformance ${cmd}: `));
  expect(r.err).toMatch(names);
  expect(r.err).not.toMatch(/\n\s+at |Error:/);
  expect(r.out).toBe("");
}

const PASSWD_LINE = /root:x?:0:0/;

/** The characters a terminal would obey in `s` (controls but newline and tab, C1, bidi overrides, line separators). */
const emitted = (s: string) =>
  [...s].filter((c) => {
    const n = c.codePointAt(0) as number;
    return (
      (n < 0x20 && c !== "\n" && c !== "\t") ||
      (n >= 0x7f && n <= 0x9f) ||
      (n >= 0x2028 && n <= 0x202e) ||
      (n >= 0x2066 && n <= 0x2069)
    );
  });

describe("hostile bundles: refused with exit 2 and one line naming the entry", { timeout: 60_000 }, () => {
  it("a call whose stdoutFile climbs out of the bundle (../../../etc/passwd), or is absolute", async () => {
    for (const path of ["../../../etc/passwd", "/etc/passwd", "raw/../../../../etc/passwd"]) {
      const dir = hostile((d) =>
        editJsonLines(d, "calls/iptables.jsonl", (c, i) =>
          i === 2 ? { ...c, stdoutFile: path } : undefined,
        ),
      );
      const r = await run(["check", dir]);
      refused(r, "check", /calls\/iptables\.jsonl:3: stdoutFile: ".*" leaves the bundle/);
      expect(r.err).not.toMatch(PASSWD_LINE);
      const page = join(out, "passwd.html");
      refused(await run(["report", dir, "-o", page]), "report", /calls\/iptables\.jsonl:3: stdoutFile/);
      expect(existsSync(page)).toBe(false);
    }
  });

  it("a raw output that is a link to a file outside the bundle; a link inside it is followed", async () => {
    const { file } = gzCall(base);
    const out1 = hostile((d) => {
      unlinkSync(join(d, file));
      symlinkSync("/etc/passwd", join(d, file));
    });
    const r = await run(["check", out1]);
    refused(
      r,
      "check",
      /calls\/iptables\.jsonl:\d+: stdoutFile: ".*" is a link out of the bundle; only files inside it are read/,
    );
    // the entry is named, not where it leads (issue 45)
    expect(r.err).not.toContain("/etc/passwd");
    refused(
      await run(["report", out1, "-o", join(out, "link.html")]),
      "report",
      /is a link out of the bundle/,
    );
    refused(await run(["compare", pristine, out1]), "compare", /is a link out of the bundle/);
    // a link to a folder outside, and a link that leads nowhere
    const viaFolder = hostile((d) => {
      rmSync(join(d, "raw", "iptables"), { recursive: true });
      symlinkSync("/etc", join(d, "raw", "iptables"));
    });
    refused(await run(["check", viaFolder]), "check", /is a link out of the bundle|is not in the bundle/);
    const dangling = hostile((d) => {
      unlinkSync(join(d, file));
      symlinkSync(join(d, "nowhere"), join(d, file));
    });
    refused(await run(["check", dangling]), "check", /is a link that leads nowhere/);
    // inside the bundle too (issue 36): a link is refused, not followed (see "files" below)
    const inside = hostile((d) => {
      renameSync(join(d, file), join(d, `${file}.moved`));
      symlinkSync(join(d, `${file}.moved`), join(d, file));
    });
    refused(
      await run(["check", inside]),
      "check",
      /is a symbolic link: a bundle's files are read as themselves/,
    );
  });

  it("bundle.json, calls/ or baseline/ linked out of the bundle", async () => {
    const meta = hostile((d) => {
      unlinkSync(join(d, "bundle.json"));
      symlinkSync("/etc/passwd", join(d, "bundle.json"));
    });
    refused(await run(["check", meta]), "check", /bundle\.json: "bundle\.json" is a link out of the bundle/);
    const calls = mkdtempSync(join(out, "calls-"));
    const callsOut = hostile((d) => {
      for (const f of readdirSync(join(d, "calls"))) renameSync(join(d, "calls", f), join(calls, f));
      rmSync(join(d, "calls"), { recursive: true });
      symlinkSync(calls, join(d, "calls"));
    });
    refused(await run(["check", callsOut]), "check", /calls\/\S+\.jsonl: ".*" is a link out of the bundle/);
    const baseline = hostile((d) => {
      const f = readdirSync(join(d, "baseline"))[0] as string;
      unlinkSync(join(d, "baseline", f));
      symlinkSync("/etc/passwd", join(d, "baseline", f));
    });
    refused(
      await run(["check", baseline]),
      "check",
      /baseline\/metrics-\S+\.json: .* is a link out of the bundle/,
    );
  });

  it("past the caps: a gzip bomb, a raw output too large to read, a corrupt gzip, a FIFO", async () => {
    // 1 MiB of zeros gzipped, as many members as it takes to pass the cap: ~70 KB inflating past 64 MiB
    const member = gzipSync(Buffer.alloc(1 << 20), { level: 9 });
    const bomb = Buffer.concat(Array(LIMITS.rawBytes / (1 << 20) + 2).fill(member));
    expect(bomb.length).toBeLessThan(200_000);
    const { file } = gzCall(base);
    const bombed = hostile((d) => writeFileSync(join(d, file), bomb));
    const t0 = performance.now();
    refused(
      await run(["check", bombed]),
      "check",
      new RegExp(`${file.replace(/[.]/g, "\\.")}: inflates past the 64 MiB cap for one raw output`),
    );
    expect(performance.now() - t0).toBeLessThan(15_000);
    // a plain output over the cap is refused on its size, before it is read (a sparse file: no disk used)
    const large = hostile((d) => {
      const plain = topicCalls(d).find((c) => !c.stdoutFile.endsWith(".gz"))?.stdoutFile as string;
      truncateSync(join(d, plain), LIMITS.rawBytes + 1);
    });
    refused(await run(["check", large]), "check", /bytes, over the 64 MiB cap for this file/);
    const corrupt = hostile((d) => writeFileSync(join(d, file), Buffer.from("not gzip at all")));
    refused(await run(["check", corrupt]), "check", /is not valid gzip/);
    const fifo = hostile((d) => {
      unlinkSync(join(d, file));
      expect(spawnSync("mkfifo", [join(d, file)]).status).toBe(0);
    });
    refused(await run(["check", fifo]), "check", /is not a regular file/);
    const bigJson = hostile((d) => truncateSync(join(d, "verdicts.jsonl"), LIMITS.jsonFileBytes + 1));
    refused(await run(["check", bigJson]), "check", /verdicts\.jsonl: \d+ bytes, over the 32 MiB cap/);
  });

  it("malformed files: the file and line, and what is wrong there", async () => {
    const cases: [string, (d: string) => void, RegExp][] = [
      [
        "a line of verdicts.jsonl that is not JSON",
        (d) =>
          writeFileSync(
            join(d, "verdicts.jsonl"),
            `${readFileSync(join(d, "verdicts.jsonl"), "utf8")}not json\n`,
          ),
        /verdicts\.jsonl:\d+: not JSON/,
      ],
      [
        "a stored verdict with an unknown status",
        (d) =>
          editJsonLines(d, "verdicts.jsonl", (v, i) => (i === 4 ? { ...v, status: "maybe" } : undefined)),
        /verdicts\.jsonl:5: "status": expected one of "pass", "fail", "skip", "known-issue", "changed", found a string "maybe"/,
      ],
      [
        "a stored verdict whose evidence nests without end",
        (d) => {
          const path = join(d, "verdicts.jsonl");
          const [first, ...rest] = readFileSync(path, "utf8").split("\n");
          const deep = `[${"[".repeat(100_000)}${"]".repeat(100_000)}]`;
          const line = JSON.stringify({ ...JSON.parse(first as string), evidence: "X" }).replace('"X"', deep);
          writeFileSync(path, [line, ...rest].join("\n"));
        },
        /verdicts\.jsonl:1: evidence\[0\] is neither a line nor an evidence item/,
      ],
      [
        "a bundle.json with only the mode",
        (d) => writeFileSync(join(d, "bundle.json"), '{"mode":"kpr"}'),
        /bundle\.json:1: "cilium": expected a string, found nothing/,
      ],
      [
        "phases that are a string",
        (d) => editJson(d, "bundle.json", (m) => ({ ...m, phases: "fast" })),
        /bundle\.json:\d+: "phases": expected an object, found a string "fast"/,
      ],
      [
        "a phase that is not a number",
        (d) => editJson(d, "bundle.json", (m) => ({ ...m, phases: { "create cluster": "60" } })),
        /bundle\.json:\d+: "phases"\."create cluster": expected a number, found a string "60"/,
      ],
      [
        "an unknown mode",
        (d) => editJson(d, "bundle.json", (m) => ({ ...m, mode: "ipvs" })),
        /bundle\.json:3: "mode": expected one of "kpr", "kube-proxy"/,
      ],
      [
        "bundle.json cut short",
        (d) => writeFileSync(join(d, "bundle.json"), '{\n  "format": 1,\n  "mode": "kpr",\n'),
        /bundle\.json:\d+: not valid JSON/,
      ],
      [
        "bundle.json that is null",
        (d) => writeFileSync(join(d, "bundle.json"), "null"),
        /bundle\.json:1: expected an object, found null/,
      ],
      [
        "bundle.json that is a folder",
        (d) => {
          unlinkSync(join(d, "bundle.json"));
          mkdirSync(join(d, "bundle.json"));
        },
        /bundle\.json: "bundle\.json" is not a regular file/,
      ],
      [
        "a call line that is not JSON",
        (d) =>
          writeFileSync(
            join(d, "calls", "iptables.jsonl"),
            `${readFileSync(join(d, "calls", "iptables.jsonl"), "utf8")}{"seq":\n`,
          ),
        /calls\/iptables\.jsonl:\d+: not JSON/,
      ],
      [
        "a string exit code",
        (d) =>
          editJsonLines(d, "calls/iptables.jsonl", (c, i) =>
            i === 2 ? { ...c, exitCode: "<img src=x onerror=alert(1)>" } : undefined,
          ),
        /calls\/iptables\.jsonl:3: "exitCode": expected a number or null, found a string "<img src=x onerror=alert\(1\)>"/,
      ],
      [
        "an argv that is not a list of strings",
        (d) =>
          editJsonLines(d, "calls/iptables.jsonl", (c, i) =>
            i === 1 ? { ...c, argv: ["get", { x: 1 }] } : undefined,
          ),
        /calls\/iptables\.jsonl:2: "argv"\[1\]: expected a string, found an object/,
      ],
      [
        "a call without its stdoutFile",
        (d) =>
          editJsonLines(d, "calls/iptables.jsonl", (c, i) =>
            i === 0 ? { ...c, stdoutFile: undefined } : undefined,
          ),
        /calls\/iptables\.jsonl:1: "stdoutFile": expected a string, found nothing/,
      ],
      [
        "a call whose stdoutFile is not in the bundle",
        (d) =>
          editJsonLines(d, "calls/iptables.jsonl", (c, i) =>
            i === 3 ? { ...c, stdoutFile: "raw/iptables/nope.txt" } : undefined,
          ),
        /calls\/iptables\.jsonl:4: stdoutFile "raw\/iptables\/nope\.txt" is not in the bundle/,
      ],
      [
        "a call record that is a list",
        (d) => writeFileSync(join(d, "calls", "iptables.jsonl"), "[1,2,3]\n"),
        /calls\/iptables\.jsonl:1: expected an object, found a list/,
      ],
      [
        "calls/ that is a file",
        (d) => {
          rmSync(join(d, "calls"), { recursive: true });
          writeFileSync(join(d, "calls"), "");
        },
        /calls\/: not a folder that can be listed \(ENOTDIR\)/,
      ],
      [
        // issue 36: a TypeError with a stack trace and exit 1 ("a property failed")
        "neverRunHere that is an object",
        (d) => editJson(d, "bundle.json", (m) => ({ ...m, neverRunHere: {} })),
        /bundle\.json:\d+: "neverRunHere": expected a list, found an object/,
      ],
      [
        // issue 36: a 30 MB cilium took report to V8's out-of-memory abort at 4.2 GB
        "a cilium version of a megabyte",
        (d) => editJson(d, "bundle.json", (m) => ({ ...m, cilium: "1".repeat(1 << 20) })),
        /bundle\.json:\d+: "cilium": a string of 1048576 characters, over its cap of \d+ \(docs\/report-and-cli\.md "Limits"\)/,
      ],
      [
        "a stored verdict's observed value of a megabyte",
        (d) =>
          editJsonLines(d, "verdicts.jsonl", (v, i) =>
            i === 1 ? { ...v, observed: "1".repeat(1 << 20) } : undefined,
          ),
        /verdicts\.jsonl:2: "observed": a string of 1048576 characters, over its cap/,
      ],
      [
        "a call's argv of a hundred thousand words",
        (d) =>
          editJsonLines(d, "calls/iptables.jsonl", (c, i) =>
            i === 0 ? { ...c, argv: Array(100_000).fill("x") } : undefined,
          ),
        /calls\/iptables\.jsonl:1: "argv": a list of 100000 items, over its cap of \d+/,
      ],
      [
        "a line of a million characters",
        (d) => writeFileSync(join(d, "calls", "iptables.jsonl"), `${"x".repeat(LIMITS.jsonLineBytes + 1)}\n`),
        /calls\/iptables\.jsonl:1: a line of \d+ characters, over the 8 MiB cap/,
      ],
    ];
    for (const [what, change, names] of cases) {
      const dir = hostile(change);
      const r = await run(["check", dir]);
      expect(r.err, what).toMatch(names);
      refused(r, "check", names);
    }
  });

  it("not a bundle at all: a file, an empty folder; and summary refuses a hostile bundle like check", async () => {
    refused(
      await run(["check", "/etc/passwd"]),
      "check",
      /\/etc\/passwd is not an evidence bundle \(not a folder\)/,
    );
    refused(
      await run(["report", mkdtempSync(join(out, "empty-"))]),
      "report",
      // a folder stands for the bundles in it (issue 27): an empty one holds none
      /holds no evidence bundle \(no bundle\.json in it or in any folder below it\)/,
    );
    const dir = hostile((d) =>
      editJsonLines(d, "calls/measure-scale.jsonl", (c, i) =>
        i === 0 ? { ...c, stdoutFile: "/etc/passwd" } : undefined,
      ),
    );
    refused(
      await run(["summary", dir]),
      "summary",
      /calls\/measure-scale\.jsonl:1: stdoutFile: "\/etc\/passwd" leaves the bundle/,
    );
  });

  it("the same refusals through bin/datapath-conformance.mjs, the process a user starts", () => {
    const dir = hostile((d) =>
      editJsonLines(d, "calls/iptables.jsonl", (c, i) =>
        i === 2 ? { ...c, stdoutFile: "../../../etc/passwd" } : undefined,
      ),
    );
    const r = spawnSync(
      process.execPath,
      [join(import.meta.dirname, "..", "bin", "datapath-conformance.mjs"), "check", dir],
      {
        encoding: "utf8",
      },
    );
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      `datapath-conformance check: bundle ${dir}: calls/iptables.jsonl:3: stdoutFile: "../../../etc/passwd" leaves the bundle (only paths inside it are read)\n`,
    );
  });
});

describe(
  "size: what a bundle holds cannot overflow the stack, the memory or GitHub's limits (issue 36)",
  { timeout: 60_000 },
  () => {
    it("130,000 stored verdicts: check lists the differences up to a cap, with no stack overflow; --markdown stays under the step summary's cap", async () => {
      const dir = hostile((d) => {
        const line = (i: number) =>
          JSON.stringify({
            id: `gone.p${i}`,
            topic: "gone",
            claim: "c",
            expected: "1",
            observed: "1",
            message: "m",
            status: "pass",
            evidence: [],
          });
        writeFileSync(
          join(d, "verdicts.jsonl"),
          `${Array.from({ length: 130_000 }, (_, i) => line(i)).join("\n")}\n`,
        );
      });
      const text = await run(["check", dir]);
      expect(text.code, text.err).toBe(0);
      expect(text.out).toMatch(/stored verdicts\.jsonl: 130\d{3} difference\(s\)/);
      expect(text.out).toMatch(/\.\.\. and 1\d{5} more difference\(s\)/);
      expect(text.out.split("\n").length).toBeLessThan(1_000);
      const md = await run(["check", dir, "--markdown"]);
      expect(md.code, md.err).toBe(0);
      expect(Buffer.byteLength(md.out)).toBeLessThanOrEqual(256 * 1024);
      expect(md.out).toMatch(/^- \.\.\. and 1\d{5} more difference\(s\)$/m);
    });

    it("a 30 KB .gz holding one 30-million-character line a failure quotes: check's output, --junit and the report stay small, in 400 MB of heap (issue 45)", async () => {
      const dir = hostile((d) => {
        const save = topicCalls(d).find((c) => c.argv.join(" ") === "iptables-save") as CallRecord;
        const path = join(d, save.stdoutFile);
        const text = gunzipSync(readFileSync(path)).toString("utf8");
        const line = `-A KUBE-SVC-ABC -d 10.96.0.10/32 -m comment --comment "${"x".repeat(30_000_000)}" -j KUBE-SEP-X`;
        writeFileSync(path, gzipSync(text.replace("COMMIT", `${line}\nCOMMIT`), { level: 9 }));
      });
      const junit = join(out, "big-line.xml");
      // before: 60 MB on stdout, 120 MB of JUnit, 1.1 GB of memory (2.3 GB for a 60 MB line)
      const r = spawnSync(
        process.execPath,
        [
          "--max-old-space-size=400",
          join(import.meta.dirname, "..", "bin", "datapath-conformance.mjs"),
          "check",
          dir,
          "--junit",
          junit,
        ],
        { encoding: "utf8", maxBuffer: 256 << 20 },
      );
      expect(r.status, r.stderr.slice(0, 2000)).toBe(1);
      expect(r.stdout).toMatch(/-A KUBE-SVC-ABC .*x{100}.* … \(\d+ more characters, in the bundle\)/);
      expect(Buffer.byteLength(r.stdout)).toBeLessThan(200_000);
      const xml = readFileSync(junit, "utf8");
      expect(Buffer.byteLength(xml)).toBeLessThan(200_000);
      expect(() => parseXmlStrictly(xml)).not.toThrow();
      // the report: the headline's line, the cell, the embedded output, each cut (it was a 30 MB page)
      const page = join(out, "big-line.html");
      expect((await run(["report", dir, "-o", page])).code).toBe(0);
      expect(statSync(page).size).toBeLessThan(1 << 20);
    });

    it("an iptables-save of 20,000 KUBE-SVC rules, every one cited: check is quick, and a report cell holds a bounded part of it (issue 45)", async () => {
      const dir = hostile((d) => {
        const save = topicCalls(d).find((c) => c.argv.join(" ") === "iptables-save") as CallRecord;
        const path = join(d, save.stdoutFile);
        const text = gunzipSync(readFileSync(path)).toString("utf8");
        const rules = Array.from(
          { length: 20_000 },
          (_, i) =>
            `-A KUBE-SVC-${i.toString(36).toUpperCase().padStart(8, "A")} -d 10.96.${(i >> 8) & 255}.${i & 255}/32 -p tcp -m comment --comment "ns/svc${i}:http cluster IP" -j KUBE-SEP-X`,
        );
        writeFileSync(path, gzipSync(text.replace("COMMIT", `${rules.join("\n")}\nCOMMIT`)));
      });
      // before: 89 s (each chain only jumped to looked up by sorting every rule again)
      const started = Date.now();
      const r = await run(["check", dir]);
      expect(r.code, r.err).toBe(1);
      expect(Date.now() - started).toBeLessThan(30_000);
      const page = join(out, "many.html");
      expect((await run(["report", dir, "-o", page])).code).toBe(0);
      const b64 = /data-[a-z-]+="([A-Za-z0-9+/]{1000,}=*)"/.exec(readFileSync(page, "utf8"))?.[1];
      const data = decodeData(b64 as string);
      const cells = data.C.flatMap((c) => c.v).filter((v) => v !== null);
      // before: a cell listed every cited line (20,000 items) and embedded them all with their context
      expect(Math.max(...cells.map((v) => v.ev.length))).toBe(REPORT_EVIDENCE_ITEMS + 1);
      expect(Math.max(...data.C.flatMap((c) => c.o).map((o) => o.l.length / 3))).toBeLessThanOrEqual(
        MAX_EMBEDDED_LINES + 7,
      );
      expect(Math.max(...data.S.map((t) => t.length))).toBeLessThanOrEqual(4 * SHOWN_VALUE_CHARS + 100);
    });

    it("report and summary refuse a string over its field's cap before building anything", async () => {
      const dir = hostile((d) => editJson(d, "bundle.json", (m) => ({ ...m, origin: "x".repeat(12 << 20) })));
      refused(
        await run(["report", dir, "-o", join(out, "big.html")]),
        "report",
        /bundle\.json:\d+: "origin": a string of 12582912 characters, over its cap/,
      );
      refused(await run(["summary", dir]), "summary", /"origin": a string of 12582912 characters/);
      expect(existsSync(join(out, "big.html"))).toBe(false);
    });
  },
);

describe("files: links, damaged outputs, an empty verdicts file (issue 36)", { timeout: 60_000 }, () => {
  it("a raw output with a second hard link (to a file outside the bundle) is refused, not read", async () => {
    const { file } = gzCall(base);
    // a file outside the bundle, as the raw output is (gzip): the old reader read it and judged it
    const secret = join(out, "secret.txt.gz");
    writeFileSync(secret, gzipSync("SECRET LINE FROM OUTSIDE THE BUNDLE\n"));
    const dir = hostile((d) => {
      unlinkSync(join(d, file));
      linkSync(secret, join(d, file));
    });
    const r = await run(["check", dir]);
    refused(r, "check", /has 2 hard links: a bundle's files are read only when they are nothing else/);
    expect(r.err).not.toContain("SECRET");
  });

  it("a raw output that is a relative link to another call's output is refused: one call's output never stands for another's", async () => {
    const [a, b] = topicCalls(base)
      .map((c) => c.stdoutFile)
      .filter((f) => f.endsWith(".gz"));
    const dir = hostile((d) => {
      unlinkSync(join(d, a as string));
      symlinkSync(basename(b as string), join(d, a as string));
    });
    refused(
      await run(["check", dir]),
      "check",
      /is a symbolic link: a bundle's files are read as themselves/,
    );
  });

  it("a raw output that is not UTF-8 is damaged evidence: refused, not judged as the cluster's failures", async () => {
    const { file } = gzCall(base);
    const dir = hostile((d) => {
      const text = gunzipSync(readFileSync(join(d, file)));
      writeFileSync(
        join(d, file),
        gzipSync(Buffer.concat([text.subarray(0, 40), Buffer.from([0xff, 0xfe, 0xc3]), text.subarray(40)])),
      );
    });
    const r = await run(["check", dir]);
    refused(r, "check", /not valid UTF-8 at byte 40: damaged evidence/);
    expect(r.out).not.toContain("FAIL");
  });

  it("what held, kept tested: a symbolic link loop is refused; __proto__ and constructor keys pollute nothing", async () => {
    const { file } = gzCall(base);
    const loop = hostile((d) => {
      unlinkSync(join(d, file));
      symlinkSync(basename(file), join(d, file));
    });
    refused(await run(["check", loop]), "check", /is a link that leads nowhere/);
    const keys = hostile((d) => {
      const text = readFileSync(join(d, "bundle.json"), "utf8").replace(
        '"phases": {',
        '"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "yes"}}, "phases": {"__proto__": 5, ',
      );
      writeFileSync(join(d, "bundle.json"), text);
    });
    const r = await run(["check", keys]);
    expect(r.code, r.err).toBe(0);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("an empty verdicts.jsonl: no stored verdicts, said once", async () => {
    const dir = hostile((d) => writeFileSync(join(d, "verdicts.jsonl"), ""));
    const r = await run(["check", dir]);
    expect(r.code, r.err).toBe(0);
    expect(r.out.match(/no stored verdicts/g)).toHaveLength(1);
    expect(r.out).not.toContain("not stored");
  });
});

describe("where report and summary write", { timeout: 60_000 }, () => {
  it("never onto a folder, never into one of the input bundles; otherwise through a temporary file and a rename", async () => {
    const dir = hostile(() => {});
    const before = readFileSync(join(dir, "bundle.json"), "utf8");
    refused(await run(["report", dir, "-o", out]), "report", /-o .* is a folder; name a file/);
    for (const inside of [
      join(dir, "bundle.json"),
      join(dir, "raw", "report.html"),
      join(dir, "new", "report.html"),
      dir,
    ])
      refused(
        await run(["report", dir, "-o", inside]),
        "report",
        /is (inside the bundle .*, one of the inputs|a folder)/,
      );
    // named through a link to the bundle's folder, and as the second bundle of --compare
    const link = join(out, "bundle-link");
    symlinkSync(dir, link);
    refused(await run(["report", dir, "-o", join(link, "bundle.json")]), "report", /inside the bundle/);
    const other = pristine;
    refused(
      await run(["report", "--compare", other, dir, "-o", join(dir, "verdicts.jsonl")]),
      "report",
      /inside the bundle/,
    );
    refused(
      await run(["summary", dir, "--svg", join(dir, "chart.svg")]),
      "summary",
      /--svg .* inside the bundle/,
    );
    expect(readFileSync(join(dir, "bundle.json"), "utf8")).toBe(before);
    expect(existsSync(join(dir, "new"))).toBe(false);
    // a report beside the bundle: written whole, an older file replaced, no temporary file left
    const page = join(out, "sub", "report.html");
    mkdirSync(join(out, "sub"));
    writeFileSync(page, "old");
    const r = await run(["report", dir, "-o", page]);
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(page, "utf8")).toMatch(/^<!doctype html>[\s\S]*<\/html>\n$/);
    expect(readdirSync(join(out, "sub"))).toEqual(["report.html"]);
  });
});

describe("terminal output", () => {
  it("a malformed verdicts line carrying ESC ]52 (clipboard) and ESC [2J: the one error line shows them, obeys none", async () => {
    const dir = hostile((d) =>
      writeFileSync(
        join(d, "verdicts.jsonl"),
        `\u001b]52;c;cHduZWQ=\u0007\u001b[2J{"id":\n${readFileSync(join(d, "verdicts.jsonl"), "utf8")}`,
      ),
    );
    const r = await run(["check", dir]);
    refused(r, "check", /verdicts\.jsonl:1: not JSON/);
    // the JSON parser's own message quotes the line's start: shown, not obeyed
    expect(r.err).toContain('"\\u{1b}]52;c;cHd"');
    expect(emitted(r.err)).toEqual([]);
  });

  it("C1 controls, a bidirectional override and a line separator in a stdoutFile are shown in the error, not emitted", async () => {
    const dir = hostile((d) =>
      editJsonLines(d, "calls/iptables.jsonl", (c, i) =>
        i === 1 ? { ...c, stdoutFile: "raw/iptables/x\u009b2J\u202egnp.exe\u2028y.txt" } : undefined,
      ),
    );
    const r = await run(["check", dir]);
    refused(r, "check", /calls\/iptables\.jsonl:2: stdoutFile/);
    expect(r.err).toContain("x\\u{9b}2J\\u{202e}gnp.exe\\u{2028}y.txt");
    expect(emitted(r.err)).toEqual([]);
  });

  it("markdown (check --markdown): @mentions from a bundle ping nobody", async () => {
    const dir = hostile((d) =>
      editJsonLines(d, "verdicts.jsonl", (v, i) =>
        i === 0 ? { ...v, id: "dns.x @octocat @org/team" } : undefined,
      ),
    );
    const r = await run(["check", dir, "--markdown"]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain("@\u200boctocat @\u200borg/team");
    expect(r.out).not.toMatch(/(^|[^\w`])@(octocat|org)/m);
  });

  it("invisible and direction marks in a bundle's string are shown; its URLs and references make no autolink in markdown (issue 45)", async () => {
    const marks = "\u200e\u200f\u061c\u200b\ufeff\u2061\u2064\u00ad";
    const dir = hostile((d) => {
      editJson(d, "bundle.json", (m) => ({ ...m, cilium: `${m.cilium}${marks}` }));
      editJsonLines(d, "verdicts.jsonl", (v, i) =>
        i === 0
          ? { ...v, id: "dns.x https://evil.example/p www.evil.example cilium/cilium#1 #2 GH-3" }
          : undefined,
      );
    });
    const text = await run(["check", dir]);
    expect(text.out).toContain("\\u{200e}\\u{200f}\\u{61c}\\u{200b}\\u{feff}\\u{2061}\\u{2064}\\u{ad}");
    expect(`${text.out}${text.err}`).not.toMatch(/[\u200b-\u200f\u061c\ufeff\u2060-\u2064\u00ad]/);
    const md = await run(["check", dir, "--markdown"]);
    expect(md.code, md.err).toBe(0);
    expect(md.out).toContain(
      "dns.x https:\u200b//evil.example/p www\u200b.evil.example cilium/cilium#\u200b1",
    );
    expect(md.out).not.toMatch(/https?:\/\/evil|www\.evil|#\d|GH-\d/);
  });

  it("summary --svg: a version carrying characters XML forbids still makes a well-formed SVG (a strict XML parser reads it)", async () => {
    const dir = hostile((d) =>
      editJson(d, "bundle.json", (m) => ({ ...m, cilium: `${m.cilium}\u0001\uFFFE\ud800` })),
    );
    const svg = join(out, "chart.svg");
    const r = await run(["summary", dir, "--svg", svg]);
    expect(r.code, r.err).toBe(0);
    expect(() => parseXmlStrictly(readFileSync(svg, "utf8"))).not.toThrow();
  });

  it("control characters from a bundle are shown, not obeyed", async () => {
    expect(guardLines("a\u001b]0;owned\u0007b\tc\n\u202eevil")).toBe(
      "a\\u{1b}]0;owned\\u{7}b\tc\n\\u{202e}evil",
    );
    const dir = hostile((d) =>
      editJson(d, "bundle.json", (m) => ({ ...m, cilium: "1.20.2\u001b[2J\u001b]0;owned\u0007" })),
    );
    const r = await run(["check", dir]);
    expect(r.out).toContain("Cilium 1.20.2\\u{1b}[2J\\u{1b}]0;owned\\u{7}");
    expect(r.out.includes("\u001b") || r.out.includes("\u0007")).toBe(false);
  });
});
