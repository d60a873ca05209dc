// One file over 450 lines: every command's scripted output in its documented layout, filled from one Scenario
import { policyMapName } from "../../helpers/parse/map-list.ts";
/**
 * WRITTEN BY US. Command outputs in the layouts documented in ../shared/knowledge/output-formats.md
 * (tabwriter padding, 1.18+ service JSON, `/PROTO` and slot keys, 1.19+ wildcard rows, …), filled in from
 * a Scenario. They make hand-made bundles; they are not captured from a cluster.
 */
import type { PodSpec, Scenario } from "./scenario.ts";

const pad = (s: string, n: number) => s.padEnd(n);
const kpr = (s: Scenario) => s.mode === "kpr";

function devices(s: Scenario, node: string): string {
  const ip = s.nodes.find((n) => n.name === node)?.ip ?? "172.18.0.3";
  const last = ip.split(".")[3];
  // the 1+N spaces quirk: three addresses → four spaces after the device name
  return `eth0    ${ip} fc00:f853:ccd:e793::${last} fe80::42:acff:fe12:${last} (Direct Routing)`;
}

export function status(s: Scenario, node: string, verbose: boolean): string {
  const lines = [
    "KVStore:                 Disabled   ",
    `Kubernetes:              Ok   1.35 (${s.kubernetes}) [linux/amd64]`,
    'Kubernetes APIs:         ["EndpointSliceOrEndpoint", "cilium/v2::CiliumClusterwideNetworkPolicy", "cilium/v2::CiliumEndpoint", "cilium/v2::CiliumNetworkPolicy", "cilium/v2::CiliumNode", "core/v1::Namespace", "core/v1::Pods", "core/v1::Service", "networking.k8s.io/v1::NetworkPolicy"]',
    kpr(s) ? `KubeProxyReplacement:    True   [${devices(s, node)}]` : "KubeProxyReplacement:    False",
    "Host firewall:           Disabled",
    "SRv6:                    Disabled",
    "CNI Chaining:            none",
    "CNI Config file:         successfully wrote CNI configuration file to /host/etc/cni/net.d/05-cilium.conflist",
    `Cilium:                  Ok   ${s.cilium} (v${s.cilium}-3f1d2c4e)`,
    "NodeMonitor:             Listening for events on 4 CPUs with 64x4096 of shared memory",
    "Cilium health daemon:    Ok   ",
    `IPAM:                    IPv4: 7/254 allocated from ${s.nodes.find((n) => n.name === node)?.podCidr}, `,
    "IPv4 BIG TCP:            Disabled",
    "IPv6 BIG TCP:            Disabled",
    "BandwidthManager:        Disabled",
    "Routing:                 Network: Tunnel [vxlan]   Host: Legacy",
    "Attach Mode:             TCX",
    "Device Mode:             veth",
    "Masquerading:            IPTables [IPv4: Enabled, IPv6: Disabled]",
    "Controller Status:       38/38 healthy",
    "Proxy Status:            OK, ip 10.244.1.67, 0 redirects active on ports 10000-20000, Envoy: external",
    "Global Identity Range:   min 256, max 65535",
    "Hubble:                  Ok              Current/Max Flows: 4095/4095 (100.00%), Flows/s: 7.41   Metrics: Disabled",
  ];
  if (verbose) {
    lines.push("KubeProxyReplacement Details:");
    if (kpr(s)) {
      lines.push(
        "  Status:                 True",
        "  Socket LB:              Enabled",
        "  Socket LB Tracing:      Enabled",
        "  Socket LB Coverage:     Full",
        `  Devices:                ${devices(s, node)}`,
        "  Mode:                   SNAT",
        "  Backend Selection:      Random",
        "  Session Affinity:       Enabled",
        "  NAT46/64 Support:       Disabled",
        "  XDP Acceleration:       Disabled",
        "  Services:",
        "  - ClusterIP:      Enabled",
        "  - NodePort:       Enabled (Range: 30000-32767) ",
        "  - LoadBalancer:   Enabled ",
        "  - externalIPs:    Enabled ",
        "  - HostPort:       Enabled",
        "  Annotations:      (n/a)",
      );
    } else {
      lines.push(
        "  Status:                 False",
        "  Socket LB:              Disabled",
        "  Socket LB Tracing:      Enabled",
        "  Session Affinity:       Enabled",
        "  NAT46/64 Support:       Disabled",
        "  Services:",
        "  - ClusterIP:      Enabled",
        "  - NodePort:       Disabled",
        "  - LoadBalancer:   Disabled",
        "  - externalIPs:    Disabled",
        "  - HostPort:       Disabled",
        "  Annotations:      (n/a)",
      );
    }
  }
  lines.push(
    "Encryption:              Disabled",
    "Cluster health:          3/3 reachable   (2026-12-02T09:12:41Z)",
    "Modules Health:          Stopped(0) Degraded(0) OK(74)",
  );
  return `${lines.join("\n")}\n`;
}

