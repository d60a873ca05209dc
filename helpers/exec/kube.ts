import { PassThrough, Readable } from "node:stream";
import { CoreV1Api, Exec, KubeConfig, type V1Status } from "@kubernetes/client-node";
import type { ExecRequest, ExecResult, Executor } from "./types.ts";

/** Exit code from the exec status channel: Success → 0, NonZeroExitCode → the ExitCode cause. */
export function exitCodeFromStatus(status: V1Status | undefined): number | null {
  if (!status) return null;
  if (status.status === "Success") return 0;
  const cause = status.details?.causes?.find((c) => c.reason === "ExitCode");
  if (cause?.message && /^\d+$/.test(cause.message)) return Number(cause.message);
  return null;
}

/**
 * Exec into Pods through the Kubernetes API (@kubernetes/client-node): the cilium-agent container of the
 * agent on a node, or any Pod container. Returns stdout, stderr and the exit code from the status channel.
 */
export class KubeExecutor implements Executor {
  private readonly kc: KubeConfig;
  private readonly core: CoreV1Api;
  private readonly agents = new Map<string, string>();

  constructor(context?: string, kubeconfig?: string) {
    this.kc = new KubeConfig();
    if (kubeconfig) this.kc.loadFromFile(kubeconfig);
    else this.kc.loadFromDefault();
    if (context) this.kc.setCurrentContext(context);
    this.core = this.kc.makeApiClient(CoreV1Api);
  }

  /** The cilium agent Pod scheduled on `node`. */
  async agentPod(node: string): Promise<string> {
    const cached = this.agents.get(node);
    if (cached) return cached;
    const list = await this.core.listNamespacedPod({
      namespace: "kube-system",
      labelSelector: "k8s-app=cilium",
      fieldSelector: `spec.nodeName=${node}`,
    });
    const pod = list.items.find((p) => p.status?.phase === "Running")?.metadata?.name;
    if (!pod) throw new Error(`no running cilium agent Pod on node ${node}`);
    this.agents.set(node, pod);
    return pod;
  }

  private async firstContainer(namespace: string, pod: string): Promise<string> {
    const p = await this.core.readNamespacedPod({ namespace, name: pod });
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
    const status = await new Promise<V1Status | undefined>((resolve, reject) => {
      const timer = req.timeoutMs ? setTimeout(() => resolve(undefined), req.timeoutMs) : null;
      new Exec(this.kc)
        .exec(
          namespace,
          pod,
          container ?? "",
          req.argv,
          out,
          err,
          req.stdin !== undefined ? Readable.from([req.stdin]) : null,
          false,
          (s) => {
            if (timer) clearTimeout(timer);
            resolve(s);
          },
        )
        .then((ws) => ws.on("close", () => setTimeout(() => resolve(undefined), 2000)))
        .catch(reject);
    });
    return {
      stdout: Buffer.concat(chunks).toString("utf8"),
      stderr: Buffer.concat(errChunks).toString("utf8"),
      exitCode: exitCodeFromStatus(status),
      durationMs: performance.now() - t0,
    };
  }
}
