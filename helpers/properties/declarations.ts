import type { DatapathFields } from "../records/types.ts";
import type { Property, RecordView } from "./types.ts";

const LAB = (step: number) => ({ doc: "lab" as const, where: `step ${step}` });
const NB = (section: string) => ({ doc: "notebook" as const, where: section });
const KN = (where: string) => ({ doc: "knowledge" as const, where });

/** A datapath field a property needs; absent means the topic that observes it did not run. */
function dp<K extends keyof DatapathFields>(r: RecordView, field: K): DatapathFields[K] {
  const v = r.get("datapath")[field];
  if (v === undefined) throw new Error(`datapath.${field} was not collected`);
  return v as DatapathFields[K];
}

const DROP_PROFILE =
  "the opt-in drop profile (NO_BACKEND_RESPONSE=drop) makes a Service without backends time out by design; measure.ghost-drop-timeout judges it";

/** True when the agent ran with serviceNoBackendResponse=drop (the opt-in profile). */
function dropProfile(r: RecordView): boolean {
  const g = r.set.ghost?.record.no_backend_response ?? r.set.latency?.record.no_backend_response;
  return g === "drop";
}

const sameSet = (a: string[], b: string[]) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
const ipOf = (addr: string) =>
  addr.startsWith("[") ? addr.slice(1, addr.indexOf("]")) : addr.slice(0, addr.lastIndexOf(":"));

/**
 * Every property the suite checks, declared once for both modes. The README's expectation table is
 * rendered from this list (`datapath-conformance expectations`), and a test fails when they drift.
 */
