/**
 * Prints `junit: N passed, N failed, N skipped` for a JUnit file (what CI's log ends with); before it, the known
 * issues (test cases with a `known-issue` property: the run showed a bug declared for its Cilium version; skipped
 * test cases since issue 37), which are counted neither as passed nor as skipped; and the failures of a minor the
 * suite has not declared (changed in the new minor), counted among the failures.
 */
import { existsSync, readFileSync } from "node:fs";

export function summarize(xml: string): {
  passed: number;
  failed: number;
  skipped: number;
  known: string[];
  /** Replays that reproduced a real failure a shipped bundle keeps (suites/recorded-failures.ts). */
  recorded: string[];
  /**
   * Failures of a minor the suite has not declared (a `changed-in-new-minor` property): changed in the new
   * minor — a regression or a new behaviour, to be declared. Counted among the failures too.
   */
  changed: string[];
} {
  const cases = xml.split("<testcase ").slice(1);
  let failed = 0;
  let skipped = 0;
  const known: string[] = [];
  const recorded: string[] = [];
  const changed: string[] = [];
  // a test case's name as written (the report's entities decoded)
  const nameOf = (body: string) =>
    (/(?:^|\s)name="([^"]*)"/.exec(body)?.[1] ?? "?")
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&amp;/g, "&");
  for (const c of cases) {
    const body = c.slice(0, c.indexOf("</testcase>") >= 0 ? c.indexOf("</testcase>") : undefined);
    if (/<property name="changed-in-new-minor"/.test(body)) changed.push(nameOf(body));
    if (/<failure|<error/.test(body)) failed++;
    // a known issue is a skipped test case with the property (issue 37), or a passing one with it
    // (CONFORMANCE_KNOWN_ISSUES=pass): counted apart either way
    else if (/<property name="known-issue"/.test(body)) known.push(nameOf(body));
    else if (/<skipped/.test(body)) skipped++;
    else if (/<property name="recorded-failure"/.test(body)) recorded.push(nameOf(body));
  }
  return {
    passed: cases.length - failed - skipped - known.length - recorded.length,
    failed,
    skipped,
    known,
    recorded,
    changed,
  };
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const file = process.argv[2] ?? "results/junit.xml";
  if (!existsSync(file)) {
    process.stderr.write(`junit-summary: ${file} not found\n`);
    process.exit(1);
  }
  const s = summarize(readFileSync(file, "utf8"));
  if (s.known.length > 0)
    process.stdout.write(
      `junit: ${s.known.length} known issue(s), not counted as passed:\n${s.known.map((n) => `  ${n}`).join("\n")}\n`,
    );
  if (s.recorded.length > 0)
    process.stdout.write(
      `junit: ${s.recorded.length} recorded failure(s) reproduced from shipped bundles (suites/recorded-failures.ts), not counted as passed:\n${s.recorded.map((n) => `  ${n}`).join("\n")}\n`,
    );
  if (s.changed.length > 0)
    process.stdout.write(
      `junit: ${s.changed.length} changed in the new minor (failures: a regression or a new behaviour, to be declared; \`datapath-conformance declare-minor BUNDLE\` lists them with their raw lines):\n${s.changed.map((n) => `  ${n}`).join("\n")}\n`,
    );
  process.stdout.write(`junit: ${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped\n`);
}
