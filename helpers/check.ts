import { bundleTopics, readMeta } from "./bundle.ts";
import { replayContext } from "./observe/replay-context.ts";
import type { Mode } from "./properties/expectation.ts";
import { judge, type Verdict } from "./properties/judge.ts";
import { mergeRecordSets } from "./records/datapath.ts";
import type { RecordSet } from "./records/types.ts";
import type { TopicDeclaration } from "./topic.ts";

export interface CheckResult {
  bundle: string;
  mode: Mode;
  cilium: string;
  origin: string;
  verdicts: Verdict[];
  records: RecordSet;
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
 * an altered raw output changes the records), then judges every declared property.
 */
export async function checkBundle(
  dir: string,
  topics: TopicDeclaration[],
  log: (line: string) => void = () => {},
): Promise<CheckResult> {
  const meta = readMeta(dir);
  const recorded = new Set(bundleTopics(dir));
  let records: RecordSet = {};
  const failedTopics = new Map<string, string>();
  for (const { name: topic, observe } of topics) {
    if (!recorded.has(topic)) continue;
    const sofar = records;
    const ctx = replayContext(dir, meta, topic, {
      log: (l) => log(`${topic}: ${l}`),
      earlierRecords: () => sofar,
    });
    try {
      records = mergeRecordSets([records, await observe(ctx)]);
    } catch (err) {
      failedTopics.set(topic, err instanceof Error ? err.message : String(err));
    }
  }
  const verdicts = topics
    .flatMap((t) => t.properties)
    .map((p): Verdict => {
      if (!recorded.has(p.topic)) {
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
          message: `${p.id}: skipped: the bundle has no recorded calls for ${p.topic}`,
        };
      }
      const failed = failedTopics.get(p.topic);
      const v = judge(p, meta.mode, records, meta.cilium);
      if (failed && v.status !== "pass")
        return {
          ...v,
          status: "fail",
          message: `${v.message}\n  (${p.topic} could not be replayed: ${failed})`,
        };
      return v;
    });
  return { bundle: dir, mode: meta.mode, cilium: meta.cilium, origin: meta.origin, verdicts, records };
}

/** The step-summary form: the expectation, the observed value and the verdict per property. */
export function formatCheckMarkdown(r: CheckResult): string {
  const mark = { pass: "✅ pass", fail: "❌ fail", skip: "⏭ skip" } as const;
  const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");
  const counts = { pass: 0, fail: 0, skip: 0 };
  for (const v of r.verdicts) counts[v.status]++;
  return [
    `### ${r.mode} · Cilium ${r.cilium} — ${counts.pass} passed, ${counts.fail} failed, ${counts.skip} skipped`,
    "",
    "| property | claim | expected | observed | verdict |",
    "|---|---|---|---|---|",
    ...r.verdicts.map(
      (v) =>
        `| \`${v.id}\` | ${cell(v.claim)} | ${cell(v.expected)} | ${cell(v.observed)} | ${mark[v.status]} |`,
    ),
    "",
  ].join("\n");
}

export function formatCheck(r: CheckResult): string {
  const counts = { pass: 0, fail: 0, skip: 0 };
  for (const v of r.verdicts) counts[v.status]++;
  const lines = [`${r.bundle}: mode ${r.mode}, Cilium ${r.cilium} (${r.origin.split(":")[0]})`];
  for (const v of r.verdicts)
    lines.push(
      `  ${v.status.toUpperCase().padEnd(4)}  ${v.id.padEnd(44)} expected ${v.expected}, observed ${v.observed}`,
    );
  const fails = r.verdicts.filter((v) => v.status === "fail");
  if (fails.length > 0) lines.push("", ...fails.map((v) => v.message), "");
  lines.push(`${counts.pass} passed, ${counts.fail} failed, ${counts.skip} skipped`);
  return `${lines.join("\n")}\n`;
}
