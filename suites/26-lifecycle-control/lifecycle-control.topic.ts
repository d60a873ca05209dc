import { clusterIp, kubectl, kubectlRaw, pods } from "../../helpers/observe/cluster.ts";
import { type RunContext, waitFor, waitSettled } from "../../helpers/observe/context.ts";
import { onNode } from "../../helpers/observe/node.ts";
import { lbList, probeFrom, slotAddresses } from "../../helpers/observe/steps.ts";
import {
  apply,
  type Edge,
  ensureEdge,
  ensureLbPool,
  lbRange,
  renderManifest,
  waitLbAddress,
  waitPodsReady,
  waitReplaced,
} from "../../helpers/observe/workloads.ts";
import { formatEndpoint } from "../../helpers/parse/address.ts";
import type { Deviation } from "../../helpers/properties/expectation.ts";
import { IPV4_SERVICE, requires } from "../../helpers/properties/requirements.ts";
import { UP } from "../../helpers/properties/sources.ts";
import { derive } from "../../helpers/records/evidence.ts";
import type { Evidence, Probe, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import { type LifecycleControlRecord, records } from "./lifecycle-control.records.ts";

const ANY = requires(IPV4_SERVICE);
const LBIPAM = UP(
  "Cilium docs, LB IPAM sharing keys: https://docs.cilium.io/en/v1.20/network/lb-ipam/#sharing-keys; https://github.com/cilium/cilium/blob/v1.20.2/operator/pkg/lbipam/lbipam.go (stripOrImportIngresses keeps a compatible shared address)",
);
const CUT = UP(
  "https://github.com/cilium/cilium/pull/44711 (a re-list after a watch is lost prunes what the API server no longer has; 1.19 as https://github.com/cilium/cilium/pull/45198)",
);

export const topic = defineTopic({
  name: "lifecycle-control",
  title:
    "When the control plane changes under the Services: the operator restarted under LB-IPAM addresses, an agent cut from the API server while a backend goes",
  source: LBIPAM,
  deploys: ["edge.yaml", "lifecycle-control.yaml", "lb-pool.yaml", "lifecycle-ipam.yaml"],
  steps: [
    { on: "api", run: "get nodes", for: "the far node to cut, the edge node with lc-cut's Pods" },
    { on: "local", run: "printenv LB_IP_RANGE", for: "the range of ours for the pool" },
    { on: "kubectl", run: "-n kube-system delete pod -l io.cilium/app=operator", for: "cilium-operator" },
    {
      on: "kubectl",
      run: "-n <ns> get services",
      for: "every LoadBalancer address before and after (polled)",
    },
    { on: "node", run: "iptables -w -I", for: "the far node's traffic to and from the API server dropped" },
    {
      on: "node",
      run: "iptables -w -D",
      for: "the drop rules removed: the node reaches the API server again",
    },
    {
      on: "kubectl",
      run: "-n default get endpoints kubernetes",
      for: "the API server's address and port (what the cut drops)",
    },
    {
      on: "kubectl",
      run: "-n <ns> scale deployment lc-cut",
      for: "a backend deleted while the far node is cut",
    },
    { on: "agent", run: "cilium-dbg bpf lb list", for: "lc-cut's slots on the far node, during and after" },
    { on: "pod", run: "curl -sS -v --max-time 3", for: "lc-cut from the far node's Pod" },
  ],
  records,
  schedule: {
    alone:
      "restarts the operator and cuts a node from the API server: another topic's Services and waits would change under it",
  },
  shared: { changes: ["kube-proxy service rules"] },
  observe: observeLifecycleControl,
  properties: [
    {
      id: "lifecycle-control.operator-restart-keeps-addresses",
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
      needs: ["lifecycleControl"],
      observe: (r) => {
        const v = r.get("lifecycleControl");
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
            ...r.evidence("lifecycleControl", "lb_before"),
            ...r.evidence("lifecycleControl", "lb_after"),
          ],
        };
      },
    },
    {
      id: "lifecycle-control.sharing-key-addresses",
      claim: "Three Services sharing one key, two of them on the same port, hold two addresses between them",
      source: LBIPAM,
      why: "a key shares an address among Services whose ports differ; a port clash needs a second address (what the operator restart then has to keep)",
      expect: { kpr: { eq: 2 }, "kube-proxy": { eq: 2 } },
      config: { assumes: ANY },
      needs: ["lifecycleControl"],
      observe: (r) => {
        const n = r.get("lifecycleControl").sharing_addresses;
        if (n === null)
          return { value: null, evidence: [], skip: "the run had no LoadBalancer range of ours" };
        return { value: n, evidence: r.evidence("lifecycleControl", "sharing_addresses") };
      },
    },
    {
      id: "lifecycle-control.api-cut-no-stale-backend",
      claim:
        "A node's agent cut from the API server while a backend is deleted drops that backend once it is back: no stale backend in its LB map",
      source: CUT,
      why: "the agent's watches resume or re-list after the cut; either way the deleted endpoint's backend must leave the map (1.19.0–1.19.2 kept it: PR 45198)",
      expect: { kpr: { eq: "removed" }, "kube-proxy": { eq: "removed" } },
      config: { assumes: ANY },
      needs: ["lifecycleControl"],
      observe: (r) => {
        const v = r.get("lifecycleControl");
        if (v.cut_node === null)
          return { value: null, evidence: [], skip: "no node could be cut from the API server" };
        const stale = v.cut_slots_after.filter((s) => !v.cut_remaining.includes(s));
        return {
          value:
            stale.length === 0 && v.cut_slots_after.length > 0
              ? "removed"
              : `slots [${v.cut_slots_after.join(", ")}], Pods [${v.cut_remaining.join(", ")}]`,
          evidence: r.evidence("lifecycleControl", "cut_slots_after"),
        };
      },
    },
    {
      id: "lifecycle-control.api-cut-reached",
      claim: "After the cut a Pod on the cut node reaches the Service every time",
      source: CUT,
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "HTTP 200" } },
      config: { assumes: ANY },
      needs: ["lifecycleControl"],
      observe: (r) => {
        const ps = r.get("lifecycleControl").cut_probes;
        if (ps.length === 0)
          return { value: null, evidence: [], skip: "no node could be cut from the API server" };
        const bad = ps.find((p) => p.verdict !== "HTTP 200");
        return {
          value: bad ? bad.verdict : "HTTP 200",
          evidence: r.evidence("lifecycleControl", "cut_probes"),
        };
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

export async function observeLifecycleControl(ctx: RunContext): Promise<RecordSet> {
  const edge = await ensureEdge(ctx);
  await apply(ctx, renderManifest("lifecycle-control.yaml", ctx.namespace, { EDGE_NODE: edge.edge.name }));
  await waitPodsReady(ctx, "app=lc-cut", 2);
  const evidence: Evidence<LifecycleControlRecord> = { ...edge.siteEvidence };
  const ipam = await operatorRestart(ctx, edge, evidence);
  const cut = await apiCut(ctx, edge, evidence);
  return { lifecycleControl: { record: { ...edge.site, ...ipam, ...cut }, evidence } };
}

/** How long one reading of the cut node's LB map may take during and after the cut. */
const CUT_READ_MS = 8000;

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
async function operatorRestart(ctx: RunContext, edge: Edge, evidence: Evidence<LifecycleControlRecord>) {
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

async function apiCut(ctx: RunContext, edge: Edge, evidence: Evidence<LifecycleControlRecord>) {
  const none = {
    cut_node: null,
    cut_deleted: null,
    cut_slots_during: [],
    cut_slots_after: [],
    cut_remaining: [],
    cut_probes: [] as Probe[],
  };
  const api = await kubectl(ctx, [
    "-n",
    "default",
    "get",
    "endpoints",
    "kubernetes",
    "-o",
    "jsonpath={.subsets[0].addresses[0].ip} {.subsets[0].ports[0].port}",
  ]);
  const [apiIp, apiPort] = api.trim().split(" ");
  const client = edge.client;
  if (!apiIp || !apiPort) return none;
  const far = edge.far.name;
  const svc = await clusterIp(ctx, ctx.namespace, "lc-cut");
  const frontend = `${svc}:80`;
  const rules = [
    ["OUTPUT", "-p", "tcp", "-d", apiIp, "--dport", apiPort, "-j", "DROP"],
    ["INPUT", "-p", "tcp", "-s", apiIp, "--sport", apiPort, "-j", "DROP"],
  ];
  // the agent's exec goes through the API server and the cut node's kubelet: during the cut, and while the agent
  // reconnects, a reading may fail (on the lab: `exited (status lost)`) or hang (one hung 68 s on the lab, which made
  // a 30 s cut last 75 s): each reading ends after 8 s, and one that fails or ends so is kept as unreadable, not fatal
  const lb = () => lbList(ctx, far, CUT_READ_MS);
  const tryLb = () =>
    lb().catch((err: unknown) => ({
      error: err instanceof Error ? err.message.split("\n")[0] : String(err),
    }));
  const slotsOf = (l: Awaited<ReturnType<typeof tryLb>>) =>
    "error" in l ? null : slotAddresses(l.parsed, frontend);
  const before = await pods(ctx, ctx.namespace, "app=lc-cut");
  for (const r of rules) await onNode(ctx, far, ["iptables", "-w", "-I", ...r]);
  let during: string[] = [];
  try {
    const t0 = ctx.now();
    await kubectl(ctx, ["-n", ctx.namespace, "scale", "deployment", "lc-cut", "--replicas=1"]);
    const { value } = await waitFor(ctx, {
      what: `30 s of ${far} cut from the API server (its LB map read meanwhile)`,
      deadlineMs: 60_000,
      intervalMs: 3000,
      probe: tryLb,
      done: () => ctx.now() - t0 >= 30_000,
      show: (l) => ("error" in l ? `unreadable: ${l.error}` : `[${slotsOf(l)?.join(", ")}]`),
    });
    during = slotsOf(value) ?? [];
  } finally {
    for (const r of rules) await onNode(ctx, far, ["iptables", "-w", "-D", ...r]);
  }
  const remaining = (await waitPodsReady(ctx, "app=lc-cut", 1)).map((p) => formatEndpoint(p.ip, 8080));
  const deleted = before.map((p) => formatEndpoint(p.ip, 8080)).find((b) => !remaining.includes(b)) ?? null;
  const { value: after } = await waitSettled(ctx, {
    what: `${far}'s lc-cut slots back to [${remaining.join(", ")}] after the cut`,
    deadlineMs: 60_000,
    intervalMs: 2000,
    probe: tryLb,
    done: (l) => slotsOf(l)?.join() === remaining.join(),
    show: (l) => ("error" in l ? `unreadable: ${l.error}` : `[${slotsOf(l)?.join(", ")}]`),
  });
  const probes = [];
  for (let i = 0; i < 4; i++)
    probes.push(
      await probeFrom(
        ctx,
        { kind: "pod", namespace: ctx.namespace, pod: client.name },
        "pod far",
        `http://${svc}/hostname`,
        { maxTime: 3 },
      ),
    );
  const afterSlots = slotsOf(after) ?? [];
  ctx.log(
    `cut from the API server: ${far} held [${during.join(", ")}] during, [${afterSlots.join(", ")}] after; ${deleted ?? "no backend"} deleted`,
  );
  if ("error" in after)
    evidence.cut_slots_after = [derive(`bpf lb list unreadable after the cut: ${after.error}`)];
  else {
    const row = after.parsed.services.find((s) => s.frontend === frontend && s.scope === "external");
    evidence.cut_slots_after = row
      ? row.backends.map((b) => after.raw.quote(b.line))
      : [derive(`no ${frontend} in bpf lb list`, after.raw)];
  }
  evidence.cut_probes = probes.flatMap((p) => p.evidence);
  return {
    cut_node: far,
    cut_deleted: deleted,
    cut_slots_during: during,
    cut_slots_after: afterSlots,
    cut_remaining: remaining,
    cut_probes: probes.map((p) => p.probe),
  };
}
