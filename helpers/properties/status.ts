/**
 * A verdict's five statuses, and every rule that reads one, decided once (issue 43: the rules were read again in
 * the harness, check, compare, the upgrade gate, the report and JUnit): pass, fail, a known issue (a bug the
 * version is declared to have: neither pass nor fail), skip (not judged, with its reason), changed (an
 * expectation assumed for a minor the suite has not declared that did not hold: a failure to declare). Which
 * status a property gets is the judge's alone (helpers/properties/judge.ts); what a status then means — a failure,
 * a test case's outcome, an exit code, its words, its order — is here.
 */
export const STATUSES = ["pass", "fail", "skip", "known-issue", "changed"] as const;
export type Status = (typeof STATUSES)[number];

interface StatusWords {
  /** In a count ("3 passed", "1 known issue"). */
  counted: string;
  /** A terminal's tag (`check`). */
  tag: string;
  /** In a sentence (`compare`). */
  word: string;
  /** The HTML report's mark. */
  mark: string;
  /** The markdown summary's mark. */
  emoji: string;
  /** Worse is higher; a skip is not judged (-1). */
  rank: number;
}

export const STATUS: Record<Status, StatusWords> = {
  pass: { counted: "passed", tag: "PASS", word: "pass", mark: "✔ pass", emoji: "✅ pass", rank: 0 },
  "known-issue": {
    counted: "known issue",
    tag: "KNOWN",
    word: "known issue",
    mark: "⚠ known issue",
    emoji: "⚠️ known issue",
    rank: 1,
  },
  fail: { counted: "failed", tag: "FAIL", word: "fail", mark: "✘ fail", emoji: "❌ fail", rank: 2 },
  changed: {
    counted: "changed in the new minor",
    tag: "CHANGED",
    word: "changed in the new minor",
    mark: "Δ changed in the new minor",
    emoji: "🔶 changed in the new minor",
    rank: 2,
  },
  skip: { counted: "skipped", tag: "SKIP", word: "skip", mark: "– skip", emoji: "⏭ skip", rank: -1 },
};

/** Judged: a value was compared with an expectation (every status but skip). */
export const isJudged = (s: Status): boolean => s !== "skip";
/** A failure of the cluster: the claim did not hold and no known issue explains it (a change in a new minor too). */
export const isFailure = (s: string | undefined): boolean => s === "fail" || s === "changed";
export const isKnownIssue = (s: string | undefined): boolean => s === "known-issue";
/** The claim held, or a known issue of the version explains why not: what a replay that broke cannot take back. */
export const isExplained = (s: Status): boolean => s === "pass" || isKnownIssue(s);
/** Skipped because the configuration or the version makes the property not applicable (not a missing observation). */
export const isNotApplicable = (v: { status: Status; reason?: string | undefined }): boolean =>
  v.status === "skip" && (v.reason?.startsWith("not applicable") ?? false);

/**
 * How a verdict ends as a test case (vitest's, JUnit's) and in an exit code: a known issue is a skipped case that
 * names it (JUnit viewers show it apart, never green), a failure when the run is strict, and a pass where the run
 * asks for the behaviour before known issues were skipped (CONFORMANCE_KNOWN_ISSUES=pass); a change in a new minor
 * fails as a failure does.
 */
export type Outcome = "pass" | "fail" | "skip";
export function outcomeOf(s: Status, o: { strict?: boolean; knownIssuesPass?: boolean } = {}): Outcome {
  if (isFailure(s)) return "fail";
  if (isKnownIssue(s)) return o.strict ? "fail" : o.knownIssuesPass ? "pass" : "skip";
  return s === "skip" ? "skip" : "pass";
}

/** Whether a status fails a run, `check` or a JUnit report (a known issue only when strict). */
export const failsRun = (s: Status, strict = false): boolean => outcomeOf(s, { strict }) === "fail";

/** The order verdicts are shown in: failures first, then changes in a new minor, known issues, passes, skips. */
export const BY_SEVERITY: readonly Status[] = ["fail", "changed", "known-issue", "pass", "skip"];
const ORDER = Object.fromEntries(BY_SEVERITY.map((s, i) => [s, i])) as Record<Status, number>;
/** Verdicts by severity (BY_SEVERITY), each status in the order given. */
export function bySeverity<T extends { status: Status }>(vs: readonly T[]): T[] {
  return [...vs].sort((a, b) => ORDER[a.status] - ORDER[b.status]);
}

/**
 * "62 passed, 0 failed, 3 known issues, 12 skipped": verdicts counted (changes in a new minor and known issues
 * only where there are).
 */
export function countSentence(vs: readonly { status: Status }[]): string {
  const c = countStatuses(vs);
  const changed = c.changed > 0 ? `, ${c.changed} ${STATUS.changed.counted}` : "";
  const k = c["known-issue"];
  const known = k > 0 ? `, ${k} ${STATUS["known-issue"].counted}${k === 1 ? "" : "s"}` : "";
  return `${c.pass} passed, ${c.fail} failed${changed}${known}, ${c.skip} skipped`;
}

/** The counts of verdicts, by status. */
export function countStatuses(vs: readonly { status: Status }[]): Record<Status, number> {
  const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<Status, number>;
  for (const v of vs) counts[v.status]++;
  return counts;
}

const per = <K extends keyof StatusWords>(k: K) =>
  Object.fromEntries(STATUSES.map((s) => [s, STATUS[s][k]])) as Record<Status, StatusWords[K]>;
/** Each status's terminal tag, sentence word, report mark and summary mark, as maps. */
export const STATUS_COUNTED = per("counted");
export const STATUS_TAG = per("tag");
export const STATUS_WORD = per("word");
export const STATUS_MARK = per("mark");
export const STATUS_EMOJI = per("emoji");
export const STATUS_RANK = per("rank");
