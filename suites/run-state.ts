import type { ClusterTarget } from "../clusters/host.ts";

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

export type { ClusterTarget };
