/**
 * Topic "external-ip" — issue 34: a ClusterIP Service with an externalIP from our range (spec.externalIPs), reached
 * from a Pod on a node without a backend and from that node's host namespace: who translates it (the agent's LB map
 * or kube-proxy's rules). With socket LB the connect() to an externalIP that is no address of the client's node is
 * left untranslated on purpose (the CVE-2020-8554 mitigation); beside kube-proxy it is DNATed.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds, then each
 * property with its claim, source, expectation per mode, per Cilium version and per configuration, and how it is
 * judged. The observation code and the record builder follow the declaration.
 */
import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { type RunContext, waitSettled } from "../../helpers/observe/context.ts";
import { iptablesSaveRaw } from "../../helpers/observe/node.ts";
import { type ProbeRead, probeFrom } from "../../helpers/observe/steps.ts";
import { apply, type Edge, ensureEdge, lbRange, renderManifest } from "../../helpers/observe/workloads.ts";
import { type LbList, parseBpfLbList } from "../../helpers/parse/bpf-lb-list.ts";
import {
  IPV4_FAMILIES,
  IPV4_SERVICE,
  KUBE_PROXY_RULES,
  POD_SOCKET_LB,
  requires,
} from "../../helpers/properties/requirements.ts";
import { UP } from "../../helpers/properties/sources.ts";
import {
  findLbService,
  kubeProxyServes,
  lbRows,
  ruleLines,
  slotCount,
} from "../../helpers/records/common.ts";
import { derive, type EvidenceItem, type RawText, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidenced, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import { kubeProxyInIptables } from "../00-config/config.records.ts";
import { probeObservation } from "../surface.ts";
import type { ExternalIpRecord } from "./external-ip.records.ts";
import { records } from "./external-ip.records.ts";

/** edge-ext is a single-stack IPv4 Service; kube-proxy's rules are counted in iptables. */
const ANY_LB = requires(IPV4_SERVICE);
const RULES = requires(KUBE_PROXY_RULES, IPV4_SERVICE);
/** What a Pod's connect() meets: socket LB (kpr, full coverage) or per-packet LB (beside kube-proxy). */
const POD_LB = requires(POD_SOCKET_LB, IPV4_SERVICE);

/** Beside kube-proxy, 1.18 reflects no ExternalIPs frontend; 1.19 and later program it (external-ip.lb-map-slots). */
const ciliumProgramsExternalIps = (minor: string) => Number(minor.split(".")[1] ?? 0) >= 19;

const NO_RANGE = "no address range of ours for an externalIP on this cluster (LB_IP_RANGE unset)";
const EXTERNAL_IPS = UP(
  "Kubernetes docs: Service externalIPs, https://kubernetes.io/docs/concepts/services-networking/service/; Cilium docs network/kubernetes/kubeproxy-free.rst, https://docs.cilium.io/en/v1.20/network/kubernetes/kubeproxy-free/",
);

export const topic = defineTopic({
  name: "external-ip",
  title:
    "An externalIP from our range, reached from a Pod and a node: who translates it, and where socket LB will not",
  source: EXTERNAL_IPS,
  deploys: ["edge.yaml", "external-ip.yaml"],
  steps: [
    { on: "api", run: "get nodes", for: "the node with edge's backends and one without" },
    { on: "local", run: "printenv LB_IP_RANGE", for: "the range of ours the externalIP comes from" },
    { on: "agent", run: "cilium-dbg bpf lb list", for: "the externalIP in the far node's LB map (polled)" },
    { on: "node", run: "iptables-save", for: "kube-proxy's rule naming it (polled)" },
    { on: "pod", run: "curl -sS -v --max-time 5", for: "the externalIP from a Pod on the far node" },
    { on: "node", run: "curl -sS -v --max-time 5", for: "the externalIP from the far node's host namespace" },
  ],
  records,
  schedule: {
    after: ["iptables"],
    why: "its Service adds KUBE-SVC lines iptables counts whole (program counts only the holder's own reverse-socket entries, so its clients' translated sockets do not disturb it); its Service is its own (edge's Pods are shared, applied idempotently)",
  },
  shared: { changes: ["kube-proxy service rules"] },
  observe: observeExternalIp,
  properties: [
    {
      id: "external-ip.lb-map-slots",
      claim:
        "edge-ext's externalIP is in the agent's LB map with both backends, beside kube-proxy too from 1.19 (1.18: kube-proxy's alone)",
      source: EXTERNAL_IPS,
      why: "with kube-proxy replacement every ExternalIPs frontend is programmed; with it off 1.18 reflects none, 1.19.7 and 1.20 keep ExternalIPs among the datapath candidates for pod-to-pod traffic (bpf_reconciler.go isDatapathCandidate)",
      expect: {
        kpr: { eq: 2 },
        "kube-proxy": {
          default: { eq: 2 },
          byMinor: {
            "1.18": {
              kind: "behaviour",
              expect: { eq: 0 },
              claim: "no entry: 1.18 reflects ExternalIPs only with kube-proxy replacement",
              why: "conversions.go at v1.18.11 builds NodePort, LoadBalancer and ExternalIPs frontends inside `if extCfg.KubeProxyReplacement`",
            },
          },
        },
      },
      config: { assumes: ANY_LB },
      needs: ["externalIp"],
      observe: (r) => {
        const v = r.get("externalIp");
        if (v.external_ip === null) return { value: null, evidence: [], skip: NO_RANGE };
        return { value: v.ext_slots, evidence: r.evidence("externalIp", "ext_slots") };
      },
    },
    {
      id: "external-ip.from-pod",
      claim:
        "A Pod reaches edge-ext's externalIP beside kube-proxy; with socket LB its connect() is left untranslated (no answer)",
      source: EXTERNAL_IPS,
      why: "socket LB refuses to translate an ExternalIPs frontend that is not an address of the client's own node (bpf_sock.c sock4_skip_xlate: the CVE-2020-8554 mitigation), so the SYN goes out to the address's owner (none here); beside kube-proxy, bpf_lxc (1.19+) or kube-proxy's `external IP` rule (1.18) DNATs it",
      expect: {
        kpr: { oneOf: ["UNREACHABLE", "TIMEOUT", "CONNECT_FAILED"] },
        "kube-proxy": { eq: "HTTP 200" },
      },
      config: { assumes: POD_LB },
      needs: ["externalIp"],
      observe: (r) => probeObservation(r, "externalIp", "ext_from_pod", NO_RANGE),
    },
    {
      id: "external-ip.from-node",
      claim:
        "A node reaches edge-ext's externalIP from its host namespace beside kube-proxy; with socket LB the connect() is left untranslated",
      source: EXTERNAL_IPS,
      why: "the same mitigation holds for the host namespace's sockets (sock4_skip_xlate); beside kube-proxy the OUTPUT chain's `external IP` rule DNATs it",
      expect: {
        kpr: { oneOf: ["UNREACHABLE", "TIMEOUT", "CONNECT_FAILED"] },
        "kube-proxy": { eq: "HTTP 200" },
      },
      config: {
        assumes: {
          kpr: { socketLB: ["on", "hostns-only"], ipFamilies: IPV4_FAMILIES },
          "kube-proxy": ANY_LB["kube-proxy"],
        },
      },
      needs: ["externalIp"],
      observe: (r) => probeObservation(r, "externalIp", "ext_from_node", NO_RANGE),
    },
    {
      id: "external-ip.kube-proxy-rule",
      claim: "kube-proxy writes one `external IP` rule for edge-ext's externalIP; none without kube-proxy",
      source: UP(
        "kubernetes pkg/proxy/iptables/proxier.go syncProxyRules (v1.35.5), https://github.com/kubernetes/kubernetes/blob/v1.35.5/pkg/proxy/iptables/proxier.go",
      ),
      why: "one KUBE-SERVICES rule per external IP and port (`-d <ip>/32 … external IP … -j KUBE-EXT-…`)",
      expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 1 } },
      config: { assumes: RULES },
      needs: ["externalIp"],
      observe: (r) => {
        const v = r.get("externalIp");
        if (v.external_ip === null) return { value: null, evidence: [], skip: NO_RANGE };
        return { value: v.ext_rules, evidence: r.evidence("externalIp", "ext_rules") };
      },
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/**
 * kube-proxy's rules for edge-ext's externalIP are those at its address and port 80 (EXT_PORT): lifecycle-ports, beside
 * this topic, puts lc-lsr-in and lc-lsr-out at the same address on ports 81 and 82 (a lab run, not shipped, counted 3).
 */
const EXT_PORT = 80;

/** Issue 34: edge-ext's externalIP, translated (or not) and reached. */
export async function observeExternalIp(ctx: RunContext): Promise<RecordSet> {
  const edge = await ensureEdge(ctx);
  const range = await lbRange(ctx, edge);
  if ("none" in range) {
    ctx.log(range.none);
    return { externalIp: buildExternalIpRecord({ edge, ip: null }) };
  }
  const ip = range.externalIp;
  await apply(ctx, renderManifest("external-ip.yaml", ctx.namespace, { EXTERNAL_IP: ip }));
  const far = edge.far.name;
  const iptables = kubeProxyInIptables(ctx);
  const { value: seen } = await waitSettled(ctx, {
    what: `edge-ext's ${ip} in ${far}'s ${iptables ? "iptables" : "LB map"}`,
    deadlineMs: 30_000,
    intervalMs: 1000,
    probe: async () => ({
      lb: read(await ciliumDbgRaw(ctx, far, ["bpf", "lb", "list"]), parseBpfLbList),
      rules: iptables ? await iptablesSaveRaw(ctx, far) : null,
    }),
    // beside kube-proxy, Cilium 1.19+ programs the externalIP too: wait for both (run up-119-120-kp read the LB
    // map 165 ms after the Service was applied, before the agent had it)
    done: (s) =>
      (!s.rules || kubeProxyServes(s.rules, ip, EXT_PORT)) &&
      (ctx.mode === "kpr" || ciliumProgramsExternalIps(ctx.ciliumMinor)
        ? slotCount(s.lb.parsed, `${ip}:80`) === 2
        : true),
    show: (s) =>
      `LB map: ${slotCount(s.lb.parsed, `${ip}:80`)} slots${s.rules ? `; rules: ${ruleLines(s.rules, ip, EXT_PORT).length}` : ""}`,
  });
  const rules = seen.rules ?? (await iptablesSaveRaw(ctx, far));
  const [fromPod, fromNode] = await Promise.all([
    probeFrom(
      ctx,
      { kind: "pod", namespace: ctx.namespace, pod: edge.client.name },
      "pod far",
      `http://${ip}/hostname`,
    ),
    probeFrom(ctx, { kind: "node", node: far }, `node ${far}`, `http://${ip}/hostname`),
  ]);
  return {
    externalIp: buildExternalIpRecord({
      edge,
      ip,
      ipEvidence: range.evidence,
      lbList: seen.lb,
      rules,
      probes: { fromPod, fromNode },
    }),
  };
}

/** Issue 34: the external-ip record from what the topic read; no address: every field of it null. */
export function buildExternalIpRecord(input: {
  edge: Pick<Edge, "site" | "siteEvidence">;
  ip: string | null;
  ipEvidence?: EvidenceItem[];
  lbList?: Read<LbList>;
  rules?: RawText;
  probes?: { fromPod: ProbeRead; fromNode: ProbeRead };
}): Evidenced<ExternalIpRecord> {
  const { ip, lbList, rules, probes } = input;
  if (!ip || !lbList || !rules || !probes)
    return {
      record: {
        ...input.edge.site,
        external_ip: null,
        ext_slots: null,
        ext_rules: null,
        ext_from_pod: null,
        ext_from_node: null,
      },
      evidence: { ...input.edge.siteEvidence },
    };
  const s = findLbService(lbList.parsed, `${ip}:80`);
  const lines = ruleLines(rules, ip, EXT_PORT);
  return {
    record: {
      ...input.edge.site,
      external_ip: ip,
      ext_slots: slotCount(lbList.parsed, `${ip}:80`),
      ext_rules: lines.length,
      ext_from_pod: probes.fromPod.probe,
      ext_from_node: probes.fromNode.probe,
    },
    evidence: {
      ...input.edge.siteEvidence,
      external_ip: [
        derive(`edge-ext's externalIP ${ip}: the last address of our range`, input.ipEvidence ?? []),
      ],
      ext_slots: s ? lbRows(lbList.raw, s) : [derive(`no ${ip}:80/TCP entry in bpf lb list`, lbList.raw)],
      ext_rules: lines.length > 0 ? lines : [derive(`no line names -d ${ip}/32`, rules)],
      ext_from_pod: probes.fromPod.evidence,
      ext_from_node: probes.fromNode.evidence,
    },
  };
}
