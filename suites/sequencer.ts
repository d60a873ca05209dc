import { BaseSequencer, type TestSpecification } from "vitest/node";
import { clusterRun, conformanceWorkers } from "./run-state.ts";

/**
 * Files of the unit and replay projects that take seconds — they start processes, Chromium or wait on timers —
 * started first, in this order, so that the run's last seconds are not one of them alone on a core (issue 27:
 * `npm test` in a minute; measured 2026-12-03 with four workers: readme-commands started at 41 s and ended the
 * run). Those that mostly wait (on signals, deadlines, timers) alternate with those that keep a core busy: one
 * after the other, three waiting files had left both cores half idle for seconds. `check.test` judges every
 * shipped bundle early: the files after it find those judgements made (helpers/check-cache.ts). Everything else
 * follows in file-name order.
 */
const SLOW_FIRST = [
  /scripts\/readme-commands\.test\.ts$/,
  /\.browser\.test\.ts$/,
  /clusters\/interrupt\.test\.ts$/,
  /helpers\/check\.test\.ts$/,
  /scripts\/faults\/driver\.test\.ts$/,
  /suites\/(?:evidence|stored-verdicts|replay-exhausted|golden)\.test\.ts$/,
  /helpers\/exec\/deadlines\.test\.ts$/,
  /cli\/(?:hostile-bundles|bin)\.test\.ts$/,
  /22-measure-scale\/measure-scale\.(?:test|spec)\.ts$/,
  /scripts\/upgrade-job\.test\.ts$/,
  /clusters\/(?:readiness|lab-down)\.test\.ts$/,
  /helpers\/bundle-lock\.test\.ts$/,
];

const rank = (id: string) => {
  const i = SLOW_FIRST.findIndex((re) => re.test(id));
  return i < 0 ? SLOW_FIRST.length : i;
};

/**
 * Each project's files together, in this order. vitest keeps a worker (and the modules it imported) for the next
 * file only when that file is of the same project; otherwise it ends the worker and starts another. Sorted by path
 * alone, the replay and conformance projects' specs alternated (suites/00-config twice, then 01-iptables twice, …)
 * and the unit and kernel files did in helpers/: 26 workers were started in a run, each importing the harness
 * and topics again.
 */
const PROJECTS = ["unit", "kernel", "replay", "conformance"];
const projectRank = (name: string) => {
  const i = PROJECTS.indexOf(name);
  return i < 0 ? PROJECTS.length : i;
};

/**
 * Project by project (above). The cluster specs run in file-name order, the order their schedule is declared in
 * (the lab's steps build on each other: 01-iptables … 12-vxlan); against a cluster the workers take them in
 * startOrder's order (suites/schedule.ts), the declared waits unchanged. The other projects' files run slowest
 * first (above), then by name.
 */
export class FileNameSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const key = (f: TestSpecification) => (f.project.name === "conformance" ? 0 : rank(f.moduleId));
    const sorted = [...files].sort(
      (a, b) =>
        projectRank(a.project.name) - projectRank(b.project.name) ||
        key(a) - key(b) ||
        a.moduleId.localeCompare(b.moduleId),
    );
    // the cluster specs run in several workers: each topic waits for those its schedule names among the
    // topics of this run (suites/schedule.ts), so the harness is told which topics the run has
    const cluster = sorted.filter((f) => f.project.name === "conformance");
    const topics = cluster.map((f) => specTopic(f.moduleId)).filter((t): t is string => t !== null);
    if (cluster[0])
      cluster[0].project.provide("topicsInRun", {
        topics,
        filtered: Boolean(this.ctx.config.testNamePattern) || cluster.some((f) => f.testLines?.length),
      });
    // against a cluster, the workers take the topics in the order that lets the most run at once (startOrder);
    // which topic waits for which stays the file order's (topicsInRun, above)
    if (cluster.length < 2 || !clusterRun(process.env, process.argv)) return sorted;
    const { recordedSeconds, startOrder } = await import("./schedule.ts");
    const { TOPICS } = await import("./topics.ts");
    const run = topics.flatMap((n) => TOPICS.filter((t) => t.name === n));
    const order = startOrder(run, conformanceWorkers(process.env.CONFORMANCE_WORKERS), recordedSeconds());
    const at = (f: TestSpecification) => order.findIndex((t) => t.name === specTopic(f.moduleId));
    const reordered = [...cluster].sort((a, b) => at(a) - at(b));
    return [...sorted.filter((f) => f.project.name !== "conformance"), ...reordered];
  }
}

/** The topic a spec file runs: `suites/07-ghost/ghost.spec.ts` → `ghost`. */
export function specTopic(file: string): string | null {
  return /suites\/\d\d-([a-z0-9-]+)\/\1\.spec\.ts$/.exec(file.replaceAll("\\", "/"))?.[1] ?? null;
}
