/**
 * Topic "nodeport" — The lab, step 6.
 * NodePort 30780: who answers it (the agent's BPF or kube-proxy's rules), from a node and from outside.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */
import { ciliumDbgRaw } from "../../helpers/observe/agent.ts";
import { nodes, type PodInfo, pods } from "../../helpers/observe/cluster.ts";
import { DEADLINES, type RunContext, waitFor } from "../../helpers/observe/context.ts";
import { iptablesSaveRaw, onNode } from "../../helpers/observe/node.ts";
import { type CurlRead, curlFrom, newerStep } from "../../helpers/observe/steps.ts";
import {
  apply,
  ensureWeb,
  NODE_PORT,
  renderManifest,
  waitPodReady,
} from "../../helpers/observe/workloads.ts";
import { formatEndpoint } from "../../helpers/parse/address.ts";
import { type BindProbe, bindProbeArgv, parseBindProbe } from "../../helpers/parse/bind-probe.ts";
import { type LbList, parseBpfLbList } from "../../helpers/parse/bpf-lb-list.ts";
import type { ServiceList } from "../../helpers/parse/service-list.ts";
import { parseServiceListJson } from "../../helpers/parse/service-list-json.ts";
import { parseSs, type SsOutput } from "../../helpers/parse/ss.ts";
import {
  CILIUM_AT,
  KPR_GUIDE,
  LAB,
  SETRETVAL_ISSUE,
  SETRETVAL_WHY,
  UP,
} from "../../helpers/properties/sources.ts";
import { mergeParts } from "../../helpers/records/catalogue.ts";
import {
  findAgentService,
  lbRows,
  type PodRef,
  SERVICE_ID_MEMBERS,
  serviceQuotes,
} from "../../helpers/records/common.ts";
import { derive, RawText, type Read, read } from "../../helpers/records/evidence.ts";
import type { Evidenced, RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";
import type { DatapathRecord } from "../datapath.records.ts";
import { datapathRecords, dp } from "../datapath.records.ts";
import type { NodePortRecord } from "./nodeport.records.ts";
import { records } from "./nodeport.records.ts";

/** web-np is a single-stack IPv4 Service: a dual-stack cluster leaves its IPv4 NodePort as it is (clusters/datapath-profiles.ts: dual-stack). */
const IPV4 = ["ipv4", "ipv4+ipv6"] as const;

export const topic = defineTopic({
  name: "nodeport",
  title:
    "NodePort 30780: who answers it (the agent's BPF or kube-proxy's rules), from a node and from outside",
  source: LAB(6),
  deploys: ["web-np.yaml", "bind-probe.yaml"],
  steps: [
    {
      on: "node",
      run: "curl -sS -v -o /dev/null --max-time 5",
      for: "HTTP from the node to its own NodePort (polled)",
    },
    {
      on: "outside",
      run: "curl -sS -v -o /dev/null --max-time 5",
      for: "HTTP from a client outside the nodes",
    },
    { on: "node", run: "iptables-save", for: "kube-proxy's NodePort rules" },
    { on: "node", run: "ss -Htln sport = :30780", for: "no listener on the port" },
    { on: "agent", run: "cilium-dbg service list -o json", for: "the agent's NodePort entries" },
    { on: "agent", run: "cilium-dbg bpf lb list", for: "NodePort frontends in the datapath's LB map" },
    {
      on: "pod",
      run: "sh -c timeout 2 nc -l 0.0.0.0 30780",
      for: "bind() to the NodePort in the node's host network namespace",
    },
  ],
  records: { ...records, ...datapathRecords },
  schedule: {
    after: ["program"],
    why: "every NodePort frontend's slots must equal web's Pod count, stable at four once scale and holder are done; its node-side curls are host connections program's reverse socket map must not see",
  },
  shared: { counts: ["web backends"], changes: ["kube-proxy service rules"] },
  observe: observeNodePort,
  properties: [
    {
      id: "nodeport.http-200",
      claim: "NodePort 30780 on the node's InternalIP answers HTTP 200",
      source: LAB(6),
      expect: { kpr: { eq: 200 }, "kube-proxy": { eq: 200 } },
      config: {
        // the node's own connect() is translated by the socket hook in kpr (host-namespace-only coverage keeps
        // it), so the LB mode does not matter; beside kube-proxy, kube-proxy answers in iptables or nftables
        // mode (nftables accepts NodePorts on the node's primary address, the InternalIP dialled here)
        assumes: {
          kpr: { socketLB: ["on", "hostns-only"], ipFamilies: IPV4 },
          "kube-proxy": { kubeProxy: ["iptables", "nftables"], ipFamilies: IPV4 },
        },
      },
      needs: ["nodeport"],
      observe: (r) => ({ value: r.get("nodeport").http_code, evidence: r.evidence("nodeport", "http_code") }),
    },
    {
      id: "nodeport.outside-http-200",
      claim: "NodePort 30780 also answers HTTP 200 to a client outside the nodes",
      source: LAB(6),
      expect: { kpr: { eq: 200 }, "kube-proxy": { eq: 200 } },
      config: {
        assumes: {
          kpr: { ipFamilies: IPV4 },
          "kube-proxy": { kubeProxy: ["iptables", "nftables"], ipFamilies: IPV4 },
        },
        cases: [
          {
            when: { lbMode: ["dsr", "hybrid"], ipFamilies: IPV4 },
            expect: { kpr: { eq: 200 } },
            claim:
              "NodePort 30780 answers HTTP 200 to a client outside the nodes: a request forwarded to another node's backend is answered by that node directly (DSR), with the NodePort's address as its source",
            why: "loadBalancer.mode=dsr (hybrid: DSR for TCP): the frontend node forwards the request with the service address in an IP option and does not SNAT it; the backend's node replies to the client itself with <frontend node IP>:30780 as the source, so the client still gets its answer (Cilium docs, https://docs.cilium.io/en/v1.20/network/kubernetes/kubeproxy-free/#hybrid-dsr-and-snat-mode)",
          },
        ],
      },
      needs: ["datapath"],
      observe: (r) => {
        const code = dp(r, "nodeport_outside_http");
        return code === null
          ? {
              value: null,
              evidence: [],
              skip: "no client outside the nodes could run here (existing cluster without a docker network)",
            }
          : { value: code, evidence: r.evidence("datapath", "nodeport_outside_http") };
      },
    },
    {
      id: "nodeport.no-listener",
      claim:
        "No process listens on 30780 in either mode (kube-proxy's port opener was removed in Kubernetes 1.24)",
      source: LAB(6),
      why: "kubernetes PR #108496 (kube-proxy: remove port opener, https://github.com/kubernetes/kubernetes/pull/108496): this does not tell the modes apart",
      expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 0 } },
      config: "none",
      needs: ["nodeport"],
      observe: (r) => ({
        value: r.get("nodeport").listen_sockets,
        evidence: r.evidence("nodeport", "listen_sockets"),
      }),
    },
    {
      id: "nodeport.iptables-lines",
      claim: "iptables lines mentioning 30780: none without kube-proxy; KUBE-NODEPORTS rules with it",
      source: LAB(6),
      why: "kube-proxy writes two KUBE-NODEPORTS rules per NodePort: one for 127.0.0.0/8 (localhost NodePorts, with the nfacct counter localhost_nps_accepted_pkts) and one for every other address, both jumping to KUBE-EXT-…: recorded on the lab cluster (kube-proxy v1.35.5); a source reading had said 1",
      expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 2 } },
      config: {
        // nftables mode keeps NodePorts in its service-nodeports map and ipvs mode in an ipset: not modelled
        assumes: { kpr: { kubeProxy: ["none"] }, "kube-proxy": { kubeProxy: ["iptables"] } },
      },
      needs: ["nodeport"],
      observe: (r) => ({
        value: r.get("nodeport").iptables_lines,
        evidence: r.evidence("nodeport", "iptables_lines"),
      }),
    },
    {
      id: "nodeport.agent-entry",
      claim: "The agent has a 0.0.0.0:30780 NodePort entry only with kube-proxy replacement",
      source: LAB(6),
      why: '1.19 removed BPF NodePort for KPR=false: PR 41380 "Remove EnableNodePort" (NodePort only with kubeProxyReplacement=true), after the 1.18 deprecation of enable-node-port in PR 39581; 1.18 only with nodePort.enabled, which the suite does not set',
      expect: { kpr: { eq: true }, "kube-proxy": { eq: false } },
      config: { assumes: { kpr: { ipFamilies: IPV4 } } },
      needs: ["nodeport"],
      observe: (r) => ({
        value: r.get("nodeport").service_id !== null,
        evidence: r.evidence("nodeport", "service_id"),
      }),
    },
    {
      id: "nodeport.bind-protection",
      claim:
        "bind() to NodePort 30780 in a node's host network namespace fails with EADDRINUSE where Cilium serves NodePorts (it reserves the port) and succeeds beside kube-proxy",
      source: UP(
        `Cilium docs ${KPR_GUIDE}#nodeport-devices-port-and-bind-settings (nodePort.bindProtection); ${CILIUM_AT}/bpf/bpf_sock.c#L486-L528 (cil_sock4_post_bind: -EADDRINUSE)`,
      ),
      why: `Cilium's post_bind4 socket hook returns -EADDRINUSE for a NodePort, LoadBalancer or ExternalIP frontend (bpf_sock.c; nodePort.bindProtection, default true); with KPR=false there is no such hook. 'No listener' (nodeport.no-listener) is true in both modes and tells them apart less. On 1.18 and 1.19.0-1.19.3 bind() still fails, with EPERM: ${SETRETVAL_WHY}`,
      expect: {
        kpr: {
          default: { eq: "EADDRINUSE" },
          byMinor: { "1.18": SETRETVAL_ISSUE("bind()", "EADDRINUSE", "never fixed in 1.18") },
          byPatch: [
            { from: "1.19.0", to: "1.19.3", ...SETRETVAL_ISSUE("bind()", "EADDRINUSE", "fixed in 1.19.4") },
          ],
        },
        "kube-proxy": { eq: "bound" },
      },
      config: {
        // post_bind4 is attached with the socket-LB programs where KPR is on (pkg/socketlb/socketlb.go Enable);
        // the probe binds in the host network namespace, so host-namespace-only coverage keeps it
        assumes: { kpr: { socketLB: ["on", "hostns-only"] } },
      },
      needs: ["datapath"],
      observe: (r) => {
        const b = dp(r, "nodeport_bind");
        return b === null
          ? { value: null, evidence: [], skip: "this bundle predates the bind probe (no recorded call)" }
          : { value: b, evidence: r.evidence("datapath", "nodeport_bind") };
      },
    },
    {
      id: "nodeport.bpf-frontends",
      claim:
        "NodePort 30780 is in the datapath's LB map (bpf lb list) with KPR — one frontend per node address plus 0.0.0.0:30780 — and absent with KPR=false",
      source: UP(
        `Cilium docs ${KPR_GUIDE}#nodeport-devices-port-and-bind-settings; cilium PRs 41380, 41277 (1.19: NodePort only with kube-proxy replacement), https://github.com/cilium/cilium/pull/41380, https://github.com/cilium/cilium/pull/41277`,
      ),
      why: "NodePort handling left the KPR=false path in 1.19 (cilium PRs 41380, 41277). A kind node has one address: 2 frontends, recorded on the lab cluster (Cilium 1.19.7)",
      expect: { kpr: { eq: 2 }, "kube-proxy": { eq: 0 } },
      config: {
        // counted by port: a dual-stack node adds no IPv6 frontend for an IPv4 Service (web-np asks no family) —
        // recorded on the lab's dual-stack kpr cluster (run lab-20261205-124651: 172.31.101.3:30780 and
        // 0.0.0.0:30780, nothing in brackets), where this was declared not applicable before
        assumes: { kpr: { ipFamilies: ["ipv4", "ipv4+ipv6"] } },
      },
      needs: ["datapath"],
      observe: (r) => {
        const f = dp(r, "nodeport_lb_frontends");
        return f === null
          ? {
              value: null,
              evidence: [],
              skip: "this bundle predates the NodePort LB-map step (no recorded call)",
            }
          : { value: f.length, evidence: r.evidence("datapath", "nodeport_lb_frontends") };
      },
    },
    {
      id: "nodeport.bpf-slots",
      claim: "Each NodePort frontend in the LB map holds every web backend (N slots after its slot 0)",
      source: UP(
        `${CILIUM_AT}/bpf/lib/lb.h#L68-L101 (lb4_key: backend_slot 0 is the frontend, each slot ≥ 1 a backend; lb4_service count)`,
      ),
      why: "the slots are the Service's backends whatever the LB mode or algorithm: Maglev keeps its lookup table in a map of its own (cilium_lb4_maglev), not in bpf lb list's slots",
      expect: {
        kpr: { eq: true },
        "kube-proxy": { na: "no NodePort frontends in the LB map with KPR=false" },
      },
      config: "none",
      needs: ["datapath"],
      observe: (r) => {
        const f = dp(r, "nodeport_lb_frontends");
        if (f === null)
          return {
            value: null,
            evidence: [],
            skip: "this bundle predates the NodePort LB-map step (no recorded call)",
          };
        const n = dp(r, "nodeport_web_pods");
        return {
          value: f.length > 0 && f.every((x) => x.backends === n),
          evidence: [
            ...r.evidence("datapath", "nodeport_lb_frontends"),
            ...r.evidence("datapath", "nodeport_web_pods"),
          ],
        };
      },
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/** Lab step 6. */
export async function observeNodePort(ctx: RunContext): Promise<RecordSet> {
  const web = await pods(ctx, ctx.namespace, "app=web");
  const ready = web.length > 0 ? web : await ensureWeb(ctx, 2);
  await apply(ctx, renderManifest("web-np.yaml", ctx.namespace));
  const node = (ready[0] as PodInfo).node;
  const nodeIp = (await nodes(ctx)).find((n) => n.name === node)?.internalIp ?? "";
  const url = `http://${formatEndpoint(nodeIp, NODE_PORT)}/`;
  const { value: curl } = await waitFor(ctx, {
    what: `HTTP 200 from ${url} on ${node}`,
    deadlineMs: DEADLINES.nodePortAnswers,
    intervalMs: 1000,
    probe: () => curlFrom(ctx, { kind: "node", node }, url),
    done: (c) => c.httpCode === 200,
    show: (c) => `${c.verdict}${c.error ? ` (${c.error})` : ""}`,
  });
  const outside = await curlFrom(ctx, { kind: "outside" }, url).catch((err: Error) => {
    ctx.log(`no client outside the nodes: ${err.message}`);
    return null;
  });
  const iptablesRaw = await iptablesSaveRaw(ctx, node);
  const ssRaw = RawText.stdout(await onNode(ctx, node, ["ss", "-Htln", `sport = :${NODE_PORT}`]));
  const services = read(
    await ciliumDbgRaw(ctx, node, ["service", "list", "-o", "json"]),
    parseServiceListJson,
  );
  // the datapath itself: NodePort frontends in the LB map, and the port reserved against bind()
  const lb = await newerStep(ctx, "bpf lb list", async () =>
    read(await ciliumDbgRaw(ctx, node, ["bpf", "lb", "list"]), parseBpfLbList),
  );
  const bind = await newerStep(ctx, "bind probe", async () => {
    await apply(ctx, renderManifest("bind-probe.yaml", ctx.namespace, { NODE: node }));
    await waitPodReady(ctx, "bind-probe");
    const r = await ctx.exec.run({
      target: { kind: "pod", namespace: ctx.namespace, pod: "bind-probe" },
      argv: bindProbeArgv("0.0.0.0", NODE_PORT),
    });
    return read(RawText.stdout(r), parseBindProbe);
  });
  return {
    nodeport: buildNodePortRecord({
      nodeIp,
      nodePort: NODE_PORT,
      curl,
      iptablesSave: iptablesRaw,
      ss: read(ssRaw, parseSs),
      services,
    }),
    datapath: mergeParts([
      {
        // null only when there is no client outside the nodes (an existing cluster); a client that ran and got
        // no HTTP answer (its network taken away: the outside-net fault) is 0, curl's 000, and fails the property
        record: { nodeport_outside_http: outside ? (outside.httpCode ?? 0) : null },
        evidence: { nodeport_outside_http: outside ? outside.evidence : [] },
      },
      buildNodePortFacts({ lb, bind, nodePort: NODE_PORT, webPods: ready }),
    ]),
  };
}

/** Ours: NodePort frontends in the agent's LB map (with their slots), and what bind() on the port does. */
export function buildNodePortFacts(input: {
  lb: Read<LbList> | null;
  bind: Read<BindProbe> | null;
  nodePort: number;
  /** web Pods behind web-np when the topic ran. */
  webPods: PodRef[];
}): Evidenced<DatapathRecord> {
  const frontends = input.lb
    ? input.lb.parsed.services.filter(
        (s) => s.frontend.endsWith(`:${input.nodePort}`) && (s.protocol === null || s.protocol === "TCP"),
      )
    : null;
  const lb = input.lb;
  const bind = input.bind;
  return {
    record: {
      nodeport_bind: bind?.parsed.result ?? null,
      nodeport_web_pods: input.webPods.length,
      nodeport_lb_frontends: frontends
        ? frontends
            .map((f) => ({ frontend: f.frontend, backends: f.backends.length }))
            .sort((a, b) => a.frontend.localeCompare(b.frontend))
        : null,
    },
    evidence: {
      nodeport_bind: bind
        ? bind.parsed.lineNo !== null
          ? [bind.raw.quote(bind.parsed.lineNo)]
          : [derive(bind.parsed.line, bind.raw)]
        : [],
      nodeport_web_pods: input.webPods.flatMap((p) => p.evidence ?? []),
      nodeport_lb_frontends:
        frontends && lb
          ? frontends.length > 0
            ? frontends.flatMap((f) => lbRows(lb.raw, f))
            : [derive(`no frontend on port ${input.nodePort} in bpf lb list`, lb.raw)]
          : [],
    },
  };
}

/** Lab step 6. */
export function buildNodePortRecord(input: {
  nodeIp: string;
  nodePort: number;
  curl: CurlRead;
  iptablesSave: RawText;
  ss: Read<SsOutput>;
  services: Read<ServiceList>;
}): Evidenced<NodePortRecord> {
  const port = String(input.nodePort);
  const ipt = input.iptablesSave.quotes((l) => l.includes(port));
  const np = findAgentService(input.services.parsed, formatEndpoint("0.0.0.0", input.nodePort), {
    type: "NodePort",
    protocol: "TCP",
  });
  const listening = input.ss.raw.nonBlank();
  return {
    record: {
      node_ip: input.nodeIp,
      node_port: input.nodePort,
      http_code: input.curl.httpCode ?? 0,
      iptables_lines: ipt.length,
      listen_sockets: input.ss.parsed.sockets.length,
      service_id: np?.id ?? null,
    },
    evidence: {
      http_code: input.curl.evidence,
      iptables_lines: ipt.length > 0 ? ipt : [derive(`no line mentions ${port}`, input.iptablesSave)],
      listen_sockets: listening.length > 0 ? listening : [derive("ss printed no socket", input.ss.raw)],
      service_id: np
        ? serviceQuotes(input.services.raw, np, SERVICE_ID_MEMBERS)
        : [derive(`no NodePort entry 0.0.0.0:${port} in the agent's service list`, input.services.raw)],
    },
  };
}
