import type { Attribution } from "../parse/packets.ts";
import type { EvidenceItem } from "./evidence.ts";
/**
 * What every record shares, and the parts several topics' records are made of. A record itself (its type, its file
 * in a bundle, its example) is its topic's: declared in the topic's folder (suites/<nn-name>/<name>.records.ts) and
 * registered below by declaration merging, so helpers/ reads any record by name without naming one. Each record
 * travels with its evidence: for every field, the raw lines it was read from, quoted at their place in the
 * bundle, or the value derived from named places (helpers/records/evidence.ts).
 */

/**
 * Every record by name, as the topics' records files declare them (`declare module … { interface LabRecords { … } }`):
 * empty here, so that helpers/ names no topic; suites/topics.ts checks that each is built by a listed topic.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by the topics' records files (declaration merging)
export interface LabRecords {}

export type RecordName = keyof LabRecords;

/** For each field, the evidence that backs it: raw lines quoted at their place, or values derived from named places. */
export type Evidence<T> = { [K in keyof T]?: EvidenceItem[] };

export interface Evidenced<T> {
  record: T;
  evidence: Evidence<T>;
}

export type RecordSet = { [K in RecordName]?: Evidenced<LabRecords[K]> };

/**
 * A leg topic's record as the leg machinery reads it (the upgrade gate, the report): its legs under load, and
 * where the version changed, the path (from → to).
 */
export interface LegRun {
  legs: UpgradeLeg[];
  from?: string;
  to?: string;
}

/**
 * Ours (issue 34): one HTTP request, from a vantage point to an address, as the Service-surface topics record it:
 * curl's exit code, its class (`HTTP 200`, `REFUSED`, `UNREACHABLE`, `TIMEOUT`, …), the connect() errno `-v`
 * printed, its time and the body's first line (GET /hostname: the backend's name; /clientip: the address the
 * backend saw).
 */
export interface Probe {
  /** Where it ran: `pod near` (a Pod on a node with a backend), `pod far`, `node <name>`, `outside`. */
  from: string;
  url: string;
  exit: number;
  verdict: string;
  http: number | null;
  errno: string | null;
  seconds: number | null;
  body: string | null;
}

/** Ours (issue 34): the nodes and Pods the Service-surface topics share (helpers/observe/workloads.ts ensureEdge). */
export interface EdgeSite {
  /** The node that runs edge's backends, and its InternalIP. */
  edge_node: string;
  edge_ip: string;
  /** A node with no edge backend, where client-far runs. */
  far_node: string;
  far_ip: string;
  /** edge's backends (their names, what GET /hostname answers). */
  backends: string[];
}

/** One long-lived connection held across an upgrade leg (the holder program, one request a second). */
export interface UpgradeConnection {
  /** The Pod holding it (`conn-<i>` from a Pod on every node, `conn-np` from a node to the NodePort). */
  name: string;
  node: string;
  via: "clusterip" | "nodeport" | "loadbalancer" | "local";
  /** The holder's connection counter before and after (it counts every connect: equal means no reconnect). */
  connection_before: number;
  connection_after: number;
  closed_events: number;
  /** `error` and `stalled` events during the leg. */
  error_events: number;
  /** The backend that answered last (its hostname, from GET /hostname), before and after. */
  backend_before: string | null;
  backend_after: string | null;
  /**
   * The connection's own entry in Cilium's conntrack (`TCP OUT <local> -> …` on its node, or `TCP IN <local> -> …` on
   * the backend's: every node is searched since issue 35, so a NodePort connection translated at its socket is
   * found too), when there is one.
   */
  ct_before: string | null;
  ct_after: string | null;
  /** The node whose conntrack held it (issue 35). */
  ct_node_before?: string | null;
  ct_node_after?: string | null;
  /** That entry's destination: the backend where the socket was translated, else the Service address. */
  ct_backend_before: string | null;
  ct_backend_after: string | null;
  replies_during: number;
  /** The holder log's lines of the leg that are not replies (stalls, errors, closes, reconnects), raw. */
  break_lines: string[];
  /** The holder log's last line after the leg. */
  last_line_after: string;
  /** The holder measured its own lag (issue 42); absent in bundles recorded before. */
  lag_measured?: boolean;
  /** Its longest lag during the leg (ms). */
  lag_max_ms?: number;
  /** Why the holder's own stall explains the break (it was not running just before it), or null. */
  client_stall?: string | null;
  /** When the connection first broke (the holder's first close, error or stall event's time, ISO). */
  broke_at?: string;
  /** Whose loss the break was, from the leg's captures and drop monitors (issue 42); absent before. */
  attribution?: Attribution;
}

