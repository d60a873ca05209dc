/**
 * WRITTEN BY US. The cluster a hand-made bundle describes: a 3-node kind cluster (kind's default Pod and
 * Service CIDRs, tunnel/vxlan, TCX) in one mode. Addresses and names are illustrative; every output built
 * from them follows the formats documented in ../shared/knowledge/output-formats.md.
 */
import type { Mode } from "../../helpers/properties/expectation.ts";

export interface PodSpec {
  name: string;
  ip: string;
  node: string;
}

export interface Scenario {
  mode: Mode;
  cilium: string;
  ciliumMinor: string;
  kubernetes: string;
  kernel: string;
  cluster: string;
  nodes: { name: string; ip: string; podCidr: string; ciliumHost: string }[];
  web: PodSpec[];
  holder: PodSpec;
  probe: PodSpec;
  /** The notebook's client, on a node without CoreDNS. */
  dnsClient: PodSpec;
  coredns: PodSpec[];
  ips: { web: string; ghost: string; webNp: string; kubeDns: string; kubernetes: string };
  holderEndpointId: number;
  holderDev: string;
  holderIfindex: number;
  /** The web Pod the holder's connection lands on. */
  holderBackend: PodSpec;
}

export function scenario(mode: Mode): Scenario {
  const cluster = mode === "kpr" ? "cilium-kpr" : "cilium-kp";
  const n = (suffix: string) => `${cluster}-${suffix}`;
  const nodes = [
    { name: n("control-plane"), ip: "172.18.0.2", podCidr: "10.244.0.0/24", ciliumHost: "10.244.0.171" },
    { name: n("worker"), ip: "172.18.0.3", podCidr: "10.244.1.0/24", ciliumHost: "10.244.1.67" },
    { name: n("worker2"), ip: "172.18.0.4", podCidr: "10.244.2.0/24", ciliumHost: "10.244.2.203" },
  ];
  const w1 = nodes[1]?.name as string;
  const w2 = nodes[2]?.name as string;
  const web = [
    { name: "web-6d5f7c9b8-4qzxk", ip: "10.244.1.11", node: w1 },
    { name: "web-6d5f7c9b8-9lmtw", ip: "10.244.2.12", node: w2 },
    { name: "web-6d5f7c9b8-cx7vp", ip: "10.244.1.13", node: w1 },
    { name: "web-6d5f7c9b8-tr2hs", ip: "10.244.2.14", node: w2 },
  ];
  return {
    mode,
    cilium: mode === "kpr" ? "1.20.1" : "1.19.1",
    ciliumMinor: mode === "kpr" ? "1.20" : "1.19",
    kubernetes: "v1.35.0",
    kernel: "6.17.0-1018-azure",
    cluster,
    nodes,
    web,
    holder: { name: "holder", ip: "10.244.1.20", node: w1 },
    probe: { name: "probe", ip: "10.244.1.21", node: w1 },
    dnsClient: { name: "dns-client", ip: "10.244.1.22", node: w1 },
    coredns: [
      { name: "coredns-7c65d6cfc9-jbq4m", ip: "10.244.0.5", node: nodes[0]?.name as string },
      { name: "coredns-7c65d6cfc9-xk2dn", ip: "10.244.0.6", node: nodes[0]?.name as string },
    ],
    ips: {
      web: "10.96.112.41",
      ghost: "10.96.201.7",
      webNp: "10.96.77.5",
      kubeDns: "10.96.0.10",
      kubernetes: "10.96.0.1",
    },
    holderEndpointId: 1733,
    holderDev: "lxc4f0e2a9c1b7d",
    holderIfindex: 23,
    holderBackend: web[1] as PodSpec,
  };
}
