/**
 * Topic "lifecycle-agents" — when every agent restarts while backends are replaced: a Deployment rolled and a
 * host-network DaemonSet (internalTrafficPolicy Local, as Cilium's own hubble-peer) rolled, each all at once, while
 * the DaemonSet's backends are terminating, then each node's backends and a Pod on every node.
 *
 * Read top to bottom: what it deploys, the commands it runs, the records it builds, then each property with its
 * claim, source, expectation per mode and per Cilium version, and how it is judged. The observation code follows.
 */
import { clusterIp, kubectl, type PodInfo, pods } from "../../helpers/observe/cluster.ts";
import { type RunContext, waitSettled } from "../../helpers/observe/context.ts";
import { probeFrom, serviceViews, waitViewsAllActive } from "../../helpers/observe/steps.ts";
import {
  apply,
  ensureEdge,
  renderManifest,
  waitPodsReady,
  waitReplaced,
} from "../../helpers/observe/workloads.ts";
import { formatEndpoint } from "../../helpers/parse/address.ts";
import type { Deviation } from "../../helpers/properties/expectation.ts";
import { IPV4_SERVICE, requires } from "../../helpers/properties/requirements.ts";
import { UP } from "../../helpers/properties/sources.ts";
import type { Observation, RecordView } from "../../helpers/properties/types.ts";
import { viewNotAllActive } from "../../helpers/records/common.ts";
import type { EvidenceItem } from "../../helpers/records/evidence.ts";
import type { Evidence, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import { type LifecycleAgentsRecord, type NodeProbe, records } from "./lifecycle-agents.records.ts";

const ANY = requires(IPV4_SERVICE);
const RESTORE = UP(
  "https://github.com/cilium/cilium/blob/v1.20.2/pkg/loadbalancer/reconciler/bpf_reconciler.go (restore from the BPF maps, then prune to the desired state once the Kubernetes initializers are done); https://github.com/cilium/cilium/blob/v1.20.2/pkg/loadbalancer/tests/testdata/pruning.txtar",
);
/** The quarantine left by a restart over a terminating backend, on every minor the suite runs. */
const QUARANTINE: Record<string, Deviation> = Object.fromEntries(
  ["1.18", "1.19", "1.20"].map((m) => [
    m,
    {
      kind: "known-issue",
      expect: { match: "quarantined|failed" },
      claim:
        "a backend that was terminating when the agent restarted comes back quarantined and stays so (no health checker clears it): with internalTrafficPolicy Local the node is left without a backend",
      why: "on restore every slot after the active ones is read as quarantined for health-check reasons (bpf_reconciler.go restoredQuarantinedBackends at v1.20.2, v1.19.7, v1.18.11)",
      upstream:
        "https://github.com/cilium/cilium/issues/44891; fixed by https://github.com/cilium/cilium/pull/48763 (merged after 1.20.2, in no release the suite runs)",
    },
  ]),
);

export const topic = defineTopic({
  name: "lifecycle-agents",
  title:
    "When every agent restarts while backends are replaced: a Deployment and a host-network DaemonSet (internalTrafficPolicy Local) rolled under the restart",
  source: RESTORE,
  deploys: ["edge.yaml", "lifecycle-agents.yaml"],
  steps: [
    { on: "api", run: "get nodes", for: "every node: a client Pod on each" },
    {
      on: "kubectl",
      run: "-n <ns> rollout restart",
      for: "lc-roll and lc-hostds replaced around the agents' restart",
    },
    { on: "agent", run: "cilium-dbg service list", for: "each node's backends and their states (polled)" },
    {
      on: "kubectl",
      run: "-n kube-system delete pod -l k8s-app=cilium",
      for: "every agent, while a host-network backend is terminating",
    },
    {
      on: "kubectl",
      run: "-n <ns> rollout status daemonset/lc-hostds",
      for: "the DaemonSet rolled on every node",
    },
    { on: "pod", run: "curl -sS -v --max-time 3", for: "lc-roll and lc-hostds from a Pod on each node" },
  ],
  records,
  schedule: {
    alone: "restarts every agent: every other topic's datapath would be regenerated under it",
  },
  shared: { changes: ["kube-proxy service rules"] },
  observe: observeLifecycleAgents,
  properties: [
    {
      id: "lifecycle-agents.roll-active-after-agent-restart",
      claim:
        "After every agent restarted while a Deployment rolled, each node's agent lists exactly the Deployment's new Pods as the Service's backends, each active",
      source: RESTORE,
      why: "the restarted agent restores its maps, then prunes them to the EndpointSlices once synced: the old Pods' addresses go, the new ones are active",
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      config: { assumes: ANY },
      needs: ["lifecycleAgents"],
      observe: (r) => {
        const v = r.get("lifecycleAgents");
        const bad = viewNotAllActive(v.roll_views, v.roll_backends);
        return {
          value: bad ? `${bad.node}: [${bad.backends.join(", ")}]` : true,
          evidence: r.evidence("lifecycleAgents", "roll_views"),
        };
      },
    },
    {
      id: "lifecycle-agents.hostds-active-after-agent-restart",
      claim:
        "After every agent restarted while a host-network DaemonSet rolled, each node's agent holds its own node's backend of the internalTrafficPolicy Local Service as active",
      source: UP(
        "Kubernetes docs, Service Internal Traffic Policy: https://kubernetes.io/docs/concepts/services-networking/service-traffic-policy/; Cilium's hubble-peer Service: https://github.com/cilium/cilium/blob/v1.20.2/install/kubernetes/cilium/templates/hubble/peer-service.yaml (internalTrafficPolicy Local)",
      ),
      why: "with internalTrafficPolicy Local a node's only backend is its own: one not active leaves the node's Pods without the Service (hubble-relay's 'operation not permitted')",
      expect: {
        kpr: { default: { eq: true }, byMinor: QUARANTINE },
        "kube-proxy": { default: { eq: true }, byMinor: QUARANTINE },
      },
      config: { assumes: ANY },
      needs: ["lifecycleAgents"],
      observe: (r) => {
        const v = r.get("lifecycleAgents");
        const bad = v.hostds_views.find(
          (n) => n.backends.length !== 1 || !n.backends[0]?.endsWith("(active)"),
        );
        return {
          value: bad ? `${bad.node}: [${bad.backends.join(", ") || "none"}]` : true,
          evidence: r.evidence("lifecycleAgents", "hostds_views"),
        };
      },
    },
    {
      id: "lifecycle-agents.roll-reached-from-every-node",
      claim: "After the agents' restart a Pod on every node reaches the rolled Deployment's Service",
      source: RESTORE,
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "HTTP 200" } },
      config: { assumes: ANY },
      needs: ["lifecycleAgents"],
      observe: (r) => everyNode(r, "roll_probes"),
    },
    {
      id: "lifecycle-agents.hostds-reached-from-every-node",
      claim:
        "After the agents' restart a Pod on every node reaches the host-network DaemonSet's Service (its own node's backend)",
      source: RESTORE,
      expect: {
        kpr: { default: { eq: "HTTP 200" }, byMinor: QUARANTINE },
        "kube-proxy": { default: { eq: "HTTP 200" }, byMinor: QUARANTINE },
      },
      config: { assumes: ANY },
      needs: ["lifecycleAgents"],
      observe: (r) => everyNode(r, "hostds_probes"),
    },
  ],
});

