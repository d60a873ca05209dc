/**
 * Topic "upgrade" — Knowledge: clusters.md §6.
 * A Cilium upgrade under load: the holder's connection survives with the same backend.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */
import { CILIUM_CHART } from "../../clusters/versions.ts";
import { mustRun } from "../../helpers/exec/types.ts";
import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { kubectlJson, kubectlRaw } from "../../helpers/observe/cluster.ts";
import { type RunContext, waitFor } from "../../helpers/observe/context.ts";
import { holderEventLines } from "../../helpers/parse/holder-log.ts";
import { parseStatus } from "../../helpers/parse/status.ts";
import { KN } from "../../helpers/properties/sources.ts";
import { statusQuote } from "../../helpers/records/common.ts";
import { derive, RawText } from "../../helpers/records/evidence.ts";
import type { RecordSet, UpgradeRecord } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";

export const topic = defineTopic({
  name: "upgrade",
  title: "A Cilium upgrade under load: the holder's connection survives with the same backend",
  source: KN("clusters.md §6"),
  deploys: [],
  steps: [
    { on: "kubectl", run: "-n <ns> logs holder", for: "the holder's connection before and after" },
    { on: "agent", run: "cilium-dbg bpf ct list global", for: "its conntrack backend" },
    {
      on: "local",
      run: "helm upgrade --install cilium-preflight",
      for: "the preflight check of the new version",
    },
    { on: "local", run: "helm uninstall cilium-preflight", for: "removing it" },
    { on: "local", run: "helm upgrade cilium", for: "the upgrade" },
    { on: "agent", run: "cilium-dbg status", for: "the new agents' version" },
  ],
  builds: ["upgrade"],
  observe: observeUpgrade,
  properties: [
    {
      id: "upgrade.holder-connection-survives",
      claim: "The holder's TCP connection survives a Cilium minor upgrade: same connection, no close",
      source: KN("clusters.md §6 (BPF maps stay pinned while agents restart; Cilium's conn-disrupt test)"),
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      needs: ["upgrade"],
      observe: (r) => {
        const u = r.get("upgrade");
        return {
          value:
            u.connection_before > 0 && u.connection_after === u.connection_before && u.closed_events === 0,
          evidence: r.evidence("upgrade", "connection_after"),
        };
      },
    },
    {
      id: "upgrade.same-backend",
      claim: "The connection's conntrack entry points at the same backend after the upgrade",
      source: KN("clusters.md §6"),
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      needs: ["upgrade"],
      observe: (r) => {
        const u = r.get("upgrade");
        return {
          value: u.backend_before !== null && u.backend_after === u.backend_before,
          evidence: r.evidence("upgrade", "backend_after"),
        };
      },
    },
    {
      id: "upgrade.new-version-running",
      claim:
        "After the upgrade the agents run the version asked for (exactly: a patch upgrade changes only the patch)",
      source: KN("clusters.md §6"),
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      needs: ["upgrade"],
      observe: (r) => {
        const u = r.get("upgrade");
        return {
          value: u.cilium_after === u.to || u.cilium_after.startsWith(`${u.to} `),
          evidence: [...r.evidence("upgrade", "cilium_after"), ...r.evidence("upgrade", "to")],
        };
      },
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

async function helm(ctx: RunContext, args: string[]): Promise<void> {
  if (!ctx.kubeContext) throw new Error("the upgrade needs the cluster's kubectl context");
  await mustRun(ctx.exec, {
    target: { kind: "local" },
    argv: ["helm", ...args, "--namespace", "kube-system", "--kube-context", ctx.kubeContext],
    timeoutMs: 900_000,
  });
}

async function holderSnapshot(ctx: RunContext, node: string, client: string) {
  const log = await kubectlRaw(ctx, ["-n", ctx.namespace, "logs", "holder"]);
  const ev = holderEventLines(log.text);
  const connected = ev.filter((e) => e.event.event === "connected");
  const closed = ev.filter((e) => e.event.event === "closed");
  const ct = await ciliumDbgRaw(ctx, node, ["bpf", "ct", "list", "global"]);
  const out = ct.find((l) => l.startsWith(`TCP OUT ${client} -> `));
  const last = connected.at(-1);
  return {
    connection: Number(last?.event.connection ?? 0),
    events: ev.length,
    closed: closed.length,
    backend: out ? (out.quote.split(" ")[4] ?? null) : null,
    /** The last `connected` line and every `closed` line of the log, quoted. */
    logEvidence: [...(last ? [log.quote(last.line)] : []), ...closed.map((c) => log.quote(c.line))],
    log,
    ctEvidence: out ? [out] : [derive(`no TCP OUT entry from ${client}`, ct)],
  };
}

/**
 * The upgrade leg (Cilium's documented path): the preflight check for the new version, then
 * `helm upgrade` with the run's full values and upgradeCompatibility set to the installed minor (never
 * --reuse-values across minors), the readiness of the new agents, and the holder's connection before and
 * after: same connection, no close, same conntrack backend.
 */
export async function observeUpgrade(ctx: RunContext): Promise<RecordSet> {
  const plan = ctx.upgrade;
  if (!plan) throw new Error("no upgrade planned (UPGRADE_TO is unset)");
  const holder = (await kubectlJson(ctx, ["-n", ctx.namespace, "get", "pod", "holder"])) as {
    spec?: { nodeName?: string };
    status?: { podIP?: string };
  };
  const node = holder.spec?.nodeName ?? "";
  const client = `${holder.status?.podIP}:40404`;
  const before = await holderSnapshot(ctx, node, client);
  ctx.log(
    `holder: connection ${before.connection}, conntrack backend ${before.backend}; upgrading Cilium ${plan.fromMinor} → ${plan.to}`,
  );
  const apiServer = plan.k8sServiceHost
    ? ["--set", `k8sServiceHost=${plan.k8sServiceHost}`, "--set", `k8sServicePort=${plan.k8sServicePort}`]
    : [];
  const chart = plan.lab ? [plan.lab.chart] : [CILIUM_CHART, "--version", plan.to];
  const labSet = (plan.lab?.set ?? []).flatMap((kv) => ["--set", kv]);
  if (plan.lab && plan.lab.load.length > 0) {
    await mustRun(ctx.exec, {
      target: { kind: "local" },
      argv: ["kind", "load", "docker-image", "--name", plan.lab.cluster, ...plan.lab.load],
      timeoutMs: 900_000,
    });
  }
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
  await waitFor(ctx, {
    what: "the cilium-pre-flight-check DaemonSet and Deployment ready",
    deadlineMs: 600_000,
    intervalMs: 3000,
    probe: async () => {
      const ds = (await kubectlJson(ctx, [
        "-n",
        "kube-system",
        "get",
        "daemonset",
        "cilium-pre-flight-check",
      ])) as { status?: Record<string, number> };
      const dep = (await kubectlJson(ctx, [
        "-n",
        "kube-system",
        "get",
        "deployment",
        "cilium-pre-flight-check",
      ])) as { status?: Record<string, number> };
      return {
        ready: ds.status?.numberReady ?? 0,
        desired: ds.status?.desiredNumberScheduled ?? -1,
        dep: dep.status?.readyReplicas ?? 0,
      };
    },
    done: (s) => s.desired > 0 && s.ready === s.desired && s.dep >= 1,
    show: (s) => `preflight ${s.ready}/${s.desired}, deployment ${s.dep}/1`,
  });
  await helm(ctx, ["uninstall", "cilium-preflight"]);
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
  const { value: version } = await waitFor(ctx, {
    what: `the agent on ${node} to run Cilium ${plan.to} and report OK`,
    deadlineMs: 600_000,
    intervalMs: 3000,
    probe: async () => {
      const brief = await ctx.exec.run({
        target: { kind: "agent", node },
        argv: ["cilium-dbg", "status", "--brief"],
      });
      const raw = await ciliumDbgRaw(ctx, node, ["status"]);
      const st = parseStatus(raw.text);
      return {
        ok: brief.stdout.trim() === "OK",
        version: st.ciliumVersion ?? "",
        evidence: [...RawText.stdout(brief).nonBlank(), ...statusQuote(raw, st, "Cilium")],
      };
    },
    done: (s) => s.ok && s.version.startsWith(plan.to),
    show: (s) => `Cilium ${s.version || "?"}, status ${s.ok ? "OK" : "not OK"}`,
  });
  const after = await holderSnapshot(ctx, node, client);
  const record: UpgradeRecord = {
    from_minor: plan.fromMinor,
    to: plan.to,
    cilium_after: version.version,
    connection_before: before.connection,
    connection_after: after.connection,
    closed_events: after.closed - before.closed,
    backend_before: before.backend,
    backend_after: after.backend,
  };
  return {
    upgrade: {
      record,
      evidence: {
        connection_after: [
          ...before.logEvidence,
          ...after.logEvidence,
          derive(
            `holder connection ${before.connection} → ${after.connection}, ${after.closed - before.closed} close event(s) during the upgrade`,
            before.log,
            after.log,
          ),
        ],
        backend_after: [...before.ctEvidence, ...after.ctEvidence],
        cilium_after: version.evidence,
        to: [derive(`the upgrade asked for Cilium ${plan.to}`, { file: "bundle.json" })],
      },
    },
  };
}
