import { formatEndpoint } from "../parse/address.ts";
import { parseBpfCtList } from "../parse/bpf-ct-list.ts";
import { type LbList, parseBpfLbList } from "../parse/bpf-lb-list.ts";
import { parseBpftoolNet } from "../parse/bpftool-net.ts";
import { parseConfig } from "../parse/config.ts";
import { curlArgv, parseCurl } from "../parse/curl.ts";
import { parseEndpointJson } from "../parse/endpoint-json.ts";
import { parseEndpointSliceJson } from "../parse/endpointslice-json.ts";
import { parseIpAddr } from "../parse/ip-addr.ts";
import { parseIpRoute } from "../parse/ip-route.ts";
import { parseIptablesSave } from "../parse/iptables-save.ts";
import { parseMapList } from "../parse/map-list.ts";
import { dropReasons, errorLines, parseMetricsJson } from "../parse/metrics-json.ts";
import { parseNetstat } from "../parse/netstat.ts";
import { parseProcNetTcp } from "../parse/proc-net-tcp.ts";
import { parseServiceListJson } from "../parse/service-list-json.ts";
import { parseSs } from "../parse/ss.ts";
import { parseStatus } from "../parse/status.ts";
import { parseTcFilter } from "../parse/tc-filter.ts";
import { parseTcpdump } from "../parse/tcpdump.ts";
import { pollUntil } from "../poll.ts";
import type { Topic } from "../properties/types.ts";
import {
  buildAgentFacts,
  buildChainFacts,
  buildCtRecord,
  buildGhostFacts,
  buildGhostRecord,
  buildHolderFacts,
  buildIptablesRecord,
  buildNodePortRecord,
  buildProgRecord,
  buildReportRecord,
  buildScaleFacts,
  buildScaleRecord,
  buildSvcRecord,
  findLbService,
  lastHolderConnection,
  mergeDatapath,
} from "../records/lab.ts";
import {
  buildClusterIpHostRecord,
  buildDnsRecord,
  buildRemoteRouteRecord,
  buildTranslationRecord,
  buildVxlanRecord,
} from "../records/notebook.ts";
import type { RecordSet } from "../records/types.ts";
import { agentBpftool, ciliumDbg } from "./agent.ts";
import { clusterIp, endpointId, kubectl, kubectlJson, nodes, type PodInfo, pods } from "./cluster.ts";
import { DEADLINES, type RunContext } from "./context.ts";
import { hostDnsScript } from "./dns.ts";
import { observeLatency, observeScaling } from "./measure.ts";
import { iptablesSave, onNode } from "./node.ts";
import { observeUpgrade } from "./upgrade.ts";
import {
  apply,
  ensureGhostAndProbe,
  ensureHolder,
  ensureWeb,
  renderManifest,
  waitPodReady,
} from "./workloads.ts";

const WEB_PORT = 80;
const TARGET_PORT = 8080;
const NODE_PORT = 30780;
const HOLDER_PORT = 40404;

async function lbList(ctx: RunContext, node: string): Promise<LbList> {
  return parseBpfLbList(await ciliumDbg(ctx, node, ["bpf", "lb", "list"]));
}

/** Polls the agent's BPF LB map until the frontend's slots are exactly `want` (ip:port), or the deadline. */
async function waitSlots(
  ctx: RunContext,
  node: string,
  frontend: string,
  want: string[],
): Promise<{ lb: LbList; elapsedMs: number }> {
  const wanted = [...want].sort().join(",");
  const { value, elapsedMs } = await pollUntil({
    what: `${want.length} backend slots for ${frontend} in the agent on ${node}`,
    deadlineMs: DEADLINES.mapConverged,
    intervalMs: 1000,
    probe: () => lbList(ctx, node),
    done: (lb) => slotAddresses(lb, frontend).sort().join(",") === wanted,
    show: (lb) => `slots [${slotAddresses(lb, frontend).join(", ")}]`,
    sleep: ctx.sleep,
    now: ctx.now,
    progress: ctx.log,
  });
  ctx.log(`${frontend}: ${want.length} backend slots in the map after ${(elapsedMs / 1000).toFixed(1)} s`);
  return { lb: value, elapsedMs };
}

function slotAddresses(lb: LbList, frontend: string): string[] {
  return (findLbService(lb, frontend)?.backends ?? []).map((b) => b.address ?? "?");
}

