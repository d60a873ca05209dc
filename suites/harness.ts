import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { appendVerdicts, writeRecords } from "../helpers/bundle/write.ts";
import { knownIssueText } from "../helpers/check-junit.ts";
import { UserError } from "../helpers/errors.ts";
import type { ConfigValues } from "../helpers/properties/config.ts";
import { judge } from "../helpers/properties/judge.ts";
import { isKnownIssue, outcomeOf } from "../helpers/properties/status.ts";
import { assumedText, CHANGED_LABEL } from "../helpers/properties/versions.ts";
import { configValues } from "../helpers/records/datapath-config.ts";
import { showItem } from "../helpers/records/evidence.ts";
import type { RecordSet } from "../helpers/records/types.ts";
import type { TopicDeclaration } from "../helpers/topic.ts";
import {
  bundlesFromEnv,
  clusterTargets,
  type ModeTarget,
  progressLine,
  replayTargets,
  topicTargets,
} from "./environment.ts";
import "../helpers/testing/matchers.ts";
import type { RunState, RunTopics } from "./run-state.ts";
import { waitsFor } from "./schedule.ts";
import { RECORDS, TOPICS } from "./topics.ts";

const REPLAY_OUT = join(import.meta.dirname, "..", "results", `replay-${process.pid}`);

function state(): RunState {
  if (process.env.CLUSTER_PROVIDER === "replay" && process.env.VITEST_PROJECT_REPLAY === "1") {
    return { kind: "replay", bundles: bundlesFromEnv(), outDir: REPLAY_OUT };
  }
  return inject("runState");
}

/** Whether every mode's topic is observed at once: MODES_CONCURRENT=1 (the cluster run's, or a replay's env). */
function concurrent(s: RunState): boolean {
  return s.kind === "cluster" ? s.concurrent === true : process.env.MODES_CONCURRENT === "1";
}

function targets(s: RunState): ModeTarget[] {
  if (s.kind === "replay") return replayTargets(s.bundles, s.outDir);
  if (s.kind === "cluster") return clusterTargets(s);
  return [];
}

/** One topic observed in one mode: its records, or why it could not be observed. */
interface Observed {
  records: RecordSet;
  failure: Error | null;
  /** The run's datapath configuration (the config topic's record, this topic's or an earlier one's), or null. */
  config: ConfigValues | null;
}

/**
 * The observations of one spec file, made on first use and closed when the file's tests are done (a
 * file-scoped fixture): each mode's topic is observed once, recorded into its bundle, then judged. With
 * MODES_CONCURRENT=1 the first test starts the observation of every mode at once (each into its own bundle, its
 * lines prefixed `[kind] [kpr]`), so the other mode's tests find theirs made or under way.
 */
export class Observations {
  private readonly made = new Map<ModeTarget, Promise<Observed>>();
  private readonly closers: (() => Promise<void>)[] = [];

  /** `run`: the topics of this cluster run (the sequencer provides them; a test gives its own). */
  constructor(private readonly run: () => RunTopics | undefined = () => inject("topicsInRun")) {}

  of(target: ModeTarget, topic: TopicDeclaration, together: ModeTarget[] = [target]): Promise<Observed> {
    for (const t of together.includes(target) ? together : [target, ...together])
      if (!this.made.has(t)) this.made.set(t, this.observe(t, topic));
    return this.made.get(target) as Promise<Observed>;
  }

  private async observe(target: ModeTarget, topic: TopicDeclaration): Promise<Observed> {
    try {
      if (target.turns)
        await target.turns.wait(followed(target, topic, this.run()), (l) =>
          say(target, `${topic.name}: ${l}`),
        );
      return await this.observeNow(target, topic);
    } catch (err) {
      return { records: {}, failure: err instanceof Error ? err : new Error(String(err)), config: null };
    } finally {
      target.turns?.settled(topic.name);
    }
  }

  private async observeNow(target: ModeTarget, topic: TopicDeclaration): Promise<Observed> {
    const t0 = performance.now();
    const { ctx, outDir, close } = target.context(topic.name);
    this.closers.push(close);
    ctx.log(`observing (Cilium ${target.meta().cilium})`);
    let records: RecordSet = {};
    let failure: Error | null = null;
    // the run's configuration, read by the config topic before this one (or by this one, the config topic)
    const earlier = ctx.earlierRecords().config;
    let config: ConfigValues | null = earlier ? configValues(earlier.record) : null;
    try {
      records = await topic.observe(ctx);
      // only what the topic builds: a topic that returns earlier topics' records beside its own (the report)
      // must not write back a copy a topic running beside it has since replaced
      writeRecords(outDir, onlyBuilt(records, topic), RECORDS);
      if (records.config) config = configValues(records.config.record);
      appendVerdicts(
        outDir,
        topic.properties.map((p) => judge(p, target.mode, records, target.meta().cilium, config)),
      );
    } catch (err) {
      failure = err instanceof Error ? err : new Error(String(err));
    }
    const seconds = (performance.now() - t0) / 1000;
    target.recordPhase(`spec ${topic.name}`, seconds);
    ctx.log(`observed in ${seconds.toFixed(1)} s`);
    return { records, failure, config };
  }

  async close(): Promise<void> {
    for (const c of this.closers.splice(0)) await c();
  }
}

function onlyBuilt(records: RecordSet, topic: TopicDeclaration): RecordSet {
  return Object.fromEntries(
    Object.entries(records).filter(([name]) => (topic.builds as string[]).includes(name)),
  ) as RecordSet;
}

let unordered = false;
/**
 * The topics of this cluster run that `topic` waits for in `target`'s mode (suites/schedule.ts): those its
 * schedule names, and every earlier one when it runs alone, among the run's topics this target does not skip.
 */
