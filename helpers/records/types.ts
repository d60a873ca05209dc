import type { Attribution } from "../parse/packets.ts";
import type { U64 } from "../parse/u64.ts";
import type { DatapathConfig } from "./datapath-config.ts";
import type { EvidenceItem } from "./evidence.ts";
/**
 * The lab's records, with exactly the field names and types of the documents (counts are numbers), and
 * the records this suite adds for the kube-proxy notebook and for the mode/version differences. Each
 * record travels with its evidence: for every field, the raw lines it was read from, quoted at their place in
 * the bundle, or the value derived from named places (helpers/records/evidence.ts).
 */

/** Lab step 1: iptables-save on the node. */
export interface IptablesRecord {
  cluster_ip: string;
  kube_svc_lines: number;
  cluster_ip_lines: number;
  cilium_lines: number;
  kube_proxy_replacement: string;
}

/** Lab step 2: the web ClusterIP in the agent's service list and BPF LB map. */
export interface SvcRecord {
  /** A number (the lab's); int64 in the agent's model, so past 2^53 the printed decimal, exactly. */
  service_id: U64;
  frontend: string;
  backends: string[];
  backend_pods: string[];
}

/** Lab step 3: after scaling web 2→4. */
export interface ScaleRecord {
  backends: string[];
  new_backends: string[];
}

/** Lab step 4: the holder's connection seen from the app, the socket table and conntrack. */
export interface CtRecord {
  client: string;
  app_peer: string;
  socket_peer: string;
  backend: string;
  backend_pod: string;
  svc_entries: number;
  /**
   * "Full" / "Hostns-only" as `cilium-dbg status --verbose` prints it; Cilium prints "Full" even when socket LB
   * is disabled (pkg/client/client.go at v1.19.7), so this alone says nothing about socket LB. null only when
   * the line is absent.
   */
  socket_lb_coverage: string | null;
}

/** Lab step 5: the program and policy map on the holder's host-side device. */
export interface ProgRecord {
  endpoint_id: number;
  interface: string;
  ifindex: number;
  attach: string;
  program: string;
  policy_map: string;
  tc_filter_lines: number;
}

/** Lab step 6: NodePort 30780 without a listening socket. */
export interface NodePortRecord {
  node_ip: string;
  node_port: number;
  http_code: number;
  iptables_lines: number;
  listen_sockets: number;
  /** The agent's entry number of 0.0.0.0:30780 NodePort; null when the agent has none (kube-proxy mode). */
  service_id: U64 | null;
}

/** Lab step 7: a Service with no backends. */
export interface GhostRecord {
  cluster_ip: string;
  backends: number;
  curl_exit: number;
  seconds: number;
  no_backend_response: string;
}

/**
 * Ours (issue 25): the IPv6 family of a dual-stack cluster — web's Pods behind IPv6-only Services (web6: ClusterIP
 * and NodePort; ghost6: no backends), reached from Pods and nodes as the IPv4 topics reach web and ghost.
 * Addresses are bracketed endpoints (`[fd00:10:96::a]:80`) in the canonical form (RFC 5952).
 */
