/**
 * Topics observed at once within a mode (issue 27). Each topic declares how it shares a cluster run
 * (`schedule` in its `*.topic.ts`): `alone` — nothing else runs beside it, every earlier topic of the run is done
 * first and every later one waits for it — or `after`, the earlier topics it must follow (it reads their records
 * or objects, or they change what it reads); it may run beside every other topic. The conformance project runs
 * the spec files in several workers (vitest.config.ts); before a topic is observed in a mode, it waits here for
 * the topics it follows to settle in that mode (observed, or failed to be). The worker processes share one
 * folder of marker files per run and mode, outside the bundle; the run's global teardown removes it.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_CILIUM_MINOR } from "../clusters/versions.ts";
import { readMeta } from "../helpers/bundle/read.ts";
import type { TopicDeclaration } from "../helpers/topic.ts";

/**
 * The topics of a run that `topic` waits for, `run` in file order: every earlier one when it runs alone;
 * otherwise every earlier topic that runs alone (what those waited for is settled with them) and those it names,
 * which are earlier or in its own stretch between two topics that run alone (suites/schedule.test.ts holds the
 * declarations to that, without cycles: ghost follows the Service-surface topics filed after it).
 */
export function waitsFor(topic: TopicDeclaration, run: readonly TopicDeclaration[]): TopicDeclaration[] {
  const i = run.findIndex((t) => t.name === topic.name);
  const earlier = i < 0 ? [] : run.slice(0, i);
  const s = topic.schedule;
  if ("alone" in s) return earlier.filter((t) => !(s.besides ?? []).includes(t.name));
  return run.filter(
    (t, j) => t.name !== topic.name && ((j < i && "alone" in t.schedule) || s.after.includes(t.name)),
  );
}

/**
 * The groups a run's topics form, in order: each either topics that run alone sharing their turn (one, or those a
 * topic names `besides` it) or topics that may overlap.
 */
export function phases(run: readonly TopicDeclaration[]): TopicDeclaration[][] {
  const out: TopicDeclaration[][] = [];
  for (const t of run) {
    const last = out.at(-1);
    const s = t.schedule;
    const lastAlone = last !== undefined && "alone" in (last[0] as TopicDeclaration).schedule;
    if ("alone" in s) {
      if (last && lastAlone && last.every((x) => (s.besides ?? []).includes(x.name))) last.push(t);
      else out.push([t]);
    } else if (!last || lastAlone) out.push([t]);
    else last.push(t);
  }
  return out;
}

/** The run's marker folder for one mode: outside the bundle (nothing of it ships), one per run and target. */
export function turnsDir(runId: string, target: string): string {
  return join(tmpdir(), "datapath-conformance-turns", runId, target.replace(/[^A-Za-z0-9._-]/g, "_"));
}

/** Removes a run's marker folders (its global teardown). */
export function removeTurns(runId: string): void {
  rmSync(join(tmpdir(), "datapath-conformance-turns", runId), { recursive: true, force: true });
}

/**
 * How long a topic waits for those it follows: the cluster project's test timeout (15 min) less a margin, so
 * that a topic whose worker died says which topics it waited for instead of vitest's bare timeout.
 */
export const TURN_DEADLINE_MS = 14 * 60_000;

/** One mode's turns in a run: which topics have settled, shared by the run's worker processes. */
export class Turns {
  constructor(
    readonly dir: string,
    private readonly pollMs = 200,
  ) {}

  /** The topic has settled in this mode: observed and written, or failed. */
  settled(topic: string): void {
    mkdirSync(this.dir, { recursive: true });
    writeFileSync(join(this.dir, `${topic}.settled`), `${new Date().toISOString()}\n`);
  }

  has(topic: string): boolean {
    return existsSync(join(this.dir, `${topic}.settled`));
  }

