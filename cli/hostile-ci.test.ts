/**
 * What a bundle says cannot command the CI that reads it (issue 36). GitHub's runner reads every line a step
 * prints, on stdout and on stderr: a line that starts with `::` after its leading whitespace is a workflow
 * command (`::error …::`, `::add-mask::`, `::stop-commands::TOKEN`, after which every later command of the step
 * is ignored), and `##[` anywhere in a line is one too (the older syntax). A line ends at LF, CR or CRLF.
 *
 * Copies of shipped bundles (WRITTEN BY US, changed here; nothing hostile is committed) carry such lines in every
 * string the issue found printed raw: a request loop log's `to`, bundle.json's `upgrade.from`, `neverRunHere`
 * and `cilium`, a stored verdict's `id` and `observed`, a raw file's name and a quoted raw line, a bundle folder's
 * name inside a DIR. `upgrade`, `check` and the upgrade job's gate (scripts/upgrade-job.sh) run on them as CI
 * runs them (GITHUB_ACTIONS=true CI=true, the process a user starts), and what they print is read with the
 * runner's rules: the only commands are the annotations the suite writes itself, one line each, their data and
 * properties escaped as the runner's toolkit escapes them; the step summary holds no markup and no mention from
 * the bundle, and stays under GitHub's 1 MiB.
 */
import { spawn } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallRecord } from "../helpers/exec/record.ts";
import { BUNDLES_DIR, editJson, editJsonLines, KUBE_SVC_LINE } from "../helpers/testing/tamper.ts";
import { TOPICS } from "../suites/topics.ts";

const ROOT = join(import.meta.dirname, "..");
const BIN = join(ROOT, "bin", "datapath-conformance.mjs");
const GATE = join(ROOT, "scripts", "upgrade-job.sh");
const tmp = mkdtempSync(join(tmpdir(), "dpc-hostile-ci-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Every way into a runner command the issue tried, with markup, a mention and terminal escapes beside. */
const EVIL =
  "x\n::error title=evil::pwned\r::add-mask::s3cret\n  ::stop-commands::TOKEN\n##[warning]legacy\u2028::notice::sep \u001b]52;c;cHduZWQ=\u0007<img src=http://evil.example/x.png> @octocat";

/** The lines GitHub's runner takes for commands: `::` first after leading whitespace, or `##[` anywhere. */
function runnerCommands(text: string): string[] {
  return text.split(/\r\n|\r|\n/).filter((l) => l.trimStart().startsWith("::") || l.includes("##["));
}

/**
 * An annotation as the suite writes one: `::error|warning|notice title=…::message`, at the start of its line,
 * the title escaped as a property (`%`, CR, LF, `:` and `,` as %XX) and the message as data (`%`, CR, LF).
 */
const OWN =
  /^::(error|warning|notice) title=((?:[^%\r\n:,]|%25|%0D|%0A|%3A|%2C)*)::((?:[^%\r\n]|%25|%0D|%0A)*)$/;

/** Checks that every command in `text` is one the suite wrote: its form, and its title among `titles`. */
function onlyOwnCommands(text: string, titles: Set<string>): string[] {
  const found = runnerCommands(text);
  for (const line of found) {
    const m = OWN.exec(line);
    expect(m, `a command the suite did not write: ${JSON.stringify(line)}`).not.toBeNull();
    expect(titles.has((m as RegExpExecArray)[2] as string), line).toBe(true);
  }
  return found;
}

function run(
  cmd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      env: { ...process.env, GITHUB_ACTIONS: "true", CI: "true", GITHUB_STEP_SUMMARY: "", ...env },
    });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      err += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out, err }));
  });
}
const cli = (args: string[], env: Record<string, string> = {}) => run(process.execPath, [BIN, ...args], env);

const calls = (dir: string, topic: string) =>
  readFileSync(join(dir, "calls", `${topic}.jsonl`), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as CallRecord);

/** A gzipped or plain raw output rewritten by `edit`. */
function editRaw(path: string, edit: (text: string) => string): void {
  const gz = path.endsWith(".gz");
  const text = (gz ? gunzipSync(readFileSync(path)) : readFileSync(path)).toString("utf8");
  const next = edit(text);
  writeFileSync(path, gz ? gzipSync(next) : next);
}

/** A copy of 1.20/kpr in a folder whose name carries EVIL, with EVIL in every string check printed raw. */
const DIR = join(tmp, "dir");
const CHECKED = join(DIR, `b${EVIL}`);
/** A copy of the 1.19 → 1.20 kpr upgrade with EVIL in its request loop's `to` and its bundle.json's `from`. */
const UPGRADE = join(tmp, "upgrade");

