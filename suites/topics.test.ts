import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundleTopics, readMeta } from "../helpers/bundle/read.ts";
import { kubectlEquivalent, parseApiArgv } from "../helpers/exec/api-argv.ts";
import { readRawFile } from "../helpers/exec/raw-file.ts";
import type { CallRecord } from "../helpers/exec/record.ts";
import { replayContext } from "../helpers/observe/replay-context.ts";
import { MANIFESTS_DIR } from "../helpers/observe/workloads.ts";
import { stepPattern } from "../helpers/topic.ts";
import { SHIPPED_BUNDLES } from "./environment.ts";
import { TOPICS } from "./topics.ts";

/**
 * The topics' declarations against what the code really did: the commands and manifests a topic declares
 * are those its recorded calls in the shipped bundles (recorded on a real cluster) show, and the records
 * it declares are those its observation returns. A declaration cannot drift from the code unnoticed.
 */
const recorded = SHIPPED_BUNDLES.filter((b) => readMeta(b).origin === "recorded");

function callsOf(topic: string): (CallRecord & { bundle: string })[] {
  return recorded.flatMap((b) => {
    const file = join(b, "calls", `${topic}.jsonl`);
    if (!existsSync(file)) return [];
    return readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => ({ ...(JSON.parse(l) as CallRecord), bundle: b }));
  });
}

/** What a call read on stdin: kept in its line, or (a large one) in its own compressed file. */
function stdinOf(c: CallRecord & { bundle: string }): string {
  return c.stdinFile ? readRawFile(join(c.bundle, c.stdinFile)) : (c.stdin ?? "");
}

/** `agent/node-1` → agent; `kubectl` → kubectl. */
const targetKind = (c: CallRecord) => c.target.split("/")[0] as string;
/**
 * The calls a topic must declare: everything but the housekeeping — kubectl's apply, get, scale and delete (a topic
 * may still declare one where it is the change it observes, as the lifecycle topics do; its
 * logs, rollouts and patches are steps), and
 * the API reads and waits (`api get`, `api watch`) that replaced kubectl's gets. The API's bulk writes are steps:
 * they are what measure-scale times.
 */
const isStep = (c: CallRecord) => {
  const kind = targetKind(c);
  if (kind === "kubectl") return ["logs", "rollout", "patch"].some((verb) => c.argv.includes(verb));
  if (kind === "api") return c.argv[0]?.startsWith("bulk-") === true;
  return true;
};
const command = (c: CallRecord) => c.argv.join(" ");

/**
 * Whether a recorded call is the declared step: an `api` step also matches, in a bundle recorded before the api
 * target, the kubectl command the suite ran for it then (a replay answers it from that: helpers/exec/replay.ts).
 */
function ran(s: { on: string; run: string }, c: CallRecord): boolean {
  if (targetKind(c) === s.on && stepPattern(s.run).test(command(c))) return true;
  if (s.on !== "api" || targetKind(c) !== "kubectl") return false;
  return stepPattern(kubectlEquivalent(parseApiArgv(s.run.split(" "))).join(" ")).test(command(c));
}

const signature = (yaml: string) => yaml.split("\n")[0] as string;
const MANIFEST_SIGNATURES = new Map(
  readdirSync(MANIFESTS_DIR)
    .filter((f) => f.endsWith(".yaml") && f !== "namespace.yaml")
    .map((f) => [signature(readFileSync(join(MANIFESTS_DIR, f), "utf8")), f]),
);

describe("every topic lives in one place under suites/", () => {
  it("a folder NN-<topic> per topic, in run order, holding <topic>.topic.ts and <topic>.spec.ts", () => {
    const dirs = readdirSync(import.meta.dirname)
      .filter((d) => /^\d\d-/.test(d))
      .sort();
    expect(dirs.map((d) => d.slice(3))).toEqual(TOPICS.map((t) => t.name));
    for (const d of dirs) {
      const name = d.slice(3);
      expect(readdirSync(join(import.meta.dirname, d)).sort()).toEqual(
        expect.arrayContaining([`${name}.spec.ts`, `${name}.topic.ts`]),
      );
    }
  });

  it("property ids start with their topic's prefix and are unique", () => {
    const ids = TOPICS.flatMap((t) => t.properties.map((p) => p.id));
    expect(new Set(ids).size).toBe(ids.length);
    for (const t of TOPICS) for (const p of t.properties) expect(p.topic).toBe(t.name);
  });
});

describe.each(
  TOPICS.map((t) => [t.name, t] as const),
)("topic %s: declaration vs recorded calls", (name, topic) => {
  const calls = callsOf(name);
  const steps = calls.filter(isStep);

  it.skipIf(calls.length === 0)("every declared step ran, and every step that ran is declared", () => {
    for (const s of topic.steps)
      expect(
        calls.some((c) => (isStep(c) || s.on === "api" || s.on === "kubectl") && ran(s, c)),
        `declared step [${s.on}] ${s.run} never ran in the recorded bundles`,
      ).toBe(true);
    for (const c of steps)
      expect(
        topic.steps.some((s) => targetKind(c) === s.on && stepPattern(s.run).test(command(c))),
        `[${c.target}] ${command(c).slice(0, 120)} ran but no step declares it`,
      ).toBe(true);
  });

  it.skipIf(calls.length === 0)("the manifests it deploys are those its applies carried", () => {
    const applied = new Set<string>();
    // an apply may name the namespace first (`-n <ns> apply -f -`: the legs' roll, helpers/observe/leg-roll.ts)
    const isApply = (x: CallRecord) => x.argv[0] === "apply" || (x.argv[0] === "-n" && x.argv[2] === "apply");
    for (const c of calls.filter((x) => x.target === "kubectl" && isApply(x)))
      for (const doc of stdinOf(c).split(/^---$/m)) {
        const file = MANIFEST_SIGNATURES.get(signature(doc.replace(/^\n/, "")));
        if (file) applied.add(file);
      }
    const declared = topic.deploys.filter((d) => d.endsWith(".yaml"));
    for (const f of declared) expect(existsSync(join(MANIFESTS_DIR, f)), `manifests/${f}`).toBe(true);
    expect([...applied].sort()).toEqual([...declared].sort());
  });

  it.skipIf(calls.length === 0)("its observation returns exactly the records it declares", async () => {
    const bundle = recorded.find((b) => bundleTopics(b).includes(name)) as string;
    const ctx = replayContext(bundle, readMeta(bundle), name, { log: () => {}, earlierRecords: () => ({}) });
    expect(Object.keys(await topic.observe(ctx)).sort()).toEqual([...topic.builds].sort());
  });
});
