/**
 * What a property's expectation needs of the datapath, named once (issue 43, in the manner of cilium-cli's feature
 * requirements): an IP family, socket LB in the Pod's namespace, kube-proxy's mode. Each has its name, why the
 * expectation needs it and, per mode, the settings it assumes; a topic composes them with `requires(…)` instead
 * of pasting the settings. A run whose configuration does not meet one gets the skip reason resolveConfig prints
 * (`not modelled for <setting> <value> (the expectation assumes <setting> <values>)`), naming the setting.
 */
import type { ConfigDependence, ConfigMatch } from "./config.ts";
import type { Mode } from "./expectation.ts";

export interface Requirement {
  name: string;
  why: string;
  assumes: Partial<Record<Mode, ConfigMatch>>;
}

/** The families an IPv4 Service runs on: IPv4 alone or beside IPv6 (a `ConfigMatch` value, for a case's `when`). */
export const IPV4_FAMILIES = ["ipv4", "ipv4+ipv6"] as const;
/** Dual stack, as a match to spread into a case's `when` or a mode's assumptions. */
export const DUAL = { ipFamilies: ["ipv4+ipv6"] } as const satisfies ConfigMatch;

const both = (m: ConfigMatch): Partial<Record<Mode, ConfigMatch>> => ({ kpr: m, "kube-proxy": m });

/** An IPv4 Service: the cluster has IPv4 (alone or beside IPv6); a dual-stack cluster leaves an IPv4 Service as it is. */
export const IPV4_SERVICE: Requirement = {
  name: "an IPv4 Service",
  why: "the topic's Services are single-stack IPv4 (their manifests ask no ipFamilyPolicy): a cluster with IPv4, alone or beside IPv6",
  assumes: both({ ipFamilies: IPV4_FAMILIES }),
};

/** Both families: the IPv6 topics need an IPv6 Service beside the IPv4 one. */
export const DUAL_STACK: Requirement = {
  name: "both IP families",
  why: "the topic's IPv6 Services need a dual-stack cluster (IPv6 beside IPv4)",
  assumes: both(DUAL),
};

/**
 * Who translates a Pod's connect(): socket LB in the Pod's own namespace (kpr, full coverage), nothing beside
 * kube-proxy (its rules, or Cilium's per-packet LB, translate the packets instead).
 */
export const POD_SOCKET_LB: Requirement = {
  name: "socket LB in the Pod's namespace",
  why: "the kpr expectation is socket LB's answer at connect() in the Pod's own namespace (full coverage); the kube-proxy one assumes no socket LB, so the Pod's packets meet per-packet LB or kube-proxy's rules",
  assumes: { kpr: { socketLB: ["on"] }, "kube-proxy": { socketLB: ["off"] } },
};

/** kube-proxy's mode: none with kube-proxy replacement, its iptables mode beside Cilium (its rules are counted there). */
export const KUBE_PROXY_RULES: Requirement = {
  name: "kube-proxy's mode",
  why: "kube-proxy's rules are counted in iptables: none with kube-proxy replacement, its iptables mode beside Cilium (its nftables mode is not modelled here)",
  assumes: { kpr: { kubeProxy: ["none"] }, "kube-proxy": { kubeProxy: ["iptables"] } },
};

/** kube-proxy in its iptables mode beside Cilium; nothing asked of kube-proxy replacement. */
export const KUBE_PROXY_IPTABLES: Requirement = {
  name: "kube-proxy in iptables mode (beside Cilium)",
  why: "beside Cilium kube-proxy answers in its iptables mode (its nftables mode is not modelled for these paths)",
  assumes: { "kube-proxy": { kubeProxy: ["iptables"] } },
};

/**
 * The settings the requirements assume, per mode, merged in the order given (the order the skip reason and the
 * "assumed …" note list them). Two requirements that ask different values of one setting are a declaration error.
 */
export function requires(...rs: Requirement[]): ConfigDependence["assumes"] {
  const out: Partial<Record<Mode, ConfigMatch>> = {};
  for (const mode of ["kpr", "kube-proxy"] as const) {
    const merged: ConfigMatch = {};
    for (const r of rs)
      for (const [k, vs] of Object.entries(r.assumes[mode] ?? {})) {
        const key = k as keyof ConfigMatch;
        const had = merged[key];
        if (had && had.join() !== (vs as readonly string[]).join())
          throw new Error(
            `requirements disagree on ${k} in mode ${mode}: ${had.join("/")} vs ${(vs as readonly string[]).join("/")}`,
          );
        merged[key] = vs as readonly string[];
      }
    if (Object.keys(merged).length > 0) out[mode] = merged;
  }
  return out;
}

/** socketLB.hostNamespaceOnly=true: the configuration where a Pod's connect() is left to per-packet LB. */
export const HOSTNS_ONLY_SOCKET_LB: ConfigMatch = { socketLB: ["hostns-only"] };

/**
 * Why host-namespace-only socket LB changes what a Pod sees, up to what follows for a topic's client (each topic
 * says that part: `hostnsOnlyWhy("(…), so the probe Pod's SYN meets bpf_lxc's per-packet LB …")`).
 */
export const hostnsOnlyWhy = (then: string): string =>
  `socketLB.hostNamespaceOnly=true: the agent compiles ENABLE_SOCKET_LB_HOST_ONLY instead of ENABLE_SOCKET_LB_FULL, and the connect hook leaves every socket outside the host network namespace untranslated ${then}`;
