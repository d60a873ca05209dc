/**
 * Topic "kube-dns" — The notebook, §2.
 * kube-dns in the agent's Service map (and in kube-proxy's rules where it runs), matching its EndpointSlice.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */
import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { kubectlRaw, nodes, type PodInfo } from "../../helpers/observe/cluster.ts";
import type { RunContext } from "../../helpers/observe/context.ts";
import { iptablesSaveRaw } from "../../helpers/observe/node.ts";
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
import {
  findAgentService,
  RecordError,
  readyEvidence,
  SERVICE_ID_MEMBERS,
  serviceBackendQuotes,
  serviceQuotes,
} from "../../helpers/records/common.ts";
import { derive, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidenced, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import type { DnsRecord } from "./kube-dns.records.ts";
import { records } from "./kube-dns.records.ts";

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
  records,
  schedule: {
    after: [],
    why: "reads kube-dns's Service, slots and rules only, and changes nothing",
  },
  observe: observeKubeDns,
  properties: [
    {
      id: "kube-dns.backends-follow-endpointslice",
      claim:
        "The agent's kube-dns backends are the EndpointSlice's ready addresses (control plane → programmed dataplane)",
      source: NB("§2"),
      why: "the agent programs kube-dns's backends from its EndpointSlice in every configuration; kube-dns has one ClusterIP (kubeadm's Service sets clusterIP and no ipFamilyPolicy), so its frontend and its slice are of one family on a dual-stack cluster too",
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      config: "none",
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
      config: {
        // read from iptables-save: nftables mode's service-…/endpoint-… chains and ipvs mode's virtual servers
        // are not modelled here
        assumes: { kpr: { kubeProxy: ["none"] }, "kube-proxy": { kubeProxy: ["iptables"] } },
      },
      needs: ["dns"],
      observe: (r) => {
        const d = r.get("dns");
        const dnat = d.kube_proxy_rules.filter(
          (l) =>
            l.includes("-j DNAT") && d.endpointslice_ready.some((ep) => l.includes(`--to-destination ${ep}`)),
        );
        return { value: dnat.length, evidence: r.evidence("dns", "kube_proxy_rules") };
      },
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Notebook §2. */
export async function observeKubeDns(ctx: RunContext): Promise<RecordSet> {
  const { ip, coredns } = await kubeDns(ctx);
  const node = (coredns[0] as PodInfo | undefined)?.node ?? (await nodes(ctx))[0]?.name ?? "";
  const services = read(
    await ciliumDbgRaw(ctx, node, ["service", "list", "-o", "json"]),
    parseServiceListJson,
  );
  const slices = read(
    await kubectlRaw(ctx, [
      "-n",
      "kube-system",
      "get",
      "endpointslices",
      "-l",
      "kubernetes.io/service-name=kube-dns",
      "-o",
      "json",
    ]),
    parseEndpointSliceJson,
  );
  const iptables = read(await iptablesSaveRaw(ctx, node), parseIptablesSave);
  return { dns: buildDnsRecord({ clusterIp: ip, port: 53, protocol: "UDP", services, slices, iptables }) };
}

/**
 * Notebook §2: the kube-dns EndpointSlice and the agent's backends for the same frontend. The slice's side is
 * shown by each ready endpoint's address and the CoreDNS Pod it names (targetRef), the agent's by its entry.
 */
export function buildDnsRecord(input: {
  clusterIp: string;
  port: number;
  protocol: "UDP" | "TCP";
  services: Read<ServiceList>;
  slices: Read<EndpointSlices>;
  iptables: Read<IptablesSave>;
}): Evidenced<DnsRecord> {
  const frontend = formatEndpoint(input.clusterIp, input.port);
  const svc = findAgentService(input.services.parsed, frontend, {
    type: "ClusterIP",
    protocol: input.protocol,
  });
  if (!svc)
    throw new RecordError(
      "dns",
      "agent_backends",
      `no ${frontend}/${input.protocol} entry in the agent's service list`,
    );
  const ready = readyAddresses(input.slices.parsed, input.port);
  const comment = "kube-system/kube-dns:dns";
  const rules = allRules(input.iptables.parsed)
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
    .filter((r) => r.target !== "KUBE-MARK-MASQ");
  const raw = input.services.raw;
  return {
    record: {
      cluster_ip: input.clusterIp,
      frontend,
      endpointslice_ready: ready,
      agent_backends: svc.backends.map((b) => b.address).sort(),
      kube_proxy_rules: rules.map((r) => r.text),
    },
    evidence: {
      agent_backends: [
        ...serviceQuotes(raw, svc, SERVICE_ID_MEMBERS),
        ...svc.backends.flatMap((b) => serviceBackendQuotes(raw, b)),
      ],
      endpointslice_ready: readyEvidence(input.slices, input.port),
      kube_proxy_rules:
        rules.length > 0
          ? rules.map((r) => input.iptables.raw.quote(r.line))
          : [derive(`no rule commented ${comment}`, input.iptables.raw)],
    },
  };
}
