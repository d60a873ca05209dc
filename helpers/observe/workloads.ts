import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { IMAGES } from "../../manifests/images.ts";
import { clusterIp, kubectl, nodes, type PodInfo, pod, pods } from "./cluster.ts";
import { DEADLINES, type RunContext, waitFor } from "./context.ts";

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
  await kubectl(ctx, ["apply", "-f", "-"], `${renderManifest("namespace.yaml", ctx.namespace)}---\n${yaml}`);
}

/** Waits until exactly `count` Pods matching the selector are Ready (none terminating). */
export async function waitPodsReady(ctx: RunContext, selector: string, count: number): Promise<PodInfo[]> {
  const t0 = performance.now();
  const { value } = await waitFor(ctx, {
    what: `${count} Ready Pods ${selector} in ${ctx.namespace}`,
    deadlineMs: DEADLINES.podsReady,
    intervalMs: 2000,
    probe: () => pods(ctx, ctx.namespace, selector),
    done: (ps) => ps.length === count && ps.every((p) => p.ready && p.ip !== ""),
    show: (ps) =>
      `${ps.filter((p) => p.ready).length}/${ps.length} ready (${ps.map((p) => `${p.name}:${p.phase}`).join(", ")})`,
  });
  ctx.log(`${count} Pods ${selector} ready after ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return [...value].sort((a, b) => a.name.localeCompare(b.name));
}

export async function waitPodReady(ctx: RunContext, name: string): Promise<PodInfo> {
  const { value } = await waitFor(ctx, {
    what: `Pod ${ctx.namespace}/${name} Ready`,
    deadlineMs: DEADLINES.podsReady,
    intervalMs: 2000,
    probe: () => pod(ctx, ctx.namespace, name),
    done: (p) => p.ready && p.ip !== "",
    show: (p) => `${p.phase}, ready=${p.ready}`,
  });
  return value;
}

/** web at `replicas` replicas, Ready. */
export async function ensureWeb(ctx: RunContext, replicas: number): Promise<PodInfo[]> {
  await apply(ctx, renderManifest("web.yaml", ctx.namespace));
  await kubectl(ctx, ["-n", ctx.namespace, "scale", "deployment", "web", `--replicas=${replicas}`]);
  return waitPodsReady(ctx, "app=web", replicas);
}

/** ghost Service and the probe Pod. */
export async function ensureGhostAndProbe(ctx: RunContext): Promise<PodInfo> {
  await apply(ctx, renderManifest("ghost.yaml", ctx.namespace));
  return waitPodReady(ctx, "probe");
}

export async function ensureHolder(ctx: RunContext, webClusterIp: string): Promise<PodInfo> {
  const src = readFileSync(join(MANIFESTS_DIR, "holder", "holder.mjs"), "utf8");
  const cm = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "holder-src", namespace: ctx.namespace },
    data: { "holder.mjs": src },
  };
  await apply(
    ctx,
    `${JSON.stringify(cm)}\n---\n${renderManifest("holder.yaml", ctx.namespace, { WEB_CLUSTER_IP: webClusterIp })}`,
  );
  return waitPodReady(ctx, "holder");
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
