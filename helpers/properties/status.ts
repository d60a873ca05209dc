/**
 * A verdict's five statuses and how every reader shows and ranks them, decided once (issue 43: the rules were read
 * again in check, compare, the report and JUnit): pass, fail, a known issue (a bug the version is declared to have:
 * neither pass nor fail), skip (not judged, with its reason), changed (an expectation assumed for a minor the suite
 * has not declared that did not hold: a failure to declare).
 */
export const STATUSES = ["pass", "fail", "known-issue", "skip", "changed"] as const;
export type Status = (typeof STATUSES)[number];

interface StatusWords {
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
  pass: { tag: "PASS", word: "pass", mark: "✔ pass", emoji: "✅ pass", rank: 0 },
  "known-issue": {
    tag: "KNOWN",
    word: "known issue",
    mark: "⚠ known issue",
    emoji: "⚠️ known issue",
    rank: 1,
  },
  fail: { tag: "FAIL", word: "fail", mark: "✘ fail", emoji: "❌ fail", rank: 2 },
  changed: {
    tag: "CHANGED",
    word: "changed in the new minor",
    mark: "Δ changed in the new minor",
    emoji: "🔶 changed in the new minor",
    rank: 2,
  },
  skip: { tag: "SKIP", word: "skip", mark: "– skip", emoji: "⏭ skip", rank: -1 },
};

/** Judged: a value was compared with an expectation (every status but skip). */
export const isJudged = (s: Status): boolean => s !== "skip";
/** A failure of the cluster: the claim did not hold and no known issue explains it (a change in a new minor too). */
export const isFailure = (s: Status): boolean => s === "fail" || s === "changed";
export const isKnownIssue = (s: Status): boolean => s === "known-issue";

const per = <K extends keyof StatusWords>(k: K) =>
  Object.fromEntries(STATUSES.map((s) => [s, STATUS[s][k]])) as Record<Status, StatusWords[K]>;
/** Each status's terminal tag, sentence word, report mark and summary mark, as maps. */
export const STATUS_TAG = per("tag");
export const STATUS_WORD = per("word");
export const STATUS_MARK = per("mark");
export const STATUS_EMOJI = per("emoji");
export const STATUS_RANK = per("rank");