  /**
   * Resolves once every topic named has settled; says once what it waits for (`log`), and how long it waited.
   * Past the deadline it rejects naming those still unsettled.
   */
  async wait(
    topics: readonly string[],
    log: (line: string) => void,
    deadlineMs = TURN_DEADLINE_MS,
  ): Promise<number> {
    const t0 = Date.now();
    let pending = topics.filter((t) => !this.has(t));
    if (pending.length === 0) return 0;
    log(`waits for ${pending.join(", ")} (declared in the topics' schedule)`);
    while (pending.length > 0) {
      if (Date.now() - t0 > deadlineMs)
        throw new Error(
          `waited ${Math.round((Date.now() - t0) / 1000)} s for ${pending.join(", ")} to settle in this mode, in vain (did their spec files run?)`,
        );
      await new Promise((r) => setTimeout(r, this.pollMs));
      pending = pending.filter((t) => !this.has(t));
    }
    const waited = Date.now() - t0;
    log(`its turn after ${(waited / 1000).toFixed(1)} s`);
    return waited;
  }
}

/**
 * The schedule as `plan` prints it: one line per topic, what it waits for in a run of every topic (or that it
 * runs alone), and why.
 */
export function formatSchedule(run: readonly TopicDeclaration[], workers: number): string {
  const width = Math.max(...run.map((t) => t.name.length));
  const lines = run.map((t) => {
    const s = t.schedule;
    const what =
      "alone" in s
        ? `alone: ${s.alone}${s.besides ? `; beside ${s.besides.join(", ")}: ${s.besidesWhy ?? ""}` : ""}`
        : `after ${waitsFor(t, run)
            .map((w) => w.name)
            .join(", ")}${s.why ? `: ${s.why}` : ""}`;
    return `# ${t.name.padEnd(width)}  ${what}${t.runsIn ? ` (only in ${t.runsIn})` : ""}`;
  });
  const at =
    workers === 1
      ? "one topic at a time (CONFORMANCE_WORKERS=1)"
      : `up to ${workers} topics at once in each mode (CONFORMANCE_WORKERS; 1 runs them one by one), each when those it follows have settled`;
  return [`## topics: ${at}`, ...lines].join("\n");
}

/** A topic's expected observation time (s), for ordering the files the workers take: see startOrder. */
export type Estimate = (topic: string) => number;

/**
 * How long each topic took in the shipped full runs of the default Cilium minor (bundle.json `spec <topic>`, the
 * longer of the two modes): startOrder's estimate. The folders are read newest run first, so a topic takes its time
 * from the newest run that has it (`bundles/<minor>` predates the lifecycle topics; `bundles/lifecycle/<minor>` has
 * every topic). A topic none of them has, or a bundle that cannot be read, counts 10 s; it only orders the files.
 */
export function recordedSeconds(
  folders: readonly string[] = [
    join(import.meta.dirname, "bundles", DEFAULT_CILIUM_MINOR),
    join(import.meta.dirname, "bundles", "lifecycle", DEFAULT_CILIUM_MINOR),
  ],
): Estimate {
  const runs = folders
    .map((f) => {
      const metas = ["kpr", "kube-proxy"].flatMap((m) => {
        try {
          return [readMeta(join(f, m))];
        } catch {
          return [];
        }
      });
      return {
        at: Math.max(0, ...metas.map((m) => Date.parse(m.createdAt) || 0)),
        phases: metas.map((m) => m.phases),
      };
    })
    .sort((a, b) => b.at - a.at);
  return (topic) => {
    for (const run of runs) {
      const s = run.phases.map((p) => p[`spec ${topic}`]).filter((x): x is number => typeof x === "number");
      if (s.length > 0) return Math.max(...s);
    }
    return 10;
  };
}

/**
 * The order the cluster project's workers should take the topics in (issue 34/37: a mode's specs in ≤ 90 s). A
 * worker takes the next spec file when it is free and, when that topic follows others still running, waits for
 * them holding the worker (Turns.wait). In file order the chain iptables → service-map → scale → holder → program
 * took the four workers while the topics that follow only iptables (the Service surface, ghost, kube-dns, …)
 * queued behind it: in run lab-20261206-011154 loadbalancer started 38 s after iptables had settled.
 *
 * So, within each stretch between topics that run alone (those keep their place: they wait for everything
 * earlier, everything later waits for them), the files are ordered by simulating `workers` workers on
 * `estimate`'s times: a free worker takes, of the topics not yet taken whose predecessors have all settled, the
 * one with the longest path of estimated times through the topics that follow it (the critical path first);
 * when none has, the one whose predecessors settle first. Only the order changes: what waits for what is the
 * declared schedule's (waitsFor), so a wrong estimate costs time, never a wrong observation.
 */
