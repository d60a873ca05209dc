import { existsSync, realpathSync } from "node:fs";
import { BundleFault } from "./bundle/files.ts";
import { bundleTopics, readMeta, storedVerdicts } from "./bundle/read.ts";
import { cachedCheck } from "./check-cache.ts";
import { UserError } from "./errors.ts";
import { ReplayExecutor } from "./exec/replay.ts";
import type { Measurements } from "./measure/records.ts";
import { replayContext } from "./observe/replay-context.ts";
import type { Mode } from "./properties/expectation.ts";
import { afterBrokenReplay, judge, judgeUnrecorded, type Verdict } from "./properties/judge.ts";
import { isKnownIssue } from "./properties/status.ts";
import { assumedText, expectationBasis, versionRefusal, versionStanding } from "./properties/versions.ts";
import {
  legRunsOf,
  measuredRecords,
  measurementsOf,
  mergeRecordSets,
  recordCatalogue,
  runConfiguration,
} from "./records/catalogue.ts";
import { configValues, type DatapathConfig } from "./records/datapath-config.ts";
import { isEvidenceItem } from "./records/evidence.ts";
import type { LegRun, RecordSet } from "./records/types.ts";
import type { TopicDeclaration } from "./topic.ts";

export interface CheckResult {
  bundle: string;
  mode: Mode;
  cilium: string;
  origin: string;
  /** The topics the bundle recorded (the others' properties are skipped). */
  topics: string[];
  /** The datapath configuration the run observed, or null (a bundle recorded before the config topic). */
  config: DatapathConfig | null;
  /** What the suite had never run among the bundle's versions (bundle.json). */
  neverRunHere?: string[];
  /** The declared minor whose expectations every verdict assumed (the bundle's minor is not declared). */
  assumedFrom?: string;
  verdicts: Verdict[];
  records: RecordSet;
  /** The legs under load its records hold (the leg topics': RecordDecl.legs), record by record. */
  legRuns: LegRun[];
  /** What it measured (the measurement topics' records: RecordDecl.measurements). */
  measurements: Measurements;
  /** How the re-judged verdicts differ from those the run stored (verdicts.jsonl), each with its reason. */
  stored: StoredComparison;
}

/** One way a re-judged verdict differs from the one the bundle stored, and why. */
export interface StoredDifference {
  id: string;
  /** What differs: a field of the verdict, or the property itself (declared now / stored then). */
  what: "status" | "expected" | "observed" | "evidence" | "not stored" | "not declared" | "assumed";
  was: string;
  now: string;
  reason: string;
}

export interface StoredComparison {
  /** none: the bundle stores no verdicts (no verdicts.jsonl, or an empty one); older: its evidence is plain lines (before issue 19); current: items. */
  format: "none" | "older" | "current";
  differences: StoredDifference[];
  /** True when every re-judged verdict equals the stored one (status, expected, observed, evidence). */
  exact: boolean;
}

/** The part of a verdict a reference compares (suites/golden): what was expected, observed and shown. */
export type VerdictRow = Pick<Verdict, "id" | "status" | "expected" | "observed" | "evidence">;

export function verdictRows(r: CheckResult): VerdictRow[] {
  return r.verdicts.map(({ id, status, expected, observed, evidence }) => ({
    id,
    status,
    expected,
    observed,
    evidence,
  }));
}

/**
 * Re-judges a bundle offline: replays every recorded topic (in `topics`' order) through the same observers the specs use (so
 * an altered raw output changes the records), then judges every declared property on its topic's observation,
 * as the run did; `records` is every topic's, merged (what the bundle's records/ hold).
 */
export async function checkBundle(
  dir: string,
  topics: TopicDeclaration[],
  log?: (line: string) => void,
): Promise<CheckResult> {
  // a caller that wants the replay's lines judges afresh; otherwise a test run shares its judgements
  // (helpers/check-cache.ts: only where DATAPATH_CONFORMANCE_CHECK_CACHE names the run's directory)
  if (log) return judgeBundle(dir, topics, log);
  // keyed by where the bundle really is, so a CLI the tests start (a relative path, another working directory)
  // shares them too; the bundle's path is the only place a judgement holds it, and it is the caller's own
  const real = existsSync(dir) ? realpathSync(dir) : dir;
  const r = await cachedCheck(real, topics, () => judgeBundle(dir, topics, () => {}));
  return r.bundle === dir ? r : { ...r, bundle: dir };
}

