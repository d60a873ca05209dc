/**
 * Topic "measure-latency" — The lab, steps 3 and 7, timed.
 * How fast the datapath follows: endpoint changes into every agent's map, and how soon a Service without backends fails.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */

import type { MeasureLatencyRecord } from "../../helpers/measure/records.ts";
import { percentile } from "../../helpers/measure/stats.ts";
import {
  agentNodes,
  benchAddress,
  CONVERGENCE_EVENTS,
  deleteMeasurement,
  GHOST_PROBES,
  LATENCY_LABEL,
  service,
  slice,
} from "../../helpers/measure/workloads.ts";
import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { clusterIp, kubectl, kubectlRaw, nodes } from "../../helpers/observe/cluster.ts";
import type { RunContext } from "../../helpers/observe/context.ts";
import { iptablesSaveRaw } from "../../helpers/observe/node.ts";
import { type CurlRead, curlRead } from "../../helpers/observe/steps.ts";
import { ensureGhostAndProbe } from "../../helpers/observe/workloads.ts";
import { formatEndpoint } from "../../helpers/parse/address.ts";
import { parseBpfLbList } from "../../helpers/parse/bpf-lb-list.ts";
import { parseConfig } from "../../helpers/parse/config.ts";
import { curlArgv } from "../../helpers/parse/curl.ts";
import { ReplayExhausted } from "../../helpers/poll.ts";
import type { ByVersion } from "../../helpers/properties/expectation.ts";
import {
  HOSTNS_ONLY_SOCKET_LB,
  hostnsOnlyWhy,
  POD_SOCKET_LB,
  requires,
} from "../../helpers/properties/requirements.ts";
import {
  CONVERGENCE_TOLERANCE,
  FAST_FAIL_TOLERANCE,
  ICMP_TAIL_UPSTREAM,
  ICMP_TAIL_WHY,
  LAB,
  NB,
} from "../../helpers/properties/sources.ts";
import {
  callPlace,
  derive,
  type EvidenceItem,
  type Place,
  type Quote,
  read,
} from "../../helpers/records/evidence.ts";
import type { RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import { kubeProxyInIptables } from "../00-config/config.records.ts";
import { DROP_PROFILE, dropProfileWaits } from "../07-ghost/ghost.records.ts";
import { records } from "./measure-latency.records.ts";

/** Probes to make when every one times out (exit 28) before stopping: enough to show it is every probe. */
const TIMEOUT_PROBES = 3;

/**
 * What a Pod's probes of a Service without backends give when its packets are translated (per-packet LB in
 * bpf_lxc): beside kube-proxy, and in kpr with socket LB for the host namespace only. Declared once, so Cilium
 * 1.20.2's lost ICMP reject is the same known issue in both places.
 */
const P90_PER_PACKET: ByVersion = {
  default: { lte: 0.1 },
  byPatch: [
    {
      from: "1.20.2",
      to: "1.20.2",
      kind: "known-issue",
      expect: { eq: "exit codes 28" },
      claim: "every one of the 20 probes times out (exit 28): the ICMP reject never reaches the Pod",
      why: ICMP_TAIL_WHY,
      upstream: ICMP_TAIL_UPSTREAM,
    },
  ],
};

/**
 * Who refuses the probe Pod's connect() (issue 25): kpr assumes socket LB translates a Pod's sockets (on, full
 * coverage), kube-proxy mode that nothing does (off). Host-namespace-only coverage leaves the Pod's connect() to
 * per-packet LB: those runs get the kube-proxy mode's expectation (bpf_sock.c, bpf_lxc.c: ENABLE_SOCKET_LB_HOST_ONLY).
 */
const POD_LB = requires(POD_SOCKET_LB);
const HOSTNS_ONLY = HOSTNS_ONLY_SOCKET_LB;
const HOSTNS_ONLY_WHY = hostnsOnlyWhy(
  "(bpf_sock.c __sock4_xlate_fwd returns -ENXIO for `is_defined(ENABLE_SOCKET_LB_HOST_ONLY) && !in_hostns`, before its no-backend check), so the probe Pod's SYN meets bpf_lxc's per-packet LB (ENABLE_PER_PACKET_LB with ENABLE_SOCKET_LB_HOST_ONLY, bpf_lxc.c), which answers it as beside kube-proxy (https://github.com/cilium/cilium/blob/v1.20.2/bpf/bpf_sock.c#L322, https://github.com/cilium/cilium/blob/v1.20.2/bpf/bpf_lxc.c#L91)",
);

export const topic = defineTopic({
  name: "measure-latency",
  title:
    "How fast the datapath follows: endpoint changes into every agent's map, and how soon a Service without backends fails",
  source: LAB(7),
  deploys: [
    "ghost.yaml",
    "generated: one Service whose EndpointSlice gains one endpoint per event (helpers/measure/workloads.ts)",
  ],
  steps: [
    { on: "agent", run: "cilium-dbg bpf lb list", for: "each new backend in every agent (polled)" },
    { on: "pod", run: "curl -sS -o /dev/null --max-time 5 -w", for: "connects to ghost, timed" },
    { on: "agent", run: "cilium-dbg config -a", for: "serviceNoBackendResponse" },
    { on: "node", run: "iptables-save", for: "kube-proxy's endpoint rules, for comparison" },
    {
      on: "api",
      run: "bulk-delete services,endpointslices -n <ns> -l dpc-measure=latency",
      for: "removing the measurement's Service and EndpointSlice",
    },
  ],
  records,
  schedule: {
    alone:
      "p90 timings (map and kube-proxy convergence, the ghost's fail-fast) measured with nothing else loading two cores; it also reuses ghost's Service and probe Pod and deletes them",
  },
  observe: observeLatency,
  properties: [
    {
      id: "measure.map-convergence-p90",
      tolerance: CONVERGENCE_TOLERANCE,
      claim:
        "From EndpointSlice update to the backend slot in every agent's map: p90 over 10 events, generous ceiling 10 s (kind)",
      source: LAB(3),
      why: "the lab's 'when you add replicas, the map knows first'; measured, so a regression shows in `compare`",
      expect: { kpr: { lte: 10_000 }, "kube-proxy": { lte: 10_000 } },
      config: "none",
      needs: ["latency"],
      observe: (r) => {
        const l = r.get("latency");
        return {
          value: l.map_p90_ms,
          evidence: [...r.evidence("latency", "map_p90_ms"), ...r.evidence("latency", "events")],
        };
      },
    },
    {
      id: "measure.kube-proxy-convergence-p90",
      tolerance: CONVERGENCE_TOLERANCE,
      claim:
        "From EndpointSlice update to the KUBE-SEP DNAT rule on the node: p90 over 10 events, ceiling 10 s",
      source: NB("§3"),
      expect: { kpr: { na: "no kube-proxy in this mode" }, "kube-proxy": { lte: 10_000 } },
      config: {
        // timed to the KUBE-SEP DNAT rule in iptables-save: nftables mode's endpoint chains and ipvs mode's real
        // servers are not modelled here
        assumes: { "kube-proxy": { kubeProxy: ["iptables"] } },
      },
      needs: ["latency"],
      observe: (r) => ({
        value: r.get("latency").kube_proxy_p90_ms,
        evidence: [...r.evidence("latency", "kube_proxy_p90_ms"), ...r.evidence("latency", "events")],
      }),
    },
    {
      id: "measure.ghost-fail-fast-p90",
      tolerance: FAST_FAIL_TOLERANCE,
      claim:
        "Over 20 probes, a Service without backends fails in well under a second (p90 ≤ 0.1 s), every probe with exit 7",
      source: LAB(7),
      why: "recorded on the lab cluster: p90 0.12–0.3 ms, every probe ≤ 1.4 ms (80 probes, four bundles); 0.1 s is the bound ghost.seconds holds every probe to (a refusal needs no round trip off the node; TCP's first retransmission comes after 1 s, RFC 6298 §2.1)",
      expect: {
        kpr: { lte: 0.1 },
        "kube-proxy": P90_PER_PACKET,
      },
      config: {
        assumes: POD_LB,
        cases: [
          {
            when: HOSTNS_ONLY,
            expect: { kpr: P90_PER_PACKET },
            claim:
              "Over 20 probes from a Pod, a Service without backends fails in well under a second (p90 ≤ 0.1 s), every probe with exit 7: socket LB covers only the host namespace, so bpf_lxc rejects each SYN per packet",
            why: HOSTNS_ONLY_WHY,
          },
        ],
      },
      needs: ["latency"],
      observe: (r, mode) => {
        if (dropProfileWaits(r, mode)) return { value: null, evidence: [], skip: DROP_PROFILE };
        const l = r.get("latency");
        const allSeven = l.ghost_exit_codes.length === 1 && l.ghost_exit_codes[0] === 7;
        return {
          value: allSeven ? l.ghost_p90_s : `exit codes ${l.ghost_exit_codes.join(",")}`,
          evidence: [
            ...r.evidence("latency", "ghost_p90_s"),
            ...r.evidence("latency", "ghost_exit_codes"),
            ...r.evidence("latency", "ghost_seconds"),
          ],
        };
      },
    },
    {
      id: "measure.ghost-drop-timeout",
      tolerance: { factor: 1.5, floor: 0, unit: "s" },
      claim:
        "Opt-in drop profile (serviceNoBackendResponse=drop): per-packet LB drops the SYN and every probe waits for curl's 5 s limit; socket LB still refuses every connect() at once",
      source: LAB(7),
      why: "the lab's 'if the datapath silently drops the packet, the client waits until the timeout' holds where a packet is dropped (kube-proxy mode: bpf_lxc's per-packet LB); with kpr the connect() hook returns EHOSTUNREACH for a Service without backends whatever serviceNoBackendResponse says (bpf_sock.c in 1.19.7: enable-no-service-endpoints-routable, default true), so nothing waits. Judged on every probe, not the median: curl's --max-time 5 ends a waiting probe at 5 s (20 recorded probes: 5.0029–5.0066 s in a lab run; suites/bundles/1.19/drop-kube-proxy holds three more, 5.0005–5.0016 s), so ≥ 4.9 s leaves 0.1 s for timer granularity and fails any probe that was answered at all; kpr's probes are held to ghost.seconds' 0.1 s (20 recorded: 0.06–1.4 ms); probing stops after 3 probes that all waited (20 × 5 s showed nothing the first 3 did not)",
      expect: { kpr: { each: { lte: 0.1 } }, "kube-proxy": { each: { gte: 4.9 } } },
      config: {
        assumes: POD_LB,
        cases: [
          {
            when: HOSTNS_ONLY,
            expect: { kpr: { each: { gte: 4.9 } } },
            claim:
              "Opt-in drop profile: socket LB covers only the host namespace, so bpf_lxc's per-packet LB drops the Pod's SYN and every probe waits for curl's 5 s limit, as beside kube-proxy",
            why: HOSTNS_ONLY_WHY,
          },
        ],
      },
      needs: ["latency"],
      observe: (r) => {
        const l = r.get("latency");
        if (l.no_backend_response !== "drop") {
          return {
            value: null,
            evidence: [],
            skip: "runs in the opt-in drop profile only (NO_BACKEND_RESPONSE=drop); the default reject profile fails fast",
          };
        }
        return {
          value: l.ghost_seconds,
          evidence: [
            ...r.evidence("latency", "no_backend_response"),
            ...r.evidence("latency", "ghost_seconds"),
          ],
        };
      },
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Issue 6: endpoint → map convergence (and → KUBE-SEP with kube-proxy) over repeated events; ghost fail-fast times. */
export async function observeLatency(ctx: RunContext): Promise<RecordSet> {
  // kube-proxy's DNAT rules are read from iptables only where kube-proxy writes them there (not nftables mode)
  const iptablesProxy = kubeProxyInIptables(ctx);
  const agents = await agentNodes(ctx);
  const node = agents[0] as string;
  const svc = "dpc-c";
  const addrs = (k: number) => Array.from({ length: k }, (_, i) => benchAddress(i + 1, 19));
  await kubectl(
    ctx,
    ["apply", "-f", "-"],
    JSON.stringify({
      apiVersion: "v1",
      kind: "List",
      items: [service(ctx.namespace, svc, "latency"), slice(ctx.namespace, svc, "latency", addrs(1))],
    }),
  );
  const vip = await clusterIp(ctx, ctx.namespace, svc);
  const frontend = formatEndpoint(vip, 80);
  const events: MeasureLatencyRecord["events"] = [];
  const eventEvidence: EvidenceItem[] = [];
  for (let k = 2; k <= CONVERGENCE_EVENTS + 1; k++) {
    const address = formatEndpoint(benchAddress(k, 19), 8080);
    const applied = await kubectlRaw(
      ctx,
      ["apply", "-f", "-"],
      JSON.stringify(slice(ctx.namespace, svc, "latency", addrs(k))),
    );
    // times are the calls' recorded end times: a replay reproduces them to the millisecond
    const t0 = ctx.recordedAt();
    const mapMs: Record<string, number | null> = Object.fromEntries(agents.map((a) => [a, null]));
    let kpMs: number | null = null;
    const found: Quote[] = [];
    const deadline = ctx.now() + 30_000;
    const spentBefore = ctx.spent().count;
    while (ctx.now() < deadline) {
      for (const a of agents) {
        if (mapMs[a] !== null) continue;
        const raw = await ciliumDbgRaw(ctx, a, ["bpf", "lb", "list"]);
        const row = parseBpfLbList(raw.text)
          .services.find((s) => s.frontend === frontend)
          ?.backends.find((b) => b.address === address);
        if (row) {
          mapMs[a] = ctx.recordedAt() - t0;
          found.push(raw.quote(row.line));
        }
      }
      if (iptablesProxy && kpMs === null) {
        const raw = await iptablesSaveRaw(ctx, node);
        const dnat = raw.find((l) => l.includes(`--to-destination ${address}`));
        if (dnat) {
          kpMs = ctx.recordedAt() - t0;
          found.push(dnat);
        }
      }
      if (Object.values(mapMs).every((v) => v !== null) && (!iptablesProxy || kpMs !== null)) break;
      const spent = ctx.spent();
      if (spent.count > spentBefore)
        throw new ReplayExhausted(`${address} in every agent's map`, spent.key, JSON.stringify(mapMs));
      await ctx.sleep(200);
    }
    events.push({ index: k - 1, address, map_ms: mapMs, kube_proxy_ms: kpMs });
    // the apply names the start; each quoted row is the read that found the backend (its call's end time)
    eventEvidence.push(
      derive(
        `#${k - 1} ${address}: maps ${JSON.stringify(mapMs)} ms${kpMs !== null ? `, KUBE-SEP ${kpMs} ms` : ""} (from the apply's end to each read's end)`,
        applied,
        found,
      ),
    );
    ctx.log(
      `event ${k - 1}: ${address} in the maps after ${JSON.stringify(mapMs)} ms${iptablesProxy ? `, KUBE-SEP after ${kpMs} ms` : ""}`,
    );
  }
  await deleteMeasurement(ctx, LATENCY_LABEL);
  await ensureGhostAndProbe(ctx);
  const ghost = await clusterIp(ctx, ctx.namespace, "ghost");
  const probes: CurlRead[] = [];
  const calls: Place[] = [];
  for (let i = 0; i < GHOST_PROBES; i++) {
    const r = await ctx.exec.run({
      target: { kind: "pod", namespace: ctx.namespace, pod: "probe" },
      argv: curlArgv(`http://${ghost}/`, { verbose: false }),
    });
    probes.push(curlRead(r));
    calls.push(callPlace(r));
    // probes that each wait out curl's limit tell nothing more after a few: stop (the drop profile, 1.20.2's
    // lost reject with KPR=false) instead of spending 20 × 5 s
    if (probes.length >= TIMEOUT_PROBES && probes.every((c) => c.exitCode === 28)) {
      ctx.log(
        `the first ${probes.length} ghost probes all waited for curl's limit (exit 28): stopping there`,
      );
      break;
    }
  }
  const seconds = probes.map((c) => c.timeTotal ?? Number.NaN);
  const exits = probes.map((c) => c.exitCode);
  const config = read(await ciliumDbgRaw(ctx, node, ["config", "-a"]), parseConfig);
  const all = events.flatMap((e) => Object.values(e.map_ms).map((v) => v ?? Number.POSITIVE_INFINITY));
  const kp = events.map((e) => e.kube_proxy_ms).filter((v): v is number => v !== null);
  const kpAll = kp.length === events.length ? kp : [...kp, Number.POSITIVE_INFINITY];
  const nodeCount = (await nodes(ctx)).length;
  const writeOuts = probes.flatMap((c): EvidenceItem[] => {
    const w = c.at.writeOut;
    return w ? [c.stdout.quote(w.line)] : [derive("curl printed no time_total", c.stdout)];
  });
  const nbr = config.parsed.lines.ServiceNoBackendResponse;
  const record: MeasureLatencyRecord = {
    events,
    map_p50_ms: percentile(all, 50),
    map_p90_ms: percentile(all, 90),
    kube_proxy_p50_ms: iptablesProxy ? percentile(kpAll, 50) : null,
    kube_proxy_p90_ms: iptablesProxy ? percentile(kpAll, 90) : null,
    ghost_seconds: seconds,
    ghost_p50_s: percentile(seconds, 50),
    ghost_p90_s: percentile(seconds, 90),
    ghost_exit_codes: [...new Set(exits)].sort(),
    no_backend_response: config.parsed.options.ServiceNoBackendResponse ?? null,
  };
  return {
    latency: {
      record,
      evidence: {
        events: eventEvidence,
        map_p90_ms: [
          derive(
            `p50 ${record.map_p50_ms} ms, p90 ${record.map_p90_ms} ms over ${all.length} reads (${events.length} events × ${agents.length} agents; ${nodeCount} nodes)`,
            eventEvidence,
          ),
        ],
        kube_proxy_p90_ms: iptablesProxy
          ? [
              derive(
                `p50 ${record.kube_proxy_p50_ms} ms, p90 ${record.kube_proxy_p90_ms} ms over ${events.length} events`,
                eventEvidence,
              ),
            ]
          : [],
        ghost_seconds: writeOuts,
        ghost_p90_s: [
          derive(
            `p50 ${record.ghost_p50_s} s, p90 ${record.ghost_p90_s} s over ${seconds.length} probes`,
            writeOuts,
          ),
        ],
        ghost_exit_codes: [
          derive(`exit codes ${record.ghost_exit_codes.join(",")} over ${exits.length} probes`, calls),
        ],
        no_backend_response: nbr !== undefined ? [config.raw.quote(nbr)] : [],
      },
    },
  };
}
