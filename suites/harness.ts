import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { appendVerdicts, writeRecords } from "../helpers/bundle.ts";
import { OBSERVERS } from "../helpers/observe/topics.ts";
import { PROPERTIES } from "../helpers/properties/declarations.ts";
import { judge } from "../helpers/properties/judge.ts";
import type { Topic } from "../helpers/properties/types.ts";
import type { RecordSet } from "../helpers/records/types.ts";
import { bundlesFromEnv, clusterTargets, type ModeTarget, replayTargets } from "./environment.ts";
import type { RunState } from "./run-state.ts";

const REPLAY_OUT = join(import.meta.dirname, "..", "results", `replay-${process.pid}`);

function state(): RunState {
  if (process.env.CLUSTER_PROVIDER === "replay" && process.env.VITEST_PROJECT_REPLAY === "1") {
    return { kind: "replay", bundles: bundlesFromEnv(), outDir: REPLAY_OUT };
  }
  return inject("runState");
}

function targets(s: RunState): ModeTarget[] {
  if (s.kind === "replay") return replayTargets(s.bundles, s.outDir);
  if (s.kind === "cluster") return clusterTargets(s);
  return [];
}

/**
 * One topic's spec, in every mode the run has: observe (through the executor, recorded into the bundle),
 * write the records, then judge each declared property of the topic with expected vs observed and the
 * raw evidence. A topic that cannot run here is reported as skipped with the reason, never passed.
 */
export function topicSpec(topic: Topic): void {
  const s = state();
  const props = PROPERTIES.filter((p) => p.topic === topic);
  if (s.kind === "skip") {
    describe(topic, () => {
      it.skip(`${topic}: ${props.length} properties (skipped: ${s.reason})`, () => {});
    });
    return;
  }
  for (const target of targets(s)) {
    describe(`${topic} [${target.label}] [${target.mode}]`, () => {
      const skip = target.skipReason(topic);
      let records: RecordSet = {};
      let failure: Error | null = null;
      let close: () => Promise<void> = async () => {};
      beforeAll(async () => {
        if (skip) return;
        const t0 = performance.now();
        const { ctx, outDir, close: c } = target.context(topic);
        close = c;
        ctx.log(`observing (Cilium ${target.ciliumMinor})`);
        try {
          records = await OBSERVERS[topic](ctx);
          writeRecords(outDir, records);
          appendVerdicts(
            outDir,
            props.map((p) => judge(p, target.mode, records, target.ciliumMinor)),
          );
        } catch (err) {
          failure = err instanceof Error ? err : new Error(String(err));
        }
        const seconds = (performance.now() - t0) / 1000;
        target.recordPhase(`spec ${topic}`, seconds);
        ctx.log(`observed in ${seconds.toFixed(1)} s`);
      });
      afterAll(() => close());
      for (const p of props) {
        it(`${p.id} [${target.label}] [${target.mode}]`, (t) => {
          if (skip) {
            process.stdout.write(`[${target.label}] [${target.mode}] ${p.id}: skipped: ${skip}\n`);
            t.skip(skip);
            return;
          }
          if (failure) throw new Error(`${topic} could not be observed: ${failure.message}`);
          const v = judge(p, target.mode, records, target.ciliumMinor);
          // JUnit properties (name = annotation type): what ran, where
          const meta = target.meta();
          t.annotate(target.mode, "mode");
          t.annotate(meta.cilium, "cilium");
          t.annotate(meta.kubernetes ?? "unknown", "kubernetes");
          t.annotate(meta.kernel ?? "unknown", "kernel");
          t.annotate(meta.attachMode ?? "unknown", "attach-mode");
          t.annotate(`expected ${v.expected}, observed ${v.observed}`, {
            body: v.evidence.join("\n") || "(no evidence lines)",
          });
          if (v.status === "skip") {
            process.stdout.write(`${v.message}\n`);
            t.skip(v.message);
            return;
          }
          expect(v.status, v.message).toBe("pass");
        });
      }
    });
  }
}
