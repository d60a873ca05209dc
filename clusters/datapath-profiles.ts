/**
 * Datapath profiles (issue 25): the configurations people run, beside today's tunnel default, each declared once —
 * the modes it applies to, the Helm values it adds on top of clusters/profile.ts `helmValues`, the kind config it
 * changes, what the run's DatapathConfig record must then show, and its sources. Facts and sources in detail:
 * each profile's `sources` below, and docs/profiles.md.
 *
 * And the user's own values (`--values FILE` / CILIUM_VALUES=FILE): merged UNDER what the suite must set, with
 * the keys the suite overrode listed so a run can say them in one line.
 */
import { existsSync, readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { parse as parseYaml } from "yaml";
import { UserError } from "../helpers/errors.ts";
import type { Mode } from "../helpers/properties/expectation.ts";
import type { DatapathConfig } from "../helpers/records/datapath-config.ts";

type Values = Record<string, unknown>;

export const DATAPATH_PROFILES = [
  "tunnel",
  "native-bpf",
  "socketlb-hostns",
  "dsr-maglev",
  "kp-nftables",
  "kp-ipvs",
  "dual-stack",
  "netkit",
] as const;
export type DatapathProfileName = (typeof DATAPATH_PROFILES)[number];

type Expected = { [K in keyof DatapathConfig]?: DatapathConfig[K]["value"] };

/** A kernel feature a profile needs, by its Kconfig symbol. */
interface KernelNeed {
  config: string;
  /** The one line a run prints when this machine's kernel lacks it. */
  refusal: string;
}

export interface DatapathProfile {
  name: DatapathProfileName;
  description: string;
  /** The modes the profile applies to; another mode is refused. */
  modes: Mode[];
  /** Helm values the profile adds (over the suite's, under the lab's image values). */
  helm: (mode: Mode) => Values;
  /** kind `networking` fields the profile sets. */
  kindNetworking?: Record<string, unknown>;
  /**
   * The Docker network kind puts the nodes on (KIND_EXPERIMENTAL_DOCKER_NETWORK), where the profile needs one of
   * its own; absent: kind's `kind` network.
   */
  kindDockerNetwork?: { name: string; why: string };
  /** Extra `k3d cluster create` arguments; null: this profile is not declared for k3d (with `k3dWhy`). */
  k3dArgs: string[] | null;
  k3dWhy?: string;
  /** What the run's DatapathConfig must show, per mode (a profile the cluster did not take is caught here). */
  expect: (mode: Mode) => Expected;
  needs?: KernelNeed[];
  /** Declared from the source, never run on this suite's machines. */
  neverRun?: string;
  sources: string[];
  notes?: string[];
}

const NATIVE: Values = {
  routingMode: "native",
  autoDirectNodeRoutes: true,
  // the chart fails without it while IPv4 masquerade is on (cilium-configmap.yaml); kind's pod subnet
  ipv4NativeRoutingCIDR: "10.244.0.0/16",
};

const k3sArg = (arg: string) => ["--k3s-arg", `${arg}@server:*`, "--k3s-arg", `${arg}@agent:*`];

export const PROFILES: Record<DatapathProfileName, DatapathProfile> = {
  tunnel: {
    name: "tunnel",
    description:
      "VXLAN tunnel, legacy host routing, iptables masquerading: the chart's defaults (today's runs)",
    modes: ["kpr", "kube-proxy"],
    helm: () => ({}),
    k3dArgs: [],
    expect: (mode) => ({
      routing: "tunnel",
      tunnelProtocol: "vxlan",
      hostRouting: "legacy",
      masquerading: "iptables",
      socketLB: mode === "kpr" ? "on" : "off",
      kubeProxy: mode === "kpr" ? "none" : "iptables",
    }),
    sources: ["every shipped bundle's status --verbose (`Routing: Network: Tunnel [vxlan]   Host: Legacy`)"],
  },
  "native-bpf": {
    name: "native-bpf",
    description:
      "native routing with auto direct node routes, BPF host routing and BPF masquerading (Cilium's tuning guide); beside kube-proxy native routing only",
    modes: ["kpr", "kube-proxy"],
    helm: (mode) =>
      mode === "kpr" ? { ...NATIVE, bpf: { masquerade: true, hostLegacyRouting: false } } : { ...NATIVE },
    k3dArgs: [],
    expect: (mode) =>
      mode === "kpr"
        ? { routing: "native", tunnelProtocol: null, hostRouting: "bpf", masquerading: "bpf" }
        : { routing: "native", tunnelProtocol: null, hostRouting: "legacy", masquerading: "iptables" },
    sources: [
      "pkg/kpr/initializer/kube_proxy_replacement.go FinishKubeProxyReplacementInit: BPF host routing falls back to legacy without BPF masquerade or KPR",
      "cilium .github/actions/cilium-config (BPF masquerade only with KPR=true): https://github.com/cilium/cilium/blob/v1.20.2/.github/actions/cilium-config/action.yml",
      "install/kubernetes/cilium/templates/cilium-configmap.yaml: ipv4NativeRoutingCIDR required with routingMode native",
      "seen on the lab (suites/bundles/profiles/native-bpf/kpr): `Routing: Network: Native Host: BPF`, `Masquerading: BPF`",
    ],
    notes: [
      "BPF host routing bypasses kind's docker-DNS DNAT: CoreDNS's upstream forwarding breaks, cluster names still resolve (cilium issue 23330, https://github.com/cilium/cilium/issues/23330; https://github.com/cilium/cilium/blob/v1.20.2/contrib/scripts/kind.sh patches CoreDNS for it)",
    ],
  },
  "socketlb-hostns": {
    name: "socketlb-hostns",
    description:
      "socket LB for the host namespace only (what service meshes need): Pods' connects are translated per packet",
    modes: ["kpr"],
    helm: () => ({ socketLB: { hostNamespaceOnly: true } }),
    k3dArgs: [],
    expect: () => ({ socketLB: "hostns-only" }),
    sources: [
      "cilium-configmap.yaml: socketLB.hostNamespaceOnly → bpf-lb-sock-hostns-only",
      "pkg/client/client.go FormatStatusResponse: `Socket LB Coverage: Hostns-only`; seen on the lab (suites/bundles/profiles/socketlb-hostns/kpr)",
    ],
  },
  "dsr-maglev": {
    name: "dsr-maglev",
    description:
      "NodePort DSR (IP option dispatch) with Maglev backend selection, on native routing (vxlan refuses DSR)",
    modes: ["kpr"],
    helm: () => ({ ...NATIVE, loadBalancer: { mode: "dsr", algorithm: "maglev", dsrDispatch: "opt" } }),
    k3dArgs: [],
    expect: () => ({ routing: "native", lbMode: "dsr", lbAlgorithm: "maglev" }),
    sources: [
      'pkg/kpr/initializer/kube_proxy_replacement.go InitKubeProxyReplacementOptions: "Node Port "dsr" mode cannot be used with vxlan tunneling"; tunnel DSR needs geneve dispatch and a geneve tunnel (no CONFIG_GENEVE here), IPIP dispatch needs IPIP devices (no CONFIG_NET_IPIP here)',
      "cilium-configmap.yaml: loadBalancer.mode/algorithm/dsrDispatch → bpf-lb-mode/bpf-lb-algorithm/bpf-lb-dsr-dispatch",
      "pkg/client/client.go: `Mode: DSR`, `Backend Selection: Maglev (Table Size: N)`",
    ],
    notes: [
      "the NodePort reply of a request forwarded to another node leaves the backend's node with source <frontend node IP>:30780",
    ],
  },
  "kp-nftables": {
    name: "kp-nftables",
    description:
      "kube-proxy in nftables mode (GA in Kubernetes 1.33): no KUBE-* iptables, `table ip kube-proxy` in nft",
    modes: ["kube-proxy"],
    helm: () => ({}),
    kindNetworking: { kubeProxyMode: "nftables" },
    k3dArgs: k3sArg("--kube-proxy-arg=proxy-mode=nftables"),
    expect: () => ({ kubeProxy: "nftables" }),
    sources: [
      "kind v0.31.0 pkg/internal/apis/config (kubeProxyMode iptables|nftables|ipvs|none) and kubeadm/config.go (KubeProxyConfiguration mode, tcpBeLiberal for nftables)",
      "Kubernetes v1.35.5 pkg/proxy/nftables/proxier.go",
    ],
  },
  "kp-ipvs": {
    name: "kp-ipvs",
    description:
      "kube-proxy in ipvs mode (deprecated in 1.35): ClusterIPs on kube-ipvs0, virtual servers in IPVS",
    modes: ["kube-proxy"],
    helm: () => ({}),
    kindNetworking: { kubeProxyMode: "ipvs" },
    k3dArgs: k3sArg("--kube-proxy-arg=proxy-mode=ipvs"),
    expect: () => ({ kubeProxy: "ipvs" }),
    needs: [
      {
        config: "CONFIG_IP_VS",
        refusal:
          "kube-proxy's ipvs mode needs a kernel with CONFIG_IP_VS (and CONFIG_DUMMY for kube-ipvs0); this machine's kernel lacks it",
      },
    ],
    neverRun:
      "declared from the source; the lab's kernel has neither CONFIG_IP_VS nor CONFIG_DUMMY (`zcat /proc/config.gz`), so kube-proxy cannot use its IPVS proxier",
    sources: [
      "Kubernetes v1.35.5 cmd/kube-proxy/app/server_linux.go: `can't use the IPVS proxier` when ipvs.CanUseIPVSProxier fails; the deprecation message",
      "kind v0.31.0 kubeProxyMode ipvs",
    ],
  },
  "dual-stack": {
    name: "dual-stack",
    description: "IPv4 and IPv6: both families' ClusterIPs, NodePorts and backends",
    modes: ["kpr", "kube-proxy"],
    helm: () => ({ ipv6: { enabled: true } }),
    kindNetworking: {
      ipFamily: "dual",
      podSubnet: "10.244.0.0/16,fd00:10:244::/56",
      serviceSubnet: "10.96.0.0/16,fd00:10:96::/112",
    },
    kindDockerNetwork: {
      name: "kind-dual",
      why: "kind reuses an existing `kind` network as it is (the lab's is IPv4 only), so the nodes join a network with both families: `lab up` creates kind-dual with our ranges (172.31.101.0/24, fd00:ca1d:101::/64); elsewhere kind creates it, IPv6 on, for a dual-stack cluster",
    },
    k3dArgs: null,
    k3dWhy: "k3s dual-stack needs IPv6 node addresses from the Docker network; not declared for k3d",
    expect: () => ({ ipFamilies: ["ipv4", "ipv6"] }),
    sources: [
      "kind v0.31.0 pkg/internal/apis/config/default.go (dual defaults 10.244.0.0/16,fd00:10:244::/56 and 10.96.0.0/16,fd00:10:96::/112)",
      "cilium-configmap.yaml: ipv6.enabled → enable-ipv6",
    ],
    notes: [
      "Services stay single-stack IPv4 unless they ask ipFamilyPolicy PreferDualStack/RequireDualStack",
      "kind reuses an existing `kind` Docker network without IPv6: the network must have IPv6",
    ],
  },
  netkit: {
    name: "netkit",
    description: "netkit devices instead of veth pairs for Pods (kernel ≥ 6.7 with CONFIG_NETKIT)",
    modes: ["kpr"],
    helm: () => ({ bpf: { datapathMode: "netkit", masquerade: true, hostLegacyRouting: false } }),
    k3dArgs: [],
    expect: () => ({ deviceMode: "netkit" }),
    needs: [
      {
        config: "CONFIG_NETKIT",
        refusal: "netkit needs a kernel with CONFIG_NETKIT; this machine's kernel lacks it",
      },
    ],
    neverRun: "declared from the source; the lab's kernel has no CONFIG_NETKIT (the agent exits)",
    sources: [
      "cilium-configmap.yaml: bpf.datapathMode → datapath-mode",
      'the agent on the lab (2026-12-03): "netkit connector not available: netkit device probe failed, requires kernel 6.7.0+ and CONFIG_NETKIT" (https://github.com/cilium/cilium/blob/v1.20.2/pkg/datapath/connector/config.go)',
    ],
    notes: ["BPF host routing with netkit is the documented pairing [unverified on a cluster]"],
  },
};

export function parseDatapathProfile(v: string | undefined): DatapathProfileName | undefined {
  if (v === undefined || v === "") return undefined;
  if (!DATAPATH_PROFILES.includes(v as DatapathProfileName))
    throw new UserError(
      `unknown datapath profile ${JSON.stringify(v)}; valid: ${DATAPATH_PROFILES.join(", ")}`,
    );
  return v as DatapathProfileName;
}

/** The profile for a mode, or a one-line refusal when it does not apply to that mode. */
export function datapathProfile(name: DatapathProfileName, mode: Mode): DatapathProfile {
  const p = PROFILES[name];
  if (!p.modes.includes(mode))
    throw new UserError(`datapath profile ${name} applies to ${p.modes.join(" and ")} only (not ${mode})`);
  return p;
}

/**
 * This machine's kernel config (`/proc/config.gz`, else `/boot/config-<release>`), or null when neither is
 * readable (then no profile is refused for the kernel: it cannot be told).
 */
export function readKernelConfig(release: string): string | null {
  if (existsSync("/proc/config.gz")) return gunzipSync(readFileSync("/proc/config.gz")).toString("utf8");
  const boot = `/boot/config-${release}`;
  return existsSync(boot) ? readFileSync(boot, "utf8") : null;
}

/** The one line a run on this machine refuses the profile with; null when the kernel has what it needs. */
export function kernelRefusal(p: DatapathProfile, kernelConfig: string | null): string | null {
  if (kernelConfig === null) return null;
  for (const need of p.needs ?? []) {
    const set = new RegExp(`^${need.config}=[ym]$`, "m").test(kernelConfig);
    if (!set) return need.refusal;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------------------------
// the user's values

const isObject = (v: unknown): v is Values => typeof v === "object" && v !== null && !Array.isArray(v);

/** Reads a Helm values file (YAML); one line for a missing, unreadable or non-mapping file. */
export function loadUserValues(file: string): Values {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new UserError(
      `values file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    const first = String((err as Error).message).split("\n")[0];
    throw new UserError(`values file ${file}: not YAML (${first})`);
  }
  if (doc === null || doc === undefined) return {};
  if (!isObject(doc))
    throw new UserError(`values file ${file}: expected a mapping of Helm values at the top`);
  return doc;
}

/** CILIUM_VALUES=FILE (the CLI's `--values FILE` sets the same). */
export function userValuesFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.CILIUM_VALUES || undefined;
}

/**
 * The user's values UNDER the suite's: objects merge key by key, the suite's value wins on every key it sets.
 * `overridden` lists (dotted) each key the user set that the suite replaced with another value.
 */
export function mergeUserValues(user: Values, suite: Values): { values: Values; overridden: string[] } {
  const overridden: string[] = [];
  const merge = (u: Values, s: Values, path: string): Values => {
    const out: Values = { ...u };
    for (const [k, sv] of Object.entries(s)) {
      const key = path ? `${path}.${k}` : k;
      const uv = u[k];
      if (isObject(uv) && isObject(sv)) out[k] = merge(uv, sv, key);
      else {
        if (k in u && JSON.stringify(uv) !== JSON.stringify(sv)) overridden.push(key);
        out[k] = sv;
      }
    }
    return out;
  };
  const values = merge(user, suite, "");
  return { values, overridden: overridden.sort() };
}

/** One line for the run's output: which of the user's keys the suite replaced. */
export function formatOverridden(file: string, overridden: string[]): string {
  return overridden.length === 0
    ? `values ${file}: merged under the suite's; the suite overrode none of its keys`
    : `values ${file}: merged under the suite's; the suite overrode ${overridden.join(", ")}`;
}