const backendsOf = (ps: PodInfo[]) => ps.map((p) => formatEndpoint(p.ip, TARGET_PORT));

async function kernelOf(ctx: RunContext, node: string): Promise<string | null> {
  return (await nodes(ctx)).find((n) => n.name === node)?.kernel ?? null;
}

async function curlFrom(
  ctx: RunContext,
  target: Parameters<RunContext["exec"]["run"]>[0]["target"],
  url: string,
) {
  const r = await ctx.exec.run({
    target,
    argv: curlArgv(url),
  });
  return parseCurl({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr });
}

/** Lab step 1. */
async function observeIptables(ctx: RunContext): Promise<RecordSet> {
  const web = await ensureWeb(ctx, 2);
  const node = (web[0] as PodInfo).node;
  const cip = await clusterIp(ctx, ctx.namespace, "web");
  const raw = await iptablesSave(ctx, node);
  const status = parseStatus(await ciliumDbg(ctx, node, ["status"]));
  return {
    iptables: buildIptablesRecord({ iptablesSave: raw, clusterIp: cip, status }),
    datapath: buildChainFacts(parseIptablesSave(raw)),
  };
}

/** Lab step 2 (also the "before" of step 3). */
async function observeServiceMap(ctx: RunContext): Promise<RecordSet> {
  const web = await ensureWeb(ctx, 2);
  const node = (web[0] as PodInfo).node;
  const cip = await clusterIp(ctx, ctx.namespace, "web");
  const { lb } = await waitSlots(ctx, node, formatEndpoint(cip, WEB_PORT), backendsOf(web));
  const services = parseServiceListJson(await ciliumDbg(ctx, node, ["service", "list", "-o", "json"]));
  return {
    svc: buildSvcRecord({
      services,
      lb,
      clusterIp: cip,
      port: WEB_PORT,
      namespace: ctx.namespace,
      name: "web",
      pods: web,
    }),
  };
}

/** Lab step 3. */
async function observeScale(ctx: RunContext): Promise<RecordSet> {
  const before = await observeServiceMap(ctx);
  const svc = before.svc?.record;
  if (!svc) throw new Error("service map not observed");
  const cip = svc.frontend.slice(0, svc.frontend.lastIndexOf(":"));
  ctx.log("scaling web 2 → 4");
  const web = await ensureWeb(ctx, 4);
  const node = (web[0] as PodInfo).node;
  const { lb } = await waitSlots(ctx, node, svc.frontend, backendsOf(web));
  const slices = parseEndpointSliceJson(
    JSON.stringify(
      await kubectlJson(ctx, [
        "-n",
        ctx.namespace,
        "get",
        "endpointslices",
        "-l",
        "kubernetes.io/service-name=web",
      ]),
    ),
  );
  const ipt = parseIptablesSave(await iptablesSave(ctx, node));
  return {
    svc: before.svc,
    scale: buildScaleRecord({ lb, frontend: formatEndpoint(cip, WEB_PORT), before: svc.backends }),
    datapath: buildScaleFacts({
      iptables: ipt,
      namespace: ctx.namespace,
      slices,
      pods: web,
      targetPort: TARGET_PORT,
    }),
  };
}

async function holderConnected(ctx: RunContext): Promise<string> {
  const { value } = await pollUntil({
    what: "the holder's `connected` log line",
    deadlineMs: DEADLINES.holderConnected,
    intervalMs: 1000,
    probe: () => kubectl(ctx, ["-n", ctx.namespace, "logs", "holder"]),
    done: (log) => lastHolderConnection(log) !== null,
    show: (log) => log.trim().split("\n").slice(-1)[0] ?? "(empty log)",
    sleep: ctx.sleep,
    now: ctx.now,
    progress: ctx.log,
  });
  return value;
}

async function holderState(ctx: RunContext) {
  const web = await pods(ctx, ctx.namespace, "app=web");
  const cip = await clusterIp(ctx, ctx.namespace, "web");
  const holder = await ensureHolder(ctx, cip);
  const log = await holderConnected(ctx);
  const netstat = parseNetstat(
    (
      await ctx.exec.run({
        target: { kind: "pod", namespace: ctx.namespace, pod: "holder" },
        argv: ["netstat", "-tn"],
      })
    ).stdout,
  );
  const ct = parseBpfCtList(await ciliumDbg(ctx, holder.node, ["bpf", "ct", "list", "global"]));
  const status = parseStatus(await ciliumDbg(ctx, holder.node, ["status", "--verbose"]));
  const ctRec = buildCtRecord({
    holderIp: holder.ip,
    sourcePort: HOLDER_PORT,
    holderLog: log,
    holderNetstat: netstat,
    ct,
    status,
    pods: web,
  });
  return { web, holder, cip, status, ctRec };
}