export function startOrder(
  run: readonly TopicDeclaration[],
  workers: number,
  estimate: Estimate,
): TopicDeclaration[] {
  return phases(run).flatMap((group) => (group.length === 1 ? group : orderGroup(group, workers, estimate)));
}

function orderGroup(group: TopicDeclaration[], workers: number, estimate: Estimate): TopicDeclaration[] {
  const names = new Set(group.map((t) => t.name));
  const preds = new Map(
    group.map((t) => [t.name, "after" in t.schedule ? t.schedule.after.filter((a) => names.has(a)) : []]),
  );
  if (workers <= 1) {
    // one at a time: file order, each topic once those it follows are done
    const order: TopicDeclaration[] = [];
    while (order.length < group.length) {
      const next = group.find(
        (t) => !order.includes(t) && (preds.get(t.name) ?? []).every((p) => order.some((o) => o.name === p)),
      );
      if (!next) throw new Error(`the schedule of ${group.map((t) => t.name).join(", ")} has a cycle`);
      order.push(next);
    }
    return order;
  }
  // the longest path of estimated seconds from a topic through the topics that follow it
  const level = new Map<string, number>();
  for (const t of [...group].reverse()) {
    const next = group.filter((u) => preds.get(u.name)?.includes(t.name));
    level.set(t.name, estimate(t.name) + Math.max(0, ...next.map((u) => level.get(u.name) ?? 0)));
  }
  const finish = new Map<string, number>();
  const free: number[] = Array(workers).fill(0);
  const left = [...group];
  const order: TopicDeclaration[] = [];
  while (left.length > 0) {
    const now = Math.min(...free);
    const w = free.indexOf(now);
    const settles = (t: TopicDeclaration) => {
      const p = preds.get(t.name) ?? [];
      return p.every((n) => finish.has(n)) ? Math.max(0, ...p.map((n) => finish.get(n) as number)) : null;
    };
    const takeable = left.filter((t) => settles(t) !== null);
    const ready = takeable.filter((t) => (settles(t) as number) <= now);
    const byLevel = (a: TopicDeclaration, b: TopicDeclaration) =>
      (level.get(b.name) ?? 0) - (level.get(a.name) ?? 0);
    const pick =
      ready.length > 0
        ? [...ready].sort(byLevel)[0]
        : [...takeable].sort((a, b) => (settles(a) as number) - (settles(b) as number) || byLevel(a, b))[0];
    if (!pick) throw new Error(`the schedule of ${left.map((t) => t.name).join(", ")} has a cycle`);
    const start = Math.max(now, settles(pick) as number);
    finish.set(pick.name, start + estimate(pick.name));
    free[w] = start + estimate(pick.name);
    left.splice(left.indexOf(pick), 1);
    order.push(pick);
  }
  return order;
}

/**
 * How long `order` takes on `workers` workers that take the topics in that order and wait for their
 * predecessors (the declared schedule) holding the worker: the estimate startOrder is judged by, and its test's.
 */
export function simulatedSeconds(
  order: readonly TopicDeclaration[],
  run: readonly TopicDeclaration[],
  workers: number,
  estimate: Estimate,
): number {
  const finish = new Map<string, number>();
  const free: number[] = Array(workers).fill(0);
  for (const t of order) {
    const now = Math.min(...free);
    const w = free.indexOf(now);
    const after = waitsFor(t, run).map((p) => finish.get(p.name) ?? 0);
    const start = Math.max(now, ...after);
    finish.set(t.name, start + estimate(t.name));
    free[w] = start + estimate(t.name);
  }
  return Math.max(0, ...finish.values());
}
