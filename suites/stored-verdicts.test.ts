import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readBaseline } from "../helpers/baseline.ts";
import { bundleTopics, readMeta, readRecords, storedVerdicts } from "../helpers/bundle/read.ts";
import { appendVerdicts, writeMeta, writeRecords } from "../helpers/bundle/write.ts";
import { checkBundle } from "../helpers/check.ts";
import { formatCheck } from "../helpers/check-format.ts";
import { RecordingExecutor } from "../helpers/exec/record.ts";
import { ReplayExecutor } from "../helpers/exec/replay.ts";
import type { Executor } from "../helpers/exec/types.ts";
import { noSleep, type RunContext } from "../helpers/observe/context.ts";
import { judge } from "../helpers/properties/judge.ts";
import { BundleFiles, tallyEvidence } from "../helpers/records/verify-evidence.ts";
import { shipped } from "../helpers/testing/tamper.ts";
import { bundleName, SHIPPED_BUNDLES } from "./environment.ts";
import { RECORDS, TOPICS } from "./topics.ts";

/**
 * A bundle recorded with this suite is re-judged exactly: `check` reproduces its stored verdicts (status,
 * expected, observed, evidence) with no difference. No cluster here, so the recording is made the way a run
 * makes it (recording executor, records and verdicts written per topic, as suites/harness.ts does) from the
 * calls of a shipped bundle served back in order: the cluster's answers and their recorded times are the
 * shipped bundle's, everything the suite derives is this code's.
 */
