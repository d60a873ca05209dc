import { existsSync, realpathSync } from "node:fs";
import { bundleTopics, readMeta } from "./bundle.ts";
import { BundleFault, readBundleJsonLines } from "./bundle-read.ts";
import { atLine, checked, STORED_VERDICT, type StoredVerdict } from "./bundle-schema.ts";
import { cachedCheck } from "./check-cache.ts";
import { ReplayExecutor } from "./exec/replay.ts";
import { replayContext } from "./observe/replay-context.ts";
import {
  code,
  type MarkdownText,
  markdown,
  markdownLines,
  markdownRow,
  type TerminalText,
  terminal,
  terminalLines,
} from "./output.ts";
import type { Mode } from "./properties/expectation.ts";
import { judge, STATUS_WORDS, skipReason, type Verdict } from "./properties/judge.ts";
import { mergeRecordSets } from "./records/datapath.ts";
import { configValues, type DatapathConfig, formatDatapathConfig } from "./records/datapath-config.ts";
import { isEvidenceItem } from "./records/evidence.ts";
import type { RecordSet } from "./records/types.ts";
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
  verdicts: Verdict[];
  records: RecordSet;
  /** How the re-judged verdicts differ from those the run stored (verdicts.jsonl), each with its reason. */
  stored: StoredComparison;
}

