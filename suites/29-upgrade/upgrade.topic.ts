/**
 * Topic "upgrade" — Cilium's upgrade guide (Documentation/operations/upgrade.rst) and its upgrade CI (tests-e2e-upgrade.yaml).
 * A Cilium upgrade, and the way back, with traffic flowing: every long-lived connection survives on its
 * backend, no request fails (the client's own stalls told apart), no drop of a reason not expected, every agent runs
 * the version asked for, and every topic holds again on the upgraded and the rolled-back cluster.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and how it is judged. The observation code
 * follows the declaration; the load and one leg's observation are the restart topic's too (helpers/observe/load.ts).
 */

import { join, resolve } from "node:path";
import { CILIUM_CHART } from "../../clusters/versions.ts";
import { mustRun } from "../../helpers/exec/types.ts";
import { watchUntil } from "../../helpers/observe/cluster.ts";
import type { RunContext, UpgradePlan } from "../../helpers/observe/context.ts";
import { legUnderLoad } from "../../helpers/observe/leg.ts";
import { parseNestedRun } from "../../helpers/parse/nested-run.ts";
import type { Expect } from "../../helpers/properties/expectation.ts";
import { UP, UPGRADE_CI, UPGRADE_GUIDE } from "../../helpers/properties/sources.ts";
import { isKnownIssue } from "../../helpers/properties/status.ts";
import type { RecordView } from "../../helpers/properties/types.ts";
import { derive, type EvidenceItem, RawText } from "../../helpers/records/evidence.ts";
import type { LegConformance, RecordSet, UpgradeLeg } from "../../helpers/records/types.ts";
import { defineTopic, type PropertyDeclaration } from "../../helpers/topic.ts";
import { LEG_DEPLOYS, LEG_EVIDENCE_STEPS, LEG_ROLL_STEPS, legProperties } from "../legs.ts";
import type { UpgradeRecord } from "./upgrade.records.ts";
import { records } from "./upgrade.records.ts";

/** The nested run after each leg: every topic again on the cluster (scripts/conformance-here.mjs). */
const NESTED_SCRIPT = join(import.meta.dirname, "..", "..", "scripts", "conformance-here.mjs");
/** Named deadline: one mode's topics on the existing provider took 4-6 min on the lab; a busy machine, more. */
const NESTED_DEADLINE_MS = 45 * 60_000;

/** After a leg, every topic run again on the same cluster: no property fails (issue 24). */
function conformanceAfterProperty(kind: "upgrade" | "rollback"): PropertyDeclaration {
  const prefix = kind === "upgrade" ? "upgrade" : "upgrade.rollback";
  const what = kind === "upgrade" ? "the upgrade" : "the rollback (helm rollback to the revision before)";
  const leg = (r: RecordView) => r.get("upgrade").legs.find((x) => x.kind === kind) ?? null;
  const noLeg =
    kind === "rollback"
      ? "this run has no rollback leg (ROLLBACK=1 rolls back after the upgrade)"
      : "this run has no upgrade leg (UPGRADE_TO)";
  const both = (e: Expect) => ({ kpr: e, "kube-proxy": e });
  return {
    id: `${prefix}.conformance-after`,
    leg: kind,
    claim: `After ${what}, every topic run again on the same cluster (not a fresh install) finds no property failing: what the ${kind === "upgrade" ? "upgraded" : "rolled-back"} cluster does is what the version's declarations say`,
    source: UP(`${UPGRADE_GUIDE} (an upgrade ends in full conformance)`),
    why: `the nested run is this suite's conformance project with the existing provider on the run's own cluster, into the bundle's after-${kind}/ folder (check judges it with this one; compare it with the fresh bundle of the same version to see what the ${kind} left behind). A known issue of the version is not a failure here (check's default: docs/verdicts.md): the nested bundle lists it, and check --strict fails on it`,
    expect: both({ eq: 0 }),
    config: "none",
    needs: ["upgrade"],
    observe: (r) => {
      const l = leg(r);
      if (!l) return { value: null, evidence: [], skip: noLeg };
      const c = l.conformance;
      if (!c)
        return {
          value: null,
          evidence: [],
          skip: `this bundle was recorded before every topic ran again after each leg (issue 24)`,
        };
      const ev = l.evidence.conformance ?? [];
      if (!c.complete) return { value: `no bundle (exit ${c.exit})`, evidence: ev };
      return { value: c.failed, evidence: ev };
    },
  };
}

