/** What property declarations share: where a claim comes from, and small readers of records. */
import type { Probe } from "../records/types.ts";

export const LAB = (step: number) => ({ doc: "lab" as const, where: `step ${step}` });
export const NB = (section: string) => ({ doc: "notebook" as const, where: section });
/** An upstream text: Kubernetes docs or a KEP, Cilium's docs or its code at a tag, a PR or an issue. */
export const UP = (where: string) => ({ doc: "upstream" as const, where });
/** A file of this repository (a doc page, a shipped bundle): its path from the repository's root. */
export const REPO = (where: string) => ({ doc: "repository" as const, where });

/** Cilium's tree at the tag of the newest patch the suite declares: what a source names there, a reader opens. */
export const CILIUM_AT = "https://github.com/cilium/cilium/blob/v1.20.2";
/** Cilium's documentation of that minor. */
export const CILIUM_DOCS = "https://docs.cilium.io/en/v1.20";
/** Cilium's kube-proxy replacement guide ("Kubernetes Without kube-proxy"). */
export const KPR_GUIDE = `${CILIUM_DOCS}/network/kubernetes/kubeproxy-free/`;
/** Its Quick-Start: "By default, Helm sets kubeProxyReplacement=false, which only enables per-packet in-cluster load-balancing of ClusterIP services". */
export const KPR_FALSE_CLUSTERIP = `${KPR_GUIDE}#quick-start`;
/** Kubernetes (kube-proxy, kubelet) at the tag the lab's clusters run. */
export const K8S_AT = "https://github.com/kubernetes/kubernetes/blob/v1.35.5";
/** kube-proxy's iptables proxier: KUBE-SERVICES/SVC/SEP chains, and a filter REJECT per Service port without endpoints. */
export const KUBE_PROXY_PROXIER = `${K8S_AT}/pkg/proxy/iptables/proxier.go`;
/** Socket LB refuses connect() to a Service without backends with -EHOSTUNREACH (cil_sock4_connect). */
export const SOCK4_NO_BACKEND = `${CILIUM_AT}/bpf/bpf_sock.c#L337-L343`;
/** The IPv6 twin (cil_sock6_connect). */
export const SOCK6_NO_BACKEND = `${CILIUM_AT}/bpf/bpf_sock.c#L1081-L1087`;
/** Per-packet LB answers a Service without backends itself (serviceNoBackendResponse, default reject: an ICMP reply). */
export const LB_NO_SERVICE = `${CILIUM_AT}/bpf/lib/lb.h#L2455-L2512 (tail_no_service_ipv4, tail_no_service_ipv6); --service-no-backend-response (default "reject"): ${CILIUM_AT}/Documentation/cmdref/cilium-agent.md`;
/** Kube-proxy replacement turns socket LB on by itself (pkg/kpr: EnableSocketLB = true under KubeProxyReplacement). */
export const KPR_SOCKET_LB = `${CILIUM_AT}/pkg/kpr/kpr.go#L47-L49`;
/** The chart's default socketLB.enabled: false (so beside kube-proxy there is no socket LB). */
export const SOCKET_LB_DEFAULT = `${CILIUM_AT}/install/kubernetes/cilium/values.yaml#L1382-L1384`;
/** The wildcard `<vip>:0/ANY` entries, in 1.19.0's CHANGELOG: "Introduce wildcard service entries". */
export const WILDCARD_PR = "cilium PR 40684, https://github.com/cilium/cilium/pull/40684";
/** Cilium's upgrade guide: the upgrade, the rollback and what an upgrade keeps working. */
export const UPGRADE_GUIDE = `Cilium's upgrade guide, ${CILIUM_DOCS}/operations/upgrade/`;
/** Cilium's own upgrade CI: agents restarted, upgraded and downgraded under cilium-cli's conn-disrupt test. */
export const UPGRADE_CI = `Cilium's upgrade CI under cilium-cli's conn-disrupt test, ${CILIUM_AT}/.github/workflows/tests-e2e-upgrade.yaml`;

export const sameSet = (a: string[], b: string[]) =>
  JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
export const ipOf = (addr: string) =>
  addr.startsWith("[") ? addr.slice(1, addr.indexOf("]")) : addr.slice(0, addr.lastIndexOf(":"));

/** Why Cilium's socket hooks answer EPERM on some versions (ghost.errno, nodeport.bind-protection). */
export const SETRETVAL_WHY =
  "the socket hook cannot set its errno and the kernel answers EPERM: try_set_retval() compiles to `return 0` where helpers.h is included before the set_retval feature probe (cilium issue 45184; fixed by PR 45185, backported to 1.19.4 as PR 45673, never to 1.18: PR 48405 says the fix 'was never in v1.18 tree'; 1.18.11 bpf/include/bpf/helpers_skb.h:9-10, helpers.h:106-113; preprocessing 1.19.1 and 1.19.3 gives the same `return 0`)";