/** Judges a bundle afresh (what checkBundle does without a run's shared judgements). */
export async function judgeBundle(
  dir: string,
  topics: TopicDeclaration[],
  log: (line: string) => void,
): Promise<CheckResult> {
  const meta = readMeta(dir);
  // a minor older than every declared one (or another major) is refused, as a run of it is: in one line
  const standing = versionStanding(meta.cilium).kind;
  if (standing === "older" || standing === "other-major")
    throw new UserError(`${dir}: ${versionRefusal(meta.cilium)}`);
  const recorded = new Set(bundleTopics(dir));
  const catalogue = recordCatalogue(topics);
  let records: RecordSet = {};
  /** Each topic's own observation: its properties are judged on it, as the run judged them (suites/harness.ts). */
  const own = new Map<string, RecordSet>();
  const failedTopics = new Map<string, string>();
  for (const { name: topic, observe } of topics) {
    if (!recorded.has(topic)) continue;
    const sofar = records;
    const ctx = replayContext(dir, meta, topic, {
      log: (l) => log(`${topic}: ${l}`),
      earlierRecords: () => sofar,
    });
    try {
      const observed = await observe(ctx);
      own.set(topic, observed);
      records = mergeRecordSets([records, observed], catalogue);
    } catch (err) {
      // a bundle that cannot be read is no verdict about the cluster: the bundle is refused (exit 2); nor is an
      // error no check foresaw (a TypeError, a RangeError such as a stack overflow on an output of hostile size):
      // the CLI says it in one line (exit 2), never as the cluster failing the topic's properties
      if (err instanceof BundleFault || err instanceof TypeError || err instanceof RangeError) throw err;
      failedTopics.set(topic, err instanceof Error ? err.message : String(err));
    }
    // a fault a topic's wait caught and went on without
    if (ctx.exec instanceof ReplayExecutor && ctx.exec.fault) throw ctx.exec.fault;
  }
  // the run's datapath configuration (the record declared to hold it): every expectation is resolved for it
  const runConfig = runConfiguration(records, catalogue);
  const config = runConfig ? configValues(runConfig) : null;
  // a minor the suite has not declared: every verdict is judged on the newest declared minor's expectations
  const assumedFrom = expectationBasis(meta.cilium).assumedFrom;
  const verdicts = topics
    .flatMap((t) => t.properties)
    .map((p): Verdict => {
      if (!recorded.has(p.topic)) return judgeUnrecorded(p, meta.mode, meta.cilium, config);
      const v = judge(p, meta.mode, own.get(p.topic) ?? {}, meta.cilium, config);
      const failed = failedTopics.get(p.topic);
      return failed ? afterBrokenReplay(v, failed) : v;
    });
  return {
    bundle: dir,
    mode: meta.mode,
    cilium: meta.cilium,
    origin: meta.origin,
    topics: [...recorded],
    config: runConfig,
    ...(meta.neverRunHere ? { neverRunHere: meta.neverRunHere } : {}),
    ...(assumedFrom ? { assumedFrom } : {}),
    verdicts,
    records,
    legRuns: legRunsOf(records, catalogue),
    measurements: measurementsOf(records, catalogue),
    stored: compareStored(dir, verdicts, topics, recorded),
  };
}

/**
 * Re-judging is exact, or says why not: each difference between a re-judged verdict and the stored one gets
 * its reason. A changed expectation is a newer expectation; a changed status, observed value or evidence under
 * the same expectation is a newer judge (the observation, a parser or the judgement changed after the
 * recording); a property declared now but not then is newer than the bundle; one stored but no longer declared
 * was renamed or removed.
 */
