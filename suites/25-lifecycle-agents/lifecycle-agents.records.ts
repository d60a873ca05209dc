/** The lifecycle-agents topic's record: what each node held, and what a Pod on it reached, after the agents restarted. */
import type { RecordDecls } from "../../helpers/records/catalogue.ts";
import type { EdgeSite, NodeBackends, Probe } from "../../helpers/records/types.ts";
import { EXAMPLE_SITE, exampleOk } from "../surface.ts";

export type { NodeBackends };

/** A request from the client Pod on a node. */
export interface NodeProbe {
  node: string;
  probe: Probe;
}

export interface LifecycleAgentsRecord extends EdgeSite {
  /** lc-roll's Pods (address:port) after the rollout, and each node's view of lc-roll after the agents restarted. */
  roll_backends: string[];
  roll_views: NodeBackends[];
  /** lc-hostds (host network, internalTrafficPolicy Local): each node's view (its own node's backend). */
  hostds_views: NodeBackends[];
  roll_probes: NodeProbe[];
  hostds_probes: NodeProbe[];
}

declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    lifecycleAgents: LifecycleAgentsRecord;
  }
}

/** The record as the declarations expect it (written by us, not an observation): every backend active. */
function lifecycleAgentsExample(): LifecycleAgentsRecord {
  const nodes = ["cdc-control-plane", "cdc-worker", "cdc-worker2"];
  const ok = (node: string, url: string): NodeProbe => ({ node, probe: exampleOk(`pod ${node}`, url, node) });
  const roll = ["10.244.1.30:8080", "10.244.2.31:8080"];
  return {
    ...EXAMPLE_SITE,
    roll_backends: roll,
    roll_views: nodes.map((node) => ({ node, backends: roll.map((b) => `${b} (active)`) })),
    hostds_views: nodes.map((node, i) => ({ node, backends: [`172.31.100.${2 + i}:18091 (active)`] })),
    roll_probes: nodes.map((n) => ok(n, "http://10.96.30.30/hostname")),
    hostds_probes: nodes.map((n) => ok(n, "http://10.96.30.31/hostname")),
  };
}

/** The record this topic builds: its file in a bundle and its example. */
export const records = {
  lifecycleAgents: { file: "lifecycle-agents.json", example: () => lifecycleAgentsExample() },
} satisfies RecordDecls;