export const PROPERTIES: Property[] = [
  // ── lab step 1: iptables ────────────────────────────────────────────────────────────────
  {
    id: "iptables.kpr-mode",
    topic: "iptables",
    claim: "The agent reports KubeProxyReplacement True without kube-proxy and False beside it",
    source: LAB(1),
    expect: { kpr: { eq: "True" }, "kube-proxy": { eq: "False" } },
    needs: ["iptables"],
    observe: (r) => ({
      value: r.get("iptables").kube_proxy_replacement,
      evidence: r.evidence("iptables", "kube_proxy_replacement"),
    }),
  },
  {
    id: "iptables.kube-svc-lines",
    topic: "iptables",
    claim:
      "Lines containing KUBE-SVC in iptables-save: none without kube-proxy, kube-proxy's per-Service chains with it",
    source: LAB(1),
    expect: { kpr: { eq: 0 }, "kube-proxy": { gte: 1 } },
    needs: ["iptables"],
    observe: (r) => ({
      value: r.get("iptables").kube_svc_lines,
      evidence: r.evidence("iptables", "kube_svc_lines"),
    }),
  },
  {
    id: "iptables.cluster-ip-lines",
    topic: "iptables",
    claim: "Lines mentioning the web ClusterIP: none without kube-proxy (the Service lives in BPF maps only)",
    source: LAB(1),
    expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 2 } },
    why: "kube-proxy writes a KUBE-SERVICES match and a KUBE-MARK-MASQ rule per ClusterIP port (knowledge output-formats.md §8)",
    needs: ["iptables"],
    observe: (r) => ({
      value: r.get("iptables").cluster_ip_lines,
      evidence: r.evidence("iptables", "cluster_ip_lines"),
    }),
  },
  {
    id: "iptables.cilium-chains",
    topic: "iptables",
    claim: "Cilium still installs its CILIUM_* chains in both modes, so iptables is never literally empty",
    source: KN("clusters.md §4.3"),
    expect: { kpr: { gte: 1 }, "kube-proxy": { gte: 1 } },
    needs: ["iptables"],
    observe: (r) => ({
      value: r.get("iptables").cilium_lines,
      evidence: r.evidence("iptables", "cilium_lines"),
    }),
  },
  {
    id: "iptables.kube-proxy-chains",
    topic: "iptables",
    claim: "kube-proxy chains (KUBE-SERVICES/SVC/SEP/NODEPORTS/…) exist only where kube-proxy runs",
    source: KN("clusters.md §4.3"),
    expect: { kpr: { eq: 0 }, "kube-proxy": { gte: 3 } },
    needs: ["datapath"],
    observe: (r) => ({
      value: dp(r, "kube_proxy_chains").length,
      evidence: r.evidence("datapath", "kube_proxy_chains"),
    }),
  },
  {
    id: "iptables.kubelet-chains",
    topic: "iptables",
    claim:
      "kubelet's chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY) remain in both modes: 'empty iptables' means no kube-proxy chains",
    source: KN("clusters.md §4.3 (KEP-3178)"),
    expect: { kpr: { gte: 1 }, "kube-proxy": { gte: 1 } },
    needs: ["datapath"],
    observe: (r) => ({
      value: dp(r, "kubelet_chains").length,
      evidence: dp(r, "kubelet_chains"),
    }),
  },
  // ── lab step 2: the Service map ─────────────────────────────────────────────────────────
  {
    id: "service-map.clusterip-entry",
    topic: "service-map",
    claim:
      "The agent has a ClusterIP entry for cca-dp/web at ClusterIP:80 in both modes (Pod ClusterIP traffic stays in eBPF)",
    source: LAB(2),
    why: "KPR=false keeps ClusterIP handling for Pod traffic in eBPF (knowledge clusters.md §4.2)",
    expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
    needs: ["svc"],
    observe: (r) => {
      const svc = r.get("svc");
      return {
        value: Number.isInteger(svc.service_id) && svc.frontend.endsWith(":80"),
        evidence: r.evidence("svc", "service_id"),
      };
    },
  },
  {
    id: "service-map.two-backends",
    topic: "service-map",
    claim: "The web frontend's BPF LB slots hold exactly the two web Pods",
    source: LAB(2),
    expect: { kpr: { eq: 2 }, "kube-proxy": { eq: 2 } },
    needs: ["svc"],
    observe: (r) => {
      const svc = r.get("svc");
      const matched = svc.backend_pods.filter((p) => p.startsWith("web")).length;
      return {
        value: svc.backends.length === 2 ? matched : svc.backends.length,
        evidence: [...r.evidence("svc", "backends"), ...svc.backend_pods],
      };
    },
  },
  // ── lab step 3: scale 2 → 4 ─────────────────────────────────────────────────────────────
  {
    id: "scale.four-slots",
    topic: "scale",
    claim: "After scaling web to 4, the frontend has 4 backend slots",
    source: LAB(3),
    expect: { kpr: { eq: 4 }, "kube-proxy": { eq: 4 } },
    needs: ["scale"],
    observe: (r) => ({ value: r.get("scale").backends.length, evidence: r.evidence("scale", "backends") }),
  },
  {
    id: "scale.new-backends-are-new-pods",
    topic: "scale",
    claim: "The two new slots are the two new Pods (and the old two stay)",
    source: LAB(3),
    expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
    needs: ["scale", "svc", "datapath"],
    observe: (r) => {
      const s = r.get("scale");
      const old = r.get("svc").backends;
      const pods = dp(r, "scale_pods");
      const newPods = Object.entries(pods).filter(([, a]) => !old.includes(a));
      const ok =
        s.new_backends.length === 2 &&
        sameSet(
          s.new_backends,
          newPods.map(([, a]) => a),
        ) &&
        old.every((b) => s.backends.includes(b));
      return {
        value: ok,
        evidence: [
          `new_backends=${s.new_backends.join(",")}`,
          ...newPods.map(([n, a]) => `new pod ${n} ${a}`),
        ],
      };
    },
  },
  {
    id: "scale.matches-endpointslice",
    topic: "scale",
    claim: "The map's backends equal the EndpointSlice's ready addresses",
    source: LAB(3),
    expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
    needs: ["scale", "datapath"],
    observe: (r) => {
      const s = r.get("scale").backends;
      const eps = dp(r, "scale_endpointslice");
      return {
        value: sameSet(s, eps),
        evidence: [`map: ${[...s].sort().join(",")}`, `EndpointSlice ready: ${eps.join(",")}`],
      };
    },
  },
  {
    id: "scale.kube-sep-chains",
    topic: "scale",
    claim:
      "kube-proxy rewrites iptables per endpoint: one KUBE-SEP chain per web backend; none without kube-proxy",
    source: LAB(3),
    why: "the lab's 'instead of rewriting iptables rules, a few map entries change'; KUBE-SEP per endpoint (notebook §3)",
    expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 4 } },
    needs: ["datapath"],
    observe: (r) => ({
      value: dp(r, "web_sep_chains"),
      evidence: r.evidence("datapath", "web_sep_chains"),
    }),
  },
  // ── lab step 4: the holder connection ───────────────────────────────────────────────────
  {
    id: "holder.app-sees-clusterip",
    topic: "holder",
    claim: "getpeername() in the holder returns the ClusterIP:80 it dialled",
    source: LAB(4),
    why: "socket LB reverse-translates getpeername (kpr); per-packet DNAT leaves the socket on the VIP (kube-proxy mode)",
    expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
    needs: ["ct", "datapath"],
    observe: (r) => ({
      value: r.get("ct").app_peer === `${dp(r, "web_cluster_ip")}:80`,
      evidence: r.evidence("ct", "app_peer"),
    }),
  },
  {
    id: "holder.socket-peer",
    topic: "holder",
    claim:
      "The kernel socket table (netstat in the holder) shows the backend Pod with socket LB, the ClusterIP without it",
    source: LAB(4),
    why: "with kube-proxy, KPR=false has no socket LB (socketLB.enabled defaults to false): bpf_lxc translates per packet (knowledge clusters.md §4.2)",
    expect: { kpr: { eq: "backend" }, "kube-proxy": { eq: "cluster-ip" } },
    needs: ["ct", "datapath"],
    observe: (r) => {
      const ct = r.get("ct");
      const peer = ct.socket_peer;
      const value =
        peer === ct.backend
          ? "backend"
          : peer === `${dp(r, "web_cluster_ip")}:80`
            ? "cluster-ip"
            : `other (${peer})`;
      return { value, evidence: [...r.evidence("ct", "socket_peer"), ...r.evidence("ct", "backend")] };
    },
  },
  {
    id: "holder.ct-backend-is-web-pod",
    topic: "holder",
    claim: "The conntrack OUT entry of :40404 points at a web Pod IP:8080",
    source: LAB(4),
    expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
    needs: ["ct"],
    observe: (r) => {
      const ct = r.get("ct");
      return {
        value: ct.backend_pod.startsWith("web") && ct.backend.endsWith(":8080"),
        evidence: [...r.evidence("ct", "backend"), `backend_pod=${ct.backend_pod}`],
      };
    },
  },
  {
    id: "holder.svc-entries",
    topic: "holder",
    claim:
      "TCP SVC conntrack entries for :40404: none with socket LB (the packet never carries the VIP), one with per-packet LB",
    source: LAB(4),
    why: "SVC entries are written by the per-packet service lookup (knowledge output-formats.md §3); socket LB bypasses it",
    expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 1 } },
    needs: ["ct"],
    observe: (r) => ({ value: r.get("ct").svc_entries, evidence: r.evidence("ct", "svc_entries") }),
  },
  {
    id: "holder.socket-lb",
    topic: "holder",
    claim: "Socket LB is enabled with full coverage without kube-proxy, disabled beside kube-proxy",
    source: LAB(4),
    why: "KPR=true auto-enables socket LB; KPR=false leaves socketLB.enabled=false (knowledge clusters.md §4.2). The `Socket LB:` line decides: `Socket LB Coverage: Full` is printed even when socket LB is disabled (pkg/client/client.go, v1.19.7), so the kube-proxy expectation matches on the first part only",
    expect: { kpr: { eq: "Enabled/Full" }, "kube-proxy": { match: "^Disabled(/|$)" } },
    needs: ["ct", "datapath"],
    observe: (r) => ({
      value: `${dp(r, "socket_lb") ?? "absent"}${r.get("ct").socket_lb_coverage ? `/${r.get("ct").socket_lb_coverage}` : ""}`,
      evidence: [...r.evidence("datapath", "socket_lb"), ...r.evidence("ct", "socket_lb_coverage")],
    }),
  },
  {
    id: "holder.backend-sees-client",
    topic: "holder",
    claim: "The backend Pod sees the holder's IP:40404 (not SNATed to a node IP)",
    source: LAB(4),
    expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
    needs: ["datapath"],
    observe: (r) => ({
      value: dp(r, "backend_sees_client"),
      evidence: r.evidence("datapath", "backend_sees_client"),
    }),
  },
  // ── lab step 5: program and policy map ──────────────────────────────────────────────────
  {
    id: "program.from-container",
    topic: "program",
    claim: "cil_from_container is attached at ingress of the Pod's host-side lxc device",
    source: LAB(5),
    expect: { kpr: { eq: "cil_from_container" }, "kube-proxy": { eq: "cil_from_container" } },
    needs: ["prog"],
    observe: (r) => ({ value: r.get("prog").program, evidence: r.evidence("prog", "attach") }),
  },
  {
    id: "program.attach-point",
    topic: "program",
    claim:
      "The attach point follows the agent's Attach Mode: tcx/ingress (kernel ≥ 6.6, bpf.enableTCX default) or clsact/ingress (legacy tc)",
    source: LAB(5),
    why: "bpf.enableTCX defaults to true since 1.16; tcx needs kernel ≥ 6.6 (knowledge output-formats.md §7)",
    expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
    needs: ["prog", "datapath"],
    observe: (r) => {
      const attach = r.get("prog").attach;
      const mode = dp(r, "attach_mode");
      const ok =
        (mode === "TCX" && attach === "tcx/ingress") || (mode === "Legacy TC" && attach === "clsact/ingress");
      return {
        value: ok,
        evidence: [
          `attach=${attach || "(none seen)"}`,
          `Attach Mode: ${mode ?? "absent"}`,
          ...r.evidence("prog", "attach"),
        ],
      };
    },
  },
  {
    id: "program.tc-filter-lines",
    topic: "program",
    claim:
      "`tc filter show … ingress` prints nothing for a tcx attachment and two lines for a legacy cls_bpf filter",
    source: LAB(5),
    expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
    needs: ["prog"],
    observe: (r) => {
      const p = r.get("prog");
      const ok = p.attach.startsWith("tcx/") ? p.tc_filter_lines === 0 : p.tc_filter_lines === 2;
      return {
        value: ok,
        evidence: [
          `attach=${p.attach}`,
          `tc_filter_lines=${p.tc_filter_lines}`,
          ...r.evidence("prog", "tc_filter_lines"),
        ],
      };
    },
  },
  {
    id: "program.policy-map",
    topic: "program",
    claim: "The endpoint has its own policy map, named after its endpoint id",
    source: LAB(5),
    why: "bpf.LocalMapName zero-pads to 5 digits; pkg/maps/policymap MapName is `cilium_policy_v2_` from 1.17 (v1.19.7) and `cilium_policy_v3_` in 1.20 (v1.20.2; cilium PR 47080)",
    expect: {
      kpr: {
        default: { eq: "cilium_policy_v2_<id:05>" },
        byMinor: { "1.16": { eq: "cilium_policy_<id:05>" }, "1.20": { eq: "cilium_policy_v3_<id:05>" } },
      },
      "kube-proxy": {
        default: { eq: "cilium_policy_v2_<id:05>" },
        byMinor: { "1.16": { eq: "cilium_policy_<id:05>" }, "1.20": { eq: "cilium_policy_v3_<id:05>" } },
      },
    },
    needs: ["prog"],
    observe: (r) => {
      const p = r.get("prog");
      const id = String(p.endpoint_id).padStart(5, "0");
      const value = p.policy_map.replace(id, "<id:05>");
      return {
        value: p.policy_map.endsWith(id) ? value : `${p.policy_map || "(none)"} (endpoint ${p.endpoint_id})`,
        evidence: r.evidence("prog", "policy_map"),
      };
    },
  },
  // ── lab step 6: NodePort ────────────────────────────────────────────────────────────────
  {
    id: "nodeport.http-200",
    topic: "nodeport",
    claim: "NodePort 30780 on the node's InternalIP answers HTTP 200",
    source: LAB(6),
    expect: { kpr: { eq: 200 }, "kube-proxy": { eq: 200 } },
    needs: ["nodeport"],
    observe: (r) => ({ value: r.get("nodeport").http_code, evidence: r.evidence("nodeport", "http_code") }),
  },
  {
    id: "nodeport.outside-http-200",
    topic: "nodeport",
    claim: "NodePort 30780 also answers HTTP 200 to a client outside the nodes",
    source: LAB(6),
    expect: { kpr: { eq: 200 }, "kube-proxy": { eq: 200 } },
    needs: ["datapath"],
    observe: (r) => {
      const code = dp(r, "nodeport_outside_http");
      return code === null
        ? {
            value: null,
            evidence: [],
            skip: "no client outside the nodes could run here (existing cluster without a docker network)",
          }
        : { value: code, evidence: r.evidence("datapath", "nodeport_outside_http") };
    },
  },
  {
    id: "nodeport.no-listener",
    topic: "nodeport",
    claim:
      "No process listens on 30780 in either mode (kube-proxy's port opener was removed in Kubernetes 1.24)",
    source: LAB(6),
    why: "kubernetes PR #108496 (knowledge clusters.md P11): this does not tell the modes apart",
    expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 0 } },
    needs: ["nodeport"],
    observe: (r) => ({
      value: r.get("nodeport").listen_sockets,
      evidence: r.evidence("nodeport", "listen_sockets"),
    }),
  },
  {
    id: "nodeport.iptables-lines",
    topic: "nodeport",
    claim: "iptables lines mentioning 30780: none without kube-proxy; KUBE-NODEPORTS rules with it",
    source: LAB(6),
    why: "kube-proxy writes two KUBE-NODEPORTS rules per NodePort: one for 127.0.0.0/8 (localhost NodePorts, with the nfacct counter localhost_nps_accepted_pkts) and one for every other address, both jumping to KUBE-EXT-…: recorded on the lab cluster (kube-proxy v1.35.5); a source reading had said 1",
    expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 2 } },
    needs: ["nodeport"],
    observe: (r) => ({
      value: r.get("nodeport").iptables_lines,
      evidence: r.evidence("nodeport", "iptables_lines"),
    }),
  },
  {
    id: "nodeport.agent-entry",
    topic: "nodeport",
    claim: "The agent has a 0.0.0.0:30780 NodePort entry only with kube-proxy replacement",
    source: LAB(6),
    why: '1.19 removed BPF NodePort for KPR=false: PR 41380 "Remove EnableNodePort" (NodePort only with kubeProxyReplacement=true), after the 1.18 deprecation of enable-node-port in PR 39581; 1.18 only with nodePort.enabled, which the suite does not set',
    expect: { kpr: { eq: true }, "kube-proxy": { eq: false } },
    needs: ["nodeport"],
    observe: (r) => ({
      value: r.get("nodeport").service_id !== null,
      evidence: r.evidence("nodeport", "service_id"),
    }),
  },
  // ── lab step 7: ghost ───────────────────────────────────────────────────────────────────
  {
    id: "ghost.no-backends",
    topic: "ghost",
    claim: "The agent lists the ghost ClusterIP with zero backends",
    source: LAB(7),
    expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 0 } },
    needs: ["ghost"],
    observe: (r) => ({ value: r.get("ghost").backends, evidence: r.evidence("ghost", "backends") }),
  },
  {
    id: "ghost.fails-fast",
    topic: "ghost",
    claim: "curl to the ghost ClusterIP fails at once with exit 7 (refused/unreachable), not 28 (timeout)",
    source: LAB(7),
    why: "socket LB answers EHOSTUNREACH at connect(); per-packet LB answers an ICMP reject (knowledge clusters.md §4.2, P12)",
    expect: { kpr: { eq: 7 }, "kube-proxy": { eq: 7 } },
    needs: ["ghost"],
    observe: (r) => {
      if (dropProfile(r)) return { value: null, evidence: [], skip: DROP_PROFILE };
      return { value: r.get("ghost").curl_exit, evidence: r.evidence("ghost", "curl_exit") };
    },
  },
  {
    id: "ghost.errno",
    topic: "ghost",
    claim:
      "The fast failure differs by path: socket LB refuses connect() with EHOSTUNREACH, per-packet LB answers an ICMP reject (ECONNREFUSED)",
    source: KN("clusters.md §4.2, P12 (bpf_sock.c returns -EHOSTUNREACH when a service has no backends)"),
    expect: { kpr: { eq: "EHOSTUNREACH" }, "kube-proxy": { eq: "ECONNREFUSED" } },
    needs: ["datapath"],
    observe: (r) => {
      if (dropProfile(r)) return { value: null, evidence: [], skip: DROP_PROFILE };
      const errno = dp(r, "ghost_errno");
      return errno === null
        ? {
            value: null,
            evidence: [],
            skip: "curl printed no connect() errno (it needs -v); the exit code is judged by ghost.fails-fast",
          }
        : { value: errno, evidence: r.evidence("datapath", "ghost_errno") };
    },
  },
  {
    id: "ghost.seconds",
    topic: "ghost",
    claim: "The failure takes well under the 5 s limit",
    source: LAB(7),
    expect: { kpr: { lte: 1 }, "kube-proxy": { lte: 1 } },
    needs: ["ghost"],
    observe: (r) => {
      if (dropProfile(r)) return { value: null, evidence: [], skip: DROP_PROFILE };
      return { value: r.get("ghost").seconds, evidence: r.evidence("ghost", "curl_exit") };
    },
  },
  {
    id: "ghost.no-backend-response",
    topic: "ghost",
    claim: "ServiceNoBackendResponse is reject (the chart default in 1.16–1.20)",
    source: LAB(7),
    expect: { kpr: { eq: "reject" }, "kube-proxy": { eq: "reject" } },
    needs: ["ghost"],
    observe: (r) => {
      if (dropProfile(r)) return { value: null, evidence: [], skip: DROP_PROFILE };
      return {
        value: r.get("ghost").no_backend_response,
        evidence: r.evidence("ghost", "no_backend_response"),
      };
    },
  },
  {
    id: "ghost.kube-proxy-reject-rule",
    topic: "ghost",
    claim:
      "kube-proxy adds a filter REJECT 'has no endpoints' rule for ghost; without kube-proxy there is none",
    source: KN("output-formats.md §8"),
    why: "one `has no endpoints` REJECT per Service port without endpoints (kube-proxy's proxier); recorded on the lab cluster",
    expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 1 } },
    needs: ["datapath"],
    observe: (r) => ({
      value: dp(r, "ghost_reject_rules"),
      evidence: r.evidence("datapath", "ghost_reject_rules"),
    }),
  },
  {
    id: "ghost.wildcard-entry",
    topic: "ghost",
    claim:
      "Since 1.19 each ClusterIP also gets a `<vip>:0/ANY` wildcard entry in bpf lb list that rejects unknown ports",
    source: KN("output-formats.md §2 (commit b3b0fc849f; from source, not yet seen on a release)"),
    expect: {
      kpr: {
        default: { eq: true },
        byMinor: { "1.16": { eq: false }, "1.17": { eq: false }, "1.18": { eq: false } },
      },
      "kube-proxy": {
        default: { eq: true },
        byMinor: { "1.16": { eq: false }, "1.17": { eq: false }, "1.18": { eq: false } },
      },
    },
    needs: ["datapath"],
    observe: (r) => ({
      value: dp(r, "ghost_wildcard_entry"),
      evidence: r.evidence("datapath", "ghost_wildcard_entry"),
    }),
  },
  // ── lab step 8: report.txt ──────────────────────────────────────────────────────────────
  {
    id: "report.consistent",
    topic: "report",
    claim: "report.txt, re-read from the current state, agrees with the earlier records",
    source: LAB(8),
    expect: { kpr: { eq: [] }, "kube-proxy": { eq: [] } },
    needs: ["report", "iptables", "scale", "ct", "prog", "nodeport", "ghost"],
    observe: (r) => {
      const rep = r.get("report");
      const want: [string, unknown, unknown][] = [
        ["kube_proxy_replacement", rep.kube_proxy_replacement, r.get("iptables").kube_proxy_replacement],
        ["socket_lb_coverage", rep.socket_lb_coverage, r.get("ct").socket_lb_coverage],
        ["web_backends", rep.web_backends, r.get("scale").backends.length],
        ["holder_backend", rep.holder_backend, r.get("ct").backend],
        ["holder_program", rep.holder_program, r.get("prog").program],
        ["nodeport_iptables_lines", rep.nodeport_iptables_lines, r.get("nodeport").iptables_lines],
        ["ghost_no_backend_response", rep.ghost_no_backend_response, r.get("ghost").no_backend_response],
      ];
      const diff = want
        .filter(([, a, b]) => a !== b)
        .map(([k, a, b]) => `${k}: report=${String(a)} record=${String(b)}`);
      return { value: diff, evidence: diff };
    },
  },
  // ── notebook: kube-dns, host routing, translation, VXLAN ───────────────────────────────
  {
    id: "kube-dns.backends-follow-endpointslice",
    topic: "kube-dns",
    claim:
      "The agent's kube-dns backends are the EndpointSlice's ready addresses (control plane → programmed dataplane)",
    source: NB("§2"),
    expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
    needs: ["dns"],
    observe: (r) => {
      const d = r.get("dns");
      return {
        value: d.agent_backends.length > 0 && sameSet(d.agent_backends, d.endpointslice_ready),
        evidence: [...r.evidence("dns", "agent_backends"), ...r.evidence("dns", "endpointslice_ready")],
      };
    },
  },
  {
    id: "kube-dns.kube-proxy-chain",
    topic: "kube-dns",
    claim:
      "kube-proxy represents kube-dns as KUBE-SERVICES → KUBE-SVC-* → KUBE-SEP-* → DNAT to the CoreDNS Pod",
    source: NB("§3"),
    expect: { kpr: { eq: 0 }, "kube-proxy": { gte: 1 } },
    needs: ["dns"],
    observe: (r) => {
      const d = r.get("dns");
      const dnat = d.kube_proxy_rules.filter(
        (l) =>
          l.includes("-j DNAT") && d.endpointslice_ready.some((ep) => l.includes(`--to-destination ${ep}`)),
      );
      return { value: dnat.length, evidence: d.kube_proxy_rules };
    },
  },
  {
    id: "host-routing.clusterip-not-on-interface",
    topic: "host-routing",
    claim: "The ClusterIP is assigned to no interface of the node",
    source: NB("§4"),
    expect: { kpr: { eq: [] }, "kube-proxy": { eq: [] } },
    needs: ["clusterip"],
    observe: (r) => ({
      value: r.get("clusterip").interfaces_with_ip,
      evidence: r.evidence("clusterip", "interfaces_with_ip"),
    }),
  },
  {
    id: "host-routing.clusterip-no-route",
    topic: "host-routing",
    claim: "The node has no dedicated route to the ClusterIP (only the default route covers it)",
    source: NB("§4"),
    expect: { kpr: { eq: [] }, "kube-proxy": { eq: [] } },
    needs: ["clusterip"],
    observe: (r) => ({
      value: r.get("clusterip").routes_to_ip,
      evidence: r.evidence("clusterip", "routes_to_ip"),
    }),
  },
  {
    id: "host-routing.remote-podcidr-via-cilium-host",
    topic: "host-routing",
    claim: "A Pod on another node is reached via cilium_host",
    source: NB("§5"),
    expect: { kpr: { eq: "cilium_host" }, "kube-proxy": { eq: "cilium_host" } },
    needs: ["route"],
    observe: (r) => ({ value: r.get("route").dev, evidence: r.evidence("route", "dev") }),
  },
  {
    id: "host-routing.tunnel-mtu",
    topic: "host-routing",
    claim: "That route's MTU leaves room for the VXLAN header (underlay MTU − 50)",
    source: NB("§5"),
    expect: { kpr: { eq: 50 }, "kube-proxy": { eq: 50 } },
    needs: ["route"],
    observe: (r) => {
      const x = r.get("route");
      return {
        value: x.mtu !== null && x.underlay_mtu !== null ? x.underlay_mtu - x.mtu : null,
        evidence: [...r.evidence("route", "dev"), `underlay mtu ${x.underlay_mtu}`],
      };
    },
  },
  {
    id: "translation.host-by-iptables",
    topic: "translation",
    claim:
      "A host process's ClusterIP query is translated by kube-proxy's iptables where kube-proxy runs (the counter moves per query)",
    source: NB("§6"),
    why: "without kube-proxy there is no rule to count: socket LB translates host traffic too",
    expect: { kpr: { eq: "no kube-proxy rule" }, "kube-proxy": { eq: "iptables" } },
    needs: ["translation"],
    observe: (r) => {
      const t = r.get("translation");
      let value = "no kube-proxy rule";
      if (t.rule && t.host_packets_before !== null && t.host_packets_after !== null) {
        const moved = t.host_packets_after - t.host_packets_before;
        value =
          t.host_answers > 0 && moved >= t.host_answers
            ? "iptables"
            : `eBPF (counter +${moved} for ${t.host_answers} answered)`;
      }
      return {
        value,
        evidence: [
          ...r.evidence("translation", "host_packets_before"),
          ...r.evidence("translation", "host_packets_after"),
        ],
      };
    },
  },
  {
    id: "translation.pod-by-ebpf",
    topic: "translation",
    claim:
      "A Pod's ClusterIP queries are answered without moving kube-proxy's counter: Cilium translated them in eBPF first",
    source: NB("§7"),
    why: "KPR=false still handles ClusterIP for Pod traffic in bpf_lxc (knowledge clusters.md §4.2)",
    expect: { kpr: { eq: "eBPF" }, "kube-proxy": { eq: "eBPF" } },
    needs: ["translation"],
    observe: (r) => {
      const t = r.get("translation");
      let value = t.pod_answers > 0 ? "eBPF" : "no answers";
      if (
        t.pod_answers > 0 &&
        t.rule &&
        t.pod_packets_before !== null &&
        t.pod_packets_after !== null &&
        t.pod_packets_after > t.pod_packets_before
      ) {
        value = `iptables (counter +${t.pod_packets_after - t.pod_packets_before})`;
      }
      return {
        value,
        evidence: [
          ...r.evidence("translation", "pod_packets_before"),
          ...r.evidence("translation", "pod_packets_after"),
          `pod answers ${t.pod_answers}/${t.pod_queries}`,
        ],
      };
    },
  },
  {
    id: "vxlan.backend-inside-tunnel",
    topic: "vxlan",
    claim:
      "Inside the VXLAN tunnel the inner destination is the backend Pod IP, never the ClusterIP: translation happens before encapsulation",
    source: NB("§8"),
    expect: { kpr: { eq: "backend only" }, "kube-proxy": { eq: "backend only" } },
    needs: ["vxlan"],
    observe: (r) => {
      const v = r.get("vxlan");
      const ips = v.inner_destinations.map(ipOf);
      const value =
        v.packets === 0
          ? "no tunnel packets"
          : ips.includes(v.cluster_ip)
            ? "ClusterIP inside tunnel"
            : ips.includes(ipOf(v.backend))
              ? "backend only"
              : `other (${ips.join(",")})`;
      return { value, evidence: r.evidence("vxlan", "inner_destinations") };
    },
  },
  // ── global invariants (cilium-cli's final checks) ───────────────────────────────────────
  {
    id: "invariants.no-unexpected-drops",
    topic: "invariants",
    claim:
      "The agents' cilium_drop_count_total has no reason outside the allowlist (e.g. 'Service backend not found' from ghost is expected)",
    source: KN("peers-and-pitfalls.md §0, §5 (cilium connectivity test's no-unexpected-packet-drops)"),
    expect: { kpr: { eq: [] }, "kube-proxy": { eq: [] } },
    needs: ["invariants"],
    observe: (r) => {
      const i = r.get("invariants");
      return {
        value: i.unexpected_drops,
        evidence: Object.entries(i.drop_reasons).map(([k, v]) => `${k}: ${v}`),
      };
    },
  },
  {
    id: "invariants.no-agent-errors",
    topic: "invariants",
    claim: "No agent logged an error-level line during the run",
    source: KN("peers-and-pitfalls.md §0, §5 (cilium connectivity test's check-log-errors)"),
    expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 0 } },
    needs: ["invariants"],
    observe: (r) => {
      const i = r.get("invariants");
      return { value: i.error_lines.length, evidence: i.error_lines.slice(0, 10) };
    },
  },
  // ── upgrade leg (issue: Cilium-upgrade regression) ─────────────────────────────────────
  {
    id: "upgrade.holder-connection-survives",
    topic: "upgrade",
    claim: "The holder's TCP connection survives a Cilium minor upgrade: same connection, no close",
    source: KN("clusters.md §6 (BPF maps stay pinned while agents restart; Cilium's conn-disrupt test)"),
    expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
    needs: ["upgrade"],
    observe: (r) => {
      const u = r.get("upgrade");
      return {
        value: u.connection_before > 0 && u.connection_after === u.connection_before && u.closed_events === 0,
        evidence: r.evidence("upgrade", "connection_after"),
      };
    },
  },
  {
    id: "upgrade.same-backend",
    topic: "upgrade",
    claim: "The connection's conntrack entry points at the same backend after the upgrade",
    source: KN("clusters.md §6"),
    expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
    needs: ["upgrade"],
    observe: (r) => {
      const u = r.get("upgrade");
      return {
        value: u.backend_before !== null && u.backend_after === u.backend_before,
        evidence: r.evidence("upgrade", "backend_after"),
      };
    },
  },
  {
    id: "upgrade.new-version-running",
    topic: "upgrade",
    claim:
      "After the upgrade the agents run the version asked for (exactly: a patch upgrade changes only the patch)",
    source: KN("clusters.md §6"),
    expect: { kpr: { eq: true }, "kube-proxy": { eq: true } },
    needs: ["upgrade"],
    observe: (r) => {
      const u = r.get("upgrade");
      return {
        value: u.cilium_after === u.to || u.cilium_after.startsWith(`${u.to} `),
        evidence: [`Cilium ${u.cilium_after} (asked for ${u.to})`],
      };
    },
  },
  // ── measurements (rule growth, convergence, fail-fast time) ───────────────────────────────
  {
    id: "measure.kube-proxy-lines",
    topic: "measure-scale",
    claim:
      "kube-proxy's iptables lines grow linearly with Services (1, 50, 200 × 4 endpoints); without kube-proxy there are none",
    source: LAB(1),
    why: "the lab's 'rules grow with every Service and endpoint'; per-Service shape 1 + 2N (peers-and-pitfalls.md §4.3)",
    expect: { kpr: { eq: "none" }, "kube-proxy": { eq: "linear" } },
    needs: ["scaling"],
    observe: (r) => {
      const m = r.get("scaling");
      const max = Math.max(...m.points.map((p) => p.kube_proxy_lines));
      const value =
        max === 0
          ? "none"
          : m.kube_proxy_r2 >= 0.99 && m.kube_proxy_per_service > 0
            ? "linear"
            : `not linear (r²=${m.kube_proxy_r2})`;
      return {
        value,
        evidence: [
          `${m.kube_proxy_per_service} lines per Service (r²=${m.kube_proxy_r2})`,
          ...r.evidence("scaling", "points"),
        ],
      };
    },
  },
  {
    id: "measure.kube-proxy-lines-per-service",
    topic: "measure-scale",
    claim:
      "Rules kube-proxy writes per ClusterIP Service port with N=4 endpoints: 2 + 3N (the KUBE-SERVICES jump, the KUBE-SVC masquerade rule, N KUBE-SVC jumps, and per endpoint a KUBE-SEP masquerade and a DNAT rule)",
    source: KN("peers-and-pitfalls.md §4.3"),
    why: "the count is of rule lines carrying the Service's comment, so the 1 + N chain declarations (`:KUBE-SVC-…`, `:KUBE-SEP-…`) are not in it; 14 = 2 + 3·4 recorded on the lab cluster (kube-proxy v1.35.5, iptables mode)",
    expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 14 } },
    needs: ["scaling"],
    observe: (r) => ({
      value: r.get("scaling").kube_proxy_per_service,
      evidence: r.evidence("scaling", "points"),
    }),
  },
  {
    id: "measure.lb-entries-per-service",
    topic: "measure-scale",
    claim:
      "Cilium keeps a Service as a few map entries (slot 0 + one per backend, + the 1.19+ wildcard), in both modes",
    source: LAB(1),
    why: "the lab's 'each Service as a hash map entry'; KPR=false keeps ClusterIP entries too (clusters.md §4.2). 1 + N on 1.18, 2 + N from 1.19 with the `<vip>:0/ANY` wildcard entry: 6 for N=4 recorded on the lab cluster (1.19.7) in both modes",
    expect: {
      kpr: { default: { eq: 6 }, byMinor: { "1.18": { eq: 5 } } },
      "kube-proxy": { default: { eq: 6 }, byMinor: { "1.18": { eq: 5 } } },
    },
    needs: ["scaling"],
    observe: (r) => {
      const m = r.get("scaling");
      return {
        value: m.lb_per_service,
        evidence: [
          `${m.lb_per_service} entries per Service (r²=${m.lb_r2})`,
          ...r.evidence("scaling", "points"),
        ],
      };
    },
  },
  {
    id: "measure.map-convergence-p90",
    topic: "measure-latency",
    claim:
      "From EndpointSlice update to the backend slot in every agent's map: p90 over 10 events, generous ceiling 10 s (kind)",
    source: LAB(3),
    why: "the lab's 'when you add replicas, the map knows first'; measured, so a regression shows in `compare`",
    expect: { kpr: { lte: 10_000 }, "kube-proxy": { lte: 10_000 } },
    needs: ["latency"],
    observe: (r) => {
      const l = r.get("latency");
      return {
        value: l.map_p90_ms,
        evidence: [
          `p50 ${l.map_p50_ms} ms, p90 ${l.map_p90_ms} ms over ${l.events.length} events`,
          ...r.evidence("latency", "events"),
        ],
      };
    },
  },
  {
    id: "measure.kube-proxy-convergence-p90",
    topic: "measure-latency",
    claim:
      "From EndpointSlice update to the KUBE-SEP DNAT rule on the node: p90 over 10 events, ceiling 10 s",
    source: NB("§3"),
    expect: { kpr: { na: "no kube-proxy in this mode" }, "kube-proxy": { lte: 10_000 } },
    needs: ["latency"],
    observe: (r) => {
      const l = r.get("latency");
      return {
        value: l.kube_proxy_p90_ms,
        evidence: [`p50 ${l.kube_proxy_p50_ms} ms, p90 ${l.kube_proxy_p90_ms} ms`],
      };
    },
  },
  {
    id: "measure.ghost-fail-fast-p90",
    topic: "measure-latency",
    claim:
      "Over 20 probes, a Service without backends fails in well under a second (p90 ≤ 1 s), every probe with exit 7",
    source: LAB(7),
    expect: { kpr: { lte: 1 }, "kube-proxy": { lte: 1 } },
    needs: ["latency"],
    observe: (r) => {
      if (dropProfile(r)) return { value: null, evidence: [], skip: DROP_PROFILE };
      const l = r.get("latency");
      const allSeven = l.ghost_exit_codes.length === 1 && l.ghost_exit_codes[0] === 7;
      return {
        value: allSeven ? l.ghost_p90_s : `exit codes ${l.ghost_exit_codes.join(",")}`,
        evidence: r.evidence("latency", "ghost_seconds"),
      };
    },
  },
  {
    id: "measure.ghost-drop-timeout",
    topic: "measure-latency",
    claim:
      "Opt-in drop profile: with serviceNoBackendResponse=drop the same probe waits for curl's 5 s limit, the delay reject avoids",
    source: LAB(7),
    why: "the lab's 'if the datapath silently drops the packet, the client waits until the timeout'",
    expect: { kpr: { gte: 4.5 }, "kube-proxy": { gte: 4.5 } },
    needs: ["latency"],
    observe: (r) => {
      const l = r.get("latency");
      if (l.no_backend_response !== "drop") {
        return {
          value: null,
          evidence: [],
          skip: "runs in the opt-in drop profile only (NO_BACKEND_RESPONSE=drop); the default reject profile fails fast",
        };
      }
      return { value: l.ghost_p50_s, evidence: r.evidence("latency", "ghost_seconds") };
    },
  },
];

export function propertyById(id: string): Property {
  const p = PROPERTIES.find((x) => x.id === id);
  if (!p) throw new Error(`no property ${JSON.stringify(id)}`);
  return p;
}