/** Lab step 4. */
async function observeHolder(ctx: RunContext): Promise<RecordSet> {
  await ensureWeb(ctx, 4);
  const { holder, status, ctRec, cip } = await holderState(ctx);
  const backendPod = ctRec.record.backend_pod;
  const backendTcp = parseProcNetTcp(
    (
      await ctx.exec.run({
        target: { kind: "pod", namespace: ctx.namespace, pod: backendPod },
        // both tables: a Go server (agnhost) listens dual-stack, so its IPv4 peers are IPv4-mapped in tcp6
        argv: ["cat", "/proc/net/tcp", "/proc/net/tcp6"],
      })
    ).stdout,
  );
  return {
    ct: ctRec,
    datapath: buildHolderFacts({
      status,
      backendNetstat: backendTcp,
      client: formatEndpoint(holder.ip, HOLDER_PORT),
      webClusterIp: cip,
    }),
  };
}

async function programState(ctx: RunContext, holder: PodInfo) {
  const id = await endpointId(ctx, ctx.namespace, "holder");
  const endpoint = parseEndpointJson(
    await ciliumDbg(ctx, holder.node, ["endpoint", "get", String(id), "-o", "json"]),
  );
  const dev = endpoint.interfaceName ?? "";
  const bpftool = parseBpftoolNet(await agentBpftool(ctx, holder.node, ["net", "show", "dev", dev]));
  const tcFilterRaw = (await onNode(ctx, holder.node, ["tc", "filter", "show", "dev", dev, "ingress"]))
    .stdout;
  const maps = parseMapList(await ciliumDbg(ctx, holder.node, ["map", "list"]));
  return buildProgRecord({
    endpointId: id,
    endpoint,
    bpftool,
    tcFilterRaw,
    tcFilter: parseTcFilter(tcFilterRaw),
    maps,
  });
}

/** Lab step 5. */
async function observeProgram(ctx: RunContext): Promise<RecordSet> {
  const cip = await clusterIp(ctx, ctx.namespace, "web").catch(async () => {
    await ensureWeb(ctx, 2);
    return clusterIp(ctx, ctx.namespace, "web");
  });
  const holder = await ensureHolder(ctx, cip);
  const prog = await programState(ctx, holder);
  const status = parseStatus(await ciliumDbg(ctx, holder.node, ["status"]));
  return { prog, datapath: buildAgentFacts({ status, kernel: await kernelOf(ctx, holder.node) }) };
}

/** Lab step 6. */
async function observeNodePort(ctx: RunContext): Promise<RecordSet> {
  const web = await pods(ctx, ctx.namespace, "app=web");
  const ready = web.length > 0 ? web : await ensureWeb(ctx, 2);
  await apply(ctx, renderManifest("web-np.yaml", ctx.namespace));
  const node = (ready[0] as PodInfo).node;
  const nodeIp = (await nodes(ctx)).find((n) => n.name === node)?.internalIp ?? "";
  const url = `http://${formatEndpoint(nodeIp, NODE_PORT)}/`;
  const { value: curl } = await pollUntil({
    what: `HTTP 200 from ${url} on ${node}`,
    deadlineMs: DEADLINES.nodePortAnswers,
    intervalMs: 1000,
    probe: () => curlFrom(ctx, { kind: "node", node }, url),
    done: (c) => c.httpCode === 200,
    show: (c) => `${c.verdict}${c.error ? ` (${c.error})` : ""}`,
    sleep: ctx.sleep,
    now: ctx.now,
    progress: ctx.log,
  });
  const outside = await curlFrom(ctx, { kind: "outside" }, url).catch((err: Error) => {
    ctx.log(`no client outside the nodes: ${err.message}`);
    return null;
  });
  const iptablesRaw = await iptablesSave(ctx, node);
  const ssRaw = (await onNode(ctx, node, ["ss", "-Htln", `sport = :${NODE_PORT}`])).stdout;
  const services = parseServiceListJson(await ciliumDbg(ctx, node, ["service", "list", "-o", "json"]));
  return {
    nodeport: buildNodePortRecord({
      nodeIp,
      nodePort: NODE_PORT,
      curl,
      iptablesSave: iptablesRaw,
      ssRaw,
      ss: parseSs(ssRaw),
      services,
    }),
    datapath: {
      record: { nodeport_outside_http: outside?.httpCode ?? null },
      evidence: { nodeport_outside_http: outside ? [`curl from outside the nodes: ${outside.verdict}`] : [] },
    },
  };
}

