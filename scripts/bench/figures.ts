/**
 * `npm run bench`'s figures: each with the reference it is read against — a time measured in the same run
 * (the same work without what the figure adds, or a bare start), so the ratio means something on a busy
 * machine too — and, where the issue sets one, its goal.
 */
export interface Figure {
  what: string;
  seconds: number;
  /** Measured in the same run. */
  reference?: { what: string; seconds: number };
  /** The most it may take (issue 20's goals). */
  goalSeconds?: number;
  /** The most it may take against its reference (issue 20's ratio goals, e.g. 1.2×). */
  goalRatio?: number;
  /** E.g. peak memory. */
  note?: string;
  /** Why there is no reference (shown in its column). */
  noReference?: string;
}

const secs = (s: number) => (s < 10 ? s.toFixed(2) : s.toFixed(1));

/** The figures as a markdown table (the README keeps it): figure, time, reference, ratio, goal. */
export function formatFigures(figures: Figure[]): string {
  const rows = figures.map((f) => {
    const ratio =
      f.reference && f.reference.seconds > 0 ? `${(f.seconds / f.reference.seconds).toFixed(1)}×` : "";
    const r = f.reference && f.reference.seconds > 0 ? f.seconds / f.reference.seconds : null;
    const goal =
      f.goalSeconds !== undefined
        ? `≤ ${f.goalSeconds} s ${f.seconds <= f.goalSeconds ? "✔" : "✘ missed"}`
        : f.goalRatio !== undefined
          ? `≤ ${f.goalRatio}× ${r === null ? "(no reference)" : r <= f.goalRatio ? "✔" : "✘ missed"}`
          : "";
    return `| ${f.what} | ${secs(f.seconds)} s${f.note ? ` (${f.note})` : ""} | ${f.reference ? `${f.reference.what}: ${secs(f.reference.seconds)} s` : (f.noReference ?? "")} | ${ratio} | ${goal} |`;
  });
  return [
    "| figure | time | reference (same run) | ratio | goal |",
    "|---|---|---|---|---|",
    ...rows,
    "",
  ].join("\n");
}

/** The median of `n` runs of `fn` (seconds); a figure of a few hundred milliseconds varies run to run. */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}