/** The request loop's requests inside one leg's window. */
export interface UpgradeRequests {
  total: number;
  failed: number;
  /**
   * Each failed request: its start (ms since the epoch), target, error and the raw log line; from issue 35 also why
   * the client's own stall explains it (null: nothing does), and where its packets were seen on the client's node
   * (the leg's capture, by the request's local port) with what that says.
   */
  failures: {
    t: number;
    to: string;
    error: string;
    raw: string;
    stall?: string | null;
    port?: number | null;
    where?: string;
    packets?: string[];
    /** Whose loss it was, from the leg's captures on every node and drop monitors (issue 42); absent before. */
    attribution?: Attribution;
  }[];
  /** Failed requests the client's own stall explains (issue 35); absent in bundles recorded before it. */
  client_stalls?: number;
  /** Whether the loop measured its own lag (issue 35): outages are then judged on the raw gap less that. */
  lag_measured?: boolean;
  /** The loop's measured stalls over 100 ms in the window: how many, the longest (ms). */
  lag_events?: { count: number; max_ms: number };
  /** The longest time between successes to one target, with the raw lines on either side (null: an edge). */
  longest_gap: { to: string; ms: number; after: string | null; before: string | null } | null;
  /**
   * The gap with the longest net time (less the loop's own stall inside it): the longest a target went without
   * a success while the loop ran, failed requests inside or not. Bundles recorded before issue 24 stored the
   * longest gap with a failed request inside (no net_ms): check re-derives it from the loop's log.
   */
  longest_outage: {
    to: string;
    ms: number;
    net_ms?: number;
    stall_ms?: number;
    /** The loop's own measured stall inside the gap, and what the outage is judged on (issue 35). */
    measured_stall_ms?: number | null;
    judged_ms?: number;
    after: string | null;
    before: string | null;
  } | null;
  /** Per target, the distribution of net gaps between successes (ms): n, p50, p90, p99, max, over 500 ms. */
  gaps?: Record<string, { n: number; p50: number; p90: number; p99: number; max: number; over500: number }>;
  /** The loop's period as run: the median time between two request starts (ms). */
  period_ms?: number;
  /** The loop's own longest delay between two request starts (its process not scheduled, not the datapath). */
  loop_stall_ms: number;
  slowest_ms: number | null;
  /** Successful requests per target and backend. */
  backends: Record<string, Record<string, number>>;
}

