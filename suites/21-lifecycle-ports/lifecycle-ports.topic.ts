// One file over 450 lines: a topic reads top to bottom in one file: its declaration, then its observation and builders (docs/contributing.md)
import { clusterIp, kubectl, pods } from "../../helpers/observe/cluster.ts";
import { type RunContext, waitSettled } from "../../helpers/observe/context.ts";
import { dropsDuring } from "../../helpers/observe/drops.ts";
import { iptablesSave } from "../../helpers/observe/node.ts";
import {
  lbList,
  newerStep,
  outsideAddress,
  type ProbeRead,
  probeFrom,
  slotAddresses,
} from "../../helpers/observe/steps.ts";
import {
  apply,
  type Edge,
  ensureEdge,
  ensureLbPool,
  lbRange,
  renderManifest,
  waitLbAddress,
  waitPodsReady,
} from "../../helpers/observe/workloads.ts";
import { formatEndpoint, parseEndpoint } from "../../helpers/parse/address.ts";
import { IPV4_SERVICE, requires } from "../../helpers/properties/requirements.ts";
import { UP } from "../../helpers/properties/sources.ts";
import type { Observation, RecordView } from "../../helpers/properties/types.ts";
import { derive, type EvidenceItem, RawText } from "../../helpers/records/evidence.ts";
import type { Evidence, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";

import { type LifecyclePortsRecord, records } from "./lifecycle-ports.records.ts";

const LC_NODE_PORT = 30791;
const PAIR_REQUESTS = 6;
const REUSE_PORTS = [40791, 40792];

const ANY = requires(IPV4_SERVICE);
const LSR = UP(
  "https://github.com/kubernetes/kubernetes/blob/v1.35.0/pkg/proxy/iptables/proxier.go (KUBE-FW chains for LoadBalancer VIPs only); Cilium docs, LoadBalancer Source Ranges Checks: https://docs.cilium.io/en/v1.20/network/kubernetes/kubeproxy-free/#loadbalancer-source-ranges-checks",
);
const EXTERNAL_IP_RANGES =
  "https://github.com/cilium/cilium/issues/44718; enforced on externalIPs by https://github.com/cilium/cilium/pull/44747 (1.20.0), never backported to 1.19 or 1.18 (pkg/loadbalancer/service.go GetSourceRangesEnabled at v1.19.7: LoadBalancer only)";
const NO_OUTSIDE = "the run had no client outside the nodes, or no LoadBalancer range of ours";

export const topic = defineTopic({
  name: "lifecycle-ports",
  title:
    "When ports and endpoints are reused: two Services over the same Pods, a source port reused to a NodePort, source ranges with an externalIP",
  source: LSR,
  deploys: ["edge.yaml", "lifecycle-ports.yaml", "lb-pool.yaml", "lifecycle-lsr.yaml"],
  steps: [
    { on: "api", run: "get nodes", for: "the edge node (backends) and the far node (client)" },
    {
      on: "kubectl",
      run: "-n <ns> patch service",
      for: "one of the pair loses its endpoints, then gets them back",
    },
    { on: "agent", run: "cilium-dbg bpf lb list", for: "the pair's and the NodePort's slots (polled)" },
    { on: "pod", run: "curl -sS -v --max-time 3", for: "the pair from the far Pod" },
    {
      on: "outside",
      run: "hostname -i",
      for: "the outside client's own address (its /32 is lc-lsr-in's range)",
    },
    { on: "local", run: "printenv LB_IP_RANGE", for: "the range of ours for the pool and the externalIP" },
    { on: "outside", run: "sh -c", for: "HTTP/1.0 to the NodePort from a fixed source port (nc -p)" },
    {
      on: "node",
      run: "iptables-save",
      for: "beside kube-proxy: its rules on the far node until none DNATs to the deleted backend (polled)",
    },
    {
      on: "agent",
      run: "cilium-dbg bpf metrics list -o json",
      for: "the two workers' drop counters before and after the source-port rounds and the source-range requests",
    },
    { on: "kubectl", run: "-n <ns> delete pod", for: "the backend that answered the first connection" },
    {
      on: "outside",
      run: "ip route replace",
      for: "the LoadBalancer and external addresses via the far node",
    },
    { on: "outside", run: "curl -sS -v --max-time 3", for: "the source-range Services from outside" },
  ],
  schedule: {
    after: ["iptables"],
    why: "its Services add KUBE-SVC lines iptables counts whole (ghost and translation, which count kube-proxy's counters whole, follow it); its out-of-range requests are dropped on purpose ('Denied by LB src range check', a reason the invariants expect); its Services, Pods, NodePort 30791, ports 81/82 at the external IP and the outside client's /32 routes to its own addresses are its own",
  },
  shared: { changes: ["kube-proxy service rules"] },
  records,
  observe: observeLifecyclePorts,
  properties: [
    {
      id: "lifecycle-ports.pair-longer-removed",
      claim:
        "Two Services select the same Pods (lc-pair and lc-pair-x): after lc-pair-x loses its endpoints, lc-pair answers every request",
      source: UP(
        "https://github.com/cilium/cilium/pull/43620 (backends shared by Services whose names share a prefix; 1.18.7, 1.19.0)",
      ),
      why: "a backend shared by two Services is released only when neither uses it",
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "HTTP 200" } },
      config: { assumes: ANY },
      needs: ["lifecyclePorts"],
      observe: (r) => allAnswer(r, "pair_after_longer_removed"),
    },
    {
      id: "lifecycle-ports.pair-shorter-removed",
      claim:
        "Two Services select the same Pods: after lc-pair loses its endpoints, lc-pair-x answers every request",
      source: UP("https://github.com/cilium/cilium/pull/43620"),
      why: "the same, the other way round: the Service whose name is the prefix goes first",
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "HTTP 200" } },
      config: { assumes: ANY },
      needs: ["lifecyclePorts"],
      observe: (r) => allAnswer(r, "pair_after_shorter_removed"),
    },
    {
      id: "lifecycle-ports.source-port-reuse",
      claim:
        "A client that comes back to a NodePort from the same source port after its backend was deleted is answered by a live backend",
      source: UP(
        "https://github.com/cilium/cilium/blob/v1.20.2/bpf/lib/lb.h (lb4_local: a CT entry whose backend is gone selects a new one); kernel conntrack (a SYN on a closed entry opens a new one)",
      ),
      why: "the old connection's conntrack entry (closed, not yet expired) must not pin the new connection to the deleted backend",
      expect: { kpr: { eq: "live backend" }, "kube-proxy": { eq: "live backend" } },
      config: { assumes: ANY },
      needs: ["lifecyclePorts"],
      observe: (r) => {
        const v = r.get("lifecyclePorts");
        if (v.reuse_rounds.length === 0) return { value: null, evidence: [], skip: NO_OUTSIDE };
        const bad = v.reuse_rounds.find(
          (x) => x.first_backend === null || x.second_backend === null || x.second_backend === x.deleted,
        );
        return {
          value: bad
            ? `round from port ${bad.source_port}: first ${bad.first_backend ?? "no answer"}, deleted ${bad.deleted ?? "-"}, then ${bad.second_backend ?? `no answer (exit ${bad.second_exit})`}`
            : "live backend",
          evidence: [
            ...r.evidence("lifecyclePorts", "reuse_rounds"),
            ...r.evidence("lifecyclePorts", "reuse_drops"),
          ],
        };
      },
    },
    {
      id: "lifecycle-ports.lsr-inside-range",
      claim:
        "The outside client inside loadBalancerSourceRanges is served at the LoadBalancer address and at the external IP",
      source: LSR,
      why: "the range lists the client's own address",
      expect: { kpr: { eq: "HTTP 200" }, "kube-proxy": { eq: "HTTP 200" } },
      config: { assumes: ANY },
      needs: ["lifecyclePorts"],
      observe: (r) => both(r, "lsr_in_lb", "lsr_in_external"),
    },
    {
      id: "lifecycle-ports.lsr-outside-range-lb",
      claim:
        "An outside client outside loadBalancerSourceRanges is turned away at the LoadBalancer address (dropped)",
      source: LSR,
      why: "kpr: nodeport_lb4 checks the source against the range (lb4_src_range_ok) and drops it; beside kube-proxy the KUBE-FW chain lets only the ranges into KUBE-EXT, the rest is dropped in KUBE-PROXY-FIREWALL",
      expect: { kpr: { eq: "TIMEOUT" }, "kube-proxy": { eq: "TIMEOUT" } },
      config: { assumes: ANY },
      needs: ["lifecyclePorts"],
      observe: (r) => verdict(r, "lsr_out_lb"),
    },
    {
      id: "lifecycle-ports.lsr-outside-range-external-ip",
      claim:
        "An outside client outside loadBalancerSourceRanges is turned away at the Service's external IP too, with kube-proxy replacement (an access control: an answer is a security failure); kube-proxy applies the ranges to LoadBalancer addresses only",
      source: LSR,
      why: "Cilium 1.20 enforces the ranges on every externally reachable frontend of a LoadBalancer Service, its externalIPs included (GetSourceRangesEnabled, PR 44747). kube-proxy: externalIPs jump to KUBE-EXT with no source check (proxier.go at v1.35.0), so the Service answers there: Kubernetes scopes the field to the load balancer",
      expect: {
        kpr: {
          default: { eq: "TIMEOUT" },
          byMinor: Object.fromEntries(
            ["1.18", "1.19"].map((m) => [
              m,
              {
                kind: "known-issue",
                expect: { eq: "HTTP 200" },
                claim:
                  "loadBalancerSourceRanges is not enforced on the Service's externalIPs: a client outside the range is served there (an access-control bypass)",
                why: "GetSourceRangesEnabled returns true for LoadBalancer frontends only (pkg/loadbalancer/service.go at v1.19.7 and v1.18.11)",
                upstream: EXTERNAL_IP_RANGES,
              },
            ]),
          ),
        },
        "kube-proxy": { eq: "HTTP 200" },
      },
      config: { assumes: ANY },
      needs: ["lifecyclePorts"],
      observe: (r) => verdict(r, "lsr_out_external"),
    },
  ],
});