export interface Svc {
  id: number;
  ip: string;
  port: number;
  protocol: string;
  type: string;
  ns: string;
  name: string;
  backends: { ip: string; port: number; node: string }[];
}

export function services(s: Scenario, web: PodSpec[], opts: { ghost: boolean; nodePort: boolean }): Svc[] {
  const dns = s.coredns.map((p) => ({ ip: p.ip, port: 53, node: p.node }));
  const out: Svc[] = [
    {
      id: 1,
      ip: s.ips.kubernetes,
      port: 443,
      protocol: "TCP",
      type: "ClusterIP",
      ns: "default",
      name: "kubernetes",
      backends: [{ ip: s.nodes[0]?.ip as string, port: 6443, node: "" }],
    },
    {
      id: 2,
      ip: s.ips.kubeDns,
      port: 53,
      protocol: "UDP",
      type: "ClusterIP",
      ns: "kube-system",
      name: "kube-dns",
      backends: dns,
    },
    {
      id: 3,
      ip: s.ips.kubeDns,
      port: 53,
      protocol: "TCP",
      type: "ClusterIP",
      ns: "kube-system",
      name: "kube-dns",
      backends: dns,
    },
    {
      id: 4,
      ip: s.ips.kubeDns,
      port: 9153,
      protocol: "TCP",
      type: "ClusterIP",
      ns: "kube-system",
      name: "kube-dns",
      backends: s.coredns.map((p) => ({ ip: p.ip, port: 9153, node: p.node })),
    },
    {
      id: 9,
      ip: s.ips.web,
      port: 80,
      protocol: "TCP",
      type: "ClusterIP",
      ns: "cca-dp",
      name: "web",
      backends: web.map((p) => ({ ip: p.ip, port: 8080, node: p.node })),
    },
  ];
  if (opts.ghost)
    out.push({
      id: 12,
      ip: s.ips.ghost,
      port: 80,
      protocol: "TCP",
      type: "ClusterIP",
      ns: "cca-dp",
      name: "ghost",
      backends: [],
    });
  if (opts.nodePort) {
    const b = web.map((p) => ({ ip: p.ip, port: 8080, node: p.node }));
    out.push({
      id: 10,
      ip: s.ips.webNp,
      port: 80,
      protocol: "TCP",
      type: "ClusterIP",
      ns: "cca-dp",
      name: "web-np",
      backends: b,
    });
    if (kpr(s))
      out.push({
        id: 11,
        ip: "0.0.0.0",
        port: 30780,
        protocol: "TCP",
        type: "NodePort",
        ns: "cca-dp",
        name: "web-np",
        backends: b,
      });
  }
  return out.sort((a, b) => a.id - b.id);
}

