import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { IMAGES } from "../../manifests/images.ts";
import { ExecError } from "../exec/types.ts";
import { lastHolderConnection } from "../parse/holder-log.ts";
import { DeadlineError } from "../poll.ts";
import type { RawText } from "../records/evidence.ts";
import {
  apiJsonRaw,
  clusterIp,
  kubectl,
  kubectlRaw,
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
