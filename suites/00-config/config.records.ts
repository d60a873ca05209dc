/** The config topic's records: the datapath configuration the run observed, and where kube-proxy's Service rules are. */
import type { RunContext } from "../../helpers/observe/context.ts";
import type { RecordDecls } from "../../helpers/records/catalogue.ts";
import type { DatapathConfig } from "../../helpers/records/datapath-config.ts";

/** kube-proxy's rules for kube-dns, where its mode put them (iptables, nftables), or none. */
export interface ProxyRulesRecord {
  /** "translated by kube-proxy (iptables): …", "translated by kube-proxy (nftables): …", "no kube-proxy rules". */
  summary: string;
  iptables_rules: number;
  nft_services: number;
  /** Why the nftables side could not be read, or what it found instead. */
  nft_note: string | null;
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    /** The datapath configuration the run observed: every expectation is resolved for it. */
    config: DatapathConfig;
    /** Where kube-proxy's Service rules are. */
    proxyRules: ProxyRulesRecord;
  }
}

/** The suite's default configuration as the config topic records it (values only, no evidence). */
function exampleConfig(kpr: boolean): DatapathConfig {
  const set = <T>(value: T) => ({ value, source: "status" as const, evidence: [] });
  return {
    routing: set("tunnel" as const),
    tunnelProtocol: set("vxlan" as const),
    hostRouting: set("legacy" as const),
    masquerading: set("iptables" as const),
    socketLB: set(kpr ? ("on" as const) : ("off" as const)),
    lbMode: kpr ? set("snat" as const) : { value: null, source: null, evidence: [], note: "no BPF NodePort" },
    lbAlgorithm: kpr
      ? set("random" as const)
      : { value: null, source: null, evidence: [], note: "no BPF NodePort" },
    deviceMode: set("veth" as const),
    kubeProxy: set(kpr ? ("none" as const) : ("iptables" as const)),
    ipFamilies: set(["ipv4" as const]),
  };
}

export const records = {
  config: {
    file: "config.json",
    configuration: (record) => record,
    example: (mode) => exampleConfig(mode === "kpr"),
  },
  proxyRules: {
    file: "proxy-rules.json",
    example: (mode) => ({
      summary:
        mode === "kpr"
          ? "no kube-proxy rules"
          : "translated by kube-proxy (iptables): kube-system/kube-dns in KUBE-SERVICES",
      iptables_rules: mode === "kpr" ? 0 : 1,
      nft_services: 0,
      nft_note: null,
    }),
  },
} satisfies RecordDecls;

/**
 * Whether kube-proxy's rules are in iptables on this run: the kube-proxy mode, unless the config topic read
 * kube-proxy in another mode (nftables, ipvs), whose rules never appear in iptables-save: a wait for them
 * would only run to its deadline (issue 25's nftables profile). A run without the config record: the mode.
 */
export function kubeProxyInIptables(ctx: RunContext): boolean {
  if (ctx.mode !== "kube-proxy") return false;
  const kp = ctx.earlierRecords().config?.record.kubeProxy.value;
  return kp === undefined || kp === null || kp === "iptables";
}
