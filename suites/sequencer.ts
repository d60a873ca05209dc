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
    return [...files].sort((a, b) => key(a) - key(b) || a.moduleId.localeCompare(b.moduleId));
  }
}