export function serviceListJson(list: Svc[]): string {
  const model = (x: Svc) => ({
    "backend-addresses": x.backends.map((b) => ({
      ip: b.ip,
      ...(b.node ? { nodeName: b.node } : {}),
      port: b.port,
      preferred: true,
      protocol: x.protocol,
      state: "active",
      weight: 100,
    })),
    flags: {
      extTrafficPolicy: "Cluster",
      intTrafficPolicy: "Cluster",
      name: x.name,
      namespace: x.ns,
      trafficPolicy: "Cluster",
      type: x.type,
    },
    "frontend-address": { ip: x.ip, port: x.port, protocol: x.protocol, scope: "external" },
    id: x.id,
  });
  return `${JSON.stringify(
    list.map((x) => ({ spec: model(x), status: { realized: model(x) } })),
    null,
    2,
  )}\n`;
}

/** bpf lb list: 1.17+ keys `ADDR/PROTO (slot)`, rows in map order (shuffled deterministically), 1.19+ wildcards. */
export function bpfLbList(s: Scenario, list: Svc[], nodeIps: string[]): string {
  const rows: [string, string][] = [];
  for (const x of list) {
    const revnat = x.id + 20;
    const flags = x.type === "NodePort" ? "NodePort, non-routable" : "ClusterIP, non-routable";
    rows.push([`${x.ip}:${x.port}/${x.protocol} (0)`, `0.0.0.0:0 (${revnat}) (0) [${flags}] `]);
    x.backends.forEach((b, i) => {
      rows.push([
        `${x.ip}:${x.port}/${x.protocol} (${i + 1})`,
        `${b.ip}:${b.port}/${x.protocol} (${revnat}) (${i + 1})`,
      ]);
    });
    if (x.type === "NodePort") {
      for (const nip of nodeIps) {
        rows.push([`${nip}:${x.port}/${x.protocol} (0)`, `0.0.0.0:0 (${revnat + 40}) (0) [NodePort] `]);
        x.backends.forEach((b, i) => {
          rows.push([
            `${nip}:${x.port}/${x.protocol} (${i + 1})`,
            `${b.ip}:${b.port}/${x.protocol} (${revnat + 40}) (${i + 1})`,
          ]);
        });
      }
    }
  }
  if (Number(s.ciliumMinor.split(".")[1]) >= 19) {
    for (const ip of new Set(list.filter((x) => x.type === "ClusterIP").map((x) => x.ip)))
      rows.push([`${ip}:0/ANY (0)`, "0.0.0.0:0 (0) (0) [ClusterIP, non-routable] "]);
  }
  // Go map order: deterministic shuffle
  const shuffled = rows
    .map((r, i) => ({ r, k: (i * 2654435761) % 4294967296 }))
    .sort((a, b) => a.k - b.k)
    .map((x) => x.r);
  return `${pad("SERVICE ADDRESS", 30)}BACKEND ADDRESS (REVNAT_ID) (SLOT)\n${shuffled.map(([k, v]) => `${pad(k, 30)}${v}`).join("\n")}\n`;
}

export function ctLine(dir: string, src: string, dst: string, revnat: number, backendId: number): string {
  return `TCP ${dir} ${src} -> ${dst} expires=${dir === "SVC" ? 17211 : 21604} Packets=0 Bytes=0 RxFlagsSeen=0x1b LastRxReport=${dir === "SVC" ? 0 : 21540} TxFlagsSeen=0x1b LastTxReport=21540 Flags=0x0010 [ SeenNonSyn ] RevNAT=${revnat} SourceSecurityID=0 BackendID=${backendId} NatPort=0 `;
}

export function ctList(s: Scenario): string {
  const client = `${s.holder.ip}:40404`;
  const backend = `${s.holderBackend.ip}:8080`;
  const lines = [
    ctLine("OUT", `${s.probe.ip}:51876`, `${s.coredns[0]?.ip}:53`, 23, 4).replace("TCP", "UDP"),
    ctLine("OUT", client, backend, 29, 7),
    ctLine("IN", `10.244.1.67:47212`, `${s.holder.ip}:8080`, 0, 0),
  ];
  if (!kpr(s)) lines.splice(1, 0, ctLine("SVC", client, `${s.ips.web}:80`, 29, 7));
  return `${lines.join("\n")}\n\n`;
}