/** Lab step 7. */
async function observeGhost(ctx: RunContext): Promise<RecordSet> {
  const probe = await ensureGhostAndProbe(ctx);
  const cip = await clusterIp(ctx, ctx.namespace, "ghost");
  const frontend = formatEndpoint(cip, WEB_PORT);
  const { value: services } = await pollUntil({
    what: `the agent on ${probe.node} to list ${frontend}`,
    deadlineMs: DEADLINES.mapConverged,
    intervalMs: 1000,
    probe: async () =>
      parseServiceListJson(await ciliumDbg(ctx, probe.node, ["service", "list", "-o", "json"])),
    done: (s) => s.services.some((x) => x.frontend === frontend),
    show: (s) => `${s.services.length} services, ${frontend} absent`,
    sleep: ctx.sleep,
    now: ctx.now,
    progress: ctx.log,
  });
  const curl = await curlFrom(ctx, { kind: "pod", namespace: ctx.namespace, pod: "probe" }, `http://${cip}/`);
  const config = parseConfig(await ciliumDbg(ctx, probe.node, ["config", "-a"]));
  const ipt = parseIptablesSave(await iptablesSave(ctx, probe.node));
  const lb = await lbList(ctx, probe.node);
  return {
    ghost: buildGhostRecord({ clusterIp: cip, port: WEB_PORT, services, curl, config }),
    datapath: mergeDatapath([
      buildGhostFacts({ iptables: ipt, lb, clusterIp: cip, namespace: ctx.namespace }),
      { record: { ghost_errno: curl.errno }, evidence: { ghost_errno: curl.error ? [curl.error] : [] } },
    ]),
  };
}

/** Lab step 8: re-read the current state; compared with the earlier topics' records. */
async function observeReport(ctx: RunContext): Promise<RecordSet> {
  const { holder, status, cip, ctRec } = await holderState(ctx);
  const prog = await programState(ctx, holder);
  const lb = await lbList(ctx, holder.node);
  const config = parseConfig(await ciliumDbg(ctx, holder.node, ["config", "-a"]));
  const report = buildReportRecord({
    status,
    webLb: findLbService(lb, formatEndpoint(cip, WEB_PORT)),
    holderBackend: ctRec.record.backend,
    holderProgram: prog.record.program,
    iptablesSave: await iptablesSave(ctx, holder.node),
    nodePort: NODE_PORT,
    config,
  });
  return { ...ctx.earlierRecords(), report };
}

const DNS_NAME = "kubernetes.default.svc.cluster.local";

async function kubeDns(ctx: RunContext) {
  const ip = await clusterIp(ctx, "kube-system", "kube-dns");
  const coredns = await pods(ctx, "kube-system", "k8s-app=kube-dns");
  return { ip, coredns };
}

/**
 * The notebook's client: a Pod pinned to a node that runs no CoreDNS Pod (3 nodes, 2 CoreDNS replicas: there
 * is one), so every query to kube-dns is answered from another node; `remote` is a CoreDNS Pod elsewhere.
 */
async function clientAndRemote(ctx: RunContext) {
  const { ip, coredns } = await kubeDns(ctx);
  const busy = new Set(coredns.map((p) => p.node));
  const free = (await nodes(ctx)).map((n) => n.name).find((n) => !busy.has(n));
  if (!free)
    throw new Error(
      `every node runs a CoreDNS Pod (${[...busy].join(", ")}): no node for a client whose queries cross the tunnel`,
    );
  await apply(ctx, renderManifest("dns-client.yaml", ctx.namespace, { NODE: free }));
  const client = await waitPodReady(ctx, "dns-client");
  const remote = coredns.find((p) => p.node !== client.node && p.ready);
  return { client, dnsIp: ip, coredns, remote };
}

