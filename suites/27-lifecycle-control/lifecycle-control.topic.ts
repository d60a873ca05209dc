import { clusterIp, kubectl, pods } from "../../helpers/observe/cluster.ts";
import { type RunContext, waitFor, waitSettled } from "../../helpers/observe/context.ts";
import { onNode } from "../../helpers/observe/node.ts";
import { lbList, probeFrom, slotAddresses } from "../../helpers/observe/steps.ts";
import {
  apply,
  type Edge,
  ensureEdge,
  renderManifest,
  waitPodsReady,
} from "../../helpers/observe/workloads.ts";
import { formatEndpoint } from "../../helpers/parse/address.ts";
import { IPV4_SERVICE, requires } from "../../helpers/properties/requirements.ts";
import { UP } from "../../helpers/properties/sources.ts";
import { derive } from "../../helpers/records/evidence.ts";
import type { Evidence, Probe, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import { type LifecycleControlRecord, records } from "./lifecycle-control.records.ts";

const ANY = requires(IPV4_SERVICE);
const CUT = UP(
  "https://github.com/cilium/cilium/pull/44711 (a re-list after a watch is lost prunes what the API server no longer has; 1.19 as https://github.com/cilium/cilium/pull/45198)",
);

export const topic = defineTopic({
  name: "lifecycle-control",
  title: "When an agent loses the API server: a node cut from it while a Service's backend goes",
  source: CUT,
  deploys: ["edge.yaml", "lifecycle-control.yaml"],
  steps: [
    { on: "api", run: "get nodes", for: "the far node to cut, the edge node with lc-cut's Pods" },
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
    {
      on: "agent",
      run: "cilium-dbg bpf lb list",
      for: "lc-cut's slots on the far node: both Pods before the cut, then during and after it",
    },
    { on: "pod", run: "curl -sS -v --max-time 3", for: "lc-cut from the far node's Pod" },
  ],
  records,
  schedule: {
    alone:
      "cuts a node from the API server: another topic's Services, Pods and waits on that node would stall under it",
  },
  shared: { changes: ["kube-proxy service rules"] },
  observe: observeLifecycleControl,
  properties: [
    {
      id: "lifecycle-control.api-cut-no-stale-backend",
      claim:
        "A node's agent cut from the API server while a backend is deleted drops that backend once it is back: no stale backend in its LB map",
      source: CUT,
      why: "the cut holds the agent's watch back and it resumes after it (the cut is shorter than the agent's heartbeat reconnect: CUT_MS); the deleted endpoint's backend must then leave the map. A cut long enough for the re-list, where 1.19.0–1.19.2 kept the backend (PR 45198), is not run",
      expect: { kpr: { eq: "removed" }, "kube-proxy": { eq: "removed" } },
      config: { assumes: ANY },
      needs: ["lifecycleControl"],
      observe: (r) => {
        const v = r.get("lifecycleControl");
        if (v.cut_node === null)
          return { value: null, evidence: [], skip: "no node could be cut from the API server" };
        // the scenario itself: the map held the deleted backend while cut (else nothing was held back)
        if (v.cut_deleted === null || !v.cut_slots_during.includes(v.cut_deleted))
          return {
            value: `not held back: the cut node's map did not list the deleted ${v.cut_deleted ?? "backend"} during the cut (slots [${v.cut_slots_during.join(", ")}])`,
            evidence: r.evidence("lifecycleControl", "cut_slots_after"),
          };
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

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

export async function observeLifecycleControl(ctx: RunContext): Promise<RecordSet> {
  const edge = await ensureEdge(ctx);
  await apply(ctx, renderManifest("lifecycle-control.yaml", ctx.namespace, { EDGE_NODE: edge.edge.name }));
  await waitPodsReady(ctx, "app=lc-cut", 2);
  const evidence: Evidence<LifecycleControlRecord> = { ...edge.siteEvidence };
  const cut = await apiCut(ctx, edge, evidence);
  return { lifecycleControl: { record: { ...edge.site, ...cut }, evidence } };
}

/** How long one reading of the cut node's LB map may take during and after the cut. */
const CUT_READ_MS = 8000;

/**
 * How long the far node stays cut. The backend is deleted at its start, and its EndpointSlice changes within a
 * second or two, so the change is held back for most of the cut (the readings during it show the deleted backend
 * still in the map). 10 s, as the 15 s and 30 s before it, is short of the agent's own reconnect: its heartbeat asks
 * the API server only after 30 s without a successful call and gives up on it 30 s later, then closes every
 * connection (pkg/k8s/client/cell.go `runHeartbeat`, `k8s-heartbeat-timeout` 30 s). So each length tests the watch
 * held back and resumed, not the re-list; a cut long enough for the re-list would take over a minute of every run.
 * The watch resumes at its connection's next TCP retransmission, whose interval doubles while the cut drops them:
 * after a 15 s cut the agent dropped the deleted backend 11.5–13.8 s after the cut ended (the 12 runs of
 * 2026-12-07, every minor and mode), at its retransmission about 25 s after the first lost segment; after a 10 s cut
 * the one about 12.6 s after it comes first.
 */
const CUT_MS = 10_000;

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
  const showLb = (l: Awaited<ReturnType<typeof tryLb>>) =>
    "error" in l ? `unreadable: ${l.error}` : `[${slotsOf(l)?.join(", ")}]`;
  const before = await pods(ctx, ctx.namespace, "app=lc-cut");
  const both = before.map((p) => formatEndpoint(p.ip, 8080)).sort();
  // the far node's agent lists both Pods before it is cut: a Pod ready a moment ago may not be in its map yet, and
  // a backend it never had cannot be held back (a lab run cut it 0.2 s after the second Pod was ready: not shipped)
  await waitSettled(ctx, {
    what: `${far} listing lc-cut's two Pods [${both.join(", ")}] before the cut`,
    deadlineMs: 30_000,
    intervalMs: 1000,
    probe: tryLb,
    done: (l) => slotsOf(l)?.slice().sort().join() === both.join(),
    show: showLb,
  });
  for (const r of rules) await onNode(ctx, far, ["iptables", "-w", "-I", ...r]);
  let during: string[] = [];
  try {
    const t0 = ctx.now();
    await kubectl(ctx, ["-n", ctx.namespace, "scale", "deployment", "lc-cut", "--replicas=1"]);
    const { value } = await waitFor(ctx, {
      what: `${CUT_MS / 1000} s of ${far} cut from the API server (its LB map read meanwhile)`,
      deadlineMs: CUT_MS + 30_000,
      intervalMs: 3000,
      probe: tryLb,
      done: () => ctx.now() - t0 >= CUT_MS,
      show: showLb,
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
    show: showLb,
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
