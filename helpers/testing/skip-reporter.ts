/**
 * Why tests were skipped, in `npm test`'s default output (issue 37: vitest's default reporter counts skips and
 * names their reasons only with the verbose reporter). After the run, before vitest's totals: each reason once,
 * most frequent first, with how many tests it skipped; known issues (skipped with their reason since issue 37)
 * first of all. A few lines: the rest are counted, and JUnit (CI's results/junit.xml) has every one.
 */
import type { Reporter, TestModule, Vitest } from "vitest/node";
import { terminalText } from "../output.ts";

/** Reasons shown (known issues, then the others; the rest counted in one line), and the width a reason is cut to. */
export const KNOWN_ISSUES_SHOWN = 4;
export const SKIP_REASONS_SHOWN = 6;
const WIDTH = 150;

interface Skipped {
  note: string | undefined;
}

/**
 * A reason as it is counted: one line; without the verdict's `[mode, Cilium X] property: ` prefix (the same reason
 * for every property and bundle it skips), and for a known issue without its `— expected …, observed …` tail
 * (the values differ by bundle, the issue does not).
 */
export function skipReasonKey(note: string | undefined): string {
  let r = terminalText((note ?? "").split("\n")[0] ?? "").trim();
  r = r.replace(/^\[[^\]]*\] [A-Za-z0-9_.-]+: /, "");
  if (r.startsWith("known issue of ")) r = r.replace(/ — expected .*$/, "");
  return r || "(no reason given)";
}

/** The lines that say why tests were skipped; empty when none was. */
export function skipSummary(
  skipped: readonly Skipped[],
  shown = SKIP_REASONS_SHOWN,
  knownShown = KNOWN_ISSUES_SHOWN,
): string[] {
  if (skipped.length === 0) return [];
  const by = new Map<string, number>();
  for (const s of skipped) {
    const reason = skipReasonKey(s.note);
    by.set(reason, (by.get(reason) ?? 0) + 1);
  }
  const known = (r: string) => r.startsWith("known issue of ");
  const order = ([a, m]: [string, number], [b, n]: [string, number]) => n - m || (a < b ? -1 : 1);
  const rows = [...by].sort(order);
  const knownRows = rows.filter(([r]) => known(r));
  const other = rows.filter(([r]) => !known(r));
  const show = [...knownRows.slice(0, knownShown), ...other.slice(0, shown)];
  const rest = rows.filter((r) => !show.includes(r));
  const cut = (r: string) => (r.length > WIDTH ? `${r.slice(0, WIDTH - 1)}…` : r);
  const width = String(Math.max(...rows.map(([, n]) => n))).length;
  const lines = show.map(([r, n]) => `  ${String(n).padStart(width)} × ${cut(r)}`);
  if (rest.length > 0) {
    const tests = rest.reduce((t, [, n]) => t + n, 0);
    lines.push(
      `  … ${rest.length} more reason${rest.length === 1 ? "" : "s"} (${tests} test${tests === 1 ? "" : "s"}): the verbose reporter or JUnit names each`,
    );
  }
  const kn = knownRows.reduce((t, [, n]) => t + n, 0);
  return [
    `Skipped ${skipped.length} test${skipped.length === 1 ? "" : "s"}${kn > 0 ? `, ${kn} of them known issues (neither passed nor failed)` : ""}, by reason:`,
    ...lines,
  ];
}

/**
 * A reason a test or suite skipped by `skipIf` carries in its name (`… (skipped: no ../shared/samples here)`):
 * `skipIf` takes no note, so those name theirs.
 */
export function reasonInName(fullName: string): string | undefined {
  return /\(skipped: (.+?)\)(?: >|$)/.exec(fullName)?.[1];
}

/** The skipped tests of a run with their notes (the reason `skip(note)` gave, else the one their name gives). */
export function skippedTests(modules: readonly TestModule[]): Skipped[] {
  const out: Skipped[] = [];
  for (const m of modules)
    for (const t of m.children.allTests()) {
      const r = t.result();
      if (r.state === "skipped") out.push({ note: r.note ?? reasonInName(t.fullName) });
    }
  return out;
}

export default class SkipReasons implements Reporter {
  private ctx: Vitest | undefined;

  onInit(ctx: Vitest): void {
    this.ctx = ctx;
  }

  onTestRunEnd(modules: readonly TestModule[]): void {
    const lines = skipSummary(skippedTests(modules));
    if (lines.length > 0) this.ctx?.logger.log(`\n${lines.join("\n")}`);
  }
}
