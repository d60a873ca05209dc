/**
 * Topic "iptables" — The lab, step 1.
 * Where kube-proxy's rules are: none without kube-proxy, a chain per Service with it; Cilium's and kubelet's chains in both modes.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */
import { ciliumDbg } from "../../helpers/observe/agent.ts";
import { clusterIp, type PodInfo } from "../../helpers/observe/cluster.ts";
import type { RunContext } from "../../helpers/observe/context.ts";
import { iptablesSave } from "../../helpers/observe/node.ts";
import { ensureWeb } from "../../helpers/observe/workloads.ts";
import {
  type IptablesSave,
  kubeProxyChains,
  linesContaining,
  parseIptablesSave,
} from "../../helpers/parse/iptables-save.ts";
import { type AgentStatus, parseStatus } from "../../helpers/parse/status.ts";
import { dp, KN, LAB } from "../../helpers/properties/sources.ts";
import { linesWithAddress, RecordError, statusLine } from "../../helpers/records/common.ts";
import type { DatapathRecord, Evidenced, IptablesRecord, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";

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
  builds: ["iptables", "datapath"],
  observe: observeIptables,
  properties: [
    {
      id: "iptables.kpr-mode",
      claim: "The agent reports KubeProxyReplacement True without kube-proxy and False beside it",
      source: LAB(1),
      expect: { kpr: { eq: "True" }, "kube-proxy": { eq: "False" } },
      needs: ["iptables"],
      observe: (r) => ({
        value: r.get("iptables").kube_proxy_replacement,
        evidence: r.evidence("iptables", "kube_proxy_replacement"),
      }),
    },
    {
      id: "iptables.kube-svc-lines",
      claim:
        "Lines containing KUBE-SVC in iptables-save: none without kube-proxy, kube-proxy's per-Service chains with it",
      source: LAB(1),
      expect: { kpr: { eq: 0 }, "kube-proxy": { gte: 1 } },
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
      why: "kube-proxy writes a KUBE-SERVICES match and a KUBE-MARK-MASQ rule per ClusterIP port (knowledge output-formats.md §8)",
      needs: ["iptables"],
      observe: (r) => ({
        value: r.get("iptables").cluster_ip_lines,
        evidence: r.evidence("iptables", "cluster_ip_lines"),
      }),
    },
    {
      id: "iptables.cilium-chains",
      claim: "Cilium still installs its CILIUM_* chains in both modes, so iptables is never literally empty",
      source: KN("clusters.md §4.3"),
      expect: { kpr: { gte: 1 }, "kube-proxy": { gte: 1 } },
      needs: ["iptables"],
      observe: (r) => ({
        value: r.get("iptables").cilium_lines,
        evidence: r.evidence("iptables", "cilium_lines"),
      }),
    },
    {
      id: "iptables.kube-proxy-chains",
      claim: "kube-proxy chains (KUBE-SERVICES/SVC/SEP/NODEPORTS/…) exist only where kube-proxy runs",
      source: KN("clusters.md §4.3"),
      expect: { kpr: { eq: 0 }, "kube-proxy": { gte: 3 } },
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
      source: KN("clusters.md §4.3 (KEP-3178)"),
      expect: { kpr: { gte: 1 }, "kube-proxy": { gte: 1 } },
      needs: ["datapath"],
      observe: (r) => ({
        value: dp(r, "kubelet_chains").length,
        evidence: dp(r, "kubelet_chains"),
      }),
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Lab step 1. */
export async function observeIptables(ctx: RunContext): Promise<RecordSet> {
  const web = await ensureWeb(ctx, 2);
  const node = (web[0] as PodInfo).node;
  const cip = await clusterIp(ctx, ctx.namespace, "web");
  const raw = await iptablesSave(ctx, node);
  const status = parseStatus(await ciliumDbg(ctx, node, ["status"]));
  return {
    iptables: buildIptablesRecord({ iptablesSave: raw, clusterIp: cip, status }),
    datapath: buildChainFacts(parseIptablesSave(raw)),
  };
}

/** Lab step 1. */
export function buildIptablesRecord(input: {
  iptablesSave: string;
  clusterIp: string;
  status: AgentStatus;
}): Evidenced<IptablesRecord> {
  const svc = linesContaining(input.iptablesSave, "KUBE-SVC");
  const cip = linesWithAddress(input.iptablesSave, input.clusterIp);
  const cil = linesContaining(input.iptablesSave, "CILIUM");
  if (!input.status.kubeProxyReplacement) {
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
      kube_proxy_replacement: input.status.kubeProxyReplacement,
    },
    evidence: {
      kube_svc_lines: svc,
      cluster_ip_lines: cip,
      cilium_lines: cil.slice(0, 5),
      kube_proxy_replacement: statusLine(input.status, "KubeProxyReplacement"),
    },
  };
}

const KUBELET_CHAIN = /^KUBE-(FIREWALL|KUBELET-CANARY|IPTABLES-HINT)$/;

function chainNames(save: IptablesSave): string[] {
  const chains = new Set<string>();
  for (const t of Object.values(save.tables)) for (const c of Object.keys(t.chains)) chains.add(c);
  return [...chains].sort();
}

/** Ours (iptables topic): kube-proxy, kubelet and Cilium chains on the node. */
export function buildChainFacts(save: IptablesSave): Evidenced<DatapathRecord> {
  const chains = chainNames(save);
  const kp = kubeProxyChains(save);
  return {
    record: {
      kube_proxy_chains: kp,
      kubelet_chains: chains.filter((c) => KUBELET_CHAIN.test(c)),
      cilium_chains: chains.filter((c) => c.startsWith("CILIUM_")),
    },
    evidence: { kube_proxy_chains: kp.slice(0, 10) },
  };
}
