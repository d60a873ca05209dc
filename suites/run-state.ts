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
  /** kind/k3d: node containers by node name; existing: node-shell Pods in `nodeShellNamespace`. */
  nodeShell: "docker" | "pod";
  nodeShellNamespace?: string;
  outsideContainer?: string;
  bundleDir: string;
  /** Set when UPGRADE_TO asks for the upgrade leg: where the chart values are and what to upgrade to. */
  upgrade?: UpgradePlan;
}

export type RunState =
  | { kind: "skip"; reason: string }
  | { kind: "replay"; bundles: string[]; outDir: string }
  | { kind: "cluster"; runId: string; targets: ClusterTarget[] };

declare module "vitest" {
  export interface ProvidedContext {
    runState: RunState;
  }
}