export function configAll(): string {
  const ro = [
    ["AgentHealthPort", "9879"],
    ["BPFSocketLBHostnsOnly", "false"],
    ["BGPSecretsNamespace", ""],
    ["DNSProxyConcurrencyProcessingGracePeriod", "0"],
    ["Devices", "[eth0]"],
    ["EnableTCX", "true"],
    ["ServiceNoBackendResponse", "reject"],
    ["TunnelProtocol", "vxlan"],
  ];
  const rw = [
    ["ConntrackAccounting", "Disabled"],
    ["Debug", "Disabled"],
    ["DropNotification", "Enabled"],
    ["PolicyAuditMode", "Disabled"],
    ["TraceNotification", "Enabled"],
    ["MonitorNumPages", "64"],
    ["PolicyEnforcement", "default"],
  ];
  const fmt = ([k, v]: string[]) => `${(k as string).padEnd(34)}: ${v}`;
  return `#### Read-only configurations ####\n${ro.map(fmt).join("\n")}\n##### Read-write configurations #####\n${rw.map(fmt).join("\n")}\n`;
}

export function endpointGet(s: Scenario): string {
  return `${JSON.stringify(
    [
      {
        id: s.holderEndpointId,
        spec: { "label-configuration": {}, options: {} },
        status: {
          "external-identifiers": {
            "container-id": "5b1e…",
            "k8s-namespace": "cca-dp",
            "k8s-pod-name": "holder",
            "pod-name": "cca-dp/holder",
          },
          identity: { id: 40213, labels: ["k8s:app=holder", "k8s:io.kubernetes.pod.namespace=cca-dp"] },
          networking: {
            addressing: [{ ipv4: s.holder.ip, "ipv4-pool-name": "default" }],
            "container-interface-name": "eth0",
            "host-mac": "7a:2f:91:0c:5e:11",
            "interface-index": s.holderIfindex,
            "interface-name": s.holderDev,
            mac: "d2:8a:3b:47:90:2e",
          },
          state: "ready",
        },
      },
    ],
    null,
    2,
  )}\n`;
}

export function mapList(s: Scenario): string {
  const rows = [
    ["cilium_lb4_services_v2", 41],
    ["cilium_lb4_backends_v3", 14],
    ["cilium_lb4_reverse_nat", 16],
    ["cilium_ipcache_v2", 19],
    ["cilium_lxc", 6],
    [policyMapName(s.holderEndpointId, Number(s.ciliumMinor.split(".")[1])), 3],
    [policyMapName(412, Number(s.ciliumMinor.split(".")[1])), 2],
    ["cilium_runtime_config", 256],
  ];
  return `Name                           Num entries   Num errors   Cache enabled\n${rows.map(([n, e]) => `${String(n).padEnd(31)}${String(e).padEnd(14)}0            true`).join("\n")}\n`;
}

export function bpftoolNetDev(s: Scenario): string {
  return `xdp:\n\ntc:\n${s.holderDev}(${s.holderIfindex}) tcx/ingress cil_from_container prog_id 4821 link_id 37 \n\nflow_dissector:\n\nnetfilter:\n\n`;
}