// ── judges ──────────────────────────────────────────────────────────────────────────────────────

function allAnswer(
  r: RecordView,
  key: "pair_after_longer_removed" | "pair_after_shorter_removed",
): Observation {
  const ps = r.get("lifecyclePorts")[key];
  const bad = ps.find((p) => p.verdict !== "HTTP 200");
  return {
    value:
      ps.length === 0
        ? "not asked"
        : bad
          ? `${bad.verdict} (${ps.filter((p) => p.verdict === "HTTP 200").length} of ${ps.length} answered)`
          : "HTTP 200",
    evidence: r.evidence("lifecyclePorts", key),
  };
}

function verdict(
  r: RecordView,
  key: "lsr_out_lb" | "lsr_out_external" | "lsr_in_lb" | "lsr_in_external",
): Observation {
  const p = r.get("lifecyclePorts")[key];
  if (!p) return { value: null, evidence: [], skip: NO_OUTSIDE };
  return {
    value: p.verdict,
    evidence: [
      ...r.evidence("lifecyclePorts", key),
      ...r.evidence("lifecyclePorts", "outside_ip"),
      // the turned-away client's packets: dropped at the range check (the access control) or not
      ...(key.startsWith("lsr_out") ? r.evidence("lifecyclePorts", "lsr_drops") : []),
    ],
  };
}

