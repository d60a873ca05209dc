/** The invariants topic's record. */
import type { RecordDecls } from "../../helpers/records/catalogue.ts";

/** Ours: global invariants over the run (cilium-cli's final checks). */
export interface InvariantsRecord {
  /** cilium_drop_count_total by reason, summed over agents, over `drop_window`. */
  drop_reasons: Record<string, number>;
  /** What the counts cover: this run (from the baseline) or the agents' lifetime (a bundle without one). */
  drop_window?: string;
  /** Reasons not in the allowlist. */
  unexpected_drops: string[];
  /** Agent log lines at error level since the run started (allowlisted ones removed). */
  error_lines: string[];
  /**
   * Nodes whose Ready condition changed after the run started (a node that went NotReady and came back, or is
   * not Ready now); null: not read (a bundle recorded before this step).
   */
  node_transitions?: { node: string; ready: string; since: string }[] | null;
  /**
   * kube-system Pods restarted or replaced after the run started (agents, operator, control plane, CoreDNS,
   * kube-proxy): a Pod created then, or a container that ended then; null: not read.
   */
  system_restarts?: { pod: string; node: string; why: string }[] | null;
}
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    invariants: InvariantsRecord;
  }
}

export const records = {
  invariants: {
    file: "invariants.json",
    example: () => ({
      drop_reasons: { "Service backend not found": 1 },
      unexpected_drops: [],
      error_lines: [],
      node_transitions: [],
      system_restarts: [],
    }),
  },
} satisfies RecordDecls;