/** The upstream reference of the 1.20.2 ICMP reject issue. */
export const ICMP_TAIL_UPSTREAM = "cilium PR 48426 names it; fixed upstream by PR 48578, not in 1.20.2";

/**
 * The socket hooks' lost errno (cilium issue 45184) as a known issue of a version: `call` fails with EPERM
 * where the hook means `meant`.
 */
export function SETRETVAL_ISSUE(call: string, meant: string, fixed: string) {
  return {
    kind: "known-issue",
    expect: { eq: "EPERM" },
    claim: `${call} fails with EPERM, not ${meant}: the socket hook's errno is lost`,
    why: SETRETVAL_WHY,
    upstream: `cilium issue 45184; fixed by PR 45185, backported to 1.19.4 as PR 45673; ${fixed}`,
  } as const;
}

/** Why a Pod's connect() to a ClusterIP without backends times out with KPR=false on Cilium 1.20.2. */
export const ICMP_TAIL_WHY =
  "Cilium 1.20.2 backports PR 48020 (#48114, CHANGELOG: 'bpf: icmp*: fix up sample length'): generate_icmp4_reply() now cuts the rejected SYN to 42 bytes (bpf/lib/icmp.h:60-67), which the kernel refuses for a Pod's packet with a pending checksum (bpf_skb_change_tail -EINVAL below 52 bytes); the unchecked error leaves an ICMP reply whose IP length disagrees with the frame, and the Pod's kernel discards it (IpInDiscards), so the SYN is retried until curl's 5 s limit. Seen on the lab cluster (24 probes, exit 28 at 5.0 s, as in the shipped suites/bundles/1.20/kube-proxy; the node's probes still meet kube-proxy's REJECT); cilium PR 48426 names it, fixed upstream by PR 48578 (not in 1.20.2)";

/**
 * compare's tolerance for a fast failure's seconds: every refusal here took under 10 ms (a run-to-run spread of
 * 0.06-6.5 ms), so values under 0.01 s are the same behaviour; past it, a tenfold move is a change of behaviour
 * (a refusal that became a timeout moves by ~1000x).
 */
export const FAST_FAIL_TOLERANCE = { factor: 10, floor: 0.01, unit: "s" } as const;

/**
 * compare's tolerance for a map or rules convergence p90 (ms): recorded runs spread 905-2519 ms on the 2-core lab
 * machine, by its load; a move past 3x (or from under a second to more) is a change of behaviour.
 */
export const CONVERGENCE_TOLERANCE = { factor: 3, floor: 1000, unit: "ms" } as const;

/**
 * A Service-surface probe as a property observes it (issue 34): `HTTP 200` when one of `backends` answered (GET
 * /hostname: the body is the backend's name), `HTTP 200 from <body>` when something else did, otherwise curl's
 * class (`REFUSED`, `UNREACHABLE`, `TIMEOUT`, …).
 */
export function answer(p: Probe, backends: readonly string[]): string {
  if (p.http === 200)
    return p.body !== null && backends.includes(p.body)
      ? "HTTP 200"
      : `HTTP 200 from ${p.body ?? "(no body)"}`;
  return p.verdict;
}

/**
 * Drop reasons a healthy run produces by design: cilium-cli's connectivity test tolerates exactly these
 * (`--expected-drop-reasons` default, defaults.ExpectedDropReasons in cilium-cli for Cilium 1.18–1.19: ghost's
 * "Service backend not found" among them, and the background noise of a kind network). The invariants topic and
 * every leg of the upgrade and restart topics judge drops against it.
 */
export const EXPECTED_DROP_REASONS = [
  "Policy denied",
  "Policy denied by denylist",
  "Unsupported L2 protocol",
  "Unsupported L3 protocol",
  "Stale or unroutable IP",
  "Authentication required",
  "Service backend not found",
  "Unsupported protocol for NAT masquerade",
  "Invalid source ip",
  "Unknown L3 target address",
  "Host datapath not ready",
  "Unknown ICMPv4 code",
  "Unknown ICMPv6 code",
  "Forbidden ICMPv6 message",
  "No egress gateway found",
  // loadBalancerSourceRanges turning away a client outside the ranges: the access control working (the
  // lifecycle-ports topic asks it on purpose, beside the other topics)
  "Denied by LB src range check",
];
/** Agent error lines known to be harmless. */
export const EXPECTED_ERROR_LINES = [/The kernel does not support --service-no-backend-response=reject/];
