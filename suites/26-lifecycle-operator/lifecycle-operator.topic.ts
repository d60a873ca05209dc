import { kubectl, kubectlRaw, pods } from "../../helpers/observe/cluster.ts";
import { type RunContext, waitSettled } from "../../helpers/observe/context.ts";
import {
  apply,
  type Edge,
  ensureEdge,
  ensureLbPool,
  lbRange,
  renderManifest,
  waitLbAddress,
  waitReplaced,
} from "../../helpers/observe/workloads.ts";
import type { Deviation } from "../../helpers/properties/expectation.ts";
import { IPV4_SERVICE, requires } from "../../helpers/properties/requirements.ts";
import { UP } from "../../helpers/properties/sources.ts";
import type { Evidence, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import { type LifecycleOperatorRecord, records } from "./lifecycle-operator.records.ts";

const ANY = requires(IPV4_SERVICE);
const LBIPAM = UP(
  "Cilium docs, LB IPAM sharing keys: https://docs.cilium.io/en/v1.20/network/lb-ipam/#sharing-keys; https://github.com/cilium/cilium/blob/v1.20.2/operator/pkg/lbipam/lbipam.go (stripOrImportIngresses keeps a compatible shared address)",
);

export const topic = defineTopic({
  name: "lifecycle-operator",
  title: "When cilium-operator restarts under the Services: LB-IPAM's addresses, shared ones included, stay",
  source: LBIPAM,
  deploys: ["edge.yaml", "lb-pool.yaml", "lifecycle-ipam.yaml"],
  steps: [
    { on: "api", run: "get nodes", for: "the edge node, for the pool's range" },
    { on: "local", run: "printenv LB_IP_RANGE", for: "the range of ours for the pool" },
    { on: "kubectl", run: "-n kube-system delete pod -l io.cilium/app=operator", for: "cilium-operator" },
    {
      on: "kubectl",
      run: "-n <ns> get services",
      for: "every LoadBalancer address before and after (polled)",
    },
  ],
  records,
  schedule: {
    alone:
      "restarts the operator: a Service another topic creates meanwhile would wait for its address, and one the restart moved would break that topic's probes",
    besides: ["lifecycle-agents"],
    besidesWhy:
      "the agents' restart reads only its own ClusterIP Services (no LB-IPAM address), and the operator's restart touches no agent's datapath: a Cilium upgrade restarts both at once too",
  },
  shared: { changes: ["kube-proxy service rules"] },
  observe: observeLifecycleOperator,
  properties: [
    {
      id: "lifecycle-operator.restart-keeps-addresses",
      claim: "Restarting cilium-operator moves no LoadBalancer address, shared ones included",
      source: LBIPAM,
      why: "the restarted operator imports every Service's current address before it allocates anything new (PR 41147, 1.18.2), a shared one too when its holder is in a compatible sharing group (PR 46262)",
      expect: {
        // 1.19.0–1.19.6 lack the fix too (its backport, PR 46559, is in 1.19.7): declared from the sources; the
        // lab's 1.19.6 runs kept every address (the move is order-dependent)
        kpr: {
          default: { eq: "unchanged" },
          byMinor: { "1.18": IPAM_ISSUE() },
          byPatch: [{ from: "1.19.0", to: "1.19.6", ...IPAM_ISSUE() }],
        },
        "kube-proxy": {
          default: { eq: "unchanged" },
          byMinor: { "1.18": IPAM_ISSUE() },
          byPatch: [{ from: "1.19.0", to: "1.19.6", ...IPAM_ISSUE() }],
        },
      },
      config: { assumes: ANY },
      needs: ["lifecycleOperator"],
      observe: (r) => {
        const v = r.get("lifecycleOperator");
        if (!v.lb_before || !v.lb_after)
          return { value: null, evidence: [], skip: "the run had no LoadBalancer range of ours" };
        const moved = Object.keys(v.lb_before)
          .filter((s) => (v.lb_before?.[s] ?? []).join() !== (v.lb_after?.[s] ?? []).join())
          .map(
            (s) =>
              `${s} ${(v.lb_before?.[s] ?? []).join("+")} → ${(v.lb_after?.[s] ?? []).join("+") || "none"}`,
          );
        return {
          value: moved.length === 0 ? "unchanged" : moved.join("; "),
          evidence: [
            ...r.evidence("lifecycleOperator", "lb_before"),
            ...r.evidence("lifecycleOperator", "lb_after"),
          ],
        };
      },
    },
    {
      id: "lifecycle-operator.sharing-key-addresses",
      claim: "Three Services sharing one key, two of them on the same port, hold two addresses between them",
      source: LBIPAM,
      why: "a key shares an address among Services whose ports differ; a port clash needs a second address (what the operator restart then has to keep)",
      expect: { kpr: { eq: 2 }, "kube-proxy": { eq: 2 } },
      config: { assumes: ANY },
      needs: ["lifecycleOperator"],
      observe: (r) => {
        const n = r.get("lifecycleOperator").sharing_addresses;
        if (n === null)
          return { value: null, evidence: [], skip: "the run had no LoadBalancer range of ours" };
        return { value: n, evidence: r.evidence("lifecycleOperator", "sharing_addresses") };
      },
    },
  ],
});

/** 1.18's LB-IPAM import that drops a shared address held by a compatible group (fixed in 1.19.7 and 1.20.0). */
function IPAM_ISSUE(): Deviation {
  return {
    kind: "known-issue",
    expect: { match: "→" },
    claim:
      "a restarted operator may move a Service off the second address of a sharing key: the import meets the address 'already allocated' by its own group and allocates anew (order-dependent)",
    why: "operator/pkg/lbipam/lbipam.go at v1.18.11: 'Current IP is already allocated by another service, deferring to regular allocation logic'",
    upstream:
      "https://github.com/cilium/cilium/pull/46262 (1.19.7 as https://github.com/cilium/cilium/pull/46559, and 1.20.0); never backported to 1.18",
  };
}

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

export async function observeLifecycleOperator(ctx: RunContext): Promise<RecordSet> {
  const edge = await ensureEdge(ctx);
  const evidence: Evidence<LifecycleOperatorRecord> = { ...edge.siteEvidence };
  const ipam = await operatorRestart(ctx, edge, evidence);
  return { lifecycleOperator: { record: { ...edge.site, ...ipam }, evidence } };
}

/** Every LoadBalancer address of the run's namespace, by Service (sorted). */
async function lbAddresses(ctx: RunContext) {
  const text = await kubectlRaw(ctx, [
    "-n",
    ctx.namespace,
    "get",
    "services",
    "-o",
    'jsonpath={range .items[?(@.spec.type=="LoadBalancer")]}{.metadata.name}={.status.loadBalancer.ingress[*].ip}{"\\n"}{end}',
  ]);
  const out: Record<string, string[]> = {};
  for (const l of text.text.split("\n").filter((x) => x.includes("=")))
    out[l.slice(0, l.indexOf("="))] = l
      .slice(l.indexOf("=") + 1)
      .split(/\s+/)
      .filter(Boolean)
      .sort();
  // each Service's line, quoted at its place in the output
  return { addresses: out, lines: text.quotes((l) => l.includes("=")) };
}

/** The sharing key's Services get their addresses; the operator is deleted; the addresses are read until 20 s after it is back. */
async function operatorRestart(ctx: RunContext, edge: Edge, evidence: Evidence<LifecycleOperatorRecord>) {
  const range = await lbRange(ctx, edge);
  if ("none" in range) {
    ctx.log(range.none);
    return { lb_before: null, lb_after: null, sharing_addresses: null };
  }
  await ensureLbPool(ctx, range);
  await apply(ctx, renderManifest("lifecycle-ipam.yaml", ctx.namespace, { POOL: range.pool }));
  const shared = await Promise.all(["lc-sk-a", "lc-sk-b", "lc-sk-c"].map((s) => waitLbAddress(ctx, s)));
  const before = await lbAddresses(ctx);
  const old = await pods(ctx, "kube-system", "io.cilium/app=operator");
  await kubectl(ctx, ["-n", "kube-system", "delete", "pod", "-l", "io.cilium/app=operator", "--wait=false"]);
  await waitReplaced(ctx, {
    what: "a new cilium-operator ready",
    namespace: "kube-system",
    selector: "io.cilium/app=operator",
    old,
    count: old.length,
    deadlineMs: 180_000,
    intervalMs: 1000,
  });
  const t0 = ctx.now();
  // the new operator imports and reconciles within seconds: any move shows by then (none should)
  const { value: after } = await waitSettled(ctx, {
    what: "a LoadBalancer address to move after the operator's restart (none should, for 15 s)",
    deadlineMs: 15_000,
    intervalMs: 2000,
    probe: () => lbAddresses(ctx),
    done: (a) => JSON.stringify(a.addresses) !== JSON.stringify(before.addresses),
    show: (a) => `${Object.keys(a.addresses).length} Services, ${(ctx.now() - t0) / 1000} s`,
  });
  evidence.lb_before = [...before.lines, ...shared.flatMap((s) => s.evidence)];
  evidence.lb_after = after.lines;
  evidence.sharing_addresses = shared.flatMap((s) => s.evidence);
  return {
    lb_before: before.addresses,
    lb_after: after.addresses,
    sharing_addresses: new Set(shared.map((s) => s.ip)).size,
  };
}
