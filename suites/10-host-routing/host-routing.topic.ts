/**
 * Topic "host-routing" — The notebook, §4.
 * A node's own view: the ClusterIP is on no interface and in no route, and a remote Pod is reached through the tunnel.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */
import { nodes, pods } from "../../helpers/observe/cluster.ts";
import type { RunContext } from "../../helpers/observe/context.ts";
import { onNode } from "../../helpers/observe/node.ts";
import { clientAndRemote } from "../../helpers/observe/workloads.ts";
import { type IpAddrOutput, parseIpAddr, prefixContains } from "../../helpers/parse/ip-addr.ts";
import { type IpRouteOutput, parseIpRoute } from "../../helpers/parse/ip-route.ts";
import type { ConfigDependence } from "../../helpers/properties/config.ts";
import { NB } from "../../helpers/properties/sources.ts";
import { RecordError } from "../../helpers/records/common.ts";
import { derive, type EvidenceItem, RawText, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidenced, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import type { ClusterIpHostRecord, RemoteRouteRecord } from "./host-routing.records.ts";
import { records } from "./host-routing.records.ts";

/**
 * kube-proxy in ipvs mode puts every ClusterIP on its kube-ipvs0 dummy device (with a local route to it): not
 * modelled here. iptables and nftables modes, and kpr, leave the ClusterIP on no interface and in no route
 * (helpers/properties/config.ts).
 */
const NO_IPVS = {
  kpr: { kubeProxy: ["none"] },
  "kube-proxy": { kubeProxy: ["iptables", "nftables"] },
} as const satisfies ConfigDependence["assumes"];

/**
 * The remote Pod's route goes through cilium_host in tunnel routing (the tunnel protocol does not change it);
 * native routing routes it over the underlay instead, not modelled here (clusters/datapath-profiles.ts: native-bpf).
 */
const TUNNEL = {
  kpr: { routing: ["tunnel"] },
  "kube-proxy": { routing: ["tunnel"] },
} as const satisfies ConfigDependence["assumes"];

/** Native routing: the remote PodCIDR's route leaves by the device the route to another node leaves by. */
const ON_THE_UNDERLAY = { match: "^the underlay device \\(" } as const;

export const topic = defineTopic({
  name: "host-routing",
  title:
    "A node's own view: the ClusterIP is on no interface and in no route, and a remote Pod is reached through the tunnel",
  source: NB("§4"),
  deploys: ["dns-client.yaml"],
  steps: [
    { on: "node", run: "ip -o addr show", for: "no interface holds the ClusterIP" },
    { on: "node", run: "ip route show table all", for: "no route names it" },
    { on: "node", run: "ip route get <ip>", for: "the route to a Pod on another node, and to that node" },
    { on: "node", run: "cat /sys/class/net/<dev>/mtu", for: "the underlay's MTU" },
  ],
  records,
  schedule: {
    after: [],
    why: "reads the routes and addresses toward kube-dns's ClusterIP and the other node's PodCIDR, and sends nothing (dns-client, its only object, is applied idempotently)",
  },
  observe: observeHostRouting,
  properties: [
    {
      id: "host-routing.clusterip-not-on-interface",
      claim: "The ClusterIP is assigned to no interface of the node",
      source: NB("§4"),
      expect: { kpr: { eq: [] }, "kube-proxy": { eq: [] } },
      config: { assumes: NO_IPVS },
      needs: ["clusterip"],
      observe: (r) => ({
        value: r.get("clusterip").interfaces_with_ip,
        evidence: r.evidence("clusterip", "interfaces_with_ip"),
      }),
    },
    {
      id: "host-routing.clusterip-no-route",
      claim: "The node has no dedicated route to the ClusterIP (only the default route covers it)",
      source: NB("§4"),
      expect: { kpr: { eq: [] }, "kube-proxy": { eq: [] } },
      config: { assumes: NO_IPVS },
      needs: ["clusterip"],
      observe: (r) => ({
        value: r.get("clusterip").routes_to_ip,
        evidence: r.evidence("clusterip", "routes_to_ip"),
      }),
    },
    {
      id: "host-routing.remote-podcidr-via-cilium-host",
      claim: "A Pod on another node is reached via cilium_host",
      source: NB("§5"),
      expect: { kpr: { eq: "cilium_host" }, "kube-proxy": { eq: "cilium_host" } },
      config: {
        assumes: TUNNEL,
        cases: [
          {
            when: { routing: ["native"] },
            expect: { kpr: ON_THE_UNDERLAY, "kube-proxy": ON_THE_UNDERLAY },
            claim:
              "With native routing a Pod on another node is reached over the underlay device — via that node's own address (autoDirectNodeRoutes) or a router — never via cilium_host: there is no tunnel to hand it to",
            why: "Cilium docs, network/concepts/routing.rst (Native-Routing): the Linux routing table must know the PodCIDRs of other nodes, installed by autoDirectNodeRoutes (pkg/datapath/linux/node.go: a route to each node's PodCIDR via its node IP) or by the network; tunnel mode instead routes them to cilium_host with the tunnel's MTU",
          },
        ],
      },
      needs: ["route"],
      observe: (r) => {
        const x = r.get("route");
        // over the underlay: the device the route to another node leaves by, named with the gateway
        if (x.dev !== null && x.dev !== "cilium_host" && x.underlay_dev && x.dev === x.underlay_dev)
          return {
            value: `the underlay device (${x.dev}${x.via ? ` via ${x.via}` : ""})`,
            evidence: [...r.evidence("route", "dev"), ...r.evidence("route", "underlay_dev")],
          };
        return { value: x.dev, evidence: r.evidence("route", "dev") };
      },
    },
    {
      id: "host-routing.tunnel-mtu",
      claim: "That route's MTU leaves room for the VXLAN header (underlay MTU − 50)",
      source: NB("§5"),
      expect: { kpr: { eq: 50 }, "kube-proxy": { eq: 50 } },
      config: {
        // 50 is VXLAN's overhead over an IPv4 underlay (outer Ethernet 14 + IPv4 20 + UDP 8 + VXLAN 8); the
        // underlay stays IPv4 on a dual-stack cluster; geneve and native routing are not modelled here
        assumes: {
          kpr: { routing: ["tunnel"], tunnelProtocol: ["vxlan"], ipFamilies: ["ipv4", "ipv4+ipv6"] },
          "kube-proxy": { routing: ["tunnel"], tunnelProtocol: ["vxlan"], ipFamilies: ["ipv4", "ipv4+ipv6"] },
        },
      },
      needs: ["route"],
      observe: (r) => {
        const x = r.get("route");
        return {
          value: x.mtu !== null && x.underlay_mtu !== null ? x.underlay_mtu - x.mtu : null,
          evidence: [...r.evidence("route", "mtu"), ...r.evidence("route", "underlay_mtu")],
        };
      },
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Notebook §4–5. */
export async function observeHostRouting(ctx: RunContext): Promise<RecordSet> {
  const { client, dnsIp, remote } = await clientAndRemote(ctx);
  const node = client.node;
  const addrs = read(RawText.stdout(await onNode(ctx, node, ["ip", "-o", "addr", "show"])), parseIpAddr);
  const routes = read(
    RawText.stdout(await onNode(ctx, node, ["ip", "route", "show", "table", "all"])),
    parseIpRoute,
  );
  const others = (await nodes(ctx)).filter((n) => n.name !== node);
  const target = remote?.ip ?? (await pods(ctx, ctx.namespace, "app=web")).find((p) => p.node !== node)?.ip;
  if (!target) throw new Error(`no Pod on a node other than ${node} to route to`);
  const routeGet = read(
    RawText.stdout(await onNode(ctx, node, ["ip", "route", "get", target])),
    parseIpRoute,
  );
  let underlay: { mtu: number | null; dev: string | null; evidence: EvidenceItem[] } = {
    mtu: null,
    dev: null,
    evidence: [],
  };
  if (others[0]) {
    const toNode = read(
      RawText.stdout(await onNode(ctx, node, ["ip", "route", "get", others[0].internalIp])),
      parseIpRoute,
    );
    const dev = toNode.parsed.routes[0]?.dev;
    if (dev) {
      const mtu = RawText.stdout(await onNode(ctx, node, ["cat", `/sys/class/net/${dev}/mtu`]));
      underlay = {
        mtu: Number(mtu.text.trim()) || null,
        dev,
        evidence: [...toNode.raw.nonBlank(), ...mtu.nonBlank()],
      };
    }
  }
  return {
    clusterip: buildClusterIpHostRecord({ clusterIp: dnsIp, addrs, routes }),
    route: buildRemoteRouteRecord({
      destination: target,
      routeGet,
      underlayMtu: underlay.mtu,
      underlayDev: underlay.dev,
      underlayEvidence: underlay.evidence,
    }),
  };
}

/** Notebook §4: interfaces holding the ClusterIP, and routes more specific than default that contain it. */
export function buildClusterIpHostRecord(input: {
  clusterIp: string;
  addrs: Read<IpAddrOutput>;
  routes: Read<IpRouteOutput>;
}): Evidenced<ClusterIpHostRecord> {
  const onIf = input.addrs.parsed.addresses.filter((a) => a.ip === input.clusterIp);
  const routes = input.routes.parsed.routes.filter(
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
      interfaces_with_ip:
        onIf.length > 0
          ? onIf.map((a) => input.addrs.raw.quote(a.line))
          : [derive(`no interface address is ${input.clusterIp}`, input.addrs.raw)],
      routes_to_ip:
        routes.length > 0
          ? routes.map((r) => input.routes.raw.quote(r.line))
          : [derive(`no route but default contains ${input.clusterIp}`, input.routes.raw)],
    },
  };
}

/** Notebook §5: `ip route get <remote Pod IP>` on the client's node. */
export function buildRemoteRouteRecord(input: {
  destination: string;
  routeGet: Read<IpRouteOutput>;
  underlayMtu: number | null;
  underlayDev?: string | null;
  /** `ip route get <another node>` and `cat /sys/class/net/<its dev>/mtu`. */
  underlayEvidence?: EvidenceItem[];
}): Evidenced<RemoteRouteRecord> {
  const r = input.routeGet.parsed.routes[0];
  if (!r)
    throw new RecordError(
      "route",
      "dev",
      `ip route get ${input.destination} gave no route${input.routeGet.parsed.error ? ` (${input.routeGet.parsed.error})` : ""}`,
    );
  const lines = input.routeGet.raw.nonBlank();
  return {
    record: {
      destination: input.destination,
      dev: r.dev,
      src: r.src,
      mtu: r.mtu,
      underlay_mtu: input.underlayMtu,
      via: r.via,
      underlay_dev: input.underlayDev ?? null,
    },
    evidence: {
      dev: lines,
      src: lines,
      mtu: lines,
      underlay_mtu: input.underlayEvidence ?? [],
      via: lines,
      underlay_dev: input.underlayEvidence?.slice(0, 1) ?? [],
    },
  };
}