/** Notebook §2. */
async function observeKubeDns(ctx: RunContext): Promise<RecordSet> {
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

/** Notebook §4–5. */
async function observeHostRouting(ctx: RunContext): Promise<RecordSet> {
  const { client, dnsIp, remote } = await clientAndRemote(ctx);
  const node = client.node;
  const addrs = parseIpAddr((await onNode(ctx, node, ["ip", "-o", "addr", "show"])).stdout);
  const routes = parseIpRoute((await onNode(ctx, node, ["ip", "route", "show", "table", "all"])).stdout);
  const others = (await nodes(ctx)).filter((n) => n.name !== node);
  const target = remote?.ip ?? (await pods(ctx, ctx.namespace, "app=web")).find((p) => p.node !== node)?.ip;
  if (!target) throw new Error(`no Pod on a node other than ${node} to route to`);
  const routeGetRaw = (await onNode(ctx, node, ["ip", "route", "get", target])).stdout;
  let underlayMtu: number | null = null;
  if (others[0]) {
    const dev = parseIpRoute((await onNode(ctx, node, ["ip", "route", "get", others[0].internalIp])).stdout)
      .routes[0]?.dev;
    if (dev)
      underlayMtu =
        Number((await onNode(ctx, node, ["cat", `/sys/class/net/${dev}/mtu`])).stdout.trim()) || null;
  }
  return {
    clusterip: buildClusterIpHostRecord({ clusterIp: dnsIp, addrs, routes }),
    route: buildRemoteRouteRecord({
      destination: target,
      routeGet: parseIpRoute(routeGetRaw),
      routeGetRaw,
      underlayMtu,
    }),
  };
}

/** Notebook §6–7. */
async function observeTranslation(ctx: RunContext): Promise<RecordSet> {
  const { client, dnsIp } = await clientAndRemote(ctx);
  const node = client.node;
  const nat = async () =>
    parseIptablesSave(
      (await ctx.exec.run({ target: { kind: "node", node }, argv: ["iptables-save", "-c", "-t", "nat"] }))
        .stdout,
    );
  const beforeHost = await nat();
  let hostAnswers = 0;
  for (let i = 0; i < 10; i++) {
    const r = await onNode(ctx, node, ["bash", "-c", hostDnsScript(dnsIp, DNS_NAME, 0x4000 + i)]);
    if (r.exitCode === 0 && r.stdout.includes("answered")) hostAnswers++;
  }
  const afterHost = await nat();
  let podAnswers = 0;
  for (let i = 0; i < 5; i++) {
    const r = await ctx.exec.run({
      target: { kind: "pod", namespace: ctx.namespace, pod: "dns-client" },
      argv: ["nslookup", DNS_NAME, dnsIp],
    });
    if (r.exitCode === 0) podAnswers++;
  }
  const afterPod = await nat();
  return {
    translation: buildTranslationRecord({
      comment: "kube-system/kube-dns:dns cluster IP",
      hostQueries: 10,
      hostAnswers,
      podQueries: 5,
      podAnswers,
      beforeHost,
      afterHost,
      beforePod: afterHost,
      afterPod,
    }),
  };
}

/** Notebook §8. */
async function observeVxlan(ctx: RunContext): Promise<RecordSet> {
  const { client, dnsIp, remote } = await clientAndRemote(ctx);
  if (!remote)
    throw new Error(`no ready CoreDNS Pod outside ${client.node}: no query would cross the tunnel`);
  await apply(ctx, renderManifest("capture.yaml", ctx.namespace, { NODE: client.node }));
  await waitPodReady(ctx, "capture");
  const inCapture = (argv: string[]) =>
    ctx.exec.run({ target: { kind: "pod", namespace: ctx.namespace, pod: "capture" }, argv });
  await inCapture([
    "sh",
    "-c",
    "rm -f /tmp/cap.txt; (timeout 20 tcpdump -l -nn -i any -T vxlan udp port 8472 > /tmp/cap.txt 2>&1 &)",
  ]);
  await pollUntil({
    what: "tcpdump to start listening",
    deadlineMs: 10_000,
    intervalMs: 300,
    probe: async () => (await inCapture(["cat", "/tmp/cap.txt"])).stdout,
    done: (t) => t.includes("listening on"),
    show: (t) => t.trim() || "(no output yet)",
    sleep: ctx.sleep,
    now: ctx.now,
  });
  for (let i = 0; i < 10; i++) {
    await ctx.exec.run({
      target: { kind: "pod", namespace: ctx.namespace, pod: "dns-client" },
      argv: ["nslookup", DNS_NAME, dnsIp],
    });
  }
  const { value: capture } = await pollUntil({
    what: `VXLAN packets carrying queries to ${remote.ip}`,
    deadlineMs: 15_000,
    intervalMs: 500,
    probe: async () => parseTcpdump((await inCapture(["cat", "/tmp/cap.txt"])).stdout),
    done: (c) => c.packets.some((p) => p.inner?.dst.startsWith(`${remote.ip}:`)),
    show: (c) => `${c.packets.length} tunnel packets`,
    sleep: ctx.sleep,
    now: ctx.now,
  });
  return { vxlan: buildVxlanRecord({ clusterIp: dnsIp, backend: formatEndpoint(remote.ip, 53), capture }) };
}

/** Drop reasons a healthy run produces by design (ghost's reject, background noise of a kind network). */
export const EXPECTED_DROP_REASONS = [
  "Service backend not found",
  "Unsupported L2 protocol",
  "Unsupported L3 protocol",
  "Stale or unroutable IP",
  "Invalid source ip",
  "Unknown L3 target address",
  "Host datapath not ready",
];
/** Error lines known to be harmless. */
const EXPECTED_ERRORS = [/The kernel does not support --service-no-backend-response=reject/];

/** Global invariants: drop reasons in every agent's metrics, error lines in every agent's log since the run started. */
async function observeInvariants(ctx: RunContext): Promise<RecordSet> {
  const agents = (await pods(ctx, "kube-system", "k8s-app=cilium")).sort((a, b) =>
    a.node.localeCompare(b.node),
  );
  const drops: Record<string, number> = {};
  const errors: string[] = [];
  for (const agent of agents) {
    for (const [reason, n] of Object.entries(
      dropReasons(parseMetricsJson(await ciliumDbg(ctx, agent.node, ["metrics", "list", "-o", "json"]))),
    )) {
      drops[reason] = (drops[reason] ?? 0) + n;
    }
    const log = await kubectl(ctx, [
      "-n",
      "kube-system",
      "logs",
      agent.name,
      "-c",
      "cilium-agent",
      `--since-time=${ctx.runStartedAt}`,
    ]);
    for (const line of errorLines(log))
      if (!EXPECTED_ERRORS.some((re) => re.test(line))) errors.push(`${agent.node}: ${line}`);
  }
  return {
    invariants: {
      record: {
        drop_reasons: drops,
        unexpected_drops: Object.keys(drops)
          .filter((r) => !EXPECTED_DROP_REASONS.includes(r))
          .sort(),
        error_lines: errors,
      },
      evidence: { drop_reasons: Object.entries(drops).map(([k, v]) => `${k}: ${v}`) },
    },
  };
}

export const OBSERVERS: Record<Topic, (ctx: RunContext) => Promise<RecordSet>> = {
  iptables: observeIptables,
  "service-map": observeServiceMap,
  scale: observeScale,
  holder: observeHolder,
  program: observeProgram,
  nodeport: observeNodePort,
  ghost: observeGhost,
  report: observeReport,
  "kube-dns": observeKubeDns,
  "host-routing": observeHostRouting,
  translation: observeTranslation,
  vxlan: observeVxlan,
  invariants: observeInvariants,
  upgrade: observeUpgrade,
  "measure-scale": observeScaling,
  "measure-latency": observeLatency,
};

/** The topics in the lab's order, then the notebook's. */
export const TOPIC_ORDER: Topic[] = [
  "iptables",
  "service-map",
  "scale",
  "holder",
  "program",
  "nodeport",
  "ghost",
  "report",
  "kube-dns",
  "host-routing",
  "translation",
  "vxlan",
  "measure-scale",
  "measure-latency",
  "invariants",
  "upgrade",
];

/** Merges topic outputs: later records replace earlier ones; datapath fields are merged. */
export function mergeRecordSets(sets: RecordSet[]): RecordSet {
  const out: RecordSet = {};
  for (const s of sets) Object.assign(out, { ...s, datapath: mergeDatapath([out.datapath, s.datapath]) });
  if (Object.keys(out.datapath?.record ?? {}).length === 0) delete out.datapath;
  return out;
}
