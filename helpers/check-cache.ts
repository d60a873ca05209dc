/**
 * Judged bundles shared by the processes of one test run (issue 27: `npm test` judged the same 29 shipped
 * bundles 320 times — golden files, stored verdicts, evidence, the README's figures and commands, the report's
 * pages each re-judged all of them — half of its time).
 *
 * Opt-in: only when DATAPATH_CONFORMANCE_CHECK_CACHE names a directory (the test run's own, made fresh by
 * helpers/testing/check-cache-setup.ts and removed after it). A result is stored under a key of everything it
 * is a function of: the bundle's path as given and every byte of every file under it, every source file of this
 * checkout (code and tests, so an edit in watch mode is a miss too) and the package lock, and the topic
 * declarations passed in with their functions' text (a test's own topics key apart from the suite's). A hit is
 * the same JSON a miss would have written: CheckResult survives JSON exactly (tested). Two processes that want
 * the same key at once: the first takes a lock file and judges, the other waits for its result (or judges itself
 * when the first gave up without one).
 */
import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, relative } from "node:path";
import type { TopicDeclaration } from "./topic.ts";

export const CHECK_CACHE_ENV = "DATAPATH_CONFORMANCE_CHECK_CACHE";

const ROOT = join(import.meta.dirname, "..");
/** What a judgement's code can come from: the checkout's sources (tests too) and the installed packages. */
const SOURCE_DIRS = ["helpers", "suites", "clusters", "cli", "scripts", "manifests", "bin"];
/** versions.env too: what a verdict assumes for a minor the suite has not declared depends on it. */
const SOURCE_FILE = /\.(?:ts|mts|mjs|yaml|env)$/;
const SKIPPED_DIRS = new Set(["bundles", "golden", "node_modules", "__snapshots__", "testdata"]);

function walk(dir: string, into: string[], skip: (name: string) => boolean): void {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(path, { throwIfNoEntry: false });
    } catch {
      // a link loop (ELOOP), a name too long: keyed by its name and what reading it says (bundleFingerprint)
      into.push(path);
      continue;
    }
    if (!st) continue;
    if (st.isDirectory()) {
      if (!skip(name)) walk(path, into, skip);
    } else if (st.isFile()) into.push(path);
  }
}

let codeKey: string | null = null;

/** One hash of every source file of the checkout and the package lock (computed once per process). */
export function codeFingerprint(root: string = ROOT): string {
  if (codeKey && root === ROOT) return codeKey;
  const h = createHash("sha256");
  const files: string[] = [];
  for (const d of SOURCE_DIRS) walk(join(root, d), files, (n) => SKIPPED_DIRS.has(n));
  for (const f of [...files.filter((f) => SOURCE_FILE.test(f)), join(root, "package-lock.json")]) {
    h.update(relative(root, f));
    h.update("\0");
    h.update(existsSync(f) ? readFileSync(f) : "(absent)");
    h.update("\0");
  }
  const key = h.digest("hex");
  if (root === ROOT) codeKey = key;
  return key;
}

/** Every file under the bundle, by relative path and content. */
export function bundleFingerprint(dir: string): string {
  const h = createHash("sha256");
  const files: string[] = [];
  walk(dir, files, () => false);
  for (const f of files) {
    h.update(relative(dir, f));
    h.update("\0");
    h.update(readOrWhy(f));
    h.update("\0");
  }
  return h.digest("hex");
}

/** A file's bytes, or why it cannot be read (a hostile bundle's link loop: the judgement refuses it, uncached). */
function readOrWhy(f: string): Buffer | string {
  try {
    return readFileSync(f);
  } catch (err) {
    return `(unreadable: ${(err as NodeJS.ErrnoException).code ?? String(err)})`;
  }
}

/**
 * The topic declarations of this checkout's suites/ (suites/topics.ts names them here). Their code is in the code
 * fingerprint, so each is keyed by its name: the vitest workers and the CLI's bundle print their functions' text
 * differently (two transforms of the same source), and keyed by that text the CLIs the tests start never shared a
 * judgement with the workers (20 bundles judged twice, 6 s of `npm test`'s CPU). A declaration made anywhere
 * else (a test's own topic, or a copy of one of these with other properties) is keyed by its content.
 */
const CHECKOUT_TOPICS = new WeakSet<TopicDeclaration>();

/** Marks the checkout's own topic declarations (suites/topics.ts). They must not be changed after. */
export function checkoutTopics<T extends readonly TopicDeclaration[]>(topics: T): T {
  for (const t of topics) CHECKOUT_TOPICS.add(t);
  return topics;
}

/** The topics as declared: the checkout's by name, others' with functions by their text and patterns by source. */
function topicsFingerprint(topics: readonly TopicDeclaration[]): string {
  const text = JSON.stringify(
    topics.map((t) => (CHECKOUT_TOPICS.has(t) ? `checkout topic ${t.name}` : t)),
    (_k, v: unknown) =>
      typeof v === "function" ? `fn:${v.toString()}` : v instanceof RegExp ? `re:${v.toString()}` : v,
  );
  return createHash("sha256").update(text).digest("hex");
}

export function checkKey(dir: string, topics: readonly TopicDeclaration[]): string {
  return createHash("sha256")
    .update([dir, bundleFingerprint(dir), codeFingerprint(), topicsFingerprint(topics)].join("\n"))
    .digest("hex");
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long a process waits for another's judgement of the same key before judging itself. */
const WAIT_MS = 120_000;

/**
 * `compute()`'s result for this bundle and these topics: from the cache when another process of the run judged
 * them already, otherwise judged here and stored. Without the cache directory, just `compute()`.
 */
export async function cachedCheck<T>(
  dir: string,
  topics: readonly TopicDeclaration[],
  compute: () => Promise<T>,
  cacheDir: string | undefined = process.env[CHECK_CACHE_ENV],
): Promise<T> {
  if (!cacheDir || !existsSync(cacheDir)) return compute();
  const key = checkKey(dir, topics);
  const file = join(cacheDir, `${key}.json`);
  const lock = join(cacheDir, `${key}.lock`);
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as T;
    let fd: number | null = null;
    try {
      fd = openSync(lock, "wx");
    } catch {
      // another process judges it: wait for its result (a process that failed removes its lock)
      if (Date.now() > deadline) return compute();
      await sleep(50);
      continue;
    }
    closeSync(fd);
    try {
      const result = await compute();
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(result));
      renameSync(tmp, file);
      return result;
    } finally {
      rmSync(lock, { force: true });
    }
  }
}