function both(r: RecordView, a: "lsr_in_lb", b: "lsr_in_external"): Observation {
  const [pa, pb] = [r.get("lifecyclePorts")[a], r.get("lifecyclePorts")[b]];
  if (!pa || !pb) return { value: null, evidence: [], skip: NO_OUTSIDE };
  const ev = [
    ...r.evidence("lifecyclePorts", a),
    ...r.evidence("lifecyclePorts", b),
    ...r.evidence("lifecyclePorts", "outside_ip"),
  ];
  return {
    value:
      pa.verdict === pb.verdict
        ? pa.verdict
        : `${pa.verdict} at the LB address, ${pb.verdict} at the external IP`,
    evidence: ev,
  };
}

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** The pair, the reused source port, then the source ranges, each observed before the next. */
export async function observeLifecyclePorts(ctx: RunContext): Promise<RecordSet> {
  const edge = await ensureEdge(ctx);
  await apply(ctx, renderManifest("lifecycle-ports.yaml", ctx.namespace, { EDGE_NODE: edge.edge.name }));
  await waitPodsReady(ctx, "app=lc-pair", 2);
  await waitPodsReady(ctx, "app=lc-reuse", 2);
  const evidence: Evidence<LifecyclePortsRecord> = { ...edge.siteEvidence };
  const longer = await pairRound(ctx, edge, "lc-pair-x", "lc-pair");
  const shorter = await pairRound(ctx, edge, "lc-pair", "lc-pair-x");
  evidence.pair_after_longer_removed = longer.flatMap((p) => p.evidence);
  evidence.pair_after_shorter_removed = shorter.flatMap((p) => p.evidence);
  const outside = await outsideAddress(ctx);
  const workers = [edge.edge, edge.far];
  const reuse = outside
    ? await dropsDuring(ctx, workers, "the source-port rounds", () => reuseRounds(ctx, edge, evidence))
    : null;
  const lsr = outside
    ? await dropsDuring(ctx, workers, "the source-range requests", () =>
        sourceRanges(ctx, edge, outside.ip, evidence),
      )
    : null;
  if (outside) evidence.outside_ip = outside.evidence;
  if (reuse) evidence.reuse_drops = reuse.evidence;
  if (lsr) evidence.lsr_drops = lsr.evidence;
  const record: LifecyclePortsRecord = {
    ...edge.site,
    pair_after_longer_removed: longer.map((p) => p.probe),
    pair_after_shorter_removed: shorter.map((p) => p.probe),
    reuse_rounds: reuse?.value ?? [],
    outside_ip: outside?.ip ?? null,
    lsr_in_lb: lsr?.value?.inLb ?? null,
    lsr_in_external: lsr?.value?.inExt ?? null,
    lsr_out_lb: lsr?.value?.outLb ?? null,
    lsr_out_external: lsr?.value?.outExt ?? null,
    ...(reuse ? { reuse_drops: reuse.drops } : {}),
    ...(lsr ? { lsr_drops: lsr.drops } : {}),
  };
  return { lifecyclePorts: { record, evidence } };
}

