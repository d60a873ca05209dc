import type { UpgradePlan } from "../helpers/observe/context.ts";
import type { Mode } from "../helpers/properties/expectation.ts";

/** What the conformance project's global setup hands to the specs (through vitest's provide/inject). */
export interface ClusterTarget {
  mode: Mode;
  ciliumMinor: string;
  provider: string;
  context: string;
  kubeconfig?: string;
  namespace: string;
  /**
   * kind: `docker exec` into the node container; k3d: into a tools container joined to the node's network and
   * PID namespaces, named `nodeShellPrefix + node` (k3s nodes are FROM scratch with busybox: no bash, curl or
   * ss); existing: node-shell Pods in `nodeShellNamespace`.
   */
  nodeShell: "docker" | "pod";
  nodeShellPrefix?: string;
  nodeShellNamespace?: string;
  outsideContainer?: string;
  bundleDir: string;
  /** The offline lab's cache, when the run uses it: recorded commands name its paths `$LAB_CACHE/…`. */
  labCache?: string;
  /** Set when UPGRADE_TO asks for the upgrade leg: where the chart values are and what to upgrade to. */
  upgrade?: UpgradePlan;
}

export type RunState =
  | { kind: "skip"; reason: string }
  | { kind: "replay"; bundles: string[]; outDir: string }
  | {
      kind: "cluster";
      runId: string;
      targets: ClusterTarget[];
      /** MODES_CONCURRENT=1: each topic is observed in every mode at once. */
      concurrent?: boolean;
    };

declare module "vitest" {
  export interface ProvidedContext {
    runState: RunState;
  }
}