const out = mkdtempSync(join(tmpdir(), "dpc-rerecord-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

async function rerecord(source: string, dir: string): Promise<void> {
  const meta = readMeta(source);
  writeMeta(dir, { ...meta, runId: `${meta.runId}-rerecorded` });
  if (existsSync(join(source, "baseline")))
    cpSync(join(source, "baseline"), join(dir, "baseline"), { recursive: true });
  const recorded = new Set(bundleTopics(source));
  for (const topic of TOPICS) {
    if (!recorded.has(topic.name)) continue;
    const cluster = new ReplayExecutor(source, topic.name);
    let at = Date.parse(meta.createdAt);
    // the cluster's answer, stamped with the time the source recorded it
    const answering: Executor = {
      run: async (req) => {
        const r = await cluster.run(req);
        at = r.recorded?.at ?? at;
        return { ...r, recorded: undefined };
      },
    };
    const exec = new RecordingExecutor(answering, dir, topic.name, () => at);
    const ctx: RunContext = {
      exec,
      // the wall clock for waits, as on a cluster: a measurement that read it would not be reproduced
      now: Date.now,
      recordedAt: () => exec.recordedAt() ?? at,
      spent: () => cluster.spent(),
      mode: meta.mode,
      ciliumMinor: meta.ciliumMinor,
      namespace: meta.namespace ?? "cca-dp",
      replay: true,
      log: () => {},
      sleep: noSleep,
      runStartedAt: meta.createdAt,
      ...(meta.upgrade ? { upgrade: meta.upgrade } : {}),
      ...(meta.kubeContext ? { kubeContext: meta.kubeContext } : {}),
      earlierRecords: () => readRecords(dir, RECORDS),
      baselineMetrics: () => readBaseline(dir),
    };
    const records = await topic.observe(ctx);
    writeRecords(dir, records, RECORDS);
    appendVerdicts(
      dir,
      topic.properties.map((p) => judge(p, meta.mode, records, meta.cilium)),
    );
  }
}

describe("a bundle recorded with this suite is re-judged exactly", () => {
  it.each(["kpr", "kube-proxy"])("%s, re-recorded: check reproduces every stored verdict", async (name) => {
    const dir = join(out, name);
    await rerecord(shipped(name), dir);
    const r = await checkBundle(dir, TOPICS);
    expect(r.stored.format).toBe("current");
    expect(r.stored.differences).toEqual([]);
    expect(r.stored.exact).toBe(true);
    // and its stored evidence holds, verbatim at place: the records' and the verdicts'
    const stored = readRecords(dir, RECORDS);
    const items = Object.values(stored).flatMap((e) => Object.values(e?.evidence ?? {}).flat());
    const verdicts = [...(storedVerdicts(dir)?.values() ?? [])].flatMap((v) => v.evidence);
    expect(verdicts.length).toBeGreaterThan(100);
    expect(tallyEvidence(new BundleFiles(dir), [...items, ...verdicts]).faults).toEqual([]);
  }, 60_000);
});

describe("check on the shipped bundles says why a verdict differs from the stored one", () => {
  const REASON =
    /^(newer judge: |newer expectation: |follows the newer expectation$|newer than the bundle: |renamed or removed after the recording$)/;
  it.each(SHIPPED_BUNDLES.map((d) => bundleName(d)))("%s: every difference has its reason", async (name) => {
    const r = await checkBundle(join(import.meta.dirname, "bundles", ...name.split("/")), TOPICS);
    expect(r.stored.format).not.toBe("none");
    for (const d of r.stored.differences) expect(d.reason, `${d.id} ${d.what}`).toMatch(REASON);
    // a status differs only where the judge or the expectation is newer, never unexplained
    for (const d of r.stored.differences.filter((x) => x.what === "status"))
      expect(d.reason).toMatch(/^(newer judge|follows the newer expectation)/);
    expect(formatCheck(r)).toContain("stored verdicts.jsonl:");
  });

  it("an older bundle (the dual-stack profile's kpr through the existing provider, recorded before two declarations changed and a property was added): each difference named", async () => {
    const r = await checkBundle(shipped("profiles/dual-stack/existing-kpr"), TOPICS);
    const byId = (id: string) => r.stored.differences.filter((d) => d.id === id);
    expect(byId("program.reverse-sk-entry")).toEqual([
      expect.objectContaining({
        what: "expected",
        was: "≥ 1",
        now: "1",
        reason: expect.stringMatching(/^newer expectation/),
      }),
    ]);
    expect(byId("nodeport.bpf-frontends")).toContainEqual(
      expect.objectContaining({
        what: "status",
        was: "skip",
        now: "pass",
        reason: "follows the newer expectation",
      }),
    );
    expect(byId("ipv6.ghost-seconds")).toEqual([
      expect.objectContaining({
        what: "not stored",
        reason: expect.stringMatching(/^newer than the bundle/),
      }),
    ]);
  });

  it("a stored verdict that differs from today's judge is a newer judge, and one no longer declared is named (a copy of the 1.19 kpr bundle with two stored lines edited, WRITTEN BY US)", async () => {
    const dir = join(out, "edited-kpr");
    cpSync(shipped("kpr"), dir, { recursive: true });
    const file = join(dir, "verdicts.jsonl");
    const lines = readFileSync(file, "utf8").trim().split("\n");
    const edited = lines.map((l) => {
      const v = JSON.parse(l) as { id: string; status: string };
      return v.id === "nodeport.bpf-slots" ? JSON.stringify({ ...v, status: "fail" }) : l;
    });
    const gone = JSON.parse(lines[0] as string) as { id: string };
    edited.push(JSON.stringify({ ...gone, id: "iptables.cilium-chains" }));
    writeFileSync(file, `${edited.join("\n")}\n`);
    const r = await checkBundle(dir, TOPICS);
    const byId = (id: string) => r.stored.differences.filter((d) => d.id === id);
    expect(byId("nodeport.bpf-slots")).toContainEqual(
      expect.objectContaining({
        what: "status",
        was: "fail",
        now: "pass",
        reason: expect.stringMatching(/^newer judge/),
      }),
    );
    expect(byId("iptables.cilium-chains")).toEqual([
      expect.objectContaining({ what: "not declared", reason: "renamed or removed after the recording" }),
    ]);
    // the rest is reproduced exactly
    const rest = r.stored.differences.filter(
      (d) => !["nodeport.bpf-slots", "iptables.cilium-chains"].includes(d.id),
    );
    expect(rest).toEqual([]);
  });
});
