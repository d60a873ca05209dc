/**
 * Topic "scale" — The lab, step 3.
 * Scaling web 2 → 4: the BPF map follows the EndpointSlice, and kube-proxy adds a KUBE-SEP chain per endpoint only where it runs.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */

import { kubectlRaw, type PodInfo } from "../../helpers/observe/cluster.ts";
import { DEADLINES, type RunContext, waitFor } from "../../helpers/observe/context.ts";
import { iptablesSaveRaw } from "../../helpers/observe/node.ts";
import { backendsOf, waitSlots } from "../../helpers/observe/steps.ts";
import { ensureWeb, TARGET_PORT, WEB_PORT } from "../../helpers/observe/workloads.ts";
import { formatEndpoint } from "../../helpers/parse/address.ts";
import type { LbList } from "../../helpers/parse/bpf-lb-list.ts";
import {
  type EndpointSlices,
  parseEndpointSliceJson,
  readyAddresses,
} from "../../helpers/parse/endpointslice-json.ts";
import {
  allRules,
  type IptablesSave,
  kubeProxyChains,
  parseIptablesSave,
} from "../../helpers/parse/iptables-save.ts";
import type { ConfigDependence } from "../../helpers/properties/config.ts";
import { LAB, sameSet } from "../../helpers/properties/sources.ts";
import {
  findLbService,
  lbBackendRows,
  type PodRef,
  RecordError,
  readyEvidence,
} from "../../helpers/records/common.ts";
import { derive, type EvidenceItem, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidenced, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import type { DatapathRecord } from "../datapath.records.ts";
import type { ScaleRecord } from "./scale.records.ts";

/**
 * web is a single-stack IPv4 Service (its manifest asks no ipFamilyPolicy): on a dual-stack cluster its
 * frontend, slots and EndpointSlice stay IPv4 only; an IPv6-only cluster is not modelled (clusters/datapath-profiles.ts: dual-stack).
 */
const IPV4_ONLY = requires(IPV4_SERVICE);

/**
 * kube-proxy's KUBE-SEP chains are read from iptables-save: kpr runs without kube-proxy, beside it kube-proxy
 * runs in iptables mode. Its nftables mode (endpoint-… chains) and ipvs mode (real servers) are not modelled
 * here: not applicable (helpers/properties/config.ts).
 */
const KUBE_PROXY_IPTABLES = {
  kpr: { kubeProxy: ["none"] },
  "kube-proxy": { kubeProxy: ["iptables"] },
} as const satisfies ConfigDependence["assumes"];

import { IPV4_SERVICE, requires } from "../../helpers/properties/requirements.ts";
import { records as serviceMapRecords } from "../02-service-map/service-map.records.ts";
import { observeServiceMap } from "../02-service-map/service-map.topic.ts";
import { datapathRecords, dp } from "../datapath.records.ts";
import { records } from "./scale.records.ts";

export const topic = defineTopic({
  name: "scale",
  title:
    "Scaling web 2 \u2192 4: the BPF map follows the EndpointSlice, and kube-proxy adds a KUBE-SEP chain per endpoint only where it runs",
  source: LAB(3),
  deploys: ["web.yaml"],
  steps: [
    { on: "agent", run: "cilium-dbg bpf lb list", for: "web's slots before and after the scale" },
    { on: "agent", run: "cilium-dbg service list -o json", for: "the Service before the scale" },
    { on: "node", run: "iptables-save", for: "kube-proxy's KUBE-SEP chains for web" },
  ],
  records: { ...serviceMapRecords, ...records, ...datapathRecords },
  schedule: {
    after: ["service-map"],
    why: "scales web from the two replicas iptables and service-map observe to four (its two new backends are those not there before); it also writes svc after service-map",
  },
  shared: { counts: ["web backends"], changes: ["web backends"] },
  observe: observeScale,
  properties: [
    {
      id: "scale.four-slots",
      claim: "After scaling web to 4, the frontend has 4 backend slots",
      source: LAB(3),
      expect: { kpr: { eq: 4 }, "kube-proxy": { eq: 4 } },
      config: { assumes: IPV4_ONLY },
      needs: ["scale"],
      observe: (r) => ({ value: r.get("scale").backends.length, evidence: r.evidence("scale", "backends") }),
    },
    {
      id: "scale.new-backends-are-new-pods",
      claim: "The two new slots are the two new Pods (and the old two stay)",
      source: LAB(3),
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      config: { assumes: IPV4_ONLY },
      needs: ["scale", "svc", "datapath"],
      observe: (r) => {
        const s = r.get("scale");
        const old = r.get("svc").backends;
        const pods = dp(r, "scale_pods");
        const newPods = Object.entries(pods).filter(([, a]) => !old.includes(a));
        const ok =
          s.new_backends.length === 2 &&
          sameSet(
            s.new_backends,
            newPods.map(([, a]) => a),
          ) &&
          old.every((b) => s.backends.includes(b));
        return {
          value: ok,
          evidence: [
            ...r.evidence("scale", "new_backends"),
            ...r.evidence("svc", "backends"),
            ...r.evidence("datapath", "scale_pods"),
          ],
        };
      },
    },
    {
      id: "scale.matches-endpointslice",
      claim: "The map's backends equal the EndpointSlice's ready addresses",
      source: LAB(3),
      expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
      config: { assumes: IPV4_ONLY },
      needs: ["scale", "datapath"],
      observe: (r) => {
        const s = r.get("scale").backends;
        const eps = dp(r, "scale_endpointslice");
        return {
          value: sameSet(s, eps),
          evidence: [...r.evidence("scale", "backends"), ...r.evidence("datapath", "scale_endpointslice")],
        };
      },
    },
    {
      id: "scale.kube-sep-chains",
      claim:
        "kube-proxy rewrites iptables per endpoint: one KUBE-SEP chain per web backend; none without kube-proxy",
      source: LAB(3),
      why: "the lab's 'instead of rewriting iptables rules, a few map entries change'; KUBE-SEP per endpoint (notebook §3)",
      expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 4 } },
      config: { assumes: KUBE_PROXY_IPTABLES },
      needs: ["datapath"],
      observe: (r) => ({
        value: dp(r, "web_sep_chains"),
        evidence: r.evidence("datapath", "web_sep_chains"),
      }),
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Lab step 3. */
export async function observeScale(ctx: RunContext): Promise<RecordSet> {
  const before = await observeServiceMap(ctx);
  const svc = before.svc?.record;
  if (!svc) throw new Error("service map not observed");
  const cip = svc.frontend.slice(0, svc.frontend.lastIndexOf(":"));
  ctx.log("scaling web 2 → 4");
  const web = await ensureWeb(ctx, 4);
  const node = (web[0] as PodInfo).node;
  const { lb } = await waitSlots(ctx, node, svc.frontend, backendsOf(web));
  const slices = read(
    await kubectlRaw(ctx, [
      "-n",
      ctx.namespace,
      "get",
      "endpointslices",
      "-l",
      "kubernetes.io/service-name=web",
      "-o",
      "json",
    ]),
    parseEndpointSliceJson,
  );
  // kube-proxy syncs on its own clock: wait until its rules have a KUBE-SEP chain per web Pod (or until it is
  // clear there is no kube-proxy), instead of reading iptables right after Cilium's map converged
  const { value: ipt } = await waitFor(ctx, {
    what: `kube-proxy's ${web.length} KUBE-SEP chains for ${ctx.namespace}/web on ${node} (or no kube-proxy)`,
    deadlineMs: DEADLINES.mapConverged,
    intervalMs: 1000,
    probe: async () => read(await iptablesSaveRaw(ctx, node), parseIptablesSave),
    done: (save) =>
      kubeProxyChains(save.parsed).length === 0 ||
      webSepChains(save.parsed, ctx.namespace).size === web.length,
    show: (save) => `${webSepChains(save.parsed, ctx.namespace).size} KUBE-SEP chains`,
  });
  return {
    svc: before.svc,
    scale: buildScaleRecord({
      lb,
      frontend: formatEndpoint(cip, WEB_PORT),
      before: svc.backends,
      beforeEvidence: before.svc?.evidence.backends ?? [],
    }),
    datapath: buildScaleFacts({
      iptables: ipt,
      namespace: ctx.namespace,
      slices,
      pods: web,
      targetPort: TARGET_PORT,
    }),
  };
}

/** Lab step 3: the frontend's slots after the scale, and those that were not there before. */
export function buildScaleRecord(input: {
  lb: Read<LbList>;
  frontend: string;
  before: string[];
  /** The rows the "before" backends were read from. */
  beforeEvidence?: EvidenceItem[];
}): Evidenced<ScaleRecord> {
  const lb = findLbService(input.lb.parsed, input.frontend);
  if (!lb) throw new RecordError("scale", "backends", `no ${input.frontend} frontend in bpf lb list`);
  const backends = lb.backends.filter((b) => b.address !== null).map((b) => b.address as string);
  const fresh = lb.backends.filter((b) => b.address !== null && !input.before.includes(b.address));
  return {
    record: { backends, new_backends: fresh.map((b) => b.address as string) },
    evidence: {
      backends: lbBackendRows(input.lb.raw, lb),
      new_backends: [
        ...fresh.map((b) => input.lb.raw.quote(b.line)),
        derive(`not among the ${input.before.length} backends before the scale`, input.beforeEvidence ?? []),
      ],
    },
  };
}

/** Ours (scale topic): KUBE-SEP chains of ns/web, the EndpointSlice and the Pods after the scale. */
export function buildScaleFacts(input: {
  iptables: Read<IptablesSave>;
  namespace: string;
  slices: Read<EndpointSlices>;
  pods: PodRef[];
  targetPort: number;
}): Evidenced<DatapathRecord> {
  const seps = webSepChains(input.iptables.parsed, input.namespace);
  const ipt = input.iptables.raw;
  const decl = Object.values(input.iptables.parsed.tables)
    .flatMap((t) => Object.values(t.chains))
    .filter((c) => seps.has(c.name));
  return {
    record: {
      web_sep_chains: seps.size,
      scale_endpointslice: readyAddresses(input.slices.parsed, input.targetPort),
      scale_pods: Object.fromEntries(input.pods.map((p) => [p.name, formatEndpoint(p.ip, input.targetPort)])),
    },
    evidence: {
      web_sep_chains:
        seps.size > 0
          ? decl.map((c) => ipt.quote(c.line))
          : [derive(`no KUBE-SEP chain has a rule commented ${input.namespace}/web`, ipt)],
      scale_endpointslice: readyEvidence(input.slices, input.targetPort),
      scale_pods: input.pods.flatMap((p) => p.evidence ?? []),
    },
  };
}

/** kube-proxy's KUBE-SEP chains for ns/web: it comments their rules `ns/svc` or `ns/svc:port` (`ns/web-np` is another Service). */
export function webSepChains(save: IptablesSave, namespace: string): Set<string> {
  const web = `${namespace}/web`;
  return new Set(
    allRules(save)
      .filter(
        (r) => r.chain.startsWith("KUBE-SEP-") && (r.comment === web || r.comment?.startsWith(`${web}:`)),
      )
      .map((r) => r.chain),
  );
}