function everyNode(r: RecordView, key: "roll_probes" | "hostds_probes"): Observation {
  const ps = r.get("lifecycleAgents")[key];
  const bad = ps.find((p) => p.probe.verdict !== "HTTP 200");
  return {
    value: ps.length === 0 ? "not asked" : bad ? `failed on ${bad.node}: ${bad.probe.verdict}` : "HTTP 200",
    evidence: r.evidence("lifecycleAgents", key),
  };
}

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

export async function observeLifecycleAgents(ctx: RunContext): Promise<RecordSet> {
  const edge = await ensureEdge(ctx);
  await apply(ctx, renderManifest("lifecycle-agents.yaml", ctx.namespace));
  const nodeCount = (await pods(ctx, "kube-system", "k8s-app=cilium")).length;
  await waitPodsReady(ctx, "app=lc-roll", 2);
  await waitPodsReady(ctx, "app=lc-hostds", nodeCount);
  const clients = await waitPodsReady(ctx, "app=lc-client", nodeCount);
  const evidence: Evidence<LifecycleAgentsRecord> = { ...edge.siteEvidence };
  const restart = await agentsRestart(ctx, clients, nodeCount, evidence);
  return { lifecycleAgents: { record: { ...edge.site, ...restart }, evidence } };
}

const onPod = (ctx: RunContext, p: PodInfo) => ({
  kind: "pod" as const,
  namespace: ctx.namespace,
  pod: p.name,
});

