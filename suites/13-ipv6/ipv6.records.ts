/** The ipv6 topic's record. */
import type { RecordDecls } from "../../helpers/records/catalogue.ts";

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
declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    ipv6: Ipv6Record;
  }
}

/**
 * The example: addresses in kind's dual-stack ranges, the translation as the IPv4 records have it (socket LB in
 * kpr, per packet beside kube-proxy).
 */
function example(mode: "kpr" | "kube-proxy"): Ipv6Record {
  const kpr = mode === "kpr";
  const backend = "[fd00:10:244:2::7]:8080";
  return {
    web6_cluster_ip: "fd00:10:96::5e1",
    web_pods: ["[fd00:10:244:1::3]:8080", backend],
    slots: [backend, "[fd00:10:244:1::3]:8080"],
    clusterip_http: 200,
    holder_app_peer: "[fd00:10:96::5e1]:80",
    holder_socket_peer: kpr ? backend : "[fd00:10:96::5e1]:80",
    holder_backend: backend,
    holder_svc_entries: kpr ? 0 : 1,
    ghost6_cluster_ip: "fd00:10:96::9a",
    ghost_exit: 7,
    ghost_errno: kpr ? "EHOSTUNREACH" : "ECONNREFUSED",
    ghost_seconds: 0.0012,
    nodeport_target: "[fd00:ca1d:101::3]:30786",
    nodeport_http: 200,
    nodeport_lb_frontends: kpr ? ["[fd00:ca1d:101::2]:30786", "[::]:30786"] : [],
    kube_proxy_rules: kpr ? 0 : 4,
  };
}

export const records = { ipv6: { file: "ipv6.json", example } } satisfies RecordDecls;