export const topic = defineTopic({
  name: "upgrade",
  title: "A Cilium upgrade, and the way back, under load: connections survive, no request fails",
  runsIn: "an upgrade run (UPGRADE_TO)",
  source: UP(`${UPGRADE_GUIDE}; ${UPGRADE_CI}`),
  deploys: LEG_DEPLOYS,
  steps: [
    {
      on: "local",
      run: "printenv LB_IP_RANGE",
      for: "the range of ours the load's LoadBalancer targets come from",
    },
    { on: "kubectl", run: "-n <ns> logs conn-", for: "each long-lived connection: its events and backends" },
    {
      on: "agent",
      run: "cilium-dbg bpf ct list global",
      for: "each connection's conntrack entry, on every node",
    },
    {
      on: "agent",
      run: "cilium-dbg bpf metrics list -o json",
      for: "the datapath's drop counters before and after each leg (pinned: they outlive the agent)",
    },
    { on: "node", run: "ls -1 /sys/fs/bpf/tc/globals", for: "the pinned maps before and after each leg" },
    { on: "pod", run: "node -e console.log(Date.now())", for: "the leg's start and end on the loop's clock" },
    {
      on: "local",
      run: "helm upgrade --install cilium-preflight",
      for: "the preflight check of the new version",
    },
    { on: "local", run: "helm uninstall cilium-preflight", for: "removing it" },
    { on: "local", run: "helm upgrade cilium", for: "the upgrade, with the run's full values" },
    { on: "local", run: "helm history cilium", for: "the revision to roll back to" },
    { on: "local", run: "helm rollback cilium", for: "the way back (ROLLBACK=1)" },
    { on: "agent", run: "cilium-dbg status", for: "every agent's version and health" },
    {
      on: "kubectl",
      run: "-n kube-system logs <pod> -c cilium-agent",
      for: "each agent's error lines during the leg",
    },
    ...LEG_EVIDENCE_STEPS,
    ...LEG_ROLL_STEPS,
    { on: "pod", run: "kill -TERM 1", for: "ending the request loop (after each leg)" },
    {
      on: "kubectl",
      run: "-n <ns> logs request-loop",
      for: "every request's outcome, time and the loop's lag",
    },
    {
      on: "local",
      run: "node $SUITE/scripts/conformance-here.mjs $BUNDLE/after-<leg> <mode> after-<leg> <context>",
      for: "every topic again on the same cluster after each leg, into a bundle of its own",
    },
  ],
  records,
  schedule: {
    alone: "upgrades Cilium under load and rolls it back: every topic's cluster changes under it",
  },
  shared: { changes: ["kube-proxy service rules", "web backends"] },
  observe: observeUpgrade,
  properties: [
    ...legProperties("upgrade", "upgrade"),
    conformanceAfterProperty("upgrade"),
    ...legProperties("upgrade", "rollback"),
    conformanceAfterProperty("rollback"),
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

async function helm(ctx: RunContext, args: string[]): Promise<string> {
  if (!ctx.kubeContext) throw new Error("the upgrade needs the cluster's kubectl context");
  return (
    await mustRun(ctx.exec, {
      target: { kind: "local" },
      argv: ["helm", ...args, "--namespace", "kube-system", "--kube-context", ctx.kubeContext],
      timeoutMs: 900_000,
    })
  ).stdout;
}

async function preflight(
  ctx: RunContext,
  plan: UpgradePlan,
  chart: string[],
  labSet: string[],
): Promise<void> {
  const apiServer = plan.k8sServiceHost
    ? ["--set", `k8sServiceHost=${plan.k8sServiceHost}`, "--set", `k8sServicePort=${plan.k8sServicePort}`]
    : [];
  await helm(ctx, [
    "upgrade",
    "--install",
    "cilium-preflight",
    ...chart,
    ...labSet,
    "--set",
    "preflight.enabled=true",
    "--set",
    "agent=false",
    "--set",
    "operator.enabled=false",
    ...apiServer,
  ]);
  await Promise.all([
    watchUntil(ctx, {
      resource: "daemonset",
      name: "cilium-pre-flight-check",
      namespace: "kube-system",
      until: "every Pod ready",
      what: "the cilium-pre-flight-check DaemonSet ready",
      deadlineMs: 600_000,
      done: (d) => {
        const s = (d.status ?? {}) as Record<string, number | undefined>;
        return (s.desiredNumberScheduled ?? -1) > 0 && s.numberReady === s.desiredNumberScheduled;
      },
      show: (d) =>
        `preflight ${((d.status ?? {}) as Record<string, number | undefined>).numberReady ?? 0}/${((d.status ?? {}) as Record<string, number | undefined>).desiredNumberScheduled ?? "?"}`,
    }),
    watchUntil(ctx, {
      resource: "deployment",
      name: "cilium-pre-flight-check",
      namespace: "kube-system",
      until: "a replica ready",
      what: "the cilium-pre-flight-check Deployment ready",
      deadlineMs: 600_000,
      done: (d) => (((d.status ?? {}) as Record<string, number | undefined>).readyReplicas ?? 0) >= 1,
      show: (d) =>
        `deployment ${((d.status ?? {}) as Record<string, number | undefined>).readyReplicas ?? 0}/1`,
    }),
  ]);
  await helm(ctx, ["uninstall", "cilium-preflight"]);
}

/**
 * Every topic again on this same cluster after a leg (issue 24: an upgrade ends in full conformance on the
 * upgraded cluster, not a fresh install): scripts/conformance-here.mjs runs this checkout's conformance project
 * with the existing provider against the run's context, into `after-<leg>/` of this bundle (a bundle of its own,
 * which `check` judges with this one), and prints its verdicts: recorded here, so a replay reads the same.
 */
async function conformanceAfter(
  ctx: RunContext,
  kind: UpgradeLeg["kind"],
): Promise<{ conformance: LegConformance; evidence: EvidenceItem[] }> {
  if (!ctx.bundleDir || !ctx.kubeContext)
    throw new Error("every topic again after a leg needs the run's bundle folder and kubectl context");
  const label = `after-${kind}`;
  ctx.log(
    `${label}: every topic again on this cluster (the existing provider), into ${label}/ of the bundle`,
  );
  const r = await ctx.exec.run({
    target: { kind: "local" },
    // absolute, so the recording names it `$BUNDLE/after-<leg>` and a replay from a bundle named relative to the
    // working folder (`check suites/bundles/…`) asks for the same
    argv: ["node", NESTED_SCRIPT, resolve(ctx.bundleDir, label), ctx.mode, label, ctx.kubeContext],
    timeoutMs: NESTED_DEADLINE_MS,
  });
  const raw = RawText.stdout(r);
  const run = parseNestedRun(r.stdout);
  const count = (st: string) => run.verdicts.filter((v) => v.status === st).length;
  const conformance: LegConformance = {
    bundle: label,
    exit: run.exit,
    complete: run.complete,
    passed: count("pass"),
    failed: count("fail"),
    known_issues: count("known-issue"),
    skipped: count("skip"),
    verdicts: run.verdicts.map(({ line: _, ...v }) => v),
  };
  const notable = run.verdicts.filter((v) => v.status === "fail" || isKnownIssue(v.status));
  const evidence: EvidenceItem[] = [
    raw.quote(1) ??
      derive(`the nested run printed nothing (exit ${r.exitCode ?? "none"}): ${r.stderr.slice(-300)}`, raw),
    ...notable.map((v) => raw.quote(v.line) ?? derive(`${v.id}: ${v.status}`, raw)),
    ...run.unreadable.map((u) => raw.quote(u.line) ?? derive(u.text, raw)),
    derive(
      `${label}: ${conformance.passed} passed, ${conformance.failed} failed, ${conformance.known_issues} known issue(s), ${conformance.skipped} skipped (every verdict: ${label}/verdicts.jsonl)`,
      raw,
    ),
  ];
  ctx.log(
    `${label}: ${conformance.passed} passed, ${conformance.failed} failed, ${conformance.known_issues} known issue(s), ${conformance.skipped} skipped`,
  );
  return { conformance, evidence };
}

/**
 * Cilium's documented path: the preflight check for the new version, then `helm upgrade` with the run's full
 * values and upgradeCompatibility set to the installed minor (never --reuse-values across minors); with
 * ROLLBACK=1 then `helm rollback` to the revision before, the guide's way back. Each leg under a load of its
 * own (the connections, the loop, the capture), ended and removed after the leg; then every topic again on the cluster.
 */
export async function observeUpgrade(ctx: RunContext): Promise<RecordSet> {
  const plan = ctx.upgrade;
  if (!plan) throw new Error("no upgrade planned (UPGRADE_TO is unset)");
  const chart = plan.lab ? [plan.lab.chart] : [CILIUM_CHART, "--version", plan.to];
  const labSet = (plan.lab?.set ?? []).flatMap((kv) => ["--set", kv]);
  if (plan.lab && plan.lab.load.length > 0) {
    await mustRun(ctx.exec, {
      target: { kind: "local" },
      argv: ["kind", "load", "docker-image", "--name", plan.lab.cluster, ...plan.lab.load],
      timeoutMs: 900_000,
    });
  }
  await preflight(ctx, plan, chart, labSet);
  const legs: UpgradeLeg[] = [];
  let loopTotal = 0;
  const leg = async (kind: "upgrade" | "rollback", from: string, to: string, change: () => Promise<void>) => {
    const l = await legUnderLoad(ctx, { kind, from, to, change });
    loopTotal += l.loopTotal;
    const after = await conformanceAfter(ctx, kind);
    legs.push({
      ...l.leg,
      conformance: after.conformance,
      evidence: { ...l.leg.evidence, conformance: after.evidence },
    });
  };
  await leg("upgrade", plan.from, plan.to, async () => {
    await helm(ctx, [
      "upgrade",
      "cilium",
      ...chart,
      "--values",
      plan.valuesFile,
      ...labSet,
      "--set",
      `upgradeCompatibility=${plan.fromMinor}`,
    ]);
  });
  if (plan.rollback) {
    const history = JSON.parse(await helm(ctx, ["history", "cilium", "-o", "json"])) as {
      revision: number;
      status: string;
    }[];
    // the revision before the upgrade: the newest superseded one
    const back = history.filter((h) => h.status === "superseded").at(-1);
    if (!back)
      throw new Error(`helm history cilium has no revision to roll back to: ${JSON.stringify(history)}`);
    await leg("rollback", plan.to, plan.from, async () => {
      await helm(ctx, ["rollback", "cilium", String(back.revision)]);
    });
  }
  const record: UpgradeRecord = {
    from: plan.from,
    from_minor: plan.fromMinor,
    to: plan.to,
    legs,
    loop_total: loopTotal,
  };
  return { upgrade: { record, evidence: {} } };
}
