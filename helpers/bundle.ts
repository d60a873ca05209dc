import { createHash } from "node:crypto";
import {
  appendFileSync,
  closeSync,
  type Dirent,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { BundleFault, bundleRoot, isUnder, readBundleJson, readBundleJsonText } from "./bundle-read.ts";
import {
  atField,
  BUNDLE_JSON,
  type BundleJson,
  checked,
  MINOR_PATTERN,
  RECORD_EVIDENCE,
} from "./bundle-schema.ts";
import { UserError } from "./errors.ts";
import type { Verdict } from "./properties/judge.ts";
import { declarations, mergeParts, type RecordCatalogue } from "./records/catalogue.ts";
import type { EvidenceItem } from "./records/evidence.ts";
import type { Evidenced, RecordSet } from "./records/types.ts";

/**
 * An evidence bundle: everything one mode's run observed.
 *   bundle.json            what ran: mode, Cilium/Kubernetes/kernel versions, provider, origin, phase times
 *   calls/<topic>.jsonl    every command (target, argv, exit code, duration, stderr) in order
 *   raw/<topic>/NNN-*.txt  every command's stdout
 *   records/<lab name>     the lab's records (iptables.json … report.txt) and ours; `*.evidence.json` beside
 *   verdicts.jsonl         every judged property
 *
 * bundle.json's fields, their types and their caps are its schema's (helpers/bundle-schema.ts BUNDLE_JSON).
 */
export type BundleMeta = BundleJson;

/**
 * The evidence bundles at `path`: `path` itself when it holds a bundle.json, else every folder below it that
 * does (not looking further into a bundle), in sorted path order: `suites/bundles/1.19` → its five bundles,
 * `suites/bundles` → every shipped one. Symbolic links are not followed. A path that is no folder gives none.
 */
export function findBundles(path: string): string[] {
  if (existsSync(join(path, "bundle.json"))) return [path, ...legBundles(path)];
  let entries: Dirent[];
  try {
    entries = readdirSync(path, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()
    .flatMap((name) => findBundles(join(path, name)));
}

/**
 * An upgrade bundle's nested bundles: every topic again after each leg (issue 24) (`after-upgrade/`,
 * `after-rollback/`), in the order the legs ran. A leg folder is the bundle's own folder, never a link (issue 45:
 * one linked to a folder outside was judged, its raw lines quoted and its run id embedded): a link is refused,
 * naming the entry and not where it leads.
 */
export function legBundles(dir: string): string[] {
  return ["after-upgrade", "after-rollback"].filter((n) => isLegFolder(dir, n)).map((n) => join(dir, n));
}

/** True when the bundle `dir` holds the leg folder `name` with a bundle.json; a link there is a BundleFault. */
function isLegFolder(dir: string, name: string): boolean {
  let st: Stats;
  try {
    st = lstatSync(join(dir, name));
  } catch {
    return false;
  }
  if (st.isSymbolicLink())
    throw new BundleFault(
      dir,
      `${name}/`,
      "is a symbolic link: a leg's bundle is read as the folder inside the upgrade bundle, never through a link",
    );
  return st.isDirectory() && existsSync(join(dir, name, "bundle.json"));
}

/** The shipped bundles (suites/bundles): what an upgrade's minors name a fresh install of. */
export const SHIPPED_BUNDLES = join(import.meta.dirname, "..", "suites", "bundles");

/**
 * The shipped fresh bundle of `minor` (X.Y) and `mode` (`suites/bundles/<minor>/<mode>`), or null when there is
 * none. Both come from a bundle.json: a minor is checked at the door (bundle-schema.ts MINOR_PATTERN) and again
 * here, and the folder is taken only when neither step of it is a link and it stays under suites/bundles/
 * (issue 45: `"toMinor": "../../…"` made any folder named `kpr` the fresh install the gate compared with).
 */
export function shippedBundle(minor: string, mode: string): string | null {
  if (!MINOR_PATTERN.test(minor) || !/^[a-z][a-z-]*$/.test(mode)) return null;
  const dir = join(SHIPPED_BUNDLES, minor, mode);
  if (!isUnder(SHIPPED_BUNDLES, dir)) return null;
  for (const p of [join(SHIPPED_BUNDLES, minor), dir]) {
    try {
      if (!lstatSync(p).isDirectory()) return null;
    } catch {
      return null;
    }
  }
  return existsSync(join(dir, "bundle.json")) ? dir : null;
}

/**
 * What a command's BUNDLE arguments name (`check`, `report`, `summary`): a bundle stands for itself, a folder
 * for the bundles in it (findBundles). A folder that holds none is one line; a path that is not there is left
 * to readMeta, which says it is not a bundle.
 */
export function bundlesOf(paths: readonly string[]): string[] {
  return paths.flatMap((p) => {
    let folder = false;
    try {
      folder = statSync(p).isDirectory();
    } catch {
      return [p];
    }
    if (!folder) return [p];
    const found = findBundles(p);
    if (found.length === 0)
      throw new UserError(`${p} holds no evidence bundle (no bundle.json in it or in any folder below it)`);
    return found;
  });
}

/**
 * bundle.json, read as untrusted input: checked against its schema (helpers/bundle-schema.ts), every field with
 * its type and its cap; the first one that is missing, wrong or too large is one line naming its line.
 */
export function readMeta(dir: string): BundleMeta {
  bundleRoot(dir);
  const doc = readBundleJson(dir, "bundle.json");
  if (!doc) throw new UserError(`${dir} is not an evidence bundle (no bundle.json)`);
  return checked(dir, BUNDLE_JSON, doc.value, atField("bundle.json", doc.text));
}

export function writeMeta(dir: string, meta: BundleMeta): void {
  mkdirSync(dir, { recursive: true });
  writeWhole(join(dir, "bundle.json"), `${JSON.stringify(meta, null, 2)}\n`);
}

/** Topics with recorded calls in the bundle. */
export function bundleTopics(dir: string): string[] {
  const calls = join(dir, "calls");
  if (!existsSync(calls)) return [];
  let names: string[];
  try {
    names = readdirSync(calls);
  } catch (err) {
    throw new BundleFault(
      dir,
      "calls/",
      `not a folder that can be listed (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  return names.filter((f) => f.endsWith(".jsonl")).map((f) => f.slice(0, -".jsonl".length));
}

/** A lock older than this was left by a process that died holding it (a write takes milliseconds). */
const STALE_LOCK_MS = 30_000;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Runs `fn` holding the bundle's write lock. A cluster run's topics are observed by several worker processes
 * at once (suites/schedule.ts), and some writes read what is there first (bundle.json's phases, the merged
 * datapath record) while a topic beside them reads the records: each of those holds this lock. The lock file
 * lives outside the bundle (nothing of it ships); one left by a dead process is taken over after 30 s.
 */
export function withBundleLock<T>(dir: string, fn: () => T): T {
  const lock = bundleLockFile(dir);
  mkdirSync(dirname(lock), { recursive: true });
  for (;;) {
    try {
      closeSync(openSync(lock, "wx"));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      try {
        if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { force: true });
      } catch {
        // released meanwhile
      }
      Atomics.wait(pause, 0, 0, 10);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

/** The bundle's lock file: outside the bundle, named by a hash of its real place. */
export function bundleLockFile(dir: string): string {
  const key = createHash("sha256").update(resolve(dir)).digest("hex").slice(0, 24);
  return join(tmpdir(), "datapath-conformance-locks", `${key}.lock`);
}

/** Writes a file whole or not at all: a reader in another process never sees it half written. */
function writeWhole(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

/**
 * Writes records (each to its declared file: JSON, or its own text) and their evidence. A merged record's part
 * merges with what is there. `catalogue`: every record's declaration (suites/topics.ts RECORDS).
 */
export function writeRecords(dir: string, set: RecordSet, catalogue: RecordCatalogue): void {
  withBundleLock(dir, () => writeRecordsNow(dir, set, catalogue));
}

function writeRecordsNow(dir: string, set: RecordSet, catalogue: RecordCatalogue): void {
  const rdir = join(dir, "records");
  mkdirSync(rdir, { recursive: true });
  const decls = new Map(declarations(catalogue));
  for (const [name, ev] of Object.entries(set) as [keyof RecordSet, Evidenced<unknown>][]) {
    if (!ev) continue;
    const decl = decls.get(name);
    if (!decl) throw new Error(`record ${name} is declared by no topic`);
    const value = decl.merged
      ? mergeParts([readRecords(dir, catalogue)[name] as Evidenced<unknown>, ev])
      : ev;
    writeWhole(
      join(rdir, decl.file),
      decl.text ? decl.text.format(value.record) : `${JSON.stringify(value.record, null, 2)}\n`,
    );
    writeWhole(
      join(rdir, `${decl.file.replace(/\.(json|txt)$/, "")}.evidence.json`),
      `${JSON.stringify(value.evidence, null, 2)}\n`,
    );
  }
}

/**
 * The records the bundle stores (records/…), each file read as untrusted input (capped, inside the bundle), by the
 * catalogue's declarations (suites/topics.ts RECORDS).
 */
export function readRecords(dir: string, catalogue: RecordCatalogue): RecordSet {
  const out: Record<string, Evidenced<unknown>> = {};
  for (const [name, decl] of declarations(catalogue)) {
    const rel = `records/${decl.file}`;
    const evRel = `records/${decl.file.replace(/\.(json|txt)$/, "")}.evidence.json`;
    let record: unknown;
    if (decl.text) {
      const text = readBundleJsonText(dir, rel);
      if (text === null) continue;
      record = decl.text.parse(text);
    } else {
      const doc = readBundleJson(dir, rel);
      if (!doc) continue;
      record = doc.value;
    }
    const ev = readBundleJson(dir, evRel);
    out[name] = {
      record,
      evidence: ev ? upgradeEvidence(checked(dir, RECORD_EVIDENCE, ev.value, atField(evRel, ev.text))) : {},
    };
  }
  return out as RecordSet;
}

/**
 * A record's evidence as read from a bundle. Bundles recorded before evidence was quoted at its place hold
 * plain strings: each becomes a derived value that names no source, which `checkEvidence` reports as such.
 */
function upgradeEvidence(doc: Record<string, (string | EvidenceItem)[]>): Record<string, EvidenceItem[]> {
  const out: Record<string, EvidenceItem[]> = {};
  for (const [field, items] of Object.entries(doc))
    out[field] = items.map((x) => (typeof x === "string" ? { derived: x, from: [] } : x));
  return out;
}

export function appendVerdicts(dir: string, verdicts: Verdict[]): void {
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, "verdicts.jsonl"), verdicts.map((v) => `${JSON.stringify(v)}\n`).join(""));
}
