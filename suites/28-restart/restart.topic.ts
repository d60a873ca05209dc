/**
 * Topic "restart" — issue 35: the agents restarted on one version under the same load as an upgrade's legs, as
 * Cilium's own upgrade CI does before it upgrades. A disruption in the upgrade leg can then be told apart: the
 * restart alone shows it (an agent restart's cost, whatever the version), or only the version change does.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds, then each
 * property with its claim, source, expectation per mode and how it is judged. The load and the leg's observation are
 * the upgrade topic's (helpers/observe/leg.ts); the properties are every leg's (suites/legs.ts, beside the topics).
 */
import { mustRun } from "../../helpers/exec/types.ts";
import type { RunContext } from "../../helpers/observe/context.ts";
import { legUnderLoad } from "../../helpers/observe/leg.ts";
import { UP } from "../../helpers/properties/sources.ts";
import type { RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import { LEG_DEPLOYS, LEG_EVIDENCE_STEPS, LEG_ROLL_STEPS, legProperties } from "../legs.ts";
import type { RestartRecord } from "./restart.records.ts";
import { records } from "./restart.records.ts";

export const topic = defineTopic({
  name: "restart",
  title:
    "The agents restarted on one version under load: what a restart alone costs, before the version changes",
  runsIn: "an upgrade run (UPGRADE_TO)",
  source: UP(
    "Cilium's upgrade CI (agents restarted, then upgraded, under cilium-cli's conn-disrupt test), https://github.com/cilium/cilium/blob/v1.20.2/.github/workflows/tests-e2e-upgrade.yaml",
  ),
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
    { on: "agent", run: "cilium-dbg bpf metrics list -o json", for: "the drop counters before and after" },
    { on: "node", run: "ls -1 /sys/fs/bpf/tc/globals", for: "the pinned maps before and after" },
    { on: "pod", run: "node -e console.log(Date.now())", for: "the leg's start and end on the loop's clock" },
    {
      on: "kubectl",
      run: "-n kube-system rollout restart daemonset/cilium deployment/cilium-operator",
      for: "the restart",
    },
    { on: "agent", run: "cilium-dbg status", for: "every agent's version and health" },
    {
      on: "kubectl",
      run: "-n kube-system logs <pod> -c cilium-agent",
      for: "each agent's error lines during the leg",
    },
    ...LEG_EVIDENCE_STEPS,
    ...LEG_ROLL_STEPS,
    { on: "pod", run: "kill -TERM 1", for: "ending the request loop" },
    {
      on: "kubectl",
      run: "-n <ns> logs request-loop",
      for: "every request's outcome, time and the loop's lag",
    },
  ],
  records,
  schedule: {
    alone: "restarts every agent under load: every other topic's cluster changes under it",
  },
  shared: { changes: ["kube-proxy service rules", "web backends"] },
  observe: observeRestart,
  properties: legProperties("restart", "restart"),
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** The agents and the operator restarted (kubectl rollout restart) under the load, on the installed version. */
export async function observeRestart(ctx: RunContext): Promise<RecordSet> {
  const plan = ctx.upgrade;
  if (!plan)
    throw new Error("no upgrade planned (UPGRADE_TO is unset): the restart leg runs in an upgrade run");
  const l = await legUnderLoad(ctx, {
    kind: "restart",
    from: plan.from,
    to: plan.from,
    change: async () => {
      await mustRun(ctx.exec, {
        target: { kind: "kubectl" },
        argv: ["-n", "kube-system", "rollout", "restart", "daemonset/cilium", "deployment/cilium-operator"],
      });
    },
  });
  const record: RestartRecord = { version: plan.from, legs: [l.leg], loop_total: l.loopTotal };
  return { restart: { record, evidence: {} } };
}
