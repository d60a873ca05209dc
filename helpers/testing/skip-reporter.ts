/**
 * Why tests were skipped, in `npm test`'s default output (issue 37: vitest's default reporter counts skips and
 * names their reasons only with the verbose reporter). After the run, before vitest's totals: each reason once,
 * most frequent first, with how many tests it skipped; known issues (skipped with their reason since issue 37)
 * first of all. A few lines: the rest are counted, and JUnit (CI's results/junit.xml) has every one.
 */
import type { Reporter, TestModule, Vitest } from "vitest/node";
import { terminalText } from "../output.ts";

/** Reasons shown (the rest counted in one line), and the width a reason is cut to. */
export const SKIP_REASONS_SHOWN = 8;
const WIDTH = 150;

interface Skipped {
  note: string | undefined;
}

/** The lines that say why tests were skipped; empty when none was. */
export function skipSummary(skipped: readonly Skipped[], shown = SKIP_REASONS_SHOWN): string[] {
  if (skipped.length === 0) return [];
  const by = new Map<string, number>();
  for (const s of skipped) {
    // one line each: a reason's own newlines and a bundle's control characters are shown, never emitted
    const reason = terminalText((s.note ?? "").split("\n")[0] ?? "").trim() || "(no reason given)";
    by.set(reason, (by.get(reason) ?? 0) + 1);
  }
  const known = (r: string) => r.startsWith("known issue of ");
  const rows = [...by].sort(
    ([a, m], [b, n]) => Number(known(b)) - Number(known(a)) || n - m || (a < b ? -1 : 1),
  );
  const cut = (r: string) => (r.length > WIDTH ? `${r.slice(0, WIDTH - 1)}…` : r);
  const width = String(Math.max(...rows.map(([, n]) => n))).length;
  const lines = rows.slice(0, shown).map(([r, n]) => `  ${String(n).padStart(width)} × ${cut(r)}`);
  if (rows.length > shown) {
    const rest = rows.slice(shown).reduce((t, [, n]) => t + n, 0);
    lines.push(
      `  … ${rows.length - shown} more reason${rows.length - shown === 1 ? "" : "s"} (${rest} test${rest === 1 ? "" : "s"}): the verbose reporter or JUnit names each`,
    );
  }
  const kn = rows.filter(([r]) => known(r)).reduce((t, [, n]) => t + n, 0);
  return [
    `Skipped ${skipped.length} test${skipped.length === 1 ? "" : "s"}${kn > 0 ? `, ${kn} of them known issues (neither passed nor failed)` : ""}, by reason:`,
    ...lines,
  ];
}

/** The skipped tests of a run with their notes (the reason `skip(note)` gave). */
export function skippedTests(modules: readonly TestModule[]): Skipped[] {
  const out: Skipped[] = [];
  for (const m of modules)
    for (const t of m.children.allTests()) {
      const r = t.result();
      if (r.state === "skipped") out.push({ note: r.note });
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