/** One way a re-judged verdict differs from the one the bundle stored, and why. */
export interface StoredDifference {
  id: string;
  /** What differs: a field of the verdict, or the property itself (declared now / stored then). */
  what: "status" | "expected" | "observed" | "evidence" | "not stored" | "not declared";
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
  const recorded = new Set(bundleTopics(dir));
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
      records = mergeRecordSets([records, observed]);
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
  // the run's datapath configuration (the config topic's record): every expectation is resolved for it
  const config = records.config ? configValues(records.config.record) : null;
  const verdicts = topics
    .flatMap((t) => t.properties)
    .map((p): Verdict => {
      if (!recorded.has(p.topic)) {
        // a topic with nothing to observe in this configuration (the ipv6 topic on an IPv4-only cluster) records
        // no calls: its properties are not applicable, naming the setting, not missing
        const na = judge(p, meta.mode, {}, meta.cilium, config);
        if (na.status === "skip" && na.reason?.startsWith("not applicable")) return na;
        return {
          id: p.id,
          topic: p.topic,
          claim: p.claim,
          source: "",
          mode: meta.mode,
          cilium: meta.cilium,
          status: "skip",
          expected: "",
          observed: "-",
          evidence: [],
          reason: `the bundle has no recorded calls for ${p.topic}`,
          message: `${p.id}: skipped: the bundle has no recorded calls for ${p.topic}`,
        };
      }
      const failed = failedTopics.get(p.topic);
      const v = judge(p, meta.mode, own.get(p.topic) ?? {}, meta.cilium, config);
      // a property the configuration makes not applicable stays so, whatever its topic's replay did
      const notApplicable = v.status === "skip" && v.reason?.startsWith("not applicable");
      if (failed && v.status !== "pass" && v.status !== "known-issue" && !notApplicable)
        return {
          ...v,
          status: "fail",
          message: `${v.message}\n  (${p.topic} could not be replayed: ${failed})`,
        };
      return v;
    });
  return {
    bundle: dir,
    mode: meta.mode,
    cilium: meta.cilium,
    origin: meta.origin,
    topics: [...recorded],
    config: records.config?.record ?? null,
    ...(meta.neverRunHere ? { neverRunHere: meta.neverRunHere } : {}),
    verdicts,
    records,
    stored: compareStored(dir, verdicts, topics, recorded),
  };
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
 * Every line of verdicts.jsonl, in order, each checked against its schema (helpers/bundle-schema.ts
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
  const measured = new Set(
    topics
      .flatMap((t) => t.properties)
      .filter((p) => p.needs.some((n) => n === "latency" || n === "scaling"))
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
    if (s.status === "pass" && v.status === "known-issue") {
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
        reason: "newer expectation: the declaration changed after the recording",
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

/** The counts of a bundle's verdicts, by status. */
export function countVerdicts(vs: readonly Pick<Verdict, "status">[]): Record<Verdict["status"], number> {
  const counts = { pass: 0, fail: 0, skip: 0, "known-issue": 0 };
  for (const v of vs) counts[v.status]++;
  return counts;
}

/** "62 passed, 0 failed, 3 known issues, 12 skipped": the closing line (known issues only where there are). */
export function countLine(vs: readonly Pick<Verdict, "status">[]): string {
  const c = countVerdicts(vs);
  const known =
    c["known-issue"] > 0 ? `, ${c["known-issue"]} known issue${c["known-issue"] === 1 ? "" : "s"}` : "";
  return `${c.pass} passed, ${c.fail} failed${known}, ${c.skip} skipped`;
}

/** Failures first, then known issues, passes, and skips last (each group in declaration order). */
const ORDER: Record<Verdict["status"], number> = { fail: 0, "known-issue": 1, pass: 2, skip: 3 };
export function bySeverity<T extends Pick<Verdict, "status">>(vs: readonly T[]): T[] {
  return [...vs].sort((a, b) => ORDER[a.status] - ORDER[b.status]);
}

/** The step-summary form: the expectation, the observed value and the verdict per property. */
export function formatCheckMarkdown(r: CheckResult): MarkdownText {
  const mark = { pass: "✅ pass", fail: "❌ fail", skip: "⏭ skip", "known-issue": "⚠️ known issue" } as const;
  const known = r.verdicts.filter((v) => v.status === "known-issue");
  const notes = r.verdicts.filter((v) => v.note && v.status === "pass");
  const judged = bySeverity(r.verdicts.filter((v) => v.status !== "skip"));
  const skipped = r.verdicts.filter((v) => v.status === "skip");
  const out: MarkdownText[] = [
    markdown`### ${r.mode} · Cilium ${r.cilium} — ${countLine(r.verdicts)}`,
    markdown``,
    markdown`Datapath: ${r.config ? formatDatapathConfig(r.config) : "not recorded (bundle older than the config topic)"}`,
    markdown``,
  ];
  if (known.length > 0) {
    out.push(
      markdown`**Known issues of this version** (neither pass nor fail; \`check --strict\` fails on them):`,
      markdown``,
    );
    for (const v of known)
      out.push(
        markdown`- ${code(v.id)}: ${v.deviation?.claim ?? v.claim} — expected ${v.expected}, observed ${v.observed} (${v.deviation?.upstream ?? ""})`,
      );
    out.push(markdown``);
  }
  if (notes.length > 0) {
    out.push(markdown`**News:**`, markdown``);
    for (const v of notes) out.push(markdown`- ${code(v.id)}: ${v.note ?? ""}`);
    out.push(markdown``);
  }
  out.push(markdown`| property | claim | expected | observed | verdict |`, markdown`|---|---|---|---|---|`);
  for (const v of judged)
    out.push(
      markdownRow([
        markdown`${code(v.id)}`,
        markdown`${v.checked ?? v.claim}`,
        markdown`${v.expected}`,
        markdown`${v.observed}`,
        markdown`${mark[v.status]}`,
      ]),
    );
  out.push(markdown``);
  if (skipped.length > 0) {
    out.push(
      markdown`<details><summary>${skipped.length} skipped, each with its reason</summary>`,
      markdown``,
      markdown`| property | reason |`,
      markdown`|---|---|`,
    );
    for (const v of skipped) out.push(markdownRow([markdown`${code(v.id)}`, markdown`${skipReason(v)}`]));
    out.push(markdown``, markdown`</details>`, markdown``);
  }
  for (const l of formatStoredMarkdown(r.stored)) out.push(l);
  out.push(markdown``);
  return markdownLines(out);
}

export function formatCheck(r: CheckResult): TerminalText {
  const lines: TerminalText[] = [
    terminal`${r.bundle}: mode ${r.mode}, Cilium ${r.cilium} (${r.origin.split(":")[0]})`,
    // each a line of the bundle's own: said after its own words, so that no bundle text starts a line
    ...(r.neverRunHere ?? []).map((l) => terminal`never run here: ${l.replace(/^never run here: /, "")}`),
    terminal`datapath: ${r.config ? formatDatapathConfig(r.config) : "not recorded (a bundle older than the config topic: each property's declared configuration assumed)"}`,
  ];
  const tag = { pass: "PASS", fail: "FAIL", skip: "SKIP", "known-issue": "KNOWN" } as const;
  for (const v of bySeverity(r.verdicts)) {
    const what =
      v.status === "skip"
        ? skipReason(v)
        : v.status === "known-issue"
          ? `expected ${v.expected}, observed ${v.observed}: known issue of Cilium ${v.deviation?.versions}`
          : `expected ${v.expected}, observed ${v.observed}`;
    lines.push(terminal`  ${tag[v.status].padEnd(5)}  ${v.id.padEnd(44)} ${what}`);
  }
  const fails = r.verdicts.filter((v) => v.status === "fail");
  if (fails.length > 0) {
    lines.push(terminal``);
    // a message's lines are the judge's own (it shows the bundle's strings in them: helpers/properties/judge.ts)
    for (const v of fails) for (const l of v.message.split("\n")) lines.push(terminal`${l}`);
    lines.push(terminal``);
  }
  const known = r.verdicts.filter((v) => v.status === "known-issue");
  if (known.length > 0) {
    lines.push(
      terminal``,
      terminal`Known issues of Cilium ${r.cilium} (${STATUS_WORDS["known-issue"]}: neither pass nor fail; --strict fails on them):`,
    );
    for (const v of known)
      lines.push(
        terminal`  ${v.id}: ${v.deviation?.claim ?? v.claim}`,
        terminal`    ${v.deviation?.upstream ?? ""}`,
      );
    lines.push(terminal``);
  }
  const news = r.verdicts.filter((v) => v.status === "pass" && v.note);
  if (news.length > 0) {
    lines.push(terminal``, terminal`News:`);
    for (const v of news) lines.push(terminal`  ${v.id}: ${v.note}`);
    lines.push(terminal``);
  }
  lines.push(terminal`${countLine(r.verdicts)}`);
  for (const l of formatStored(r.stored)) lines.push(l);
  lines.push(terminal``);
  return terminalLines(lines);
}

/** The differences with the stored verdicts listed at most (a bundle may store any number: the rest are counted). */
export const STORED_DIFFERENCES_SHOWN = 200;

/** What `check` says about the stored verdicts: reproduced exactly, or each difference with its reason. */
export function formatStored(s: StoredComparison): TerminalText[] {
  const cut = (x: string) => (x.length > 70 ? `${x.slice(0, 67)}...` : x);
  const { head, shown, more } = storedSummary(s);
  const out = head.map((h) => terminal`${h}`);
  for (const d of shown)
    out.push(terminal`  ${d.id.padEnd(44)} ${d.what}: ${cut(d.was)} → ${cut(d.now)}  (${d.reason})`);
  if (more > 0) out.push(terminal`  ... and ${more} more difference(s)`);
  return out;
}

/** The same, as markdown list items. */
function formatStoredMarkdown(s: StoredComparison): MarkdownText[] {
  const cut = (x: string) => (x.length > 70 ? `${x.slice(0, 67)}...` : x);
  const { head, shown, more } = storedSummary(s);
  const out = head.map((h) => markdown`${h}`);
  for (const d of shown)
    out.push(markdown`- ${d.id.padEnd(44)} ${d.what}: ${cut(d.was)} → ${cut(d.now)}  (${d.reason})`);
  if (more > 0) out.push(markdown`- ... and ${more} more difference(s)`);
  return out;
}

function storedSummary(s: StoredComparison): { head: string[]; shown: StoredDifference[]; more: number } {
  if (s.format === "none")
    return {
      head: ["no stored verdicts to compare with (the bundle has no verdicts.jsonl, or an empty one)"],
      shown: [],
      more: 0,
    };
  const head: string[] = [];
  if (s.format === "older")
    head.push(
      "stored verdicts.jsonl: recorded with an older suite (evidence as plain lines); this check's evidence is quoted at its place",
    );
  if (s.differences.length === 0) {
    if (s.format === "current") head.push("stored verdicts.jsonl: reproduced exactly");
    else head.push("stored verdicts.jsonl: every status, expectation and observed value reproduced");
    return { head, shown: [], more: 0 };
  }
  head.push(`stored verdicts.jsonl: ${s.differences.length} difference(s), each with its reason:`);
  const shown = s.differences.slice(0, STORED_DIFFERENCES_SHOWN);
  return { head, shown, more: s.differences.length - shown.length };
}
