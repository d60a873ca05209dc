/**
 * Topic "kube-dns" — The notebook, §2.
 * kube-dns in the agent's Service map (and in kube-proxy's rules where it runs), matching its EndpointSlice.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */
import { ciliumDbg } from "../../helpers/observe/agent.ts";
import { kubectlJson, nodes, type PodInfo } from "../../helpers/observe/cluster.ts";
import type { RunContext } from "../../helpers/observe/context.ts";
import { iptablesSave } from "../../helpers/observe/node.ts";
import { kubeDns } from "../../helpers/observe/workloads.ts";
import { formatEndpoint } from "../../helpers/parse/address.ts";
import {
  type EndpointSlices,
  parseEndpointSliceJson,
  readyAddresses,
} from "../../helpers/parse/endpointslice-json.ts";
import { allRules, type IptablesSave, parseIptablesSave } from "../../helpers/parse/iptables-save.ts";
import type { ServiceList } from "../../helpers/parse/service-list.ts";
import { parseServiceListJson } from "../../helpers/parse/service-list-json.ts";
import { NB, sameSet } from "../../helpers/properties/sources.ts";
import { findAgentService, RecordError } from "../../helpers/records/common.ts";
import type { DnsRecord, Evidenced, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";

export const topic = defineTopic({
  name: "kube-dns",
  title:
    "kube-dns in the agent's Service map (and in kube-proxy's rules where it runs), matching its EndpointSlice",
  source: NB("§2"),
  deploys: [],
  steps: [
    { on: "agent", run: "cilium-dbg service list -o json", for: "kube-dns's frontends and backends" },
    { on: "node", run: "iptables-save", for: "kube-proxy's kube-dns chains" },
  ],
  builds: ["dns"],
  observe: observeKubeDns,
  properties: [
    {
      id: "kube-dns.backends-follow-endpointslice",
      claim:
        "The agent's kube-dns backends are the EndpointSlice's ready addresses (control plane → programmed dataplane)",
      source: NB("§2"),
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      needs: ["dns"],
      observe: (r) => {
        const d = r.get("dns");
        return {
          value: d.agent_backends.length > 0 && sameSet(d.agent_backends, d.endpointslice_ready),
          evidence: [...r.evidence("dns", "agent_backends"), ...r.evidence("dns", "endpointslice_ready")],
        };
      },
    },
    {
      id: "kube-dns.kube-proxy-chain",
      claim:
        "kube-proxy represents kube-dns as KUBE-SERVICES → KUBE-SVC-* → KUBE-SEP-* → DNAT to the CoreDNS Pod",
      source: NB("§3"),
      expect: { kpr: { eq: 0 }, "kube-proxy": { gte: 1 } },
      needs: ["dns"],
      observe: (r) => {
        const d = r.get("dns");
        const dnat = d.kube_proxy_rules.filter(
          (l) =>
            l.includes("-j DNAT") && d.endpointslice_ready.some((ep) => l.includes(`--to-destination ${ep}`)),
        );
        return { value: dnat.length, evidence: d.kube_proxy_rules };
      },
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Notebook §2. */
export async function observeKubeDns(ctx: RunContext): Promise<RecordSet> {
  const { ip, coredns } = await kubeDns(ctx);
  const node = (coredns[0] as PodInfo | undefined)?.node ?? (await nodes(ctx))[0]?.name ?? "";
  const services = parseServiceListJson(await ciliumDbg(ctx, node, ["service", "list", "-o", "json"]));
  const slices = parseEndpointSliceJson(
    JSON.stringify(
      await kubectlJson(ctx, [
        "-n",
        "kube-system",
        "get",
        "endpointslices",
        "-l",
        "kubernetes.io/service-name=kube-dns",
      ]),
    ),
  );
  const iptables = parseIptablesSave(await iptablesSave(ctx, node));
  return { dns: buildDnsRecord({ clusterIp: ip, port: 53, protocol: "UDP", services, slices, iptables }) };
}

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