/** lc-roll and lc-hostds rolled, and every agent deleted while a host-network backend is terminating. */
async function agentsRestart(
  ctx: RunContext,
  clients: PodInfo[],
  nodeCount: number,
  evidence: Evidence<LifecycleAgentsRecord>,
) {
  const oldAgents = await pods(ctx, "kube-system", "k8s-app=cilium");
  const oldRoll = await pods(ctx, ctx.namespace, "app=lc-roll");
  await kubectl(ctx, [
    "-n",
    ctx.namespace,
    "rollout",
    "restart",
    "deployment/lc-roll",
    "daemonset/lc-hostds",
  ]);
  // the agents go down while one of them holds a host-network backend as terminating (what the restore reads back)
  const nodes = clients.map((c) => c.node);
  const hostdsIp = await clusterIp(ctx, ctx.namespace, "lc-hostds");
  await waitSettled(ctx, {
    what: "an agent holding a host-network backend as terminating (the DaemonSet's rollout under way)",
    deadlineMs: 30_000,
    intervalMs: 500,
    probe: () => serviceViews(ctx, nodes, hostdsIp, []),
    done: (vs) => vs.some((v) => v.backends.some((b) => b.includes("terminating"))),
    show: (vs) => vs.map((v) => `${v.node} [${v.backends.join(", ")}]`).join("; "),
  });
  await kubectl(ctx, ["-n", "kube-system", "delete", "pod", "-l", "k8s-app=cilium", "--wait=false"]);
  await waitReplaced(ctx, {
    what: "every agent replaced and ready",
    namespace: "kube-system",
    selector: "k8s-app=cilium",
    old: oldAgents,
    count: nodeCount,
    deadlineMs: 300_000,
    intervalMs: 2000,
  });
  const roll = await waitReplaced(ctx, {
    what: "lc-roll rolled (two new Pods ready)",
    namespace: ctx.namespace,
    selector: "app=lc-roll",
    old: oldRoll,
    count: 2,
    deadlineMs: 180_000,
    intervalMs: 1000,
  });
  await kubectl(ctx, ["-n", ctx.namespace, "rollout", "status", "daemonset/lc-hostds", "--timeout=180s"]);
  const rollIp = await clusterIp(ctx, ctx.namespace, "lc-roll");
  const rolled = roll.map((p) => formatEndpoint(p.ip, 8080));
  const rollEv: EvidenceItem[] = [];
  const hostEv: EvidenceItem[] = [];
  // the agents converge on the new Pods within seconds: wait for every node to list them, keep the last reading
  // (the wait's last reading is the one quoted)
  const rollRead = await waitViewsAllActive(
    ctx,
    "every node listing lc-roll's new Pods as active",
    nodes,
    rollIp,
    rolled,
  );
  const rollViews = rollRead.views;
  rollEv.push(...rollRead.evidence);
  const hostdsViews = await serviceViews(ctx, nodes, hostdsIp, hostEv);
  const probe = (ip: string) =>
    Promise.all(
      clients.map(async (c): Promise<NodeProbe & { ev: EvidenceItem[] }> => {
        const p = await probeFrom(ctx, onPod(ctx, c), `pod ${c.node}`, `http://${ip}/hostname`, {
          maxTime: 3,
        });
        return { node: c.node, probe: p.probe, ev: p.evidence };
      }),
    );
  const [rollProbes, hostdsProbes] = [await probe(rollIp), await probe(hostdsIp)];
  ctx.log(
    `after the agents' restart: lc-roll ${rollProbes.map((p) => p.probe.verdict).join(", ")}; lc-hostds ${hostdsViews.map((v) => `${v.node} [${v.backends.join(", ")}]`).join("; ")}`,
  );
  evidence.roll_backends = roll.flatMap((p) => p.evidence ?? []);
  evidence.roll_views = rollEv;
  evidence.hostds_views = hostEv;
  evidence.roll_probes = rollProbes.flatMap((p) => p.ev);
  evidence.hostds_probes = hostdsProbes.flatMap((p) => p.ev);
  return {
    roll_backends: rolled,
    roll_views: rollViews,
    hostds_views: hostdsViews,
    roll_probes: rollProbes.map(({ node, probe }) => ({ node, probe })),
    hostds_probes: hostdsProbes.map(({ node, probe }) => ({ node, probe })),
  };
}
