import { readMeta } from "../bundle/read.ts";
import { verdictLine } from "../compare.ts";
import { countStatuses, type Status } from "../properties/status.ts";
import type { TopicDeclaration } from "../topic.ts";
import { checkOutputPath, writeOutput } from "../write-output.ts";
import { buildReport, renderReport } from "./html.ts";

export interface WrittenReport {
  bytes: number;
  /** Each bundle's column and its verdict counts. */
  columns: {
    label: string;
    pass: number;
    fail: number;
    knownIssues: number;
    skip: number;
    /** Changed in a new minor: the expectation assumed from the newest declared minor did not hold. */
    changed: number;
    /** Its comparison with the nearest shipped bundle, in one line (a version the suite ships none of). */
    nearest?: string;
  }[];
}

/**
 * Re-judges the bundles, renders the page and writes it to `out` (its folder made if missing) through a
 * temporary file and a rename; never onto a folder or into one of the bundles (helpers/write-output.ts).
 */
export async function writeReport(
  dirs: string[],
  topics: TopicDeclaration[],
  out: string,
  opts: { compare?: [string, string]; nearest?: boolean } = {},
): Promise<WrittenReport> {
  // every bundle named is read first: a wrong path is one line before any work
  for (const d of [...dirs, ...(opts.compare ?? [])]) readMeta(d);
  checkOutputPath(out, [...dirs, ...(opts.compare ?? [])]);
  const input = await buildReport(dirs, topics, {
    ...(opts.compare ? { compare: opts.compare } : {}),
    ...(opts.nearest === false ? { nearest: false } : {}),
  });
  const html = renderReport(input);
  writeOutput(out, html, [...dirs, ...(opts.compare ?? [])]);
  return {
    bytes: Buffer.byteLength(html),
    columns: input.columns.map((c) => {
      const counted = countStatuses(c.check.verdicts);
      const n = (s: Status) => counted[s];
      const near = input.nearest?.find((x) => x.comparison.b.bundle === c.check.bundle);
      return {
        label: c.label,
        pass: n("pass"),
        fail: n("fail"),
        knownIssues: n("known-issue"),
        skip: n("skip"),
        changed: n("changed"),
        ...(near ? { nearest: `${near.why}: ${verdictLine(near.comparison)}` } : {}),
      };
    }),
  };
}