function followed(target: ModeTarget, topic: TopicDeclaration, run: RunTopics | undefined): string[] {
  if (!run) return [];
  if (run.filtered) {
    if (!unordered)
      say(
        target,
        "a test filter is set: topics are observed as their files run, not in their declared order",
      );
    unordered = true;
    return [];
  }
  const decls = run.topics
    .map((n) => TOPICS.find((t) => t.name === n))
    .filter((t): t is TopicDeclaration => t !== undefined && !target.skipReason(t.name));
  return waitsFor(topic, decls).map((t) => t.name);
}

const topicTest = it.extend<{ observations: Observations }>({
  observations: [
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
    async ({}, use) => {
      const o = new Observations();
      await use(o);
      await o.close();
    },
    { scope: "file" },
  ],
});

/**
 * CONFORMANCE_KNOWN_ISSUES=pass: a known issue is a passing test case with a `known-issue` JUnit property, as before
 * issue 37; by default (or `skip`) it is a skipped one whose reason names it. Anything else is refused in one line.
 */
export function knownIssuesPass(env: NodeJS.ProcessEnv): boolean {
  const v = env.CONFORMANCE_KNOWN_ISSUES;
  if (v === undefined || v === "" || v === "skip") return false;
  if (v === "pass") return true;
  throw new UserError(`CONFORMANCE_KNOWN_ISSUES=${JSON.stringify(v)}: valid: skip (the default), pass`);
}

function say(target: ModeTarget, line: string): void {
  process.stdout.write(progressLine(target.label, target.mode, line));
}

/**
 * A topic's spec, in every mode the run has: each declared property is one test named by its claim. The
 * topic is observed once per mode (through the executor, recorded into the bundle), its records written,
 * then every property judged with expected vs observed and the raw evidence. A topic that cannot run here
 * is reported as skipped with the reason (in the JUnit report too), never passed.
 */
export function describeTopic(topic: TopicDeclaration): void {
  const s = state();
  if (s.kind === "skip") {
    describe(topic.name, () => {
      for (const p of topic.properties) it(`${p.id}: ${p.claim}`, (t) => t.skip(s.reason));
    });
    return;
  }
  // a bundle without the topic gets no tests for it; no bundle with it, one skip for the topic
  const { holding, none } = topicTargets(targets(s), topic.name);
  if (none) {
    describe(topic.name, () => {
      it(`${topic.name}: ${topic.title}`, (t) => t.skip(none));
    });
    return;
  }
  const together = concurrent(s) ? holding.filter((t) => !t.skipReason(topic.name)) : [];
  for (const target of holding) {
    describe(`${topic.name} [${target.label}] [${target.mode}]`, () => {
      const skip = target.skipReason(topic.name);
      for (const p of topic.properties) {
        topicTest(
          `${p.id}: ${p.claim} [${target.label}] [${target.mode}]`,
          async ({ observations, annotate, skip: skipTest }) => {
            if (skip) {
              say(target, `${p.id}: skipped: ${skip}`);
              skipTest(skip);
              return;
            }
            const { records, failure, config } = await observations.of(target, topic, together);
            if (failure) {
              // a property this configuration makes not applicable is skipped, naming the setting, even when
              // its topic could not be observed here
              const na = judge(p, target.mode, {}, target.meta().cilium, config);
              if (na.status === "skip" && na.reason?.startsWith("not applicable")) {
                say(target, na.message);
                skipTest(na.reason);
                return;
              }
              throw new Error(`${topic.name} could not be observed: ${failure.message}`);
            }
            const v = judge(p, target.mode, records, target.meta().cilium, config);
            // JUnit properties (name = annotation type): what ran, where
            const meta = target.meta();
            await annotate(target.mode, "mode");
            await annotate(meta.cilium, "cilium");
            await annotate(meta.kubernetes ?? "unknown", "kubernetes");
            await annotate(meta.kernel ?? "unknown", "kernel");
            await annotate(meta.attachMode ?? "unknown", "attach-mode");
            // a minor the suite has not declared: every verdict says what it was judged against
            if (v.assumedFrom) await annotate(assumedText(v.assumedFrom), "assumed-from");
            if (v.status === "changed") await annotate(CHANGED_LABEL, "changed-in-new-minor");
            await annotate(`expected ${v.expected}, observed ${v.observed}`, {
              body: v.evidence.map(showItem).join("\n") || "(no evidence)",
            });
            if (v.status === "skip") {
              say(target, v.message);
              skipTest(v.message);
              return;
            }
            if (isKnownIssue(v.status)) {
              // its test case as the status module decides it (helpers/properties/status.ts outcomeOf): skipped,
              // naming it, its versions and its upstream reference, with a JUnit property naming it too; failed
              // when the run is strict; passed under CONFORMANCE_KNOWN_ISSUES=pass
              await annotate(
                `${v.deviation?.claim ?? v.claim} (${v.deviation?.upstream ?? ""})`,
                "known-issue",
              );
              say(target, v.message.split("\n").slice(0, 2).join(" | "));
              const outcome = outcomeOf(v.status, {
                strict: process.env.CONFORMANCE_STRICT === "1",
                knownIssuesPass: knownIssuesPass(process.env),
              });
              if (outcome === "pass") return;
              if (outcome === "skip") {
                skipTest(knownIssueText(v, meta.cilium));
                return;
              }
            }
            const kept = v.status === "fail" ? target.recordedFailure?.(p.id) : null;
            if (kept) {
              // a replay reproduced a real failure the bundle recorded (suites/recorded-failures.ts): the replay
              // is right; the failure stays a failure in check, the gate and the report
              await annotate(kept, "recorded-failure");
              say(target, `${p.id}: recorded failure reproduced (${kept})`);
              return;
            }
            expect(v).toHoldProperty();
          },
        );
      }
    });
  }
}
