/**
 * Real failures the lab recorded and this repository ships in its bundles, each kept with why: a recorded
 * failure is evidence, never a pass and never an expectation (no declaration changes for it). The replay project
 * reproduces it (its test passes saying "recorded failure reproduced", with a JUnit property), `check` and the
 * upgrade gate still report it as a failure, and helpers/check.test.ts asserts that exactly these fail in the
 * shipped bundles — so a new failure, or one that stops reproducing, is seen.
 *
 * bundle (its folder under suites/bundles/) → property id → why it is kept.
 */
export const RECORDED_FAILURES: Record<string, Record<string, string>> = {
  "profiles/dual-stack/kube-proxy": {
    "ipv6.ghost-seconds":
      "run lab-20261205-124651 (Cilium 1.20.2, dual-stack, beside kube-proxy): the probe Pod's connect() to ghost6 (an IPv6 ClusterIP without backends) was refused only after 1.027 s, one SYN retransmission, where the IPv4 ghost is held to 0.1 s; ipv6.ghost-fails-fast passed it (exit 7) and no seconds property existed to see it (issue 35's audit). bpf_lxc's ICMPv6 reject for the first SYN is not taken and the retransmitted one's is. No upstream report names it (1.20.2's ICMP sample-length change, PR 48020 'bpf: icmp*', is the nearest suspect, unconfirmed), so it stays a failure; reproduction in the bundle's README",
  },
  "profiles/dual-stack/existing-kube-proxy": {
    "ipv6.ghost-seconds":
      "the same cluster as profiles/dual-stack/kube-proxy through the existing provider: refused after 1.024 s (one SYN retransmission); see that bundle",
  },
};