/** iptables-save on a kind node: kubelet and Cilium chains always; kube-proxy chains only in kube-proxy mode. */
export function iptablesSave(
  s: Scenario,
  web: PodSpec[],
  o: {
    ghost: boolean;
    nodePort: boolean;
    counters?: { dnsUdp: number; natOnly?: boolean };
    measure?: MeasureSvc[];
  },
): string {
  const c = o.counters;
  const cnt = (n: number) => (c ? `[${n}:${n * 105}] ` : "");
  const z = c ? "[0:0] " : "";
  const head = (t: string) => [
    `# Generated by iptables-save v1.8.9 (nf_tables) on Wed Dec  2 09:12:40 2026`,
    `*${t}`,
  ];
  const nat: string[] = [
    ...head("nat"),
    ":PREROUTING ACCEPT [0:0]",
    ":INPUT ACCEPT [0:0]",
    ":OUTPUT ACCEPT [0:0]",
    ":POSTROUTING ACCEPT [0:0]",
    ":CILIUM_OUTPUT_nat - [0:0]",
    ":CILIUM_POST_nat - [0:0]",
    ":CILIUM_PRE_nat - [0:0]",
    ":DOCKER_OUTPUT - [0:0]",
    ":DOCKER_POSTROUTING - [0:0]",
    ":KUBE-KUBELET-CANARY - [0:0]",
  ];
  const natRules: string[] = [
    `${z}-A PREROUTING -m comment --comment "cilium-feeder: CILIUM_PRE_nat" -j CILIUM_PRE_nat`,
    `${z}-A OUTPUT -m comment --comment "cilium-feeder: CILIUM_OUTPUT_nat" -j CILIUM_OUTPUT_nat`,
    `${z}-A OUTPUT -d 172.18.0.1/32 -j DOCKER_OUTPUT`,
    `${z}-A POSTROUTING -m comment --comment "cilium-feeder: CILIUM_POST_nat" -j CILIUM_POST_nat`,
    `${z}-A CILIUM_POST_nat -s 10.244.1.0/24 ! -d 10.244.0.0/16 ! -o cilium_+ -m comment --comment "cilium masquerade non-cluster" -j MASQUERADE`,
    `${z}-A DOCKER_OUTPUT -d 172.18.0.1/32 -p udp -m udp --dport 53 -j DNAT --to-destination 127.0.0.11:51023`,
  ];
  const filter: string[] = [
    ...head("filter"),
    ":INPUT ACCEPT [0:0]",
    ":FORWARD ACCEPT [0:0]",
    ":OUTPUT ACCEPT [0:0]",
    ":CILIUM_FORWARD - [0:0]",
    ":CILIUM_INPUT - [0:0]",
    ":CILIUM_OUTPUT - [0:0]",
    ":KUBE-FIREWALL - [0:0]",
    ":KUBE-KUBELET-CANARY - [0:0]",
  ];
  const filterRules: string[] = [
    '-A INPUT -m comment --comment "cilium-feeder: CILIUM_INPUT" -j CILIUM_INPUT',
    "-A INPUT -j KUBE-FIREWALL",
    '-A FORWARD -m comment --comment "cilium-feeder: CILIUM_FORWARD" -j CILIUM_FORWARD',
    '-A OUTPUT -m comment --comment "cilium-feeder: CILIUM_OUTPUT" -j CILIUM_OUTPUT',
    "-A OUTPUT -j KUBE-FIREWALL",
    '-A CILIUM_FORWARD -o cilium_host -m comment --comment "cilium: any->cluster on cilium_host forward accept" -j ACCEPT',
    '-A CILIUM_FORWARD -i cilium_host -m comment --comment "cilium: cluster->any on cilium_host forward accept (nodeport)" -j ACCEPT',
    '-A CILIUM_FORWARD -i lxc+ -m comment --comment "cilium: cluster->any on lxc+ forward accept" -j ACCEPT',
    '-A CILIUM_FORWARD -i cilium_net -m comment --comment "cilium: cluster->any on cilium_net forward accept (nodeport)" -j ACCEPT',
    '-A CILIUM_INPUT -m mark --mark 0x200/0xf00 -m comment --comment "cilium: ACCEPT for proxy traffic" -j ACCEPT',
    '-A CILIUM_OUTPUT -m mark --mark 0xa00/0xe00 -m comment --comment "cilium: ACCEPT for proxy traffic" -j ACCEPT',
    '-A CILIUM_OUTPUT -m comment --comment "cilium: host->any mark as from host" -j MARK --set-xmark 0xc00/0xf00',
    '-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment "block incoming localnet connections" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP',
  ];
  if (!kpr(s)) {
    const hash = (t: string) => {
      let h = 2166136261;
      for (const ch of t) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
      let out = "";
      for (let i = 0; i < 16; i++) {
        out += "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"[h % 32];
        h = Math.imul(h ^ i, 2654435761) >>> 0;
      }
      return out;
    };
    nat.push(
      ":KUBE-MARK-MASQ - [0:0]",
      ":KUBE-NODEPORTS - [0:0]",
      ":KUBE-POSTROUTING - [0:0]",
      ":KUBE-PROXY-CANARY - [0:0]",
      ":KUBE-SERVICES - [0:0]",
    );
    natRules.push(
      `${z}-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`,
      `${z}-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`,
      `${z}-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING`,
      `${z}-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000`,
      `${z}-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN`,
    );
    const svcs: {
      ns: string;
      name: string;
      port: string;
      ip: string;
      p: number;
      proto: string;
      eps: string[];
    }[] = [
      {
        ns: "kube-system",
        name: "kube-dns",
        port: "dns",
        ip: s.ips.kubeDns,
        p: 53,
        proto: "udp",
        eps: s.coredns.map((x) => `${x.ip}:53`),
      },
      {
        ns: "kube-system",
        name: "kube-dns",
        port: "dns-tcp",
        ip: s.ips.kubeDns,
        p: 53,
        proto: "tcp",
        eps: s.coredns.map((x) => `${x.ip}:53`),
      },
      {
        ns: "default",
        name: "kubernetes",
        port: "https",
        ip: s.ips.kubernetes,
        p: 443,
        proto: "tcp",
        eps: [`${s.nodes[0]?.ip}:6443`],
      },
      {
        ns: "cca-dp",
        name: "web",
        port: "http",
        ip: s.ips.web,
        p: 80,
        proto: "tcp",
        eps: web.map((x) => `${x.ip}:8080`),
      },
    ];
    for (const m of o.measure ?? [])
      svcs.push({
        ns: "cca-dp",
        name: m.name,
        port: "http",
        ip: m.ip,
        p: 80,
        proto: "tcp",
        eps: m.endpoints.map((e) => `${e}:8080`),
      });
    if (o.nodePort)
      svcs.push({
        ns: "cca-dp",
        name: "web-np",
        port: "http",
        ip: s.ips.webNp,
        p: 80,
        proto: "tcp",
        eps: web.map((x) => `${x.ip}:8080`),
      });
    for (const v of svcs) {
      const id = `${v.ns}/${v.name}:${v.port}`;
      const svcChain = `KUBE-SVC-${hash(id)}`;
      nat.push(`:${svcChain} - [0:0]`);
      const isDns = id === "kube-system/kube-dns:dns";
      const n = isDns && c ? c.dnsUdp : 0;
      natRules.push(
        `${c ? (isDns ? cnt(n) : z) : ""}-A KUBE-SERVICES -d ${v.ip}/32 -p ${v.proto} -m comment --comment "${id} cluster IP" -m ${v.proto} --dport ${v.p} -j ${svcChain}`,
      );
      natRules.push(
        `${z}-A ${svcChain} ! -s 10.244.0.0/16 -d ${v.ip}/32 -p ${v.proto} -m comment --comment "${id} cluster IP" -m ${v.proto} --dport ${v.p} -j KUBE-MARK-MASQ`,
      );
      v.eps.forEach((ep, i) => {
        const sep = `KUBE-SEP-${hash(`${id}${ep}`)}`;
        nat.push(`:${sep} - [0:0]`);
        const prob =
          v.eps.length - i > 1
            ? ` -m statistic --mode random --probability ${(1 / (v.eps.length - i)).toFixed(11)}`
            : "";
        const hits = isDns && c && i === 0 ? cnt(n) : z;
        natRules.push(`${hits}-A ${svcChain} -m comment --comment "${id} -> ${ep}"${prob} -j ${sep}`);
        natRules.push(
          `${z}-A ${sep} -s ${ep.split(":")[0]}/32 -m comment --comment "${id}" -j KUBE-MARK-MASQ`,
        );
        natRules.push(
          `${hits}-A ${sep} -p ${v.proto} -m comment --comment "${id}" -m ${v.proto} -j DNAT --to-destination ${ep}`,
        );
      });
      if (v.name === "web-np") {
        const ext = `KUBE-EXT-${hash(id)}`;
        nat.push(`:${ext} - [0:0]`);
        natRules.push(
          `${z}-A KUBE-NODEPORTS -p tcp -m comment --comment "${id}" -m tcp --dport 30780 -j ${ext}`,
        );
        natRules.push(
          `${z}-A ${ext} -m comment --comment "masquerade traffic for ${id} external destinations" -j KUBE-MARK-MASQ`,
        );
        natRules.push(`${z}-A ${ext} -j ${svcChain}`);
      }
    }
    natRules.push(
      `${z}-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS`,
    );
    filter.push(
      ":KUBE-EXTERNAL-SERVICES - [0:0]",
      ":KUBE-FORWARD - [0:0]",
      ":KUBE-NODEPORTS - [0:0]",
      ":KUBE-PROXY-CANARY - [0:0]",
      ":KUBE-PROXY-FIREWALL - [0:0]",
      ":KUBE-SERVICES - [0:0]",
    );
    filterRules.push(
      '-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
      '-A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
      "-A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name  ct_state_invalid_dropped_pkts -j DROP",
    );
    if (o.ghost) {
      filterRules.push(
        `-A KUBE-SERVICES -d ${s.ips.ghost}/32 -p tcp -m comment --comment "cca-dp/ghost:http has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable`,
      );
    }
  }
  const natText = [...nat, ...natRules, "COMMIT", "# Completed on Wed Dec  2 09:12:40 2026"];
  if (c?.natOnly) return `${natText.join("\n")}\n`;
  return `${[...natText, ...filter, ...filterRules.map((r) => `${z}${r}`), "COMMIT", "# Completed on Wed Dec  2 09:12:40 2026"].join("\n")}\n`;
}

