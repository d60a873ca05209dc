/**
 * Topic "ghost" — The lab, step 7.
 * A Service without backends: refused at once (and by whom), or a timeout under the opt-in drop profile.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */

import { ciliumDbg } from "../../helpers/observe/agent.ts";
import { clusterIp } from "../../helpers/observe/cluster.ts";
import { DEADLINES, type RunContext, waitFor } from "../../helpers/observe/context.ts";
import { iptablesSave, onNode } from "../../helpers/observe/node.ts";
import { curlFrom, lbList, newerStep } from "../../helpers/observe/steps.ts";
import { ensureGhostAndProbe, WEB_PORT } from "../../helpers/observe/workloads.ts";
import { formatEndpoint } from "../../helpers/parse/address.ts";
import type { LbList } from "../../helpers/parse/bpf-lb-list.ts";
import { type AgentConfig, parseConfig } from "../../helpers/parse/config.ts";
import type { CurlResult } from "../../helpers/parse/curl.ts";
import { allRules, type IptablesSave, parseIptablesSave } from "../../helpers/parse/iptables-save.ts";
import type { ServiceList } from "../../helpers/parse/service-list.ts";
import { parseServiceListJson } from "../../helpers/parse/service-list-json.ts";
import { type U64, u64Compare, u64Diff } from "../../helpers/parse/u64.ts";
import {
  DROP_PROFILE,
  dp,
  dropProfile,
  dropProfileWaits,
  KN,
  LAB,
} from "../../helpers/properties/sources.ts";
import { findAgentService, RecordError } from "../../helpers/records/common.ts";
import { mergeDatapath } from "../../helpers/records/datapath.ts";
import type { DatapathRecord, Evidenced, GhostRecord, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";

export const topic = defineTopic({
  name: "ghost",
  title:
    "A Service without backends: refused at once (and by whom), or a timeout under the opt-in drop profile",
  source: LAB(7),
  deploys: ["ghost.yaml"],
  steps: [
    { on: "agent", run: "cilium-dbg service list -o json", for: "ghost's frontend (polled)" },
    { on: "pod", run: "curl -sS -v -o /dev/null --max-time 5", for: "connect from the probe Pod" },
    { on: "agent", run: "cilium-dbg config -a", for: "serviceNoBackendResponse" },
    { on: "node", run: "iptables-save", for: "kube-proxy's REJECT rule" },
    { on: "agent", run: "cilium-dbg bpf lb list", for: "ghost's entries in the LB map" },
    {
      on: "node",
      run: "iptables-save -c -t filter",
      for: "kube-proxy's REJECT counter before, between and after",
    },
    {
      on: "node",
      run: "curl -sS -v -o /dev/null --max-time 5",
      for: "probes from the node's host namespace",
    },
  ],
  builds: ["ghost", "datapath"],
  observe: observeGhost,
  properties: [
    {
      id: "ghost.no-backends",
      claim: "The agent lists the ghost ClusterIP with zero backends",
      source: LAB(7),
      expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 0 } },
      needs: ["ghost"],
      observe: (r) => ({ value: r.get("ghost").backends, evidence: r.evidence("ghost", "backends") }),
    },
    {
      id: "ghost.fails-fast",
      claim: "curl to the ghost ClusterIP fails at once with exit 7 (refused/unreachable), not 28 (timeout)",
      source: LAB(7),
      why: "socket LB answers EHOSTUNREACH at connect(); per-packet LB answers an ICMP reject (knowledge clusters.md §4.2, P12). Under the opt-in drop profile kpr still fails fast (the socket hook refuses whatever serviceNoBackendResponse says: bpf_sock.c, 1.19.7); only kube-proxy mode waits",
      expect: { kpr: { eq: 7 }, "kube-proxy": { eq: 7 } },
      needs: ["ghost"],
      observe: (r, mode) => {
        if (dropProfileWaits(r, mode)) return { value: null, evidence: [], skip: DROP_PROFILE };
        return { value: r.get("ghost").curl_exit, evidence: r.evidence("ghost", "curl_exit") };
      },
    },
    {
      id: "ghost.errno",
      claim:
        "The fast failure differs by path: socket LB refuses connect() with EHOSTUNREACH, per-packet LB answers an ICMP reject (ECONNREFUSED)",
      source: KN("clusters.md §4.2, P12 (bpf_sock.c returns -EHOSTUNREACH when a service has no backends)"),
      why: "Cilium 1.19.2 and 1.19.3 return EPERM instead: the socket hook's bpf_set_retval was compiled out (cilium issue 45184; fixed in 1.19.4 by PR 45673, upstream PR 45185)",
      expect: {
        kpr: {
          default: { eq: "EHOSTUNREACH" },
          byPatch: [
            {
              from: "1.19.2",
              to: "1.19.3",
              expect: { eq: "EPERM" },
              why: "cilium issue 45184: connect() fails with EPERM, not EHOSTUNREACH; fixed in 1.19.4 (PR 45673)",
            },
          ],
        },
        "kube-proxy": { eq: "ECONNREFUSED" },
      },
      needs: ["datapath"],
      observe: (r, mode) => {
        if (dropProfileWaits(r, mode)) return { value: null, evidence: [], skip: DROP_PROFILE };
        const errno = dp(r, "ghost_errno");
        return errno === null
          ? {
              value: null,
              evidence: [],
              skip: "curl printed no connect() errno (it needs -v); the exit code is judged by ghost.fails-fast",
            }
          : { value: errno, evidence: r.evidence("datapath", "ghost_errno") };
      },
    },
    {
      id: "ghost.seconds",
      claim: "The failure takes well under the 5 s limit",
      source: LAB(7),
      expect: { kpr: { lte: 1 }, "kube-proxy": { lte: 1 } },
      needs: ["ghost"],
      observe: (r, mode) => {
        if (dropProfileWaits(r, mode)) return { value: null, evidence: [], skip: DROP_PROFILE };
        return { value: r.get("ghost").seconds, evidence: r.evidence("ghost", "curl_exit") };
      },
    },
    {
      id: "ghost.no-backend-response",
      claim: "ServiceNoBackendResponse is reject (the chart default in 1.16–1.20)",
      source: LAB(7),
      expect: { kpr: { eq: "reject" }, "kube-proxy": { eq: "reject" } },
      needs: ["ghost"],
      observe: (r) => {
        if (dropProfile(r)) return { value: null, evidence: [], skip: DROP_PROFILE };
        return {
          value: r.get("ghost").no_backend_response,
          evidence: r.evidence("ghost", "no_backend_response"),
        };
      },
    },
    {
      id: "ghost.kube-proxy-reject-rule",
      claim:
        "kube-proxy adds a filter REJECT 'has no endpoints' rule for ghost; without kube-proxy there is none",
      source: KN("output-formats.md §8"),
      why: "one `has no endpoints` REJECT per Service port without endpoints (kube-proxy's proxier); recorded on the lab cluster",
      expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 1 } },
      needs: ["datapath"],
      observe: (r) => ({
        value: dp(r, "ghost_reject_rules"),
        evidence: r.evidence("datapath", "ghost_reject_rules"),
      }),
    },
    {
      id: "ghost.wildcard-entry",
      claim:
        "Since 1.19 each ClusterIP also gets a `<vip>:0/ANY` wildcard entry in bpf lb list that rejects unknown ports",
      source: KN("output-formats.md §2 (commit b3b0fc849f; from source, not yet seen on a release)"),
      expect: {
        kpr: {
          default: { eq: true },
          byMinor: { "1.16": { eq: false }, "1.17": { eq: false }, "1.18": { eq: false } },
        },
        "kube-proxy": {
          default: { eq: true },
          byMinor: { "1.16": { eq: false }, "1.17": { eq: false }, "1.18": { eq: false } },
        },
      },
      needs: ["datapath"],
      observe: (r) => ({
        value: dp(r, "ghost_wildcard_entry"),
        evidence: r.evidence("datapath", "ghost_wildcard_entry"),
      }),
    },
    {
      id: "ghost.reject-counter",
      claim:
        "kube-proxy's REJECT rule answers probes from a node's host namespace but not from a Pod (Cilium answers the Pod's packet first); without kube-proxy there is no such rule",
      source: KN("clusters.md §4.3"),
      why: "a Pod's packet meets bpf_lxc's per-packet LB, which replies for a Service without backends before netfilter sees it; the host's packet has no Cilium hook in front (KPR=false: no socket LB) and reaches kube-proxy's filter rule",
      expect: { kpr: { eq: "no REJECT rule" }, "kube-proxy": { eq: "host moves, Pod does not" } },
      needs: ["datapath"],
      observe: (r) => {
        const c = dp(r, "ghost_reject_counters");
        if (c === null)
          return {
            value: null,
            evidence: [],
            skip: "this bundle predates the REJECT-counter probes (no recorded call)",
          };
        const evidence = r.evidence("datapath", "ghost_reject_counters");
        if (c.rule === null) return { value: "no REJECT rule", evidence };
        if ([c.host_before, c.host_after, c.pod_before, c.pod_after].some((v) => v === null))
          return { value: "(a counter was not read)", evidence };
        const host = u64Diff(c.host_after as U64, c.host_before as U64);
        const pod = u64Diff(c.pod_after as U64, c.pod_before as U64);
        const hostMoved = u64Compare(host, c.host_probes) >= 0;
        const podMoved = u64Compare(pod, 0) > 0;
        const value =
          hostMoved && !podMoved
            ? "host moves, Pod does not"
            : `host +${host} for ${c.host_probes}, Pod +${pod} for ${c.pod_probes}`;
        return { value, evidence };
      },
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Lab step 7. */
export async function observeGhost(ctx: RunContext): Promise<RecordSet> {
  const probe = await ensureGhostAndProbe(ctx);
  const cip = await clusterIp(ctx, ctx.namespace, "ghost");
  const frontend = formatEndpoint(cip, WEB_PORT);
  const { value: services } = await waitFor(ctx, {
    what: `the agent on ${probe.node} to list ${frontend}`,
    deadlineMs: DEADLINES.mapConverged,
    intervalMs: 1000,
    probe: async () =>
      parseServiceListJson(await ciliumDbg(ctx, probe.node, ["service", "list", "-o", "json"])),
    done: (s) => s.services.some((x) => x.frontend === frontend),
    show: (s) => `${s.services.length} services, ${frontend} absent`,
  });
  const curl = await curlFrom(ctx, { kind: "pod", namespace: ctx.namespace, pod: "probe" }, `http://${cip}/`);
  const config = parseConfig(await ciliumDbg(ctx, probe.node, ["config", "-a"]));
  const ipt = parseIptablesSave(await iptablesSave(ctx, probe.node));
  const lb = await lbList(ctx, probe.node);
  // who answers: kube-proxy's REJECT counter around probes from the node's host namespace, then from the Pod
  const counters = await newerStep(ctx, "REJECT counters", async () => {
    const filter = async () =>
      parseIptablesSave((await onNode(ctx, probe.node, ["iptables-save", "-c", "-t", "filter"])).stdout);
    const url = `http://${cip}/`;
    const before = await filter();
    for (let i = 0; i < REJECT_PROBES; i++) await curlFrom(ctx, { kind: "node", node: probe.node }, url);
    const afterHost = await filter();
    for (let i = 0; i < REJECT_PROBES; i++)
      await curlFrom(ctx, { kind: "pod", namespace: ctx.namespace, pod: "probe" }, url);
    const afterPod = await filter();
    return { before, afterHost, afterPod };
  });
  return {
    ghost: buildGhostRecord({ clusterIp: cip, port: WEB_PORT, services, curl, config }),
    datapath: mergeDatapath([
      buildGhostFacts({ iptables: ipt, lb, clusterIp: cip, namespace: ctx.namespace }),
      { record: { ghost_errno: curl.errno }, evidence: { ghost_errno: curl.error ? [curl.error] : [] } },
      buildRejectCounterFacts({ counters, namespace: ctx.namespace, probes: REJECT_PROBES }),
    ]),
  };
}

const REJECT_PROBES = 3;

/** Ours: kube-proxy's "has no endpoints" REJECT rule for ghost, and its packet counter around each set of probes. */
export function buildRejectCounterFacts(input: {
  counters: { before: IptablesSave; afterHost: IptablesSave; afterPod: IptablesSave } | null;
  namespace: string;
  probes: number;
}): Evidenced<DatapathRecord> {
  if (!input.counters) return { record: { ghost_reject_counters: null }, evidence: {} };
  const rule = (s: IptablesSave) =>
    ghostRejectRules(s, input.namespace).find((r) => (r.comment ?? "").includes("has no endpoints"));
  const [b, h, p] = [
    rule(input.counters.before),
    rule(input.counters.afterHost),
    rule(input.counters.afterPod),
  ];
  return {
    record: {
      ghost_reject_counters: {
        rule: b ? b.text.replace(/^\[\d+:\d+\] /, "") : null,
        host_probes: input.probes,
        host_before: b?.packets ?? null,
        host_after: h?.packets ?? null,
        pod_probes: input.probes,
        pod_before: h?.packets ?? null,
        pod_after: p?.packets ?? null,
      },
    },
    evidence: {
      ghost_reject_counters: b
        ? [
            `before: ${b.text}`,
            `after ${input.probes} probes from the node: ${h?.text}`,
            `after ${input.probes} probes from the Pod: ${p?.text}`,
          ]
        : ["no REJECT rule for ghost in the filter table"],
    },
  };
}

/** Lab step 7. */
export function buildGhostRecord(input: {
  clusterIp: string;
  port: number;
  services: ServiceList;
  curl: CurlResult;
  config: AgentConfig;
}): Evidenced<GhostRecord> {
  const frontend = formatEndpoint(input.clusterIp, input.port);
  const svc = findAgentService(input.services, frontend, { type: "ClusterIP", protocol: "TCP" });
  if (!svc) throw new RecordError("ghost", "backends", `no ${frontend} entry in the agent's service list`);
  const nbr = input.config.options.ServiceNoBackendResponse;
  if (nbr === undefined)
    throw new RecordError(
      "ghost",
      "no_backend_response",
      "cilium-dbg config -a has no ServiceNoBackendResponse",
    );
  if (input.curl.timeTotal === null) throw new RecordError("ghost", "seconds", "curl printed no time_total");
  return {
    record: {
      cluster_ip: input.clusterIp,
      backends: svc.backends.length,
      curl_exit: input.curl.exitCode,
      seconds: input.curl.timeTotal,
      no_backend_response: nbr,
    },
    evidence: {
      backends: [`${svc.id} ${svc.frontend} ${svc.type} (${svc.backends.length} backends)`],
      curl_exit: [
        `curl exit=${input.curl.exitCode} time_total=${input.curl.timeTotal}`,
        ...(input.curl.error ? [input.curl.error] : []),
      ],
      no_backend_response: [`ServiceNoBackendResponse          : ${nbr}`],
    },
  };
}

/** Ours (ghost topic): kube-proxy's REJECT rules for ns/ghost and the 1.19+ `<vip>:0/ANY` entry. */
export function buildGhostFacts(input: {
  iptables: IptablesSave;
  lb: LbList;
  clusterIp: string;
  namespace: string;
}): Evidenced<DatapathRecord> {
  const rejects = ghostRejectRules(input.iptables, input.namespace);
  const wildcard = input.lb.services.find(
    (s) => s.frontend === formatEndpoint(input.clusterIp, 0) && s.protocol === "ANY",
  );
  return {
    record: { ghost_reject_rules: rejects.length, ghost_wildcard_entry: wildcard !== undefined },
    evidence: {
      ghost_reject_rules: rejects.map((r) => r.text),
      ghost_wildcard_entry: wildcard ? [`${wildcard.frontend}/ANY (0) [${wildcard.flags.join(", ")}]`] : [],
    },
  };
}

/** kube-proxy's REJECT rules for ns/ghost (it comments them `ns/ghost:port has no endpoints`). */
function ghostRejectRules(save: IptablesSave, namespace: string) {
  return allRules(save).filter((r) => r.target === "REJECT" && r.comment?.startsWith(`${namespace}/ghost`));
}
