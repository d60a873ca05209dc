/**
 * Topic "service-map" — The lab, step 2.
 * The agent's Service map: web's ClusterIP frontend and its two backends, in both modes.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */
import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { clusterIpRaw, type PodInfo } from "../../helpers/observe/cluster.ts";
import type { RunContext } from "../../helpers/observe/context.ts";
import { backendsOf, waitSlots } from "../../helpers/observe/steps.ts";
import { ensureWeb, WEB_PORT } from "../../helpers/observe/workloads.ts";
import { formatEndpoint } from "../../helpers/parse/address.ts";
import type { LbList } from "../../helpers/parse/bpf-lb-list.ts";
import type { ServiceList } from "../../helpers/parse/service-list.ts";
import { parseServiceListJson } from "../../helpers/parse/service-list-json.ts";
import { u64Of } from "../../helpers/parse/u64.ts";
import { IPV4_SERVICE, requires } from "../../helpers/properties/requirements.ts";
import { LAB } from "../../helpers/properties/sources.ts";
import {
  backendPods,
  findAgentService,
  findLbService,
  lbBackendRows,
  type PodRef,
  RecordError,
  SERVICE_ID_MEMBERS,
  serviceQuotes,
} from "../../helpers/records/common.ts";
import { type EvidenceItem, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidenced, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import type { SvcRecord } from "./service-map.records.ts";
import { records } from "./service-map.records.ts";

/**
 * web is a single-stack IPv4 Service (its manifest asks no ipFamilyPolicy), so a dual-stack cluster leaves its
 * IPv4 frontend and backends as they are; an IPv6-only cluster is not modelled (clusters/datapath-profiles.ts: dual-stack).
 */
const IPV4_ONLY = requires(IPV4_SERVICE);

export const topic = defineTopic({
  name: "service-map",
  title: "The agent's Service map: web's ClusterIP frontend and its two backends, in both modes",
  source: LAB(2),
  deploys: ["web.yaml"],
  steps: [
    { on: "agent", run: "cilium-dbg bpf lb list", for: "web's slots, polled until they are the two Pods" },
    { on: "agent", run: "cilium-dbg service list -o json", for: "the Service id and names" },
  ],
  records,
  schedule: {
    after: ["iptables"],
    why: "web's backend slots must be exactly its two Pods: after iptables made them, before scale makes four",
  },
  shared: { counts: ["web backends"] },
  observe: observeServiceMap,
  properties: [
    {
      id: "service-map.clusterip-entry",
      claim:
        "The agent has a ClusterIP entry for cca-dp/web at ClusterIP:80 in both modes (Pod ClusterIP traffic stays in eBPF)",
      source: LAB(2),
      why: "KPR=false keeps ClusterIP handling for Pod traffic in eBPF (Cilium docs, https://docs.cilium.io/en/v1.20/network/kubernetes/kubeproxy-free/#quick-start: kubeProxyReplacement=false 'only enables per-packet in-cluster load-balancing of ClusterIP services')",
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      config: { assumes: IPV4_ONLY },
      needs: ["svc"],
      observe: (r) => {
        const svc = r.get("svc");
        return {
          value: u64Of(svc.service_id) !== null && svc.frontend.endsWith(":80"),
          evidence: r.evidence("svc", "service_id"),
        };
      },
    },
    {
      id: "service-map.two-backends",
      claim: "The web frontend's BPF LB slots hold exactly the two web Pods",
      source: LAB(2),
      expect: { kpr: { eq: 2 }, "kube-proxy": { eq: 2 } },
      config: { assumes: IPV4_ONLY },
      needs: ["svc"],
      observe: (r) => {
        const svc = r.get("svc");
        const matched = svc.backend_pods.filter((p) => p.startsWith("web")).length;
        return {
          value: svc.backends.length === 2 ? matched : svc.backends.length,
          evidence: [...r.evidence("svc", "backends"), ...r.evidence("svc", "backend_pods")],
        };
      },
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Lab step 2 (also the "before" of step 3). */
export async function observeServiceMap(ctx: RunContext): Promise<RecordSet> {
  const web = await ensureWeb(ctx, 2);
  const node = (web[0] as PodInfo).node;
  const cip = await clusterIpRaw(ctx, ctx.namespace, "web");
  const { lb } = await waitSlots(ctx, node, formatEndpoint(cip.ip, WEB_PORT), backendsOf(web));
  const services = read(
    await ciliumDbgRaw(ctx, node, ["service", "list", "-o", "json"]),
    parseServiceListJson,
  );
  return {
    svc: buildSvcRecord({
      services,
      lb,
      clusterIp: cip.ip,
      clusterIpEvidence: cip.evidence,
      port: WEB_PORT,
      namespace: ctx.namespace,
      name: "web",
      pods: web,
    }),
  };
}

/** Lab step 2. */
export function buildSvcRecord(input: {
  services: Read<ServiceList>;
  lb: Read<LbList>;
  clusterIp: string;
  clusterIpEvidence?: EvidenceItem[];
  port: number;
  namespace: string;
  name: string;
  pods: PodRef[];
}): Evidenced<SvcRecord> {
  const frontend = formatEndpoint(input.clusterIp, input.port);
  const svc = findAgentService(input.services.parsed, frontend, {
    type: "ClusterIP",
    protocol: "TCP",
    namespace: input.namespace,
    name: input.name,
  });
  if (!svc)
    throw new RecordError(
      "svc",
      "service_id",
      `no ClusterIP entry ${frontend} for ${input.namespace}/${input.name} in the agent's service list`,
    );
  const lb = findLbService(input.lb.parsed, frontend);
  if (!lb) throw new RecordError("svc", "backends", `no ${frontend} frontend in bpf lb list`);
  const backends = lb.backends.filter((b) => b.address !== null).map((b) => b.address as string);
  const pods = backendPods(backends, input.pods);
  return {
    record: {
      service_id: svc.id,
      frontend,
      backends,
      backend_pods: pods.names,
    },
    evidence: {
      service_id: serviceQuotes(input.services.raw, svc, SERVICE_ID_MEMBERS),
      frontend: [
        ...(input.clusterIpEvidence ?? []),
        ...serviceQuotes(input.services.raw, svc, [
          ["frontend-address", "ip"],
          ["frontend-address", "port"],
        ]),
      ],
      backends: lbBackendRows(input.lb.raw, lb),
      backend_pods: pods.evidence,
    },
  };
}
