import { PassThrough, Readable } from "node:stream";
import { CoreV1Api, Exec, KubeConfig, type V1Pod, type V1Status } from "@kubernetes/client-node";
import type { ExecRequest, ExecResult, Executor } from "./types.ts";

/** Exit code from the exec status channel: Success → 0, NonZeroExitCode → the ExitCode cause. */
export function exitCodeFromStatus(status: V1Status | undefined): number | null {
  if (!status) return null;
  if (status.status === "Success") return 0;
  const cause = status.details?.causes?.find((c) => c.reason === "ExitCode");
  if (cause?.message && /^\d+$/.test(cause.message)) return Number(cause.message);
  return null;
}

/** Every exec gets a deadline: a hung command must not hold a spec until vitest's own timeout. */
export const DEFAULT_EXEC_TIMEOUT_MS = 120_000;

/** What the executor needs of client-node (tests pass their own). */
export interface KubeApi {
  listPods(namespace: string, labelSelector: string, fieldSelector: string): Promise<V1Pod[]>;
  readPod(namespace: string, name: string): Promise<V1Pod>;
  exec(
    namespace: string,
    pod: string,
    container: string,
    argv: string[],
    out: PassThrough,
    err: PassThrough,
    stdin: Readable | null,
    onStatus: (s: V1Status) => void,
  ): Promise<{ close(): void; on(event: "close", fn: () => void): unknown }>;
}

function clientNodeApi(context?: string, kubeconfig?: string): KubeApi {
  const kc = new KubeConfig();
  if (kubeconfig) kc.loadFromFile(kubeconfig);
  else kc.loadFromDefault();
  if (context) kc.setCurrentContext(context);
  const core = kc.makeApiClient(CoreV1Api);
  return {
    listPods: async (namespace, labelSelector, fieldSelector) =>
      (await core.listNamespacedPod({ namespace, labelSelector, fieldSelector })).items,
    readPod: (namespace, name) => core.readNamespacedPod({ namespace, name }),
    exec: (namespace, pod, container, argv, out, err, stdin, onStatus) =>
      new Exec(kc).exec(namespace, pod, container, argv, out, err, stdin, false, onStatus),
  };
}

/**
 * Exec into Pods through the Kubernetes API (@kubernetes/client-node): the cilium-agent container of the
 * agent on a node, or any Pod container. Returns stdout, stderr and the exit code from the status channel.
 */
export class KubeExecutor implements Executor {
  private readonly api: KubeApi;

  constructor(context?: string, kubeconfig?: string, api?: KubeApi) {
    this.api = api ?? clientNodeApi(context, kubeconfig);
  }

  /**
   * The cilium agent Pod running on `node`, resolved on every call (a field-selected list is cheap): after a
   * `helm upgrade` rolls the DaemonSet the old Pod is gone, and a cached name would be exec'd until a deadline.
   * A Pod that is being deleted does not count.
   */
  async agentPod(node: string): Promise<string> {
    const items = await this.api.listPods("kube-system", "k8s-app=cilium", `spec.nodeName=${node}`);
    const pod = items.find((p) => p.status?.phase === "Running" && !p.metadata?.deletionTimestamp)?.metadata
      ?.name;
    if (!pod) throw new Error(`no running cilium agent Pod on node ${node}`);
    return pod;
  }

  private async firstContainer(namespace: string, pod: string): Promise<string> {
    const p = await this.api.readPod(namespace, pod);
    const name = p.spec?.containers[0]?.name;
    if (!name) throw new Error(`pod ${namespace}/${pod} has no containers`);
    return name;
  }

  async run(req: ExecRequest): Promise<ExecResult> {
    let namespace: string;
    let pod: string;
    let container: string | undefined;
    if (req.target.kind === "agent") {
      namespace = "kube-system";
      pod = await this.agentPod(req.target.node);
      container = "cilium-agent";
    } else if (req.target.kind === "pod") {
      namespace = req.target.namespace;
      pod = req.target.pod;
      // the exec API wants a container name: default to the Pod's first container, as kubectl does
      container = req.target.container ?? (await this.firstContainer(namespace, pod));
    } else throw new Error(`KubeExecutor cannot reach target ${req.target.kind}`);
    const out = new PassThrough();
    const err = new PassThrough();
    const chunks: Buffer[] = [];
    const errChunks: Buffer[] = [];
    out.on("data", (c: Buffer) => chunks.push(c));
    err.on("data", (c: Buffer) => errChunks.push(c));
    const t0 = performance.now();
    const timeoutMs = req.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS;
    let timedOut = false;
    const status = await new Promise<V1Status | undefined>((resolve, reject) => {
      let socket: { close(): void } | undefined;
      // on timeout the WebSocket is closed too: otherwise the remote command goes on running
      // (client-node issue 2532) and the socket keeps the process alive
      const timer = setTimeout(() => {
        timedOut = true;
        socket?.close();
        resolve(undefined);
      }, timeoutMs);
      this.api
        .exec(
          namespace,
          pod,
          container ?? "",
          req.argv,
          out,
          err,
          req.stdin !== undefined ? Readable.from([req.stdin]) : null,
          (s) => {
            clearTimeout(timer);
            resolve(s);
          },
        )
        .then((ws) => {
          socket = ws;
          if (timedOut) ws.close();
          ws.on("close", () =>
            setTimeout(() => {
              clearTimeout(timer);
              resolve(undefined);
            }, 2000),
          );
        })
        .catch((e: unknown) => {
          clearTimeout(timer);
          reject(e);
        });
    });
    const stderr = Buffer.concat(errChunks).toString("utf8");
    return {
      stdout: Buffer.concat(chunks).toString("utf8"),
      stderr: timedOut
        ? `${stderr}timed out after ${timeoutMs} ms: ${pod}/${container}: ${req.argv.join(" ")}\n`
        : stderr,
      exitCode: timedOut ? null : exitCodeFromStatus(status),
      durationMs: performance.now() - t0,
    };
  }
}