export function compareStored(
  dir: string,
  verdicts: Verdict[],
  topics: TopicDeclaration[],
  recorded: Set<string>,
): StoredComparison {
  const stored = storedVerdicts(dir);
  // an empty verdicts.jsonl stores none either: said once, not as every property "not stored"
  if (!stored || stored.size === 0) return { format: "none", differences: [], exact: false };
  const items = [...stored.values()].flatMap((v) => v.evidence as unknown[]);
  const format = items.every(isEvidenceItem) ? "current" : "older";
  const measuredNames = measuredRecords(recordCatalogue(topics));
  const measured = new Set(
    topics
      .flatMap((t) => t.properties)
      .filter((p) => p.needs.some((n) => measuredNames.has(n)))
      .map((p) => p.id),
  );
  const differences: StoredDifference[] = [];
  for (const v of verdicts) {
    if (!recorded.has(v.topic)) continue;
    const s = stored.get(v.id);
    if (!s) {
      differences.push({
        id: v.id,
        what: "not stored",
        was: "-",
        now: v.status,
        reason: "newer than the bundle: the property was declared after it was recorded",
      });
      continue;
    }
    const assumedNow = (s.assumedFrom ?? null) !== (v.assumedFrom ?? null);
    if (assumedNow)
      differences.push({
        id: v.id,
        what: "assumed",
        was: s.assumedFrom ? assumedText(s.assumedFrom) : "declared",
        now: v.assumedFrom ? assumedText(v.assumedFrom) : "declared",
        reason: v.assumedFrom
          ? `Cilium ${v.cilium ?? "?"} is of a minor the suite does not declare, and the stored verdicts were judged as declared (a relabelled bundle, or a minor declared then and not now)`
          : `Cilium ${v.cilium ?? "?"}'s minor was declared after the recording: its own expectations apply now`,
      });
    if (s.status === "pass" && isKnownIssue(v.status)) {
      // before issue 24 a version's known issue was declared as its expectation, and a run showing it passed
      differences.push({
        id: v.id,
        what: "status",
        was: `pass (expected ${s.expected})`,
        now: `known issue (expected ${v.expected})`,
        reason:
          "newer judge: a known issue is its own verdict since issue 24 (the recording called the version's bug a pass)",
      });
      continue;
    }
    if (s.expected !== v.expected) {
      differences.push({
        id: v.id,
        what: "expected",
        was: s.expected,
        now: v.expected,
        reason: assumedNow
          ? "follows what is assumed now (the line above)"
          : "newer expectation: the declaration changed after the recording",
      });
      for (const f of ["status", "observed"] as const)
        if (s[f] !== v[f])
          differences.push({
            id: v.id,
            what: f,
            was: s[f],
            now: v[f],
            reason: "follows the newer expectation",
          });
      continue;
    }
    for (const f of ["status", "observed"] as const) {
      if (s[f] === v[f]) continue;
      const timed =
        f === "observed" &&
        measured.has(v.id) &&
        !Number.isNaN(Number(s.observed)) &&
        !Number.isNaN(Number(v.observed));
      differences.push({
        id: v.id,
        what: f,
        was: s[f],
        now: v[f],
        reason: timed
          ? "newer judge: measured times are now the calls' recorded end times (the recording run read its wall clock, a few ms apart)"
          : "newer judge: the observation or its judgement changed after the recording",
      });
    }
    if (format === "current" && JSON.stringify(s.evidence) !== JSON.stringify(v.evidence))
      differences.push({
        id: v.id,
        what: "evidence",
        was: `${s.evidence.length} items`,
        now: `${v.evidence.length} items`,
        reason: "newer judge: the evidence shown changed after the recording",
      });
  }
  const declared = new Set(verdicts.map((v) => v.id));
  for (const id of stored.keys())
    if (!declared.has(id))
      differences.push({
        id,
        what: "not declared",
        was: stored.get(id)?.status ?? "",
        now: "-",
        reason: "renamed or removed after the recording",
      });
  return { format, differences, exact: format === "current" && differences.length === 0 };
}