const farPod = (ctx: RunContext, edge: Edge) => ({
  kind: "pod" as const,
  namespace: ctx.namespace,
  pod: edge.client.name,
});

/** `gone` loses its endpoints (selector patched to nothing), `kept` is asked PAIR_REQUESTS times, then `gone` is put back. */
async function pairRound(ctx: RunContext, edge: Edge, gone: string, kept: string): Promise<ProbeRead[]> {
  const patch = (svc: string, app: string) =>
    kubectl(ctx, [
      "-n",
      ctx.namespace,
      "patch",
      "service",
      svc,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { selector: { app } } }),
    ]);
  const [goneIp, keptIp] = [
    await clusterIp(ctx, ctx.namespace, gone),
    await clusterIp(ctx, ctx.namespace, kept),
  ];
  await patch(gone, "lc-none");
  await waitSettled(ctx, {
    what: `${gone} without backends on ${edge.far.name}`,
    deadlineMs: 30_000,
    intervalMs: 1000,
    probe: () => lbList(ctx, edge.far.name),
    done: (l) => slotAddresses(l.parsed, `${goneIp}:80`).length === 0,
    show: (l) =>
      `${gone} [${slotAddresses(l.parsed, `${goneIp}:80`).join(", ")}], ${kept} [${slotAddresses(l.parsed, `${keptIp}:80`).join(", ")}]`,
  });
  const out: ProbeRead[] = [];
  for (let i = 0; i < PAIR_REQUESTS; i++)
    out.push(await probeFrom(ctx, farPod(ctx, edge), "pod far", `http://${keptIp}/hostname`, { maxTime: 3 }));
  await patch(gone, "lc-pair");
  return out;
}

/** Plain HTTP/1.0 from the outside client's fixed source port (the server closes first: no TIME_WAIT on the client). */
async function fromPort(ctx: RunContext, port: number, to: string) {
  const at = parseEndpoint(to);
  if (!at) throw new Error(`not an address:port: ${to}`);
  const [host, p] = [at.ip, at.port];
  const r = await ctx.exec.run({
    target: { kind: "outside" },
    argv: [
      "sh",
      "-c",
      `printf 'GET /hostname HTTP/1.0\\r\\n\\r\\n' | nc -p ${port} -w 3 ${host} ${p} | tail -n 1`,
    ],
  });
  const raw = RawText.stdout(r);
  const line = raw.find((l) => /^[a-z0-9-]+$/.test(l.trim()));
  return {
    backend: line ? line.quote.trim() : null,
    exit: r.exitCode ?? -1,
    evidence: line ? [line] : [derive(`no answer from ${to} (exit ${r.exitCode})`, raw)],
  };
}

/**
 * Waits until the deleted backend has left what serves the NodePort on the far node: Cilium's LB map with kube-proxy
 * replacement, kube-proxy's rules beside it (its iptables mode: no rule DNATs to the address; Cilium's map has no
 * NodePort frontend then, which made a run on the lab race kube-proxy's sync and send the second SYN to the deleted
 * Pod). A bundle recorded before this wait read kube-proxy's rules gives way in a replay.
 */
async function victimGone(ctx: RunContext, edge: Edge, np: string, ip: string): Promise<void> {
  const far = edge.far.name;
  if (ctx.mode === "kpr") {
    await waitSettled(ctx, {
      what: `${ip}:8080 out of ${np} on ${far}`,
      deadlineMs: 30_000,
      intervalMs: 250,
      probe: () => lbList(ctx, far),
      done: (l) => !slotAddresses(l.parsed, np).includes(formatEndpoint(ip, 8080)),
      show: (l) => `[${slotAddresses(l.parsed, np).join(", ")}]`,
    });
    return;
  }
  const dnat = `--to-destination ${formatEndpoint(ip, 8080)}`;
  await newerStep(ctx, `kube-proxy's rules on ${far}`, () =>
    waitSettled(ctx, {
      what: `kube-proxy's rules on ${far} without ${ip}:8080`,
      deadlineMs: 30_000,
      intervalMs: 500,
      probe: () => iptablesSave(ctx, far),
      done: (text) => !text.includes(dnat),
      show: (text) => `${text.split("\n").filter((l) => l.includes(dnat)).length} rule(s) DNAT to it`,
    }),
  );
}

