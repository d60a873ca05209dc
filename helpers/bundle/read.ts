import { type Dirent, existsSync, lstatSync, readdirSync, type Stats, statSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../errors.ts";
import type { CallRecord } from "../exec/record.ts";
import { declarations, type RecordCatalogue } from "../records/catalogue.ts";
import type { EvidenceItem } from "../records/evidence.ts";
import type { Evidenced, RecordSet } from "../records/types.ts";
import {
  BundleFault,
  bundleRoot,
  isUnder,
  readBundleJson,
  readBundleJsonLines,
  readBundleJsonText,
  resolveInBundle,
  shown,
} from "./files.ts";
import {
  atField,
  atLine,
  BUNDLE_JSON,
  type BundleJson,
  CALL_RECORD,
  checked,
  MINOR_PATTERN,
  RECORD_EVIDENCE,
  STORED_VERDICT,
  type StoredVerdict,
} from "./schema.ts";

/**
 * Reading an evidence bundle, as untrusted input, in one place: which bundles a path names, bundle.json, a topic's
 * recorded calls, the records and the stored verdicts, each checked against its schema (./schema.ts) through the
 * guarded file reads (./files.ts: inside the bundle, capped, valid UTF-8). Writing one is ./write.ts.
 *
 * An evidence bundle: everything one mode's run observed.
 *   bundle.json            what ran: mode, Cilium/Kubernetes/kernel versions, provider, origin, phase times
 *   calls/<topic>.jsonl    every command (target, argv, exit code, duration, stderr) in order
 *   raw/<topic>/NNN-*.txt  every command's stdout
 *   records/<lab name>     the lab's records (iptables.json … report.txt) and ours; `*.evidence.json` beside
 *   verdicts.jsonl         every judged property
 *
 * bundle.json's fields, their types and their caps are its schema's (helpers/bundle/schema.ts BUNDLE_JSON).
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
export const SHIPPED_BUNDLES = join(import.meta.dirname, "..", "..", "suites", "bundles");

/**
 * The shipped fresh bundle of `minor` (X.Y) and `mode` (`suites/bundles/<minor>/<mode>`), or null when there is
 * none. Both come from a bundle.json: a minor is checked at the door (schema.ts MINOR_PATTERN) and again
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
 * bundle.json, read as untrusted input: checked against its schema (helpers/bundle/schema.ts), every field with
 * its type and its cap; the first one that is missing, wrong or too large is one line naming its line.
 */
export function readMeta(dir: string): BundleMeta {
  bundleRoot(dir);
  const doc = readBundleJson(dir, "bundle.json");
  if (!doc) throw new UserError(`${dir} is not an evidence bundle (no bundle.json)`);
  return checked(dir, BUNDLE_JSON, doc.value, atField("bundle.json", doc.text));
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

/** The verdicts a bundle stored, the latest per property (a topic observed again appends its own). */
export function storedVerdicts(dir: string): Map<string, StoredVerdict> | null {
  const lines = readStoredVerdicts(dir);
  if (!lines) return null;
  const out = new Map<string, StoredVerdict>();
  for (const v of lines) out.set(v.id, v);
  return out;
}

/**
 * Every line of verdicts.jsonl, in order, each checked against its schema (helpers/bundle/schema.ts
 * STORED_VERDICT: every field with its type and cap, each evidence item a plain line, from older bundles, or an
 * item of today's format). A line that is not is one BundleFault naming it. null: the bundle stores no verdicts.
 */
export function readStoredVerdicts(dir: string): StoredVerdict[] | null {
  const rel = "verdicts.jsonl";
  const lines = readBundleJsonLines(dir, rel);
  if (!lines) return null;
  return lines.map(({ line, value }) => {
    const v = checked(dir, STORED_VERDICT, value, atLine(rel, line));
    // the evidence as stored (checked, not rebuilt): compared with the re-judged evidence as JSON, key order and all
    return { ...v, evidence: (value as { evidence: StoredVerdict["evidence"] }).evidence };
  });
}

/** A topic's recorded calls (calls/<topic>.jsonl), each checked (checkCallRecord) with its place; null: none recorded. */
export function readCalls(dir: string, topic: string): { rec: CallRecord; at: string }[] | null {
  const rel = `calls/${topic}.jsonl`;
  const lines = readBundleJsonLines(dir, rel);
  if (!lines) return null;
  return lines.map(({ line, value }) => ({
    rec: checkCallRecord(dir, rel, line, value),
    at: `${rel}:${line}`,
  }));
}

/**
 * One line of calls/<topic>.jsonl, checked: every field the replay and the report read has its type, and its
 * stdoutFile (and stdinFile) is a regular file inside the bundle (not a link out of it). Otherwise one
 * BundleFault naming the file and line.
 */
export function checkCallRecord(dir: string, rel: string, line: number, value: unknown): CallRecord {
  const c = checked(dir, CALL_RECORD, value, atLine(rel, line));
  for (const k of ["stdoutFile", "stdinFile"] as const) {
    const f = c[k];
    if (f !== undefined && resolveInBundle(dir, f, `${rel}:${line}: ${k}`) === null)
      throw new BundleFault(dir, `${rel}:${line}`, `${k} ${shown(f)} is not in the bundle`);
  }
  return c;
}