/** One leg: the upgrade, the rollback after it, or an agent restart on one version (issue 35). */
export interface UpgradeLeg {
  kind: "upgrade" | "rollback" | "restart";
  from: string;
  to: string;
  /** From the change (helm upgrade / rollback) to every agent running `to` and OK, on the loop's clock. */
  duration_s: number;
  /** The leg's window on the loop's clock: `date +%s%3N` in the loop's Pod before the change and after settling. */
  window: { from_ms: number; to_ms: number; from_line: string; to_line: string };
  /** Every agent after the leg: the version its status reports, whether it is OK, and the status line. */
  agents_after: Record<string, { version: string; ok: boolean; line: string }>;
  /** Each node's agent Pod after the leg: when its agent container started and the Pod became Ready. */
  agent_restarts: Record<string, { pod: string; started: string | null; ready: string | null }>;
  /**
   * What the datapath dropped during the leg, per node, reason, direction and BPF source line (the pinned
   * metrics map read before and after: `cilium-dbg bpf metrics list -o json`).
   */
  drops: NodeDrop[];
  connections: UpgradeConnection[];
  requests: UpgradeRequests;
  /**
   * Drop reasons counted during the leg that are not among the expected ones (cilium-cli's list), summed over the
   * nodes (issue 35); absent in bundles recorded before it.
   */
  unexpected_drops?: string[];
  /** Error-level lines in the agents' logs during the leg (allow-listed ones removed); absent before issue 35. */
  error_lines?: string[];
  /**
   * BPF maps pinned in /sys/fs/bpf/tc/globals on each node before and after the leg (per-endpoint numbers folded:
   * `cilium_policy_v2_<id>`), and those the leg added or removed (issue 35: what an upgrade or rollback leaves).
   */
  maps?: { node: string; before: string[]; after: string[]; added: string[]; removed: string[] }[];
  /**
   * Every topic run again on the same cluster after the leg (scripts/conformance-here.mjs: the existing
   * provider, into the nested bundle `after-<leg>/`), as that run judged it. Absent in bundles recorded before.
   */
  conformance?: LegConformance;
  /**
   * What the leg recorded to attribute a failure (issue 42): the nodes whose capture of data packets was read and
   * those whose drop monitor was; absent in bundles recorded before (their failures are then unattributed).
   */
  datapath_evidence?: { captured: string[]; monitored: string[]; drops: number };
  /**
   * A Deployment of two Pods behind a ClusterIP (leg-roll) rolled while the leg's agents restarted: its new Pods
   * (address:port) and each node's view of the Service once they were ready, or what kept it from rolling. Absent
   * in bundles recorded before the legs replaced backends.
   */
  rolled?: { backends: string[]; views: NodeBackends[]; error: string | null };
  /** The lines behind the leg's properties, quoted at their places (or derived from named outputs). */
  evidence: {
    /** The nested run's verdict lines (its failures and known issues), or the line saying it left no bundle. */
    conformance?: EvidenceItem[];
    connections: EvidenceItem[];
    backends: EvidenceItem[];
    agents: EvidenceItem[];
    requests: EvidenceItem[];
    gap: EvidenceItem[];
    /** When each agent restarted and what the datapath dropped: beside the traffic's verdicts. */
    context: EvidenceItem[];
    /** The drops of a reason not expected (or that there were none), and the agents' error lines (issue 35). */
    drops?: EvidenceItem[];
    errors?: EvidenceItem[];
    /** leg-roll's new Pods and each node's service list lines for it. */
    rolled?: EvidenceItem[];
  };
}

/** Packets a node's datapath dropped during a piece of work: reason, direction, BPF source line, count. */
export interface NodeDrop {
  node: string;
  reason: string;
  direction: string;
  file: string;
  line: number;
  packets: number | string;
}

/** A node's view of a Service: its backends as `address (state)`, from the agent's `cilium-dbg service list`. */
export interface NodeBackends {
  node: string;
  backends: string[];
}

/** One verdict of the nested run after a leg, as it printed it (one JSON line each). */
export interface NestedVerdict {
  id: string;
  status: string;
  expected: string;
  observed: string;
  reason?: string;
  upstream?: string;
}

/** The run of every topic after a leg, on the same cluster. */
export interface LegConformance {
  /** The nested bundle, relative to the upgrade bundle (`after-upgrade`, `after-rollback`). */
  bundle: string;
  /** Its exit as the script printed it (`0`, `1`), or why it left no bundle. */
  exit: string;
  /** False when the nested run left no bundle (then no verdict is known). */
  complete: boolean;
  passed: number;
  failed: number;
  known_issues: number;
  skipped: number;
  verdicts: NestedVerdict[];
}
