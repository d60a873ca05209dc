// One file over 450 lines: the workloads every topic deploys and waits for, through one set of apply/wait helpers
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { IMAGES } from "../../manifests/images.ts";
import { ExecError } from "../exec/types.ts";
import { canonicalIp, ipv6Big, ipv6Text } from "../parse/address.ts";
import { lastHolderConnection } from "../parse/holder-log.ts";
import { DeadlineError } from "../poll.ts";
import { derive, type EvidenceItem, RawText } from "../records/evidence.ts";
import type { EdgeSite, Evidence } from "../records/types.ts";
import {
  apiJsonRaw,
  clusterIp,
  kubectl,
  kubectlRaw,
  type NodeInfo,
  nodes,
  type PodInfo,
  podInfos,
  pods,
  watchUntil,
} from "./cluster.ts";
import { DEADLINES, type RunContext, waitFor } from "./context.ts";
import { describePods, lastWarnings, type PodState, podStates, whyNotReady } from "./pod-status.ts";

export const MANIFESTS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "manifests");

/** A manifest with the run's namespace and the pinned images filled in. */
export function renderManifest(name: string, namespace: string, vars: Record<string, string> = {}): string {
  const all: Record<string, string> = {
    AGNHOST_IMAGE: IMAGES.agnhost,
    CURL_IMAGE: IMAGES.curl,
    HOLDER_IMAGE: IMAGES.node,
    NETSHOOT_IMAGE: IMAGES.netshoot,
    ...vars,
  };
  const text = readFileSync(join(MANIFESTS_DIR, name), "utf8")
    .replace(/^(\s*(?:namespace|name)): cca-dp$/gm, `$1: ${namespace}`)
    .replace(/\$\{(\w+)\}/g, (_m, key: string) => {
      const v = all[key];
      if (v === undefined) throw new Error(`manifest ${name} needs \${${key}}`);
      return v;
    });
  return text;
}

/**
 * `kubectl apply` with the run namespace first in the same document stream: a topic may run before the one
 * that used to create it (on the first real run, host-routing ran first and its Pod had no namespace).
 */
export async function apply(ctx: RunContext, yaml: string): Promise<void> {
  const doc = `${renderManifest("namespace.yaml", ctx.namespace)}---\n${yaml}`;
  try {
    await kubectl(ctx, ["apply", "-f", "-"], doc);
  } catch (err) {
    // topics observed at once (suites/schedule.ts) apply the namespace, and some the same objects, at the same
    // moment: kubectl's apply reads, finds nothing and creates, and the second creator is told AlreadyExists.
    // The object is there then: applying again patches it as any later apply would
    if (!(err instanceof ExecError) || !/\bAlreadyExists\b|already exists/.test(err.result.stderr)) throw err;
    ctx.log(`apply raced another topic's (${err.result.stderr.trim().split("\n")[0]}); applying again`);
    await kubectl(ctx, ["apply", "-f", "-"], doc);
  }
}

/**
 * A wait on Pods that timed out: the error keeps its last observation (each Pod's phase and waiting reason) and,
 * on a cluster, adds each Pod's last Warning event (read once, here: FailedScheduling, Failed image pulls,
 * FailedMount…). A replay has no such call recorded and adds nothing.
 */
async function withWarnings(ctx: RunContext, err: unknown, names: string[]): Promise<unknown> {
  if (!(err instanceof DeadlineError) || ctx.replay || names.length === 0) return err;
  try {
    const { json } = await apiJsonRaw(ctx, {
      resource: "events",
      namespace: ctx.namespace,
      fieldSelector: "type=Warning",
    });
    const warnings = lastWarnings(json);
    const shown = names
      .map((n) => warnings.get(n))
      .filter((w) => w !== undefined)
      .map((w) => `${w.object} ${w.reason}: ${w.message}${w.count > 1 ? ` (×${w.count})` : ""}`);
    if (shown.length === 0) return err;
    return new DeadlineError(
      err.what,
      err.deadlineMs,
      `${err.last}; last Warning events: ${shown.join("; ")}`,
    );
  } catch {
    return err;
  }
}

/**
 * Polls until the Pods matching `selector` in `namespace` are `count` new ones, every one Ready and none of `old`
 * (a deletion or a rollout replaced them): what a change waits for before it is observed. Returns the new Pods.
 */
