/**
 * Writing an evidence bundle (a run, the bundle maker): bundle.json, the records with their evidence, the verdicts,
 * each file whole or not at all, under the bundle's write lock where a write reads what is there first. Reading one
 * is helpers/bundle/read.ts.
 */
import { createHash } from "node:crypto";
import {
  appendFileSync,
  closeSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { Verdict } from "../properties/judge.ts";
import { declarations, mergeParts, type RecordCatalogue } from "../records/catalogue.ts";
import type { Evidenced, RecordSet } from "../records/types.ts";
import { type BundleMeta, readRecords } from "./read.ts";

export function writeMeta(dir: string, meta: BundleMeta): void {
  mkdirSync(dir, { recursive: true });
  writeWhole(join(dir, "bundle.json"), `${JSON.stringify(meta, null, 2)}\n`);
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

export function appendVerdicts(dir: string, verdicts: Verdict[]): void {
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, "verdicts.jsonl"), verdicts.map((v) => `${JSON.stringify(v)}\n`).join(""));
}
