import type { Executor } from "../exec/types.ts";
import type { Mode } from "../properties/expectation.ts";
import type { RecordSet } from "../records/types.ts";

/** Named deadlines (ms) for every wait of a run; no wait sleeps a fixed time. */
export const DEADLINES = {
  podsReady: 180_000,
  /** Backend slots following an EndpointSlice (Kubernetes' own e2e allows 30 s of endpoint lag). */
  mapConverged: 30_000,
  holderConnected: 60_000,
  nodePortAnswers: 30_000,
} as const;

export interface RunContext {
  exec: Executor;
  mode: Mode;
  /** The Cilium minor expectations resolve against, e.g. "1.20". */
  ciliumMinor: string;
  /** The run's namespace: `cca-dp`, suffixed with the run id when runs share a cluster. */
  namespace: string;
  /** True when the executor replays a bundle: waits do not sleep. */
  replay: boolean;
  log(line: string): void;
  sleep(ms: number): Promise<void>;
  /** When the run started (ISO time): agent logs are read from then on. */
  runStartedAt: string;
  /** Records written by earlier topics of the same run (report.txt compares against them). */
  earlierRecords(): RecordSet;
}

export const realSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
export const noSleep = async () => {};
