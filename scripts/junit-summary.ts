/** Prints `junit: N passed, N failed, N skipped` for a JUnit file (what CI's log ends with). */
import { existsSync, readFileSync } from "node:fs";

export function summarize(xml: string): { passed: number; failed: number; skipped: number } {
  const cases = xml.split("<testcase ").slice(1);
  let failed = 0;
  let skipped = 0;
  for (const c of cases) {
    const body = c.slice(0, c.indexOf("</testcase>") >= 0 ? c.indexOf("</testcase>") : undefined);
    if (/<failure|<error/.test(body)) failed++;
    else if (/<skipped/.test(body)) skipped++;
  }
  return { passed: cases.length - failed - skipped, failed, skipped };
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const file = process.argv[2] ?? "results/junit.xml";
  if (!existsSync(file)) {
    process.stderr.write(`junit-summary: ${file} not found\n`);
    process.exit(1);
  }
  const s = summarize(readFileSync(file, "utf8"));
  process.stdout.write(`junit: ${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped\n`);
}