/** Connect from a fixed port, delete the backend that answered, and come back from the same port once it left the map. */
async function reuseRounds(
  ctx: RunContext,
  edge: Edge,
  evidence: Evidence<LifecyclePortsRecord>,
): Promise<LifecyclePortsRecord["reuse_rounds"]> {
  const np = formatEndpoint(edge.far.internalIp, LC_NODE_PORT);
  const rounds: LifecyclePortsRecord["reuse_rounds"] = [];
  const ev: EvidenceItem[] = [];
  for (const port of REUSE_PORTS) {
    await waitPodsReady(ctx, "app=lc-reuse", 2);
    const first = await fromPort(ctx, port, np);
    ev.push(...first.evidence);
    const victim = first.backend
      ? (await pods(ctx, ctx.namespace, "app=lc-reuse")).find((p) => p.name === first.backend)
      : undefined;
    if (victim) {
      await kubectl(ctx, ["-n", ctx.namespace, "delete", "pod", victim.name, "--wait=false"]);
      await victimGone(ctx, edge, np, victim.ip);
    }
    const second = await fromPort(ctx, port, np);
    ev.push(...second.evidence);
    ctx.log(
      `source port ${port}: ${first.backend ?? "no answer"}, deleted, then ${second.backend ?? "no answer"}`,
    );
    rounds.push({
      source_port: port,
      first_backend: first.backend,
      deleted: victim?.name ?? null,
      second_backend: second.backend,
      second_exit: second.exit,
    });
  }
  evidence.reuse_rounds = ev;
  return rounds;
}

/** lc-lsr-in (the client's /32) and lc-lsr-out (another address) from outside, at their LB addresses and the external IP. */
async function sourceRanges(
  ctx: RunContext,
  edge: Edge,
  client: string,
  evidence: Evidence<LifecyclePortsRecord>,
) {
  const range = await lbRange(ctx, edge);
  if ("none" in range) {
    ctx.log(range.none);
    return null;
  }
  await ensureLbPool(ctx, range);
  const other = client.replace(/\d+$/, (n) => String((Number(n) % 250) + 1));
  await apply(
    ctx,
    renderManifest("lifecycle-lsr.yaml", ctx.namespace, {
      POOL: range.pool,
      EXTERNAL_IP: range.externalIp,
      IN_RANGE: `${client}/32`,
      OUT_RANGE: `${other}/32`,
    }),
  );
  const [inLb, outLb] = [await waitLbAddress(ctx, "lc-lsr-in"), await waitLbAddress(ctx, "lc-lsr-out")];
  for (const ip of [inLb.ip, outLb.ip, range.externalIp])
    await ctx.exec.run({
      target: { kind: "outside" },
      argv: ["ip", "route", "replace", `${ip}/32`, "via", edge.far.internalIp],
    });
  // the served pair first: once both answer, the far node has programmed both Services
  const url = (ip: string, port: number) => `http://${formatEndpoint(ip, port)}/hostname`;
  const ask = (u: string) => probeFrom(ctx, { kind: "outside" }, "outside", u, { maxTime: 3 });
  const { value: served } = await waitSettled(ctx, {
    what: "lc-lsr-in answering the outside client at its LB address and the external IP",
    deadlineMs: 30_000,
    intervalMs: 1000,
    probe: async () => Promise.all([ask(url(inLb.ip, 81)), ask(url(range.externalIp, 81))]),
    done: ([a, b]) => a.probe.verdict === "HTTP 200" && b.probe.verdict === "HTTP 200",
    show: ([a, b]) => `${a.probe.verdict}, ${b.probe.verdict}`,
  });
  const [outLbProbe, outExtProbe] = await Promise.all([
    ask(url(outLb.ip, 82)),
    ask(url(range.externalIp, 82)),
  ]);
  evidence.lsr_in_lb = served[0].evidence;
  evidence.lsr_in_external = served[1].evidence;
  evidence.lsr_out_lb = outLbProbe.evidence;
  evidence.lsr_out_external = outExtProbe.evidence;
  return {
    inLb: served[0].probe,
    inExt: served[1].probe,
    outLb: outLbProbe.probe,
    outExt: outExtProbe.probe,
  };
}