export function metricsJson(s: Scenario): string {
  const drops =
    s.mode === "kpr"
      ? [{ reason: "Unsupported L3 protocol", direction: "EGRESS", value: 3 }]
      : [
          { reason: "Service backend not found", direction: "EGRESS", value: 1 },
          { reason: "Unsupported L3 protocol", direction: "EGRESS", value: 3 },
        ];
  const metrics = [
    {
      name: "cilium_agent_api_process_time_seconds",
      labels: { method: "GET", path: "/v1/healthz", return_code: "200" },
      value: 0.012,
    },
    ...drops.map((d) => ({
      name: "cilium_drop_count_total",
      labels: { direction: d.direction, reason: d.reason },
      value: d.value,
    })),
    { name: "cilium_endpoint_state", labels: { endpoint_state: "ready" }, value: 7 },
  ];
  return `${JSON.stringify(metrics, null, 2)}\n`;
}

/** A measurement Service (issue 6): no Pods, endpoints straight from an EndpointSlice. */
export interface MeasureSvc {
  id: number;
  name: string;
  ip: string;
  endpoints: string[];
}

export function measureServices(list: MeasureSvc[]): Svc[] {
  return list.map((m) => ({
    id: m.id,
    ip: m.ip,
    port: 80,
    protocol: "TCP",
    type: "ClusterIP",
    ns: "cca-dp",
    name: m.name,
    backends: m.endpoints.map((e) => ({ ip: e, port: 8080, node: "" })),
  }));
}