export interface Ipv6Record {
  web6_cluster_ip: string;
  /** Every web Pod's IPv6 address with the target port (status.podIPs). */
  web_pods: string[];
  /** The backend slots of `[web6 ClusterIP]:80` in the agent's LB map on the probe's node. */
  slots: string[];
  /** curl from the probe Pod to web6's ClusterIP: the HTTP status (null: no answer). */
  clusterip_http: number | null;
  /** What the holder's getpeername() returned (its log's `connected` line). */
  holder_app_peer: string;
  /** The peer of the holder's socket in its network namespace's /proc/net/tcp6; null: no such socket. */
  holder_socket_peer: string | null;
  /** The destination of the holder's TCP OUT conntrack entry (the backend it reaches); null: none. */
  holder_backend: string | null;
  /** TCP SVC conntrack entries from the holder's source port. */
  holder_svc_entries: number;
  ghost6_cluster_ip: string;
  /** curl from the probe Pod to ghost6's ClusterIP: its exit code, connect() errno (-v) and time. */
  ghost_exit: number;
  ghost_errno: string | null;
  ghost_seconds: number | null;
  /** `[another node's IPv6 InternalIP]:<web6's NodePort>`, dialled from a node's host network namespace. */
  nodeport_target: string;
  nodeport_http: number | null;
  /** The LB map's frontends on web6's NodePort (on the probe's node). */
  nodeport_lb_frontends: string[];
  /** ip6tables-save lines on that node whose comment names web6 (kube-proxy's rules for it). */
  kube_proxy_rules: number;
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

/** Ours (issue 34): a LoadBalancer address from Cilium's LB-IPAM, and ipMode Proxy beside it. */
export interface LoadBalancerRecord extends EdgeSite {
  /** Our pool's range (`start-stop`), or null when the run had no range of ours for such addresses. */
  pool: string | null;
  /** edge-lb's ingress address and its ipMode as the API server holds it. */
  lb_ip: string | null;
  lb_ip_mode: string | null;
  /** Backend slots of `<lb_ip>:80/TCP` (external scope) in the LB map on the far node: 0 when it has no entry. */
  lb_slots: number | null;
  /** `<lb_ip>:0/ANY` in that LB map (the wildcard entry of 1.19+). */
  lb_wildcard: boolean | null;
  /** iptables-save lines on the far node naming edge-lb's address (kube-proxy's `loadbalancer IP` rule). */
  lb_rules: number | null;
  lb_from_pod_near: Probe | null;
  lb_from_pod_far: Probe | null;
  lb_from_node: Probe | null;
  /** edge-proxy's address, whose ipMode we set to Proxy, and its LB map rows plus kube-proxy rules. */
  proxy_ip: string | null;
  proxy_ip_mode: string | null;
  proxy_entries: number | null;
  proxy_from_pod: Probe | null;
}

/** Ours (issue 34): a ClusterIP Service with an externalIP from our range. */
export interface ExternalIpRecord extends EdgeSite {
  /** edge-ext's externalIP (null: no range of ours), its slots in the far node's LB map, kube-proxy's rules naming it. */
  external_ip: string | null;
  ext_slots: number | null;
  ext_rules: number | null;
  ext_from_pod: Probe | null;
  ext_from_node: Probe | null;
}

/** Ours (issue 34): externalTrafficPolicy and internalTrafficPolicy Local, Cluster beside them. */
export interface TrafficPolicyRecord extends EdgeSite {
  /** edge-local's NodePort and health-check node port; edge-cluster's NodePort. */
  local_node_port: number;
  health_port: number;
  cluster_node_port: number;
  /** The outside client's own address (what the backend sees when the source is kept); null: no outside client. */
  outside_ip: string | null;
  local_np_edge: Probe | null;
  local_np_far: Probe | null;
  cluster_np_far: Probe | null;
  /** The health-check node port on each node, from a node's host namespace: HTTP status and localEndpoints. */
  health_edge: Probe | null;
  health_far: Probe | null;
  /** edge-local's LoadBalancer address (or null without a pool) from a Pod on the far node. */
  local_lb_ip: string | null;
  local_lb_from_pod_far: Probe | null;
  /** The far node's own NodePort of edge-local, from its host namespace. */
  local_np_from_node_far: Probe | null;
  /** `<far_ip>:<local_node_port>` in the far node's LB map: slots per scope (null: no entry). */
  local_np_slots: { external: number | null; internal: number | null } | null;
  /** edge-itp (internalTrafficPolicy Local) from a Pod on each node. */
  itp_from_pod_near: Probe | null;
  itp_from_pod_far: Probe | null;
}

/** Ours (issue 34): sessionAffinity ClientIP beside a Service without it. */
export interface SessionAffinityRecord extends EdgeSite {
  /** The backends that answered each series of new connections (GET /hostname), in order. */
  sticky_from_pod: string[];
  sticky_from_node: string[];
  loose_from_pod: string[];
  /** The sticky frontend's flags in the far node's LB map (null: no entry). */
  sticky_flags: string[] | null;
  /** iptables-save lines with `-m recent` naming edge-sticky (kube-proxy's affinity rules). */
  recent_rules: number;
}

/** Ours (issue 34): a Pod's hostPort, and a Service whose backend uses the host network. */
export interface HostNetworkRecord extends EdgeSite {
  host_port: number;
  hostport_from_pod_far: Probe | null;
  hostport_from_node_edge: Probe | null;
  hostport_from_node_far: Probe | null;
  /** HostPort frontends on host_port in the edge node's LB map. */
  hostport_frontends: string[];
  /** The host-network backend's address (its node's InternalIP:port) and the node it runs on. */
  hostnet_backend: string;
  hostnet_node: string;
  /** edge-hostnet's slots in the LB map of the edge node. */
  hostnet_slots: string[];
  hostnet_from_pod_near: Probe | null;
  hostnet_from_pod_far: Probe | null;
  hostnet_from_node_edge: Probe | null;
  /** kube-proxy DNAT rules to the host-network backend. */
  hostnet_rules: number;
}

/**
 * Ours (issue 34): the Service surface's IPv6 family on a dual-stack cluster (the surface-ipv6 topic), single-stack
 * IPv6 Services in front of edge's Pods. Every address field is null where the run had no IPv6 range of ours.
 */
export interface SurfaceIpv6Record extends EdgeSite {
  /** The IPv6 InternalIPs of the edge node and of the far node. */
  edge_ip6: string;
  far_ip6: string;
  /** Our IPv6 pool's range (`start-stop`), or null when the run had no IPv6 range of ours. */
  pool6: string | null;
  /** edge6-lb's address; its backend slots (external scope) and `[addr]:0/ANY` entry in the far node's LB map. */
  lb6_ip: string | null;
  lb6_slots: number | null;
  lb6_wildcard: boolean | null;
  /** ip6tables-save lines on the far node with `-d <lb6_ip>/128` (kube-proxy's `loadbalancer IP` rule). */
  lb6_rules: number | null;
  lb6_from_pod_near: Probe | null;
  lb6_from_pod_far: Probe | null;
  lb6_from_node: Probe | null;
  /** edge6-local's address (externalTrafficPolicy Local), reached from a Pod on the far node. */
  local6_ip: string | null;
  local6_from_pod_far: Probe | null;
  /** The far node's IPv6 Local NodePort (`[far_ip6]:30788`): backend slots per scope; null when it has no entry. */
  local6_np_slots: { external: number | null; internal: number | null } | null;
  /** edge6-ext's externalIP and a Pod's request to it. */
  ext6_ip: string | null;
  ext6_from_pod: Probe | null;
  /** The backends that answered a series of new connections from one Pod to edge6-sticky (ClientIP affinity). */
  sticky6_from_pod: string[];
  /** hostPort 8090 at the edge node's IPv6 address, from a Pod on the far node. */
  hostport6_from_pod: Probe | null;
}

/** Lab step 8: the seven report.txt keys. */
export interface ReportRecord {
  kube_proxy_replacement: string;
  socket_lb_coverage: string | null;
  web_backends: number;
  holder_backend: string;
  holder_program: string;
  nodeport_iptables_lines: number;
  ghost_no_backend_response: string;
}

/**
 * Ours: what the mode and version differences need beyond the lab's fields. Each topic fills the fields it
 * observes (the record is merged across topics), so every field is optional.
 */
export type DatapathRecord = Partial<DatapathFields>;

export interface DatapathFields {
  cilium_version: string;
  kernel: string | null;
  attach_mode: string | null;
  socket_lb: string | null;
  routing: string | null;
  kube_proxy_chains: string[];
  kubelet_chains: string[];
  cilium_chains: string[];
  /** KUBE-SEP chains whose rules mention cca-dp/web (kube-proxy's per-endpoint DNAT). */
  web_sep_chains: number;
  /** `<ghost ClusterIP>:0/ANY` wildcard entry in bpf lb list (1.19+). */
  ghost_wildcard_entry: boolean;
  /** The connect() errno curl -v reported for the ghost ClusterIP (null when it printed none). */
  ghost_errno: string | null;
  /** Every probe of the ghost Service in the ghost topic: from where, curl's exit code and time_total (s). */
  ghost_probes: { from: "pod" | "node"; exit: number; seconds: number | null }[];
  /** filter-table REJECT rules kube-proxy writes for cca-dp/ghost ("has no endpoints"). */
  ghost_reject_rules: number;
  /** The web Service's ClusterIP (what the holder dialled). */
  web_cluster_ip: string;
  /** HTTP code of NodePort 30780 from a client outside the nodes: 0 when it ran and got no HTTP answer (curl 000), null when no such client could run. */
  nodeport_outside_http: number | null;
  /** The holder's IP:40404 as seen in the backend Pod's connection table (not SNATed to a node). */
  backend_sees_client: boolean;
  /** Our bind probe on NodePort 30780 in a node's host network namespace; null: not in this bundle. */
  nodeport_bind: "EADDRINUSE" | "EPERM" | "bound" | "error" | null;
  /** `bpf lb list` frontends on port 30780/TCP with their backend slots; null: not in this bundle. */
  nodeport_lb_frontends: { frontend: string; backends: number }[] | null;
  /** web Pods (web-np's backends) when the nodeport topic ran. */
  nodeport_web_pods: number;
  /** Socket-LB hooks with a `cil_sock…` program at Cilium's cgroup2 root (sorted); null: not in this bundle. */
  sock_hooks: string[] | null;
  /** Entries of cilium_lb4_reverse_sk in `map list` (socket LB's reverse translation; 0 when absent); exact past 2^53. */
  reverse_sk_entries: U64;
  /**
   * The holder's own entries in cilium_lb4_reverse_sk (issue 35): those that reverse web's ClusterIP:80 for the
   * holder's backend, read from the map itself (bpftool); null in bundles recorded before the step.
   */
  reverse_sk_holder: number | null;
  /** RevNAT of the holder's OUT conntrack entry (0: nothing to reverse, the socket was translated). */
  holder_out_rev_nat: number | null;
  /** RevNAT of the holder's SVC conntrack entry: the Service's id (null: no SVC entry, as with socket LB). */
  holder_svc_rev_nat: number | null;
  /** The holder's SVC conntrack entry, its BackendID and that id's address in the backend map. */
  holder_svc_backend: { backend_id: U64 | null; address: string | null } | null;
  /** kube-proxy's REJECT rule for ghost: its packet counter around probes from the host and from a Pod. */
  ghost_reject_counters: {
    rule: string | null;
    host_probes: number;
    host_before: U64 | null;
    host_after: U64 | null;
    pod_probes: number;
    pod_before: U64 | null;
    pod_after: U64 | null;
    /** Windows in which kube-proxy rewrote its rules every time they were tried (issue 35): not judged. */
    spoiled?: string[];
  } | null;
  /** EndpointSlice ready addresses after the scale, sorted. */
  scale_endpointslice: string[];
  /** web Pods' IPs (with target port) by name, after the scale. */
  scale_pods: Record<string, string>;
}

/** Notebook §2: kube-dns EndpointSlice vs the agent's backends. */
export interface DnsRecord {
  cluster_ip: string;
  frontend: string;
  endpointslice_ready: string[];
  agent_backends: string[];
  /** kube-proxy's chain for kube-dns:dns on the node (KUBE-SERVICES, KUBE-SVC-*, KUBE-SEP-* DNAT lines); empty without kube-proxy. */
  kube_proxy_rules: string[];
}

/** Notebook §4: the ClusterIP is on no interface and has no dedicated route on the node. */
export interface ClusterIpHostRecord {
  cluster_ip: string;
  interfaces_with_ip: string[];
  routes_to_ip: string[];
}

/** Notebook §5: route to a Pod on another node. */
export interface RemoteRouteRecord {
  destination: string;
  dev: string | null;
  src: string | null;
  mtu: number | null;
  underlay_mtu: number | null;
  /** The route's gateway (`via`), and the device the route to another node leaves by (absent in older records). */
  via?: string | null;
  underlay_dev?: string | null;
}

/** Notebook §6–7: iptables counters for host-originated vs Pod-originated queries. */
export interface TranslationRecord {
  rule: string | null;
  host_queries: number;
  host_answers: number;
  /** iptables counters are 64-bit: exact numbers, or the printed decimal past 2^53 (helpers/parse/u64.ts). */
  host_packets_before: U64 | null;
  host_packets_after: U64 | null;
  pod_queries: number;
  pod_answers: number;
  pod_packets_before: U64 | null;
  pod_packets_after: U64 | null;
}

/** Notebook §8: inner addresses of VXLAN packets carrying a Pod's query. */
export interface VxlanRecord {
  cluster_ip: string;
  backend: string;
  packets: number;
  inner_destinations: string[];
  /**
   * Native routing (no tunnel): what left the client's node for the backend, captured on the device the route to
   * the backend names — the queries' destinations as they crossed the wire, and how many tunnel packets
   * (UDP 8472) went with them. Absent in tunnel mode and in bundles recorded before it was observed.
   */
  wire?: {
    device: string;
    /** Query packets (UDP to port 53) on that device. */
    packets: number;
    encapsulated: number;
    destinations: string[];
  };
}

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
  drops: {
    node: string;
    reason: string;
    direction: string;
    file: string;
    line: number;
    packets: number | string;
  }[];
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
  };
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

