import { formatEndpoint } from "../parse/address.ts";
import { type EndpointSlices, readyAddresses } from "../parse/endpointslice-json.ts";
import { type IpAddrOutput, prefixContains } from "../parse/ip-addr.ts";
import type { IpRouteOutput } from "../parse/ip-route.ts";
import { allRules, type IptablesSave } from "../parse/iptables-save.ts";
import type { ServiceList } from "../parse/service-list.ts";
import type { TcpdumpOutput } from "../parse/tcpdump.ts";
import { findAgentService, RecordError } from "./lab.ts";
import type {
  ClusterIpHostRecord,
  DnsRecord,
  Evidenced,
  RemoteRouteRecord,
  TranslationRecord,
  VxlanRecord,
} from "./types.ts";

/** Notebook §2: the kube-dns EndpointSlice and the agent's backends for the same frontend. */
export function buildDnsRecord(input: {
  clusterIp: string;
  port: number;
  protocol: "UDP" | "TCP";
  services: ServiceList;
  slices: EndpointSlices;
  iptables: IptablesSave;
}): Evidenced<DnsRecord> {
  const frontend = formatEndpoint(input.clusterIp, input.port);
  const svc = findAgentService(input.services, frontend, { type: "ClusterIP", protocol: input.protocol });
  if (!svc)
    throw new RecordError(
      "dns",
      "agent_backends",
      `no ${frontend}/${input.protocol} entry in the agent's service list`,
    );
  const ready = readyAddresses(input.slices, input.port);
  const comment = "kube-system/kube-dns:dns";
  const rules = allRules(input.iptables)
    .filter(
      (r) =>
        r.comment === `${comment} cluster IP` ||
        r.comment === comment ||
        r.comment?.startsWith(`${comment} -> `),
    )
    .filter(
      (r) =>
        r.chain === "KUBE-SERVICES" || r.chain.startsWith("KUBE-SVC-") || r.chain.startsWith("KUBE-SEP-"),
    )
    .filter((r) => r.target !== "KUBE-MARK-MASQ")
    .map((r) => r.text);
  return {
    record: {
      cluster_ip: input.clusterIp,
      frontend,
      endpointslice_ready: ready,
      agent_backends: svc.backends.map((b) => b.address).sort(),
      kube_proxy_rules: rules,
    },
    evidence: {
      agent_backends: svc.backends.map(
        (b) => `${svc.id} ${svc.frontend}/${input.protocol} ${b.address} (${b.state})`,
      ),
      endpointslice_ready: input.slices.slices.flatMap((s) =>
        s.endpoints.map(
          (e) => `${s.name} ${e.addresses.join(",")} ready=${e.ready} node=${e.nodeName ?? "?"}`,
        ),
      ),
    },
  };
}

/** Notebook §4: interfaces holding the ClusterIP, and routes more specific than default that contain it. */
export function buildClusterIpHostRecord(input: {
  clusterIp: string;
  addrs: IpAddrOutput;
  routes: IpRouteOutput;
}): Evidenced<ClusterIpHostRecord> {
  const onIf = input.addrs.addresses.filter((a) => a.ip === input.clusterIp);
  const routes = input.routes.routes.filter(
    (r) => prefixContains(r.destination, input.clusterIp) && r.type !== "broadcast",
  );
  const show = (r: (typeof routes)[number]) =>
    [r.type, r.destination, r.via && `via ${r.via}`, r.dev && `dev ${r.dev}`, r.table && `table ${r.table}`]
      .filter(Boolean)
      .join(" ");
  return {
    record: {
      cluster_ip: input.clusterIp,
      interfaces_with_ip: onIf.map((a) => a.device),
      routes_to_ip: routes.map(show),
    },
    evidence: {
      interfaces_with_ip: onIf.map((a) => `${a.ifindex}: ${a.device} ${a.family} ${a.cidr}`),
      routes_to_ip: routes.map(show),
    },
  };
}

/** Notebook §5: `ip route get <remote Pod IP>` on the client's node. */
export function buildRemoteRouteRecord(input: {
  destination: string;
  routeGet: IpRouteOutput;
  routeGetRaw: string;
  underlayMtu: number | null;
}): Evidenced<RemoteRouteRecord> {
  const r = input.routeGet.routes[0];
  if (!r)
    throw new RecordError(
      "route",
      "dev",
      `ip route get ${input.destination} gave no route${input.routeGet.error ? ` (${input.routeGet.error})` : ""}`,
    );
  return {
    record: {
      destination: input.destination,
      dev: r.dev,
      src: r.src,
      mtu: r.mtu,
      underlay_mtu: input.underlayMtu,
    },
    evidence: { dev: input.routeGetRaw.split("\n").filter((l) => l.trim() !== "") },
  };
}

/** The packet counter of the KUBE-SERVICES rule whose comment is `comment` (needs `iptables-save -c`). */
export function ruleCounter(
  save: IptablesSave,
  comment: string,
): { packets: number | null; text: string } | null {
  const r = allRules(save).find((x) => x.chain === "KUBE-SERVICES" && x.comment === comment);
  return r ? { packets: r.packets, text: r.text } : null;
}

/** Notebook §6–7: counters of the kube-dns rule around host queries and around Pod queries. */
export function buildTranslationRecord(input: {
  comment: string;
  hostQueries: number;
  hostAnswers: number;
  podQueries: number;
  podAnswers: number;
  beforeHost: IptablesSave;
  afterHost: IptablesSave;
  beforePod: IptablesSave;
  afterPod: IptablesSave;
}): Evidenced<TranslationRecord> {
  const bh = ruleCounter(input.beforeHost, input.comment);
  const ah = ruleCounter(input.afterHost, input.comment);
  const bp = ruleCounter(input.beforePod, input.comment);
  const ap = ruleCounter(input.afterPod, input.comment);
  return {
    record: {
      rule: ah ? input.comment : null,
      host_queries: input.hostQueries,
      host_answers: input.hostAnswers,
      host_packets_before: bh?.packets ?? null,
      host_packets_after: ah?.packets ?? null,
      pod_queries: input.podQueries,
      pod_answers: input.podAnswers,
      pod_packets_before: bp?.packets ?? null,
      pod_packets_after: ap?.packets ?? null,
    },
    evidence: {
      host_packets_before: bh ? [bh.text] : [],
      host_packets_after: ah ? [ah.text] : [],
      pod_packets_before: bp ? [bp.text] : [],
      pod_packets_after: ap ? [ap.text] : [],
    },
  };
}

/** Notebook §8: inner destinations of the tunnel packets of a Pod's queries. */
export function buildVxlanRecord(input: {
  clusterIp: string;
  backend: string;
  capture: TcpdumpOutput;
}): Evidenced<VxlanRecord> {
  const inner = input.capture.packets.filter((p) => p.inner?.proto === "IP");
  return {
    record: {
      cluster_ip: input.clusterIp,
      backend: input.backend,
      packets: inner.length,
      inner_destinations: [...new Set(inner.map((p) => p.inner?.dst as string))].sort(),
    },
    evidence: {
      inner_destinations: inner
        .slice(0, 6)
        .map((p) => `outer ${p.outer.src} > ${p.outer.dst} inner ${p.inner?.src} > ${p.inner?.dst}`),
    },
  };
}
