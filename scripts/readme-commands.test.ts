// One file over 450 lines: the docs' commands run in a reader's shell: one parse of the pages feeds every check
/**
 * The README and the docs/ pages are tested: every command in their `sh` code blocks runs here, as a user types it,
 * against the shipped bundles, in a sandbox folder (the repository's `suites`, `helpers` and `clusters` linked into it, so
 * what a command writes stays there). `npx datapath-conformance` is this checkout's CLI (bin/), never a download;
 * `npm run X` runs package.json's script in the repository, as npm does. A block preceded by a marker
 * `<!-- needs: … -->` cannot run here (root, a cluster, or the setup itself), and is checked instead:
 * - `needs: setup`: `npm ci` and `npm test` are what `.ci/run` runs;
 * - otherwise each command: `datapath-conformance <command> --help` (and `lab run … --dry-run`), `npm run faults
 *   -- … --dry-run`, the environment of `npm run test:conformance` through the same validation and `plan`, and a
 *   `kubectl … | datapath-conformance parse FORMAT -` pipeline fed the same command's output recorded in a
 *   shipped bundle.
 * Beside them: the README's first block is the setup `.ci/run` runs, every file a command writes goes under results/
 * (git-ignored), every bundle path the pages name exists, every relative link and anchor between them resolves, no
 * page names an issue of this repository, the image overrides the manifests read are documented, the Layout names
 * every topic folder, and the fault table is the one the shipped record gives.
 */
import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { parseMode, parseRunProvider } from "../clusters/choices.ts";
import { resolveCilium } from "../clusters/versions.ts";
import { which } from "../helpers/which.ts";
import { SHIPPED_BUNDLES } from "../suites/environment.ts";
import { faultsMain, faultTable } from "./faults/main.ts";

const ROOT = join(import.meta.dirname, "..");
/** The pages whose commands run here: the README, then every docs/ page. */
const PAGES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`),
].map((file) => ({ file, text: readFileSync(join(ROOT, file), "utf8") }));
const README = (PAGES[0] as { text: string }).text;
const ALL_TEXT = PAGES.map((p) => p.text).join("\n");
const BIN = join(ROOT, "bin", "datapath-conformance.mjs");

interface ReadmeCommand {
  /** The page (README.md, docs/…) and its line number of the command's first line. */
  file: string;
  line: number;
  text: string;
}

interface ReadmeBlock {
  line: number;
  /** What the block needs that this machine may not have (its `<!-- needs: … -->` marker), or null. */
  needs: string | null;
  commands: ReadmeCommand[];
}

/** The `sh` code blocks of a markdown text, each with its marker and its commands (continuations joined). */
function shellBlocks(md: string, file = "README.md"): ReadmeBlock[] {
  const lines = md.split("\n");
  const blocks: ReadmeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash|console)\s*$/.test(lines[i] as string)) {
      // a fence of another language: skip to its end
      if (/^```\S/.test(lines[i] as string)) while (++i < lines.length && lines[i] !== "```");
      continue;
    }
    const marker = /^<!-- needs: (.+?) -->$/.exec(lines[i - 1] ?? "");
    const block: ReadmeBlock = { line: i + 1, needs: marker?.[1] ?? null, commands: [] };
    let pending: ReadmeCommand | null = null;
    while (++i < lines.length && lines[i] !== "```") {
      const l = lines[i] as string;
      if (pending) pending.text += `\n${l}`;
      else if (l.trim() === "" || l.trim().startsWith("#")) continue;
      else pending = { file, line: i + 1, text: l };
      if (!/\\\s*$/.test(l)) {
        block.commands.push(pending);
        pending = null;
      }
    }
    blocks.push(block);
  }
  return blocks;
}

