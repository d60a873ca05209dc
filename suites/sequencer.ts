import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Files of the unit and replay projects that take seconds — they start processes, Chromium or wait on timers —
 * started first, in this order, so that the run's last seconds are not one of them alone on a core (issue 27:
 * `npm test` in a minute; measured 2026-12-03 with four workers: readme-commands started at 41 s and ended the
 * run). `check.test` judges every shipped bundle first: the files after it find those judgements made
 * (helpers/check-cache.ts). Everything else follows in file-name order.
 */
const SLOW_FIRST = [
  /scripts\/readme-commands\.test\.ts$/,
  /\.browser\.test\.ts$/,
  /helpers\/check\.test\.ts$/,
  /suites\/(?:evidence|stored-verdicts|replay-exhausted|golden)\.test\.ts$/,
  /clusters\/(?:readiness|interrupt|lab-down)\.test\.ts$/,
  /scripts\/faults\/driver\.test\.ts$/,
  /cli\/(?:hostile-bundles|bin)\.test\.ts$/,
  /scripts\/upgrade-job\.test\.ts$/,
  /13-measure-scale\/measure-scale\.(?:test|spec)\.ts$/,
  /helpers\/exec\/deadlines\.test\.ts$/,
];

const rank = (id: string) => {
  const i = SLOW_FIRST.findIndex((re) => re.test(id));
  return i < 0 ? SLOW_FIRST.length : i;
};

/**
 * The cluster specs run in file-name order: the lab's steps build on each other (01-iptables … 12-vxlan). The
 * other projects' files run slowest first (above), then by name.
 */
export class FileNameSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const key = (f: TestSpecification) => (f.project.name === "conformance" ? 0 : rank(f.moduleId));
    const sorted = [...files].sort((a, b) => key(a) - key(b) || a.moduleId.localeCompare(b.moduleId));
    // the cluster specs run in several workers: each topic waits for those its schedule names among the
    // topics of this run (suites/schedule.ts), so the harness is told which topics the run has
    const cluster = sorted.filter((f) => f.project.name === "conformance");
    if (cluster[0])
      cluster[0].project.provide("topicsInRun", {
        topics: cluster.map((f) => specTopic(f.moduleId)).filter((t): t is string => t !== null),
        filtered: Boolean(this.ctx.config.testNamePattern) || cluster.some((f) => f.testLines?.length),
      });
    return sorted;
  }
}

/** The topic a spec file runs: `suites/07-ghost/ghost.spec.ts` → `ghost`. */
export function specTopic(file: string): string | null {
  return /suites\/\d\d-([a-z0-9-]+)\/\1\.spec\.ts$/.exec(file.replaceAll("\\", "/"))?.[1] ?? null;
}