/** Ours: a Cilium upgrade (and with ROLLBACK=1 the way back) under load. */
export interface UpgradeRecord {
  from: string;
  from_minor: string;
  to: string;
  legs: UpgradeLeg[];
  /** Every request the loop made over the whole topic. */
  loop_total: number;
}

/** Ours (issue 35): the agents restarted on one version under the same load as the upgrade's legs. */
export interface RestartRecord {
  version: string;
  legs: UpgradeLeg[];
  loop_total: number;
}

/** Ours: rule and map growth with the number of Services (4 endpoints each, EndpointSlices without Pods). */
export interface MeasureScaleRecord {
  endpoints_per_service: number;
  points: {
    services: number;
    endpoints: number;
    /** iptables-save lines naming the measurement Services (KUBE-SERVICES, KUBE-SVC-*, KUBE-SEP-* rules). */
    kube_proxy_lines: number;
    /** bpf lb list rows of the measurement frontends, per node. */
    lb_entries: Record<string, number>;
    /** Time from apply to programmed everywhere (ms, the run's clock). */
    programmed_ms: number;
    /** The bulk create's own time (ms): the API accepting every Service and EndpointSlice. */
    apply_ms?: number;
    /**
     * From the create's end (the API holds every object) to the last read that found them programmed: every
     * agent's service list and, with kube-proxy, its DNAT rules (ms, recorded times).
     */
    converged_ms?: number;
    /** The bulk delete's own time (ms). */
    delete_ms?: number;
    /** From the delete's end to the last read that found them gone from every agent's service list (ms). */
    gone_ms?: number;
  }[];
  /**
   * What the cluster took, as the suite measured it: the points' converged_ms + gone_ms (ms). Recorded with the
   * suite's own time below, so `npm run bench` reports the ratio (issue 20: within 1.5×).
   */
  convergence_ms?: number;
  /** The observation's own time: from its first call's start to its last call's end (ms, recorded times). */
  suite_ms?: number;
  /** Least-squares slope and fit of kube-proxy lines against the number of Services. */
  kube_proxy_per_service: number;
  kube_proxy_r2: number;
  /** The same for the BPF LB entries (first node). */
  lb_per_service: number;
  lb_r2: number;
}

