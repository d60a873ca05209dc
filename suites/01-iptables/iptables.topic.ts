/**
 * Topic "iptables" — The lab, step 1.
 * Where kube-proxy's rules are: none without kube-proxy, a chain per Service with it; Cilium's and kubelet's chains in both modes.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */
import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { clusterIpRaw, type PodInfo } from "../../helpers/observe/cluster.ts";
import { DEADLINES, type RunContext, waitFor } from "../../helpers/observe/context.ts";
import { iptablesSaveRaw } from "../../helpers/observe/node.ts";
import { ensureWeb } from "../../helpers/observe/workloads.ts";
import {
  allRules,
  type IptablesChain,
  type IptablesSave,
  kubeProxyChains,
  parseIptablesSave,
} from "../../helpers/parse/iptables-save.ts";
import { type AgentStatus, parseStatus } from "../../helpers/parse/status.ts";
import type { ConfigDependence } from "../../helpers/properties/config.ts";
import { K8S_AT, KUBE_PROXY_PROXIER, LAB, UP } from "../../helpers/properties/sources.ts";
import { linesWithAddress, RecordError, statusQuote } from "../../helpers/records/common.ts";
import { derive, type EvidenceItem, type RawText, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidenced, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import type { DatapathRecord } from "../datapath.records.ts";
import { datapathRecords, dp } from "../datapath.records.ts";
import type { IptablesRecord } from "./iptables.records.ts";
import { records } from "./iptables.records.ts";

/**
 * Where kube-proxy's rules are read from iptables-save (issue 25): kpr runs without kube-proxy, and beside it
 * kube-proxy runs in iptables mode. Its nftables mode (`table ip kube-proxy`) and ipvs mode write no KUBE-SVC /
 * KUBE-SEP rules: not modelled by these properties, so not applicable there (helpers/properties/config.ts).
 */
const KUBE_PROXY_IPTABLES = {
  kpr: { kubeProxy: ["none"] },
  "kube-proxy": { kubeProxy: ["iptables"] },
} as const satisfies ConfigDependence["assumes"];

export const topic = defineTopic({
  name: "iptables",
  title:
    "Where kube-proxy's rules are: none without kube-proxy, a chain per Service with it; Cilium's and kubelet's chains in both modes",
  source: LAB(1),
  deploys: ["web.yaml"],
  steps: [
    { on: "node", run: "iptables-save", for: "every rule on the web Pod's node" },
    { on: "agent", run: "cilium-dbg status", for: "the KubeProxyReplacement line" },
  ],
  records: { ...records, ...datapathRecords },
  schedule: {
    after: [],
    why: "web's first creation, at two replicas (scale, holder and nodeport, which want four, follow it); it counts every KUBE-SVC line, and the only topic that adds Services with backends beside it would be measure-scale, which runs alone. ghost's Service has no backends (no KUBE-SVC chain)",
  },
  shared: { counts: ["kube-proxy service rules"], changes: ["web backends"] },
  observe: observeIptables,
  properties: [
    {
      id: "iptables.kpr-mode",
      claim: "The agent reports KubeProxyReplacement True without kube-proxy and False beside it",
      source: LAB(1),
      why: "the agent's own KubeProxyReplacement status is the mode itself: no other datapath setting changes it (beside kube-proxy in nftables or ipvs mode it stays False)",
      expect: { kpr: { eq: "True" }, "kube-proxy": { eq: "False" } },
      config: "none",
      needs: ["iptables"],
      observe: (r) => ({
        value: r.get("iptables").kube_proxy_replacement,
        evidence: r.evidence("iptables", "kube_proxy_replacement"),
      }),
    },
    {
      id: "iptables.kube-svc-lines",
      tolerance: { factor: 1.5, floor: 0, unit: "lines" },
      claim:
        "Lines containing KUBE-SVC in iptables-save: none without kube-proxy, kube-proxy's per-Service chains with it",
      source: LAB(1),
      expect: { kpr: { eq: 0 }, "kube-proxy": { gte: 1 } },
      config: { assumes: KUBE_PROXY_IPTABLES },
      needs: ["iptables"],
      observe: (r) => ({
        value: r.get("iptables").kube_svc_lines,
        evidence: r.evidence("iptables", "kube_svc_lines"),
      }),
    },
    {
      id: "iptables.cluster-ip-lines",
      claim:
        "Lines mentioning the web ClusterIP: none without kube-proxy (the Service lives in BPF maps only)",
      source: LAB(1),
      expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 2 } },
      config: {
        // iptables-save is the IPv4 table: web stays a single-stack IPv4 Service on a dual-stack cluster
        assumes: {
          kpr: KUBE_PROXY_IPTABLES.kpr,
          "kube-proxy": { ...KUBE_PROXY_IPTABLES["kube-proxy"], ipFamilies: ["ipv4", "ipv4+ipv6"] },
        },
      },
      why: "kube-proxy writes a KUBE-SERVICES match and a KUBE-MARK-MASQ rule per ClusterIP port (kube-proxy's iptables proxier: https://github.com/kubernetes/kubernetes/blob/v1.35.5/pkg/proxy/iptables/proxier.go)",
      needs: ["iptables"],
      observe: (r) => ({
        value: r.get("iptables").cluster_ip_lines,
        evidence: r.evidence("iptables", "cluster_ip_lines"),
      }),
    },
    {
      id: "iptables.cilium-lines",
      tolerance: { factor: 1.5, floor: 0, unit: "lines" },
      claim:
        "Lines containing CILIUM in iptables-save (the lab's cilium_lines): Cilium's own rules stay in both modes, so iptables is never literally empty",
      source: LAB(1),
      why: "the lab counts lines ('the number of lines containing CILIUM'), not chains: they are the rules and declarations of Cilium's CILIUM_* chains, which Cilium installs in both modes (cilium pkg/datapath/iptables/custom_chain.go: https://github.com/cilium/cilium/blob/v1.20.2/pkg/datapath/iptables/custom_chain.go); 40 lines in 10 chains recorded on the lab cluster (Cilium 1.19.7, kpr). No modelled setting changes it: BPF masquerading removes only CILIUM_POST_nat's masquerade rule, the CILIUM_* chains stay (installIptablesRules=false would remove them; the suite does not read that setting)",
      expect: { kpr: { gte: 1 }, "kube-proxy": { gte: 1 } },
      config: "none",
      needs: ["iptables"],
      observe: (r) => ({
        value: r.get("iptables").cilium_lines,
        evidence: r.evidence("iptables", "cilium_lines"),
      }),
    },
    {
      id: "iptables.kube-proxy-chains",
      tolerance: { factor: 1.5, floor: 0, unit: "chains" },
      claim: "kube-proxy chains (KUBE-SERVICES/SVC/SEP/NODEPORTS/…) exist only where kube-proxy runs",
      source: UP(KUBE_PROXY_PROXIER),
      expect: { kpr: { eq: 0 }, "kube-proxy": { gte: 3 } },
      config: { assumes: KUBE_PROXY_IPTABLES },
      needs: ["datapath"],
      observe: (r) => ({
        value: dp(r, "kube_proxy_chains").length,
        evidence: r.evidence("datapath", "kube_proxy_chains"),
      }),
    },
    {
      id: "iptables.kubelet-chains",
      claim:
        "kubelet's chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY) remain in both modes: 'empty iptables' means no kube-proxy chains",
      source: UP(
        `KEP-3178, https://github.com/kubernetes/enhancements/tree/master/keps/sig-network/3178-iptables-cleanup; kubelet ${K8S_AT}/pkg/kubelet/kubelet_network_linux.go`,
      ),
      why: "kubelet writes them whatever handles Services, so no datapath setting changes it",
      expect: { kpr: { gte: 1 }, "kube-proxy": { gte: 1 } },
      config: "none",
      needs: ["datapath"],
      observe: (r) => ({
        value: dp(r, "kubelet_chains").length,
        evidence: r.evidence("datapath", "kubelet_chains"),
      }),
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Lab step 1. */
export async function observeIptables(ctx: RunContext): Promise<RecordSet> {
  const web = await ensureWeb(ctx, 2);
  const node = (web[0] as PodInfo).node;
  const cip = await clusterIpRaw(ctx, ctx.namespace, "web");
  // kube-proxy syncs on its own clock: web's Pods being ready does not mean its rules have them yet (a first
  // read right after the Pods were ready found only "has no endpoints" REJECT, Cilium 1.20.2 run with both
  // modes at once); wait until the ClusterIP's rules name no REJECT, or until it is clear there is no kube-proxy
  const { value: save } = await waitFor(ctx, {
    what: `kube-proxy's rules for ${ctx.namespace}/web (${cip.ip}) with its endpoints on ${node} (or no kube-proxy)`,
    deadlineMs: DEADLINES.mapConverged,
    intervalMs: 1000,
    probe: async () => read(await iptablesSaveRaw(ctx, node), parseIptablesSave),
    done: (t) => {
      if (kubeProxyChains(t.parsed).length === 0) return true;
      const lines = linesWithAddress(t.raw.text, cip.ip);
      return lines.length > 0 && !lines.some((l) => l.includes("has no endpoints"));
    },
    show: (t) => linesWithAddress(t.raw.text, cip.ip).join(" | ") || `no line with ${cip.ip}`,
  });
  const status = read(await ciliumDbgRaw(ctx, node, ["status"]), parseStatus);
  return {
    iptables: buildIptablesRecord({
      iptablesSave: save.raw,
      clusterIp: cip.ip,
      clusterIpEvidence: cip.evidence,
      status,
    }),
    datapath: buildChainFacts(save),
  };
}

/** Lab step 1: the counts are of lines, as the lab's `grep -c` counts them; each counted line is quoted. */
export function buildIptablesRecord(input: {
  iptablesSave: RawText;
  clusterIp: string;
  /** The line of `kubectl get service web -o json` that names the ClusterIP. */
  clusterIpEvidence?: EvidenceItem[];
  status: Read<AgentStatus>;
}): Evidenced<IptablesRecord> {
  const raw = input.iptablesSave;
  const svc = raw.quotes((l) => l.includes("KUBE-SVC"));
  const cip = raw.quotes((l) => linesWithAddress(l, input.clusterIp).length > 0);
  const cil = raw.quotes((l) => l.includes("CILIUM"));
  const st = input.status.parsed;
  if (!st.kubeProxyReplacement) {
    throw new RecordError(
      "iptables",
      "kube_proxy_replacement",
      "cilium-dbg status printed no KubeProxyReplacement line",
    );
  }
  return {
    record: {
      cluster_ip: input.clusterIp,
      kube_svc_lines: svc.length,
      cluster_ip_lines: cip.length,
      cilium_lines: cil.length,
      kube_proxy_replacement: st.kubeProxyReplacement,
    },
    evidence: {
      cluster_ip: input.clusterIpEvidence ?? [],
      kube_svc_lines: svc.length > 0 ? svc : [derive("no line contains KUBE-SVC", raw)],
      cluster_ip_lines:
        cip.length > 0 ? cip : [derive(`no line mentions ${input.clusterIp}`, raw, input.clusterIpEvidence)],
      cilium_lines: cil.length > 0 ? cil : [derive("no line contains CILIUM", raw)],
      kube_proxy_replacement: statusQuote(input.status.raw, st, "KubeProxyReplacement"),
    },
  };
}

const KUBELET_CHAIN = /^KUBE-(FIREWALL|KUBELET-CANARY|IPTABLES-HINT)$/;

/** Every chain declaration of the dump (`:NAME POLICY [p:b]`), in input order. */
function declarations(save: IptablesSave): IptablesChain[] {
  return Object.values(save.tables)
    .flatMap((t) => Object.values(t.chains))
    .sort((a, b) => a.line - b.line);
}

/** Ours (iptables topic): kube-proxy, kubelet and Cilium chains on the node, each with its declaration lines. */
export function buildChainFacts(ipt: Read<IptablesSave>): Evidenced<DatapathRecord> {
  const save = ipt.parsed;
  const decl = declarations(save);
  const names = (keep: (c: string) => boolean) => [...new Set(decl.map((c) => c.name).filter(keep))].sort();
  const kp = kubeProxyChains(save);
  // looked up once, not per chain (issue 45: 20,000 chains only jumped to made check take 89 s)
  const declared = new Set(decl.map((d) => d.name));
  const firstRule = new Map<string, number>();
  for (const r of allRules(save)) if (!firstRule.has(r.chain)) firstRule.set(r.chain, r.line);
  const quotesOf = (chains: string[]) => {
    const wanted = new Set(chains);
    const q = decl.filter((c) => wanted.has(c.name)).map((c) => ipt.raw.quote(c.line));
    // a chain only jumped to (grep-filtered input) is shown by its first rule
    for (const c of chains)
      if (!declared.has(c)) {
        const line = firstRule.get(c);
        if (line !== undefined) q.push(ipt.raw.quote(line));
      }
    return q;
  };
  const none = (what: string) => [derive(`no ${what} chain declared`, ipt.raw)];
  const kubelet = names((c) => KUBELET_CHAIN.test(c));
  const cilium = names((c) => c.startsWith("CILIUM_"));
  return {
    record: { kube_proxy_chains: kp, kubelet_chains: kubelet, cilium_chains: cilium },
    evidence: {
      kube_proxy_chains: kp.length > 0 ? quotesOf(kp) : none("kube-proxy (KUBE-SERVICES, KUBE-SVC-…, …)"),
      kubelet_chains: kubelet.length > 0 ? quotesOf(kubelet) : none("kubelet (KUBE-FIREWALL, …)"),
      cilium_chains: cilium.length > 0 ? quotesOf(cilium) : none("CILIUM_*"),
    },
  };
}
