import {
  appendFileSync,
  type Dirent,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { UserError } from "./errors.ts";
import type { UpgradePlan } from "./observe/context.ts";
import { MODES, type Mode } from "./properties/expectation.ts";
import type { Verdict } from "./properties/judge.ts";
import { mergeDatapath } from "./records/datapath.ts";
import { type EvidenceItem, isEvidenceItem } from "./records/evidence.ts";
import { formatReport, parseReport } from "./records/report-text.ts";
import {
  type Evidenced,
  RECORD_FILES,
  type RecordName,
  type RecordSet,
  type ReportRecord,
} from "./records/types.ts";

/**
 * An evidence bundle: everything one mode's run observed.
 *   bundle.json            what ran: mode, Cilium/Kubernetes/kernel versions, provider, origin, phase times
 *   calls/<topic>.jsonl    every command (target, argv, exit code, duration, stderr) in order
 *   raw/<topic>/NNN-*.txt  every command's stdout
 *   records/<lab name>     the lab's records (iptables.json … report.txt) and ours; `*.evidence.json` beside
 *   verdicts.jsonl         every judged property
 */
export interface BundleMeta {
  format: 1;
  mode: Mode;
  cilium: string;
  ciliumMinor: string;
  kubernetes: string | null;
  kernel: string | null;
  attachMode: string | null;
  provider: string;
  /** `recorded` from a real cluster, or `hand-made` (with how it was made). */
  origin: string;
  runId: string;
  createdAt: string;
  phases: Record<string, number>;
  /**
   * Per node, its agent's own start: from the Pod's start (status.startTime) to its first `cilium-dbg status
   * --brief` OK (clusters/readiness.ts); phases["agents' own start (max)"] is the slowest.
   */
  agentStarts?: Record<
    string,
    { pod: string; podStart: string | null; firstOk: string; seconds: number | null }
  >;
  /** The cluster's kubectl context (helm runs against it in the upgrade leg). */
  kubeContext?: string;
  /**
   * The run namespace the topics used, when it is not `cca-dp` (the existing provider's `cca-dp-<run-id>`): a
   * replay asks for the same namespace the recorded calls name.
   */
  namespace?: string;
  /** The upgrade leg this run was asked for (UPGRADE_TO), so a replay can run it again. */
  upgrade?: UpgradePlan;
  /** Recorded with the offline lab's images (LAB_IMAGES=1): where they came from and the Cilium patch label. */
  lab?: {
    note: string;
    ciliumImage: string;
    ciliumSource: string;
    /** clusters/lab/patch-cilium.sh's label: `none: …` when Cilium's code was built unchanged. */
    patch: string;
    kubernetesSource: string;
    nodeImage: string;
  };
}

/**
 * The evidence bundles at `path`: `path` itself when it holds a bundle.json, else every folder below it that
 * does (not looking further into a bundle), in sorted path order: `suites/bundles/1.19` → its five bundles,
 * `suites/bundles` → every shipped one. Symbolic links are not followed. A path that is no folder gives none.
 */
export function findBundles(path: string): string[] {
  if (existsSync(join(path, "bundle.json"))) return [path];
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

export function readMeta(dir: string): BundleMeta {
  const file = join(dir, "bundle.json");
  if (!existsSync(file)) throw new UserError(`${dir} is not an evidence bundle (no bundle.json)`);
  let meta: BundleMeta;
  try {
    meta = JSON.parse(readFileSync(file, "utf8")) as BundleMeta;
  } catch {
    throw new UserError(`${file} is not valid JSON`);
  }
  if (!MODES.includes(meta.mode))
    throw new UserError(`${file}: unknown mode ${JSON.stringify(meta.mode)}; valid: ${MODES.join(", ")}`);
  return meta;
}

export function writeMeta(dir: string, meta: BundleMeta): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "bundle.json"), `${JSON.stringify(meta, null, 2)}\n`);
}

/** Topics with recorded calls in the bundle. */
export function bundleTopics(dir: string): string[] {
  const calls = join(dir, "calls");
  if (!existsSync(calls)) return [];
  return readdirSync(calls)
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => f.slice(0, -".jsonl".length));
}

/** Writes records (report as report.txt, the rest as JSON) and their evidence. Datapath parts merge with what is there. */
export function writeRecords(dir: string, set: RecordSet): void {
  const rdir = join(dir, "records");
  mkdirSync(rdir, { recursive: true });
  for (const [name, ev] of Object.entries(set) as [RecordName, Evidenced<unknown>][]) {
    if (!ev) continue;
    let value = ev;
    if (name === "datapath")
      value = mergeDatapath([
        readRecords(dir).datapath,
        ev as Evidenced<Record<string, unknown>>,
      ]) as Evidenced<unknown>;
    const file = RECORD_FILES[name];
    writeFileSync(
      join(rdir, file),
      name === "report"
        ? formatReport(value.record as ReportRecord)
        : `${JSON.stringify(value.record, null, 2)}\n`,
    );
    writeFileSync(
      join(rdir, `${file.replace(/\.(json|txt)$/, "")}.evidence.json`),
      `${JSON.stringify(value.evidence, null, 2)}\n`,
    );
  }
}

export function readRecords(dir: string): RecordSet {
  const rdir = join(dir, "records");
  const out: Record<string, Evidenced<unknown>> = {};
  if (!existsSync(rdir)) return {};
  for (const [name, file] of Object.entries(RECORD_FILES)) {
    const path = join(rdir, file);
    if (!existsSync(path)) continue;
    const text = readFileSync(path, "utf8");
    const evPath = join(rdir, `${file.replace(/\.(json|txt)$/, "")}.evidence.json`);
    const evidence = existsSync(evPath) ? upgradeEvidence(JSON.parse(readFileSync(evPath, "utf8"))) : {};
    out[name] = { record: name === "report" ? parseReport(text) : JSON.parse(text), evidence };
  }
  return out as RecordSet;
}

/**
 * A record's evidence as read from a bundle. Bundles recorded before evidence was quoted at its place hold
 * plain strings: each becomes a derived value that names no source, which `checkEvidence` reports as such.
 */
function upgradeEvidence(doc: unknown): Record<string, EvidenceItem[]> {
  const out: Record<string, EvidenceItem[]> = {};
  for (const [field, items] of Object.entries((doc ?? {}) as Record<string, unknown>))
    out[field] = (Array.isArray(items) ? items : []).map((x) =>
      isEvidenceItem(x) ? x : { derived: String(x), from: [] },
    );
  return out;
}

export function appendVerdicts(dir: string, verdicts: Verdict[]): void {
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, "verdicts.jsonl"), verdicts.map((v) => `${JSON.stringify(v)}\n`).join(""));
}
