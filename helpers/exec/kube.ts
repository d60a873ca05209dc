import { PassThrough, Readable } from "node:stream";
import type { KubeConfig, V1Pod, V1Status } from "@kubernetes/client-node";
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

/**
 * Reading a Pod (or listing the agent on a node) before an exec: an API server that accepts the connection and
 * never answers (a paused control-plane container) must not hold the call either.
 */
export const API_READ_TIMEOUT_MS = 30_000;

/** After the exec stream closes, how long the status may still arrive before the call reports it lost. */
export const STATUS_GRACE_MS = 2000;

/** `p`, or an error `no answer within <ms> <what>` once `ms` have passed without an answer. */
export function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(`no answer within ${ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`} ${what}`),
        ),
      ms,
    );
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

/** What the executor needs of client-node (tests pass their own). */
export interface KubeApi {
  /** Resolves once the client is loaded (client-node is imported on first use): deadlines start after it. */
  ready?(): Promise<void>;
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

/**
 * @kubernetes/client-node, imported on first use: it costs about a second of CPU to import, and most commands
 * of the CLI (`check`, `report`, `--version`) and every replayed spec never talk to an API server.
 */
let clientNode: Promise<typeof import("@kubernetes/client-node")> | undefined;
function importClientNode(): Promise<typeof import("@kubernetes/client-node")> {
  clientNode ??= import("@kubernetes/client-node");
  return clientNode;
}

/** A kubeconfig (the default one, or a file) at a context, as kubectl --context would read it. */
export async function loadKubeConfig(context?: string, kubeconfig?: string): Promise<KubeConfig> {
  const kc = new (await importClientNode()).KubeConfig();
  if (kubeconfig) kc.loadFromFile(kubeconfig);
  else kc.loadFromDefault();
  if (context) kc.setCurrentContext(context);
  return kc;
}

/** client-node against a kubeconfig (the default one, or a file) and context, loaded on the first call. */
export function clientNodeApi(context?: string, kubeconfig?: string): KubeApi {
  let ready:
    | Promise<{
        kc: KubeConfig;
        core: import("@kubernetes/client-node").CoreV1Api;
        Exec: typeof import("@kubernetes/client-node").Exec;
      }>
    | undefined;
  const client = () => {
    ready ??= (async () => {
      const m = await importClientNode();
      const kc = await loadKubeConfig(context, kubeconfig);
      return { kc, core: kc.makeApiClient(m.CoreV1Api), Exec: m.Exec };
    })();
    return ready;
  };
  return {
    ready: async () => {
      await client();
    },
    listPods: async (namespace, labelSelector, fieldSelector) =>
      (await (await client()).core.listNamespacedPod({ namespace, labelSelector, fieldSelector })).items,
    readPod: async (namespace, name) => (await client()).core.readNamespacedPod({ namespace, name }),
    exec: async (namespace, pod, container, argv, out, err, stdin, onStatus) => {
      const { kc, Exec } = await client();
      return new Exec(kc).exec(namespace, pod, container, argv, out, err, stdin, false, onStatus);
    },
  };
}

/**
 * Exec into Pods through the Kubernetes API (@kubernetes/client-node): the cilium-agent container of the
 * agent on a node, or any Pod container. Returns stdout, stderr and the exit code from the status channel.
 */
export class KubeExecutor implements Executor {
  private readonly api: KubeApi;
  private readonly apiReadTimeoutMs: number;
  private readonly statusGraceMs: number;

  constructor(
    context?: string,
    kubeconfig?: string,
    api?: KubeApi,
    /** The named deadlines, shortened by tests. */
    limits: { apiReadTimeoutMs?: number; statusGraceMs?: number } = {},
  ) {
    this.api = api ?? clientNodeApi(context, kubeconfig);
    this.apiReadTimeoutMs = limits.apiReadTimeoutMs ?? API_READ_TIMEOUT_MS;
    this.statusGraceMs = limits.statusGraceMs ?? STATUS_GRACE_MS;
  }

  /**
   * The cilium agent Pod running on `node`, resolved on every call (a field-selected list is cheap): after a
   * `helm upgrade` rolls the DaemonSet the old Pod is gone, and a cached name would be exec'd until a deadline.
   * A Pod that is being deleted does not count.
   */
  async agentPod(node: string): Promise<string> {
    const items = await withDeadline(
      this.api.listPods("kube-system", "k8s-app=cilium", `spec.nodeName=${node}`),
      this.apiReadTimeoutMs,
      `from the API server listing the cilium agent Pod on node ${node}`,
    );
    const pod = items.find((p) => p.status?.phase === "Running" && !p.metadata?.deletionTimestamp)?.metadata
      ?.name;
    if (!pod) throw new Error(`no running cilium agent Pod on node ${node}`);
    return pod;
  }

  private async firstContainer(namespace: string, pod: string): Promise<string> {
    const p = await withDeadline(
      this.api.readPod(namespace, pod),
      this.apiReadTimeoutMs,
      `from the API server reading pod ${namespace}/${pod}`,
    );
    const name = p.spec?.containers[0]?.name;
    if (!name) throw new Error(`pod ${namespace}/${pod} has no containers`);
    return name;
  }

  /**
   * Every call ends within its deadline (`timeoutMs`, default DEFAULT_EXEC_TIMEOUT_MS) with a result that
   * names the target and what happened: the exit code from the status channel; `timed out` when nothing came
   * back in time (a paused node, an API server that stopped answering); `ended without an exit status` when
   * the stream closed before the status arrived (the Pod or its container deleted mid-exec, the API server
   * restarted); `interrupted` when the run was (req.signal). An exec that cannot start throws, naming the Pod.
   */
  async run(req: ExecRequest): Promise<ExecResult> {
    // importing client-node (about a second on a busy machine) is not the API server's time
    await this.api.ready?.();
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
    const where = `${namespace}/${pod}/${container}`;
    let ended: "status" | "timeout" | "closed" | "interrupted" = "status";
    const status = await new Promise<V1Status | undefined>((resolve, reject) => {
      let socket: { close(): void } | undefined;
      let settled = false;
      const finish = (how: typeof ended, s?: V1Status) => {
        if (settled) return;
        settled = true;
        ended = how;
        clearTimeout(timer);
        req.signal?.removeEventListener("abort", onAbort);
        // on timeout or interrupt the WebSocket is closed too: otherwise the remote command goes on running
        // (client-node issue 2532) and the socket keeps the process alive
        if (how !== "status") socket?.close();
        resolve(s);
      };
      const timer = setTimeout(() => finish("timeout"), timeoutMs);
      const onAbort = () => finish("interrupted");
      if (req.signal?.aborted) return finish("interrupted");
      req.signal?.addEventListener("abort", onAbort, { once: true });
      this.api
        .exec(
          namespace,
          pod,
          container ?? "",
          req.argv,
          out,
          err,
          req.stdin !== undefined ? Readable.from([req.stdin]) : null,
          (s) => finish("status", s),
        )
        .then((ws) => {
          socket = ws;
          if (settled && ended !== "status") ws.close();
          // the stream closed: the status may still be in flight for a moment, then it is lost
          ws.on("close", () => setTimeout(() => finish("closed"), this.statusGraceMs));
        })
        .catch((e: unknown) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          req.signal?.removeEventListener("abort", onAbort);
          const why = e instanceof Error ? e.message : String((e as { message?: unknown })?.message ?? e);
          reject(new Error(`exec into ${where} (\`${req.argv.join(" ")}\`) could not start: ${why}`));
        });
    });
    const stderr = Buffer.concat(errChunks).toString("utf8");
    const said = {
      status: "",
      timeout: `timed out after ${timeoutMs} ms: ${pod}/${container}: ${req.argv.join(" ")} (no exit status; the exec was closed)\n`,
      closed: `exec into ${where} ended without an exit status: the stream closed (the Pod or its container went away, or the API server restarted): ${req.argv.join(" ")}\n`,
      interrupted: `interrupted: the run was stopped while ${where} ran ${req.argv.join(" ")}\n`,
    }[ended];
    return {
      stdout: Buffer.concat(chunks).toString("utf8"),
      stderr: `${stderr}${said}`,
      exitCode: ended === "status" ? exitCodeFromStatus(status) : null,
      durationMs: performance.now() - t0,
    };
  }
}