/** Ours: convergence and fail-fast latencies over repeated events. */
export interface MeasureLatencyRecord {
  events: {
    index: number;
    address: string;
    map_ms: Record<string, number | null>;
    kube_proxy_ms: number | null;
  }[];
  map_p50_ms: number | null;
  map_p90_ms: number | null;
  kube_proxy_p50_ms: number | null;
  kube_proxy_p90_ms: number | null;
  ghost_seconds: number[];
  ghost_p50_s: number | null;
  ghost_p90_s: number | null;
  ghost_exit_codes: number[];
  /** ServiceNoBackendResponse of the agent during the probes: `reject` (default) or `drop` (opt-in profile). */
  no_backend_response: string | null;
}

/** kube-proxy's rules for kube-dns, where its mode put them (iptables, nftables), or none. */
export interface ProxyRulesRecord {
  /** "translated by kube-proxy (iptables): …", "translated by kube-proxy (nftables): …", "no kube-proxy rules". */
  summary: string;
  iptables_rules: number;
  nft_services: number;
  /** Why the nftables side could not be read, or what it found instead. */
  nft_note: string | null;
}

export interface LabRecords {
  /** The datapath configuration the run observed (the config topic). */
  config: DatapathConfig;
  /** Where kube-proxy's Service rules are (the config topic). */
  proxyRules: ProxyRulesRecord;
  iptables: IptablesRecord;
  svc: SvcRecord;
  scale: ScaleRecord;
  ct: CtRecord;
  prog: ProgRecord;
  nodeport: NodePortRecord;
  ghost: GhostRecord;
  report: ReportRecord;
  datapath: DatapathRecord;
  dns: DnsRecord;
  clusterip: ClusterIpHostRecord;
  route: RemoteRouteRecord;
  translation: TranslationRecord;
  vxlan: VxlanRecord;
  invariants: InvariantsRecord;
  upgrade: UpgradeRecord;
  restart: RestartRecord;
  scaling: MeasureScaleRecord;
  latency: MeasureLatencyRecord;
  ipv6: Ipv6Record;
  loadbalancer: LoadBalancerRecord;
  externalIp: ExternalIpRecord;
  trafficPolicy: TrafficPolicyRecord;
  sessionAffinity: SessionAffinityRecord;
  hostNetwork: HostNetworkRecord;
  surfaceIpv6: SurfaceIpv6Record;
}