export async function waitReplaced(
  ctx: RunContext,
  o: {
    what: string;
    namespace: string;
    selector: string;
    old: PodInfo[];
    count: number;
    deadlineMs: number;
    intervalMs: number;
  },
): Promise<PodInfo[]> {
  const { value } = await waitFor(ctx, {
    what: o.what,
    deadlineMs: o.deadlineMs,
    intervalMs: o.intervalMs,
    probe: () => pods(ctx, o.namespace, o.selector),
    done: (ps) => ps.length === o.count && ps.every((p) => p.ready && !o.old.some((x) => x.name === p.name)),
    show: (ps) => ps.map((p) => `${p.name} ${p.ready ? "ready" : p.phase}`).join(", "),
  });
  return value;
}

/**
 * Waits until exactly `count` Pods matching the selector are Ready (none terminating), by watching them (one
 * recorded call). While it waits, and in its timeout error, each Pod that is not ready is named with its phase
 * and why (pod-status.ts).
 */
export async function waitPodsReady(ctx: RunContext, selector: string, count: number): Promise<PodInfo[]> {
  const t0 = performance.now();
  let last: PodState[] = [];
  try {
    const { json, raw } = await watchUntil(ctx, {
      resource: "pods",
      namespace: ctx.namespace,
      selector,
      until: `${count} ready`,
      what: `${count} Ready Pods ${selector} in ${ctx.namespace}`,
      deadlineMs: DEADLINES.podsReady,
      done: (a) => {
        const infos = podInfos(a);
        return infos.length === count && infos.every((p) => p.ready && p.ip !== "");
      },
      show: (a) => {
        last = podStates(a);
        return describePods(last, { want: count, none: `no Pods match ${selector} yet` });
      },
    });
    ctx.log(`${count} Pods ${selector} ready after ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    return podInfos(json, raw).sort((a, b) => a.name.localeCompare(b.name));
  } catch (err) {
    throw await withWarnings(
      ctx,
      err,
      last.filter((p) => !p.ready).map((p) => p.name),
    );
  }
}

export async function waitPodReady(ctx: RunContext, name: string): Promise<PodInfo> {
  try {
    const { json, raw } = await watchUntil(ctx, {
      resource: "pod",
      name,
      namespace: ctx.namespace,
      until: "ready",
      what: `Pod ${ctx.namespace}/${name} Ready`,
      deadlineMs: DEADLINES.podsReady,
      done: (a) => {
        const [info] = podInfos(a);
        return info?.ready === true && info.ip !== "";
      },
      show: (a) => {
        const [state] = podStates(a);
        return state ? whyNotReady(state) : `pod ${ctx.namespace}/${name} not found`;
      },
    });
    const [info] = podInfos(json, raw);
    if (!info) throw new Error(`pod ${ctx.namespace}/${name} not found`);
    return info;
  } catch (err) {
    throw await withWarnings(ctx, err, [name]);
  }
}

/** web at `replicas` replicas, Ready. */
export async function ensureWeb(ctx: RunContext, replicas: number): Promise<PodInfo[]> {
  await apply(ctx, renderManifest("web.yaml", ctx.namespace));
  await kubectl(ctx, ["-n", ctx.namespace, "scale", "deployment", "web", `--replicas=${replicas}`]);
  return waitPodsReady(ctx, "app=web", replicas);
}

/** The error of a read of something that is not there (`Error from server (NotFound): services "web" not found`). */
export function isNotFound(err: unknown): boolean {
  return err instanceof ExecError && /\(NotFound\)|\bnot found\b/.test(err.result.stderr);
}

/**
 * `observe` of a topic that reads web (its Service and Pods), which the topics before it deploy. A topic may run
 * alone (`npm run test:conformance -- suites/08-report`), on a cluster where they did not: when `observe` fails
 * on something of web's that is not there, web is deployed at `replicas` (what those topics leave) and `observe`
 * runs again. After them, and in the replay of a bundle recorded after them, web is there: nothing is added.
 * In the replay of a bundle recorded alone, the same recorded NotFound leads to the same recorded deployment.
 */
export async function withWeb<T>(ctx: RunContext, replicas: number, observe: () => Promise<T>): Promise<T> {
  try {
    return await observe();
  } catch (err) {
    if (!isNotFound(err)) throw err;
    ctx.log(
      `web is not deployed (the topics that deploy it did not run before this one): deploying it at ${replicas} replicas`,
    );
    await ensureWeb(ctx, replicas);
    return observe();
  }
}

/** ghost Service and the probe Pod. */
export async function ensureGhostAndProbe(ctx: RunContext): Promise<PodInfo> {
  await apply(ctx, renderManifest("ghost.yaml", ctx.namespace));
  return waitPodReady(ctx, "probe");
}

/**
 * A holder Pod (manifests/holder.yaml) holding a connection to `webClusterIp`:80: the holder topic's (`holder`,
 * source port 40404), or another one by name and source port (the ipv6 topic's holder6).
 */
export async function ensureHolder(
  ctx: RunContext,
  webClusterIp: string,
  as: { name: string; sourcePort: number } = { name: "holder", sourcePort: HOLDER_PORT },
): Promise<PodInfo> {
  const src = readFileSync(join(MANIFESTS_DIR, "holder", "holder.mjs"), "utf8");
  const cm = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "holder-src", namespace: ctx.namespace },
    data: { "holder.mjs": src },
  };
  await apply(
    ctx,
    `${JSON.stringify(cm)}\n---\n${renderManifest("holder.yaml", ctx.namespace, {
      WEB_CLUSTER_IP: webClusterIp,
      HOLDER_NAME: as.name,
      SOURCE_PORT: String(as.sourcePort),
    })}`,
  );
  return waitPodReady(ctx, as.name);
}

/** Polls a holder Pod's log (the holder topic's `holder`, the ipv6 topic's `holder6`) for its `connected` line. */
export async function holderConnected(ctx: RunContext, name = "holder"): Promise<RawText> {
  const { value } = await waitFor(ctx, {
    what: `${name === "holder" ? "the holder" : name}'s \`connected\` log line`,
    deadlineMs: DEADLINES.holderConnected,
    intervalMs: 1000,
    probe: () => kubectlRaw(ctx, ["-n", ctx.namespace, "logs", name]),
    done: (log) => lastHolderConnection(log.text) !== null,
    show: (log) => log.text.trim().split("\n").slice(-1)[0] ?? "(empty log)",
  });
  return value;
}