/** A command's words, its `# comment` and continuations taken off (enough for the README's plain commands). */
function words(text: string): string[] {
  return text
    .replace(/\\\n/g, " ")
    .replace(/\s#\s.*$/gm, "")
    .trim()
    .split(/\s+/);
}

/** The relative links of a markdown text (not in code spans or fences, not URLs), with their line. */
function relativeLinks(md: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  let fenced = false;
  for (const [i, raw] of md.split("\n").entries()) {
    if (/^```/.test(raw)) fenced = !fenced;
    if (fenced) continue;
    const l = raw.replace(/`[^`]*`/g, "");
    for (const m of l.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1] as string;
      if (!/^[a-z]+:/i.test(target)) out.push({ target, line: i + 1 });
    }
  }
  return out;
}

/** A page's heading anchors as GitHub makes them: lower case, punctuation dropped, spaces to hyphens. */
function anchors(md: string): string[] {
  let fenced = false;
  const out: string[] = [];
  for (const l of md.split("\n")) {
    if (/^```/.test(l)) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*)$/.exec(l);
    if (m)
      out.push(
        (m[1] as string)
          .trim()
          .toLowerCase()
          .replace(/[^\p{L}\p{N}\s_-]/gu, "")
          .replace(/\s/g, "-"),
      );
  }
  return out;
}

// ── the sandbox ────────────────────────────────────────────────────────────────────────────────────

const sandbox = mkdtempSync(join(tmpdir(), "dpc-readme-"));
for (const d of ["suites", "helpers", "clusters"]) symlinkSync(join(ROOT, d), join(sandbox, d));
const shims = mkdtempSync(join(tmpdir(), "dpc-readme-bin-"));
const labCache = mkdtempSync(join(tmpdir(), "dpc-readme-lab-"));
afterAll(() => {
  for (const d of [sandbox, shims, labCache]) rmSync(d, { recursive: true, force: true });
});
writeFileSync(
  join(shims, "npx"),
  `#!/bin/bash
# this checkout's CLI for \`npx datapath-conformance\`; nothing else is fetched
if [ "$1" = datapath-conformance ]; then shift; exec "${process.execPath}" "${BIN}" "$@"; fi
echo "npx $1: the README test runs no other package" >&2; exit 127
`,
);
chmodSync(join(shims, "npx"), 0o755);
const env: NodeJS.ProcessEnv = {
  ...process.env,
  PATH: `${shims}:${process.env.PATH ?? ""}`,
  LAB_CACHE: labCache,
  NO_COLOR: "1",
};
delete env.LAB_IMAGES;
// a reader's shell, not CI's: .ci/run sets CLUSTER_PROVIDER=none so that no test provisions, and plan and run read
// it as a flag (a reader who types `plan --cilium 1.21.0` has no such variable); the run's own settings likewise
for (const k of [
  "CLUSTER_PROVIDER",
  "CILIUM_VERSION",
  "CONFORMANCE_MODE",
  "UPGRADE_TO",
  "ROLLBACK",
  "DATAPATH_PROFILE",
])
  delete env[k];

/** `bash` without blocking the worker: the README's commands run several at once (each its own processes). */
function bashAsync(
  script: string,
  cwd: string,
  extra: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-o", "pipefail", "-c", script], {
      cwd,
      env: { ...env, ...extra },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => err.push(d));
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({ code, out: Buffer.concat(out).toString("utf8"), err: Buffer.concat(err).toString("utf8") }),
    );
  });
}

function bash(script: string, cwd: string, extra: NodeJS.ProcessEnv = {}, input?: string) {
  const r = spawnSync("bash", ["-o", "pipefail", "-c", script], {
    cwd,
    env: { ...env, ...extra },
    encoding: "utf8",
    input,
    maxBuffer: 256 << 20,
  });
  return { code: r.status, out: r.stdout ?? "", err: r.stderr ?? "" };
}

const PACKAGE = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  scripts: Record<string, string>;
};

/** `npm run NAME -- ARGS` as npm runs it: the script in the repository, node_modules/.bin on PATH. */
async function npmRun(name: string, args: string[]) {
  const script = PACKAGE.scripts[name];
  if (script === undefined) return { code: 1, out: "", err: `package.json has no script ${name}` };
  const quoted = args.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  return bashAsync(`${script} ${quoted}`, ROOT, {
    PATH: `${join(ROOT, "node_modules", ".bin")}:${env.PATH}`,
  });
}

/** `VAR=value … rest`: the environment assignments before a command, and the rest. */
function assignments(ws: string[]): { vars: Record<string, string>; rest: string[] } {
  const vars: Record<string, string> = {};
  let i = 0;
  for (; i < ws.length && /^[A-Z_]+=/.test(ws[i] as string); i++) {
    const [k, v] = (ws[i] as string).split(/=(.*)/s) as [string, string];
    vars[k] = v;
  }
  return { vars, rest: ws.slice(i) };
}

/** The recorded output of a command in a shipped bundle (`raw/<topic>/NNN-<slug>.txt[.gz]`), or null. */
function recordedOutput(command: string[]): string | null {
  const slug = command.join("-");
  for (const b of SHIPPED_BUNDLES)
    for (const topic of readdirSync(join(b, "raw"))) {
      const f = readdirSync(join(b, "raw", topic)).find((n) =>
        new RegExp(`^\\d+-${slug}\\.txt(\\.gz)?$`).test(n),
      );
      if (!f) continue;
      const bytes = readFileSync(join(b, "raw", topic, f));
      return (f.endsWith(".gz") ? gunzipSync(bytes) : bytes).toString("utf8");
    }
  return null;
}

/** How a command that needs root or a cluster is checked here; an unknown form fails, naming it. */
async function checkWithoutRunning(c: ReadmeCommand): Promise<void> {
  const ws = words(c.text);
  const { vars, rest } = assignments(ws);
  const where = `${c.file}:${c.line}: ${c.text}`;
  if (rest[0] === "npx" && rest[1] === "datapath-conformance") {
    const args = rest.slice(2);
    // the command's words: those before the first option or the first argument that is a path (a bundle a
    // cluster run would write: results/$RUN_ID/kpr)
    const firstArg = args.findIndex((a) => a.startsWith("-") || a.includes("/"));
    const path = firstArg < 0 ? args : args.slice(0, firstArg);
    const help = bash(`npx datapath-conformance ${path.join(" ")} --help`, sandbox);
    expect(help.code, `${where}\n${help.err}`).toBe(0);
    expect(help.out, where).toContain(`usage: datapath-conformance ${path.join(" ")}`);
    if (path.join(" ") === "lab run") {
      const dry = bash(`npx datapath-conformance ${args.join(" ")} --dry-run`, sandbox);
      expect(dry.code, `${where}\n${dry.err}`).toBe(0);
      expect(dry.err, where).toMatch(/^\[lab run 1\/4\] images: /);
    }
    // a cluster run: its inputs through the parser plan shares, the phases and the vitest command it would start
    if (path.join(" ") === "run") {
      const dry = bash(`npx datapath-conformance ${args.join(" ")} --dry-run`, sandbox, vars);
      expect(dry.code, `${where}\n${dry.err}`).toBe(0);
      expect(dry.err, where).toMatch(/^\[run 1\/[23]\] conformance: /m);
      const plan = bash(`npx datapath-conformance plan ${args.slice(1).join(" ")}`, sandbox, vars);
      expect(plan.code, `${where}\n${plan.err}`).toBe(0);
    }
    return;
  }
  if (rest[0] === "npm" && rest[1] === "run") {
    const name = rest[2] as string;
    const args = rest.slice(rest[3] === "--" ? 4 : 3);
    if (name === "faults") {
      const end = args.indexOf("--");
      const dryArgs =
        end < 0 ? [...args, "--dry-run"] : [...args.slice(0, end), "--dry-run", ...args.slice(end)];
      // the script's own main, in this process (`tsx scripts/faults/main.ts` is what npm would start)
      expect(PACKAGE.scripts.faults, where).toBe("tsx scripts/faults/main.ts");
      let out = "";
      const io = {
        out: (s: string) => {
          out += s;
        },
        err: () => {},
        resultsDir: join(sandbox, "results"),
      };
      expect(await faultsMain(dryArgs, io), where).toBe(0);
      expect(out, where).toMatch(/^would run /m);
      return;
    }
    // the whole run, or one of its two parts (test:conformance:disruptions, :without-disruptions)
    if (name === "test:conformance" || name.startsWith("test:conformance:")) {
      expect(PACKAGE.scripts[name], where).toMatch(/^vitest run --project conformance\b/);
      // the run's environment, through the validation the run uses, and the plan of what it would do
      const provider = parseRunProvider(vars.CLUSTER_PROVIDER ?? "kind");
      if (vars.CONFORMANCE_MODE) parseMode(vars.CONFORMANCE_MODE, "CONFORMANCE_MODE");
      if (vars.CILIUM_VERSION) resolveCilium(vars.CILIUM_VERSION);
      if (provider === "none") return;
      const plan = bash(`npx datapath-conformance plan --provider ${provider}`, sandbox, vars);
      expect(plan.code, `${where}\n${plan.err}`).toBe(0);
      expect(plan.out, where).toMatch(new RegExp(`^# ${provider} × `));
      return;
    }
  }
  if (rest[0] === "kubectl" && c.text.includes("| npx datapath-conformance parse ")) {
    const [left, right] = c.text.replace(/\\\n/g, " ").split("|") as [string, string];
    const command = words(left).slice(words(left).indexOf("--") + 1);
    const recorded = recordedOutput(command);
    expect(recorded, `${where}: no shipped bundle recorded \`${command.join(" ")}\``).not.toBeNull();
    const r = bash(right.replace(/\s#\s.*$/, ""), sandbox, {}, recorded as string);
    expect(r.code, `${where}\n${r.err}`).toBe(0);
    expect(() => JSON.parse(r.out), where).not.toThrow();
    return;
  }
  expect.fail(
    `${where}: no way to check this command without root or a cluster (add one to scripts/readme-commands.test.ts)`,
  );
}

/** A command that builds the offline lab, starts its engine or runs a cluster: never run by a test. */
function buildsOrRuns(command: string): boolean {
  // the command, not its comment (`lab.sh steps   # every step \`lab images\` builds`)
  const text = command
    .split("\n")
    .map((l) => l.replace(/(^|\s)#\s.*$/, ""))
    .join("\n");
  if (/\blab\.sh\s+(images|up|down)\b/.test(text)) return true;
  if (/\blab (images|up|down)\b/.test(text)) return true;
  if (/\b(lab run|lab:run)\b/.test(text) && !/--dry-run\b/.test(text)) return true;
  if (/\bdatapath-conformance run\b/.test(text) && !/--dry-run\b/.test(text) && !/--help\b/.test(text))
    return true;
  return /\btest:conformance\b/.test(text) && !/CLUSTER_PROVIDER=(none|replay)\b/.test(text);
}

// ── the tests ──────────────────────────────────────────────────────────────────────────────────────

const BLOCKS = PAGES.flatMap((p) => shellBlocks(p.text, p.file));
const RUNNABLE = BLOCKS.filter((b) => b.needs === null).flatMap((b) => b.commands);
const MARKED = BLOCKS.filter((b) => b.needs !== null && !b.needs.startsWith("setup"));
const SETUP = BLOCKS.filter((b) => b.needs?.startsWith("setup"));

describe("README.md's commands", { timeout: 180_000 }, () => {
  it("a command that builds or runs the lab is told apart (never run by the test)", () => {
    expect(buildsOrRuns("npx datapath-conformance lab run --profile socketlb-hostns")).toBe(true);
    expect(buildsOrRuns("npx datapath-conformance lab run --dry-run --cilium 1.19")).toBe(false);
    expect(buildsOrRuns("bash clusters/lab/lab.sh images")).toBe(true);
    expect(buildsOrRuns("bash clusters/lab/lab.sh steps")).toBe(false);
    expect(buildsOrRuns("bash clusters/lab/lab.sh steps   # every step `lab images` builds, in order")).toBe(
      false,
    );
    expect(buildsOrRuns("npm run lab:run")).toBe(true);
    expect(buildsOrRuns("CLUSTER_PROVIDER=replay npm run test:conformance")).toBe(false);
    expect(buildsOrRuns("CILIUM_VERSION=1.19 npm run test:conformance")).toBe(true);
    expect(buildsOrRuns("npx datapath-conformance run --provider kind")).toBe(true);
    expect(buildsOrRuns("npx datapath-conformance run --provider kind --dry-run")).toBe(false);
    expect(buildsOrRuns("npx datapath-conformance check suites/bundles")).toBe(false);
  });

  it("the README's blocks were found (a block of each kind)", () => {
    expect(RUNNABLE.length).toBeGreaterThan(10);
    expect(MARKED.length).toBeGreaterThan(2);
    expect(SETUP.length).toBeGreaterThan(0);
  });

  // several at once: each command is its own processes, and none reads what another writes (their outputs have
  // names of their own in the sandbox)
  it.concurrent.for(
    RUNNABLE.map((c) => [`${c.file}:${c.line}`, c] as const),
  )("%s runs here against the shipped bundles", async ([where, c], ctx) => {
    const { expect } = ctx;
    const ws = words(c.text);
    // never for real from a test: what builds the lab, starts its engine or runs clusters (as root it would)
    expect(
      buildsOrRuns(c.text),
      `${where}: ${c.text} builds or runs the lab: mark its block <!-- needs: root --> (checked by --dry-run)`,
    ).toBe(false);
    // a tool the README pipes into that this machine lacks (.ci/run installs it): skipped, saying so
    for (const tool of ["jq"])
      if (ws.includes(tool) && which(tool) === null)
        return ctx.skip(`${where}: needs ${tool}, which is not installed here (apt-get install ${tool})`);
    const r =
      ws[0] === "npm" && ws[1] === "run"
        ? await npmRun(ws[2] as string, ws.slice(ws[3] === "--" ? 4 : 3))
        : await bashAsync(c.text, sandbox);
    // a command whose comment says it `exits N` (compare on a regression) must exit N; every other, 0
    const exits = Number(/#.*\bexits (\d+)\b/.exec(c.text)?.[1] ?? 0);
    expect(r.code, `${where}: ${c.text}\n${r.err}`).toBe(exits);
    expect(r.out.length + r.err.length, `${where} printed nothing`).toBeGreaterThan(0);
    // what it said it writes is there
    for (const flag of ["-o", "--svg"]) {
      const at = ws.indexOf(flag);
      if (at >= 0)
        expect(existsSync(join(sandbox, ws[at + 1] as string)), `${where}: ${ws[at + 1]}`).toBe(true);
    }
  });

  it.each(
    MARKED.flatMap((b) => b.commands.map((c) => [`${c.file}:${c.line} (needs ${b.needs})`, c] as const)),
  )("%s is checked without running it", (_where, c) => checkWithoutRunning(c));

  it("the test fails where the README is wrong: the commands it shipped before (bundles since moved) fail here", async () => {
    for (const old of [
      "npx datapath-conformance check suites/bundles/kpr",
      "npx datapath-conformance report suites/bundles/kpr suites/bundles/kube-proxy -o report.html",
      "npx datapath-conformance compare results/hand-made/kpr suites/bundles/kpr",
    ]) {
      const r = bash(old, sandbox);
      expect(r.code, old).toBe(2);
      expect(r.err, old).toMatch(/is not an evidence bundle/);
    }
    await expect(
      checkWithoutRunning({ file: "README.md", line: 0, text: "kind create cluster" }),
    ).rejects.toThrow(/no way to check this command/);
    const unmarked = shellBlocks(
      "```sh\nnpm test\n```\n\n<!-- needs: cluster -->\n```sh\nkubectl get pods\n```\n",
    );
    expect(unmarked.map((b) => [b.needs, b.commands.map((c) => c.text)])).toEqual([
      [null, ["npm test"]],
      ["cluster", ["kubectl get pods"]],
    ]);
  });

  it("the setup blocks are what .ci/run runs, and the README's first block is that setup: npm ci, then npm test", () => {
    const ci = readFileSync(join(ROOT, ".ci", "run"), "utf8");
    for (const c of SETUP.flatMap((b) => b.commands)) {
      const cmd = words(c.text).slice(0, 2).join(" ");
      expect(["npm ci", "npm test"], `${c.file}:${c.line}`).toContain(cmd);
      expect(ci, `${c.file}:${c.line}: .ci/run runs ${cmd}`).toMatch(new RegExp(`^${cmd}\\b`, "m"));
    }
    const first = shellBlocks(README)[0];
    expect(first?.needs ?? "", "README.md's first code block is marked <!-- needs: setup … -->").toMatch(
      /^setup\b/,
    );
    expect(first?.commands.map((c) => words(c.text).slice(0, 2).join(" "))).toEqual(["npm ci", "npm test"]);
    expect(PACKAGE.scripts.test).toBeDefined();
  });

  it("every file a command writes goes under results/ (git-ignored), never into the checkout", () => {
    expect(readFileSync(join(ROOT, ".gitignore"), "utf8")).toMatch(/^results\/$/m);
    const all = BLOCKS.flatMap((b) => b.commands);
    for (const c of all) {
      const ws = words(c.text);
      for (const flag of ["-o", "--svg", "--junit"]) {
        const at = ws.indexOf(flag);
        if (at >= 0) expect(ws[at + 1] ?? "", `${c.file}:${c.line}: ${c.text}`).toMatch(/^results\//);
      }
    }
    // the outputs of the commands that run here have names of their own (they run at once)
    const outs = RUNNABLE.flatMap((c) => {
      const ws = words(c.text);
      return ["-o", "--svg"].flatMap((f) => (ws.includes(f) ? [ws[ws.indexOf(f) + 1] as string] : []));
    });
    expect(new Set(outs).size, outs.join(", ")).toBe(outs.length);
  });
});

describe("the facts of README.md and docs/", () => {
  it("every bundle path they name is there", () => {
    const named = [...ALL_TEXT.matchAll(/suites\/bundles\/[\w./-]*[\w]/g)].map((m) => m[0]);
    expect(named.length).toBeGreaterThan(10);
    for (const p of new Set(named)) expect(existsSync(join(ROOT, p)), p).toBe(true);
  });

  it("every relative link resolves, to a file or folder and, with #anchor, to a heading of that page", () => {
    let links = 0;
    for (const { file, text } of PAGES)
      for (const { target, line } of relativeLinks(text)) {
        links++;
        const [path, anchor] = target.split("#") as [string, string | undefined];
        const to = path === "" ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), path);
        expect(existsSync(to), `${file}:${line}: ${target}`).toBe(true);
        if (anchor !== undefined) {
          expect(to.endsWith(".md"), `${file}:${line}: ${target}: an anchor into a page`).toBe(true);
          expect(anchors(readFileSync(to, "utf8")), `${file}:${line}: ${target}`).toContain(anchor);
        }
      }
    expect(links).toBeGreaterThan(20);
    // the checker itself: a missing page and a missing anchor are seen
    expect(relativeLinks("see [a](docs/x.md#y) and `[b](c.md)` and [web](https://example.org)")).toEqual([
      { target: "docs/x.md#y", line: 1 },
    ]);
    expect(anchors("# Title\n## The CLI's start\n### `00-config`: x")).toEqual([
      "title",
      "the-clis-start",
      "00-config-x",
    ]);
  });

  it("no page names an issue of this repository (a reader cannot look one up); upstream ones name their project", () => {
    const own = /(?<!(cilium|kubernetes|upstream) )\bissues? ?#?\d+/gi;
    for (const { file, text } of PAGES)
      for (const [i, l] of text.split("\n").entries())
        expect(l.match(own), `${file}:${i + 1}: ${l.slice(0, 160)}`).toBeNull();
    expect("(issue 24) and issue25-facts.md, Issue 35".match(own)).toHaveLength(3);
    expect("cilium issue 45184; kubernetes issue 1".match(own)).toBeNull();
  });

  it("the Layout names every topic folder under suites/", () => {
    const layout = readFileSync(join(ROOT, "docs", "contributing.md"), "utf8");
    const folders = readdirSync(join(ROOT, "suites")).filter((d) => /^\d\d-/.test(d));
    expect(folders.length).toBeGreaterThan(20);
    for (const f of folders) expect(layout, f).toContain(`\`${f}/\``);
  });

  it("every image override the manifests read is documented", () => {
    const images = readFileSync(join(ROOT, "manifests", "images.ts"), "utf8");
    const vars = [...images.matchAll(/process\.env\.(\w+_IMAGE)/g)].map((m) => m[1] as string);
    expect(vars.sort()).toEqual(["AGNHOST_IMAGE", "CURL_IMAGE", "HOLDER_IMAGE", "NETSHOOT_IMAGE"]);
    for (const v of vars) expect(ALL_TEXT, v).toContain(`\`${v}\``);
  });

  it("the fault table is the shipped record's (npm run faults -- table suites/bundles/faults/faults.jsonl)", () => {
    const table = faultTable(readFileSync(join(ROOT, "suites", "bundles", "faults", "faults.jsonl"), "utf8"));
    expect(ALL_TEXT).toContain(table);
  });

  it("every table's header and delimiter rows have as many cells", () => {
    const cells = (l: string) =>
      l
        .trim()
        .replace(/^\|/, "")
        .replace(/\|$/, "")
        .split(/(?<!\\)\|/).length;
    for (const { file, text } of PAGES) {
      const lines = text.split("\n");
      for (const [i, l] of lines.entries())
        if (/^\s*\|(\s*:?-+:?\s*\|)+\s*$/.test(l))
          expect(cells(l), `${file}:${i + 1}: delimiter row vs the header above it`).toBe(
            cells(lines[i - 1] as string),
          );
    }
  });
});