export type RecordName = keyof LabRecords;

/** For each field, the evidence that backs it: raw lines quoted at their place, or values derived from named places. */
export type Evidence<T> = { [K in keyof T]?: EvidenceItem[] };

export interface Evidenced<T> {
  record: T;
  evidence: Evidence<T>;
}

export type RecordSet = { [K in RecordName]?: Evidenced<LabRecords[K]> };

/** The file each record is written to in an evidence bundle (the lab's names where it has one). */
export const RECORD_FILES: Record<RecordName, string> = {
  config: "config.json",
  proxyRules: "proxy-rules.json",
  iptables: "iptables.json",
  svc: "svc.json",
  scale: "scale.json",
  ct: "ct.json",
  prog: "prog.json",
  nodeport: "nodeport.json",
  ghost: "ghost.json",
  report: "report.txt",
  datapath: "datapath.json",
  dns: "dns.json",
  clusterip: "clusterip.json",
  route: "route.json",
  translation: "translation.json",
  vxlan: "vxlan.json",
  invariants: "invariants.json",
  upgrade: "upgrade.json",
  restart: "restart.json",
  scaling: "measure-scale.json",
  latency: "measure-latency.json",
  ipv6: "ipv6.json",
  loadbalancer: "loadbalancer.json",
  externalIp: "external-ip.json",
  trafficPolicy: "traffic-policy.json",
  sessionAffinity: "session-affinity.json",
  hostNetwork: "host-network.json",
  lifecycle: "lifecycle.json",
  lifecyclePorts: "lifecycle-ports.json",
  lifecycleAgents: "lifecycle-agents.json",
  lifecycleControl: "lifecycle-control.json",
  surfaceIpv6: "surface-ipv6.json",
};