beforeAll(() => {
  mkdirSync(DIR);
  cpSync(join(BUNDLES_DIR, "1.20", "kpr"), CHECKED, { recursive: true });
  editJson(CHECKED, "bundle.json", (m) => ({
    ...m,
    cilium: `${m.cilium}${EVIL}`,
    neverRunHere: ["::error::never run here", EVIL, "##[error]never"],
  }));
  editJsonLines(CHECKED, "verdicts.jsonl", (v, i) =>
    i === 0 ? { ...v, id: `dns.evil${EVIL}` } : i === 1 ? { ...v, observed: `1${EVIL}` } : undefined,
  );
  // iptables-save with a KUBE-SVC rule (fails iptables.kube-svc-lines, whose message quotes it) carrying `##[`,
  // its raw file renamed to a name that carries EVIL
  const save = calls(CHECKED, "iptables").find((c) => c.argv.join(" ") === "iptables-save") as CallRecord;
  const renamed = save.stdoutFile.replace(/[^/]*$/, (f) => `evil${EVIL.replace(/\//g, "|")}-${f}`);
  renameSync(join(CHECKED, save.stdoutFile), join(CHECKED, renamed));
  editRaw(join(CHECKED, renamed), (t) =>
    t.replace("COMMIT", `${KUBE_SVC_LINE.replace("cluster IP", "##[error]quoted")}\nCOMMIT`),
  );
  editJsonLines(CHECKED, "calls/iptables.jsonl", (c) =>
    c.stdoutFile === save.stdoutFile ? { ...c, stdoutFile: renamed } : undefined,
  );

  cpSync(join(BUNDLES_DIR, "upgrade-1.19-1.20", "kpr"), UPGRADE, { recursive: true });
  const raw = join(UPGRADE, "raw", "upgrade");
  for (const f of readdirSync(raw).filter((n) => /logs-request-loop/.test(n)))
    editRaw(join(raw, f), (t) =>
      t.split('"to":"clusterip"').join(`"to":${JSON.stringify(`clusterip${EVIL}`)}`),
    );
  editJson(UPGRADE, "bundle.json", (m) => ({
    ...m,
    upgrade: { ...(m.upgrade as object), from: `1.19.7${EVIL}` },
  }));
});

const PROPERTY_IDS = new Set(TOPICS.flatMap((t) => t.properties.map((p) => p.id)));

describe("a bundle's strings cannot command the CI that reads them", { timeout: 60_000 }, () => {
  it("check (text and --markdown, a DIR) and upgrade as in CI: no command but the suite's own annotations", async () => {
    const [text, markdown, upgrade] = await Promise.all([
      cli(["check", DIR]),
      cli(["check", CHECKED, "--markdown"]),
      cli(["upgrade", UPGRADE]),
    ]);
    for (const [what, r] of [
      ["check", text],
      ["check --markdown", markdown],
      ["upgrade", upgrade],
    ] as const) {
      expect(r.err, what).not.toMatch(/\n\s+at /);
      for (const c of ["\u001b", "\u0007", "\u2028", "\u202e"])
        expect(`${r.out}${r.err}`, what).not.toContain(c);
      expect(r.out, what).not.toContain("pwned\n");
    }
    // check: the failing property is annotated (title: its id), the strings are shown in the text, inert
    expect(text.code, text.err).toBe(1);
    const own = onlyOwnCommands(`${text.out}\n${text.err}`, new Set([...PROPERTY_IDS, "check"]));
    expect(own).toContainEqual(
      expect.stringMatching(/^::error title=iptables\.kube-svc-lines::expected 0, observed 1/),
    );
    expect(text.out).toContain("##\\u{5b}error]quoted");
    expect(text.out).toContain("\\u{a}::error title=evil::pwned\\u{d}::add-mask::s3cret");
    onlyOwnCommands(`${markdown.out}\n${markdown.err}`, new Set([...PROPERTY_IDS, "check"]));
    // upgrade: one annotation, its own (the leg broke: an error), with the bundle's `from` escaped as data
    const ups = onlyOwnCommands(`${upgrade.out}\n${upgrade.err}`, new Set(["upgrade"]));
    expect(ups, upgrade.err).toHaveLength(1);
    expect(ups[0]).toMatch(
      /^::(error|warning|notice) title=upgrade::Upgrade Cilium 1\.19\.7x\\u\{a\}::error title=evil::pwned/,
    );
  });

  it("scripts/upgrade-job.sh gate: its one annotation, and a step summary with no markup or mention from the bundle", async () => {
    const summary = join(tmp, "step-summary.md");
    const g = await run("bash", [GATE, "gate", UPGRADE], { GITHUB_STEP_SUMMARY: summary });
    const own = onlyOwnCommands(g.out, new Set(["upgrade"]));
    expect(own, g.out).toHaveLength(1);
    expect(own[0]).toMatch(/^::error title=upgrade::Upgrade Cilium .*BROKEN/);
    const md = readFileSync(summary, "utf8");
    expect(md).toContain("#### The legs");
    expect(Buffer.byteLength(md)).toBeLessThanOrEqual(1 << 20);
    expect(md).not.toMatch(/<img|<\w/);
    expect(md).not.toMatch(/(^|[^\w`])@octocat/);
    expect(md).toContain("@\u200boctocat");
    expect(runnerCommands(md)).toEqual([]);
    expect(md.split("\n").filter((l) => /^\s*::/.test(l))).toEqual([]);
  });

  it("scripts/upgrade-job.sh gate on a refused bundle: the refusal reaches the step summary as markdown, not as raw HTML, a mention or a comment (issue 45)", async () => {
    const refused = join(tmp, "refused");
    cpSync(UPGRADE, refused, { recursive: true });
    editJson(refused, "bundle.json", (m) => ({
      ...m,
      mode: "<img src=http://evil.example/x.png> @someone https://evil.example cilium/cilium#1 <!--",
    }));
    const summary = join(tmp, "refused-summary.md");
    const g = await run("bash", [GATE, "gate", refused], { GITHUB_STEP_SUMMARY: summary });
    expect(g.code, g.out).toBe(2);
    const own = onlyOwnCommands(g.out, new Set(["upgrade"]));
    expect(own, g.out).toHaveLength(1);
    const md = readFileSync(summary, "utf8");
    expect(md).toMatch(/^\*\*The upgrade gate refused the bundle\*\* \(exit 2\): bundle .*"mode"/);
    expect(md).not.toMatch(/<img|<!--|<\w/);
    expect(md).toContain("&lt;img src=http:\u200b//evil.example/x.png&gt; @\u200bsomeone");
    expect(md).not.toMatch(/(^|[^\w`])@someone|https?:\/\/evil|#\d/);
    expect(runnerCommands(md)).toEqual([]);
  });
});