/** The lab's ports: web's Service port and targetPort, web-np's NodePort, the holder's fixed source port. */
export const WEB_PORT = 80;
export const TARGET_PORT = 8080;
export const NODE_PORT = 30780;
export const HOLDER_PORT = 40404;

export const DNS_NAME = "kubernetes.default.svc.cluster.local";

export async function kubeDns(ctx: RunContext) {
  const ip = await clusterIp(ctx, "kube-system", "kube-dns");
  const coredns = await pods(ctx, "kube-system", "k8s-app=kube-dns");
  return { ip, coredns };
}

/**
 * The notebook's client: a Pod pinned to a node that runs no CoreDNS Pod (3 nodes, 2 CoreDNS replicas: there
 * is one), so every query to kube-dns is answered from another node; `remote` is a CoreDNS Pod elsewhere.
 */
export async function clientAndRemote(ctx: RunContext) {
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

/** The nodes and Pods the Service-surface topics share (issue 34), with the lines that name them. */
export interface Edge {
  /** The node with edge's backends, a node without (client-far's), and a third node when there is one. */
  edge: NodeInfo;
  far: NodeInfo;
  third: NodeInfo | null;
  backends: PodInfo[];
  near: PodInfo;
  client: PodInfo;
  /** The EdgeSite fields of a record (helpers/records/types.ts) and their evidence. */
  site: EdgeSite;
  siteEvidence: Evidence<EdgeSite>;
}

/** edge's port behind every Service of the Service-surface topics. */
export const EDGE_TARGET_PORT = 8080;

/**
 * edge's two backends pinned to one node and a client Pod on it and on a node without a backend (manifests/edge.yaml).
 * The nodes sorted by name: the last holds the backends (a kind worker), the one before it is the far node, the
 * first (the control plane on kind) is the third. Applied by every Service-surface topic (idempotent: topics that
 * run at once apply the same objects).
 */
export async function ensureEdge(ctx: RunContext): Promise<Edge> {
  const all = (await nodes(ctx)).sort((a, b) => a.name.localeCompare(b.name));
  if (all.length < 2)
    throw new Error(
      `the Service-surface topics need two nodes (one with a backend, one without): ${all.length}`,
    );
  const edge = all.at(-1) as NodeInfo;
  const far = all.at(-2) as NodeInfo;
  const third = all.length > 2 ? (all[0] as NodeInfo) : null;
  await apply(ctx, renderManifest("edge.yaml", ctx.namespace, { EDGE_NODE: edge.name, FAR_NODE: far.name }));
  const backends = await waitPodsReady(ctx, "app=edge", 2);
  const clients = await waitPodsReady(ctx, "app=edge-client", 2);
  const near = clients.find((p) => p.name === "client-near");
  const client = clients.find((p) => p.name === "client-far");
  if (!near || !client) throw new Error("edge's client Pods are not both there (client-near, client-far)");
  const site: EdgeSite = {
    edge_node: edge.name,
    edge_ip: edge.internalIp,
    far_node: far.name,
    far_ip: far.internalIp,
    backends: backends.map((p) => p.name),
  };
  return {
    edge,
    far,
    third,
    backends,
    near,
    client,
    site,
    siteEvidence: {
      edge_node: edge.evidence,
      edge_ip: edge.evidence,
      far_node: far.evidence,
      far_ip: far.evidence,
      backends: backends.flatMap((p) => p.evidence ?? []),
    },
  };
}

/** The lab's docker networks (clusters/lab/lab.sh: kind, kind-dual): ranges of ours whose egress the lab blocks. */
export const LAB_NETWORKS = ["172.31.100.", "172.31.101."] as const;

/** The address range of ours for LoadBalancer addresses (the pool) and an externalIP, and where it came from. */
export interface LbRange {
  pool: string;
  start: string;
  stop: string;
  externalIp: string;
  /** How it was chosen: LB_IP_RANGE, or the edge node's network on a cluster of ours. */
  why: string;
  evidence: EvidenceItem[];
}

const ipv4Int = (ip: string): number | null => {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return null;
  return parts.reduce((a, p) => a * 256 + p, 0);
};
const ipv4Text = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join(".");

/**
 * What differs between the two families' ranges of ours: the variable that sets one, the address arithmetic, the
 * block a node's address is in (docker hands addresses out from its bottom, so the range is at its top).
 */
interface RangeFamily {
  env: "LB_IP_RANGE" | "LB_IP6_RANGE";
  family: "IPv4" | "IPv6";
  num(ip: string): bigint | null;
  text(n: bigint): string;
  /** The node's block: its host bits and how it is named (`/24`, `IPv6 /64`); the pool's first address in it. */
  hostBits: bigint;
  block: string;
  first: bigint;
  poolSuffix: string;
}
const V4: RangeFamily = {
  env: "LB_IP_RANGE",
  family: "IPv4",
  num: (ip) => {
    const n = ipv4Int(ip);
    return n === null ? null : BigInt(n);
  },
  text: (n) => ipv4Text(Number(n)),
  hostBits: 8n,
  block: "/24",
  first: 240n,
  poolSuffix: "lb",
};
const V6: RangeFamily = {
  env: "LB_IP6_RANGE",
  family: "IPv6",
  num: ipv6Big,
  text: ipv6Text,
  hostBits: 64n,
  block: "IPv6 /64",
  first: 0xf0n,
  poolSuffix: "lb6",
};

/** `START-STOP` of `f`'s family, 3 to 256 addresses: the pool is START to STOP less one, the externalIP is STOP. */
function parseRange(
  f: RangeFamily,
  text: string,
): { start: string; stop: string; externalIp: string } | string {
  const m = /^\s*(\S+?)\s*-\s*(\S+?)\s*$/.exec(text);
  const a = m ? f.num(m[1] as string) : null;
  const b = m ? f.num(m[2] as string) : null;
  if (a === null || b === null)
    return `${f.env}=${JSON.stringify(text)} is not START-STOP (two ${f.family} addresses)`;
  if (b - a < 2n || b - a > 255n)
    return `${f.env}=${JSON.stringify(text)} must hold 3 to 256 addresses (the pool, then one externalIP)`;
  return { start: f.text(a), stop: f.text(b - 1n), externalIp: f.text(b) };
}

/**
 * `START-STOP` (IPv4, at least 3 addresses, at most 256): the pool is START to STOP less one, the externalIP is STOP.
 * The reason when it is not such a range.
 */
export const parseLbRange = (text: string) => parseRange(V4, text);
/** parseLbRange's IPv6 twin (LB_IP6_RANGE). */
export const parseLb6Range = (text: string) => parseRange(V6, text);

/** The lab's IPv6 network (clusters/lab/lab.sh kind-dual: fd00:ca1d:101::/64). */
const LAB_NETWORK6 = "fd00:ca1d:101:";

/**
 * A range of ours of `f`'s family (issue 34's network rule: on the nodes' own network, nothing else's): `f.env` when
 * set (read by a recorded call, so a replay decides the same); otherwise, on a cluster this suite created (kind, k3d)
 * or one on the lab's networks, the top of `node`'s block (`ip`, its address of that family); elsewhere none, with
 * the reason.
 */
async function rangeOfOurs(
  ctx: RunContext,
  f: RangeFamily,
  node: { name: string; ip: string; ip4: string; evidence: EvidenceItem[] },
): Promise<LbRange | { none: string }> {
  const env = await ctx.exec.run({ target: { kind: "local" }, argv: ["printenv", f.env] });
  const pool = `${ctx.namespace}-${f.poolSuffix}`;
  const set = env.exitCode === 0 ? env.stdout.trim() : "";
  if (set !== "") {
    const r = parseRange(f, set);
    if (typeof r === "string") throw new Error(r);
    return { pool, ...r, why: `${f.env}=${set}`, evidence: [RawText.stdout(env).quote(1)] };
  }
  const ours =
    ctx.provider === "kind" ||
    ctx.provider === "k3d" ||
    LAB_NETWORKS.some((n) => node.ip4.startsWith(n)) ||
    node.ip.startsWith(LAB_NETWORK6);
  const base = f.num(node.ip);
  if (!ours || base === null)
    return {
      none: `no ${f.family === "IPv6" ? "IPv6 " : ""}address range of ours for LoadBalancer addresses and externalIPs on this cluster (provider ${ctx.provider ?? "unknown"}, node ${node.ip}): set ${f.env}=START-STOP to addresses nothing else uses on the nodes' network`,
    };
  const net = base - (base % (1n << f.hostBits));
  return {
    pool,
    start: f.text(net + f.first),
    stop: f.text(net + f.first + 7n),
    externalIp: f.text(net + f.first + 8n),
    why: `the top of ${node.name}'s ${f.block} (${node.ip}), on a cluster of ours (${ctx.provider ?? "lab network"})`,
    evidence: [derive(`${f.env} unset: the top of ${node.name}'s ${f.block}`, ...node.evidence)],
  };
}

/**
 * The range the Service-surface topics give LoadBalancer addresses and an externalIP from: LB_IP_RANGE, or the top
 * of the edge node's /24 (.240–.247 for the pool, .248 the externalIP) on a cluster of ours (rangeOfOurs).
 */
export async function lbRange(ctx: RunContext, edge: Edge): Promise<LbRange | { none: string }> {
  return lbRangeFor(ctx, edge.edge);
}

/** lbRange for the network of `node` (the upgrade's load: the NodePort's node). */
export async function lbRangeFor(ctx: RunContext, node: NodeInfo): Promise<LbRange | { none: string }> {
  return rangeOfOurs(ctx, V4, {
    name: node.name,
    ip: node.internalIp,
    ip4: node.internalIp,
    evidence: node.evidence,
  });
}

/** The IPv6 range of ours (the surface-ipv6 topic's): LB_IP6_RANGE, or `::f0`–`::f7` and `::f8` atop the node's /64. */
export async function lb6Range(
  ctx: RunContext,
  node: { name: string; ip6: string; evidence: EvidenceItem[]; ip4: string },
): Promise<LbRange | { none: string }> {
  return rangeOfOurs(ctx, V6, { name: node.name, ip: node.ip6, ip4: node.ip4, evidence: node.evidence });
}

/** Whether an IPv6 address lies in `start-stop`. */
export function inRange6(ip: string, range: string): boolean {
  const at = range.lastIndexOf("-");
  const [a, b, x] = [ipv6Big(range.slice(0, at)), ipv6Big(range.slice(at + 1)), ipv6Big(ip)];
  return a !== null && b !== null && x !== null && x >= a && x <= b;
}

/** A LoadBalancer Service's first ingress address and its ipMode, with their lines. */
export interface LbIngress {
  ip: string | null;
  mode: string | null;
  evidence: { ip: EvidenceItem[]; mode: EvidenceItem[] };
}

export async function lbIngress(ctx: RunContext, name: string): Promise<LbIngress> {
  const { json, raw } = await apiJsonRaw(ctx, { resource: "service", name, namespace: ctx.namespace });
  const at = ["status", "loadBalancer", "ingress", 0];
  const first = ((json.status as { loadBalancer?: { ingress?: { ip?: unknown; ipMode?: unknown }[] } })
    ?.loadBalancer?.ingress ?? [])[0];
  const ip = typeof first?.ip === "string" ? first.ip : null;
  const mode = typeof first?.ipMode === "string" ? first.ipMode : null;
  const q = (k: string): EvidenceItem[] => {
    const x = raw.jsonQuote([...at, k]);
    return x ? [x] : [derive(`${name} has no ingress ${k} in its status`, raw)];
  };
  return { ip, mode, evidence: { ip: q("ip"), mode: q("ipMode") } };
}

/** lbIngress polled until LB-IPAM gave the Service an address (and, when `mode` is set, that ipMode). */
export async function waitLbIngress(ctx: RunContext, name: string, mode: string | null): Promise<LbIngress> {
  const { value } = await waitFor(ctx, {
    what: `${name}'s LoadBalancer address from LB-IPAM${mode ? ` with ipMode ${mode}` : ""}`,
    deadlineMs: 60_000,
    intervalMs: 1000,
    probe: () => lbIngress(ctx, name),
    done: (i) => i.ip !== null && (mode === null || i.mode === mode),
    show: (i) => `ingress ${i.ip ?? "none"} ipMode ${i.mode ?? "unset"}`,
  });
  return value;
}

/** A LoadBalancer Service's address (canonical form) and its line, once LB-IPAM gave one. */
export async function waitLbAddress(
  ctx: RunContext,
  name: string,
): Promise<{ ip: string; evidence: EvidenceItem[] }> {
  const i = await waitLbIngress(ctx, name, null);
  if (i.ip === null) throw new Error(`${name} has no LoadBalancer address`);
  return { ip: canonicalIp(i.ip), evidence: i.evidence.ip };
}

/**
 * Our CiliumLoadBalancerIPPool for `range` (manifests/lb-pool.yaml), owned by the run namespace. Another pool of
 * ours on the same range (a nested run's, its namespace being deleted) would be in conflict with it and serve
 * nothing: it is waited out first.
 */
export async function ensureLbPool(ctx: RunContext, range: LbRange): Promise<void> {
  await waitFor(ctx, {
    what: `no other pool of ours on ${range.start}-${range.stop}`,
    deadlineMs: 120_000,
    intervalMs: 2000,
    probe: async () => {
      const { json } = await apiJsonRaw(ctx, { resource: "ciliumloadbalancerippools" });
      type Pool = {
        metadata?: { name?: string; labels?: Record<string, string> };
        spec?: { blocks?: { start?: string }[] };
      };
      return ((json.items ?? []) as Pool[])
        .filter(
          (p) =>
            p.metadata?.name !== range.pool &&
            p.metadata?.labels?.["app.kubernetes.io/part-of"] === "cilium-datapath-conformance" &&
            (p.spec?.blocks ?? []).some((b) => b.start === range.start),
        )
        .map((p) => p.metadata?.name ?? "?");
    },
    done: (others) => others.length === 0,
    show: (others) => `still there: ${others.join(", ")}`,
  });
  await apply(ctx, "");
  const { json } = await apiJsonRaw(ctx, { resource: "namespace", name: ctx.namespace });
  const uid = (json.metadata as { uid?: unknown } | undefined)?.uid;
  if (typeof uid !== "string") throw new Error(`namespace ${ctx.namespace} has no uid`);
  await apply(
    ctx,
    renderManifest("lb-pool.yaml", ctx.namespace, {
      POOL: range.pool,
      NAMESPACE_UID: uid,
      POOL_START: range.start,
      POOL_STOP: range.stop,
    }),
  );
}
