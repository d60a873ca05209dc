/** The datapath record several topics build a part of (iptables, scale, holder, program, nodeport, ghost): each fills the fields it observes, and the parts merge field by field. */
import type { U64 } from "../helpers/parse/u64.ts";
import type { RecordView } from "../helpers/properties/types.ts";
import type { RecordDecls } from "../helpers/records/catalogue.ts";

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
declare module "../helpers/records/types.ts" {
  interface LabRecords {
    datapath: DatapathRecord;
  }
}

/** A datapath field a property needs; absent means the topic that observes it did not run. */
export function dp<K extends keyof DatapathFields>(r: RecordView, field: K): DatapathFields[K] {
  const v = r.get("datapath")[field];
  if (v === undefined) throw new Error(`datapath.${field} was not collected`);
  return v as DatapathFields[K];
}

const web = ["10.244.1.7:8080", "10.244.2.9:8080"];
const scaled = [...web, "10.244.1.8:8080", "10.244.2.10:8080"];

/** The datapath record's example: every topic's part merged, as a run's bundle holds it. */
function example(mode: "kpr" | "kube-proxy"): DatapathRecord {
  const common = {
    cilium_version: "1.20.1",
    kernel: "6.17.0-1018-azure",
    attach_mode: "TCX",
    routing: "Network: Tunnel [vxlan] Host: Legacy",
    kubelet_chains: ["KUBE-FIREWALL", "KUBE-KUBELET-CANARY"],
    cilium_chains: ["CILIUM_FORWARD", "CILIUM_INPUT"],
    ghost_wildcard_entry: true,
    nodeport_outside_http: 200,
    web_cluster_ip: "10.96.44.2",
    backend_sees_client: true,
    scale_endpointslice: [...scaled].sort(),
    scale_pods: {
      "web-7d9-a": web[0] as string,
      "web-7d9-b": web[1] as string,
      "web-7d9-c": scaled[2] as string,
      "web-7d9-d": scaled[3] as string,
    },
  };
  if (mode === "kpr")
    return {
      ...common,
      socket_lb: "Enabled",
      kube_proxy_chains: [],
      web_sep_chains: 0,
      ghost_reject_rules: 0,
      ghost_errno: "EHOSTUNREACH",
      ghost_probes: [
        { from: "pod", exit: 7, seconds: 0.0022 },
        { from: "node", exit: 7, seconds: 0.0002 },
        { from: "pod", exit: 7, seconds: 0.0003 },
      ],
      nodeport_bind: "EADDRINUSE",
      nodeport_web_pods: 4,
      nodeport_lb_frontends: [
        { frontend: "0.0.0.0:30780", backends: 4 },
        { frontend: "172.18.0.3:30780", backends: 4 },
      ],
      sock_hooks: ["connect4", "getpeername4", "recvmsg4", "sendmsg4"],
      reverse_sk_entries: 1,
      holder_out_rev_nat: 0,
      holder_svc_rev_nat: null,
      holder_svc_backend: { backend_id: null, address: null },
      ghost_reject_counters: {
        rule: null,
        host_probes: 3,
        host_before: null,
        host_after: null,
        pod_probes: 3,
        pod_before: null,
        pod_after: null,
      },
    };
  return {
    ...common,
    socket_lb: "Disabled",
    kube_proxy_chains: ["KUBE-NODEPORTS", "KUBE-SEP-ABC", "KUBE-SERVICES", "KUBE-SVC-XYZ"],
    web_sep_chains: 4,
    ghost_reject_rules: 1,
    ghost_errno: "ECONNREFUSED",
    ghost_probes: [
      { from: "pod", exit: 7, seconds: 0.0004 },
      { from: "node", exit: 7, seconds: 0.0037 },
      { from: "pod", exit: 7, seconds: 0.0063 },
    ],
    nodeport_bind: "bound",
    nodeport_web_pods: 4,
    nodeport_lb_frontends: [],
    sock_hooks: [],
    reverse_sk_entries: 0,
    // web's Service id in the svc record's example (svc.service_id)
    holder_out_rev_nat: 12,
    holder_svc_rev_nat: 12,
    holder_svc_backend: { backend_id: 13, address: "10.244.2.9" },
    ghost_reject_counters: {
      rule: '-A KUBE-SERVICES -d 10.96.44.3/32 -p tcp -m comment --comment "cca-dp/ghost:http has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable',
      host_probes: 3,
      host_before: 0,
      host_after: 3,
      pod_probes: 3,
      pod_before: 3,
      pod_after: 3,
    },
  };
}

/** Declared by every topic that builds a part of it (beside its own records). */
export const datapathRecords = {
  datapath: { file: "datapath.json", merged: true, example },
} satisfies RecordDecls;
