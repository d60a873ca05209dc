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
  "upgrade-1.19-1.20/kpr-2": {
    "restart.no-failed-requests":
      "run up-119-120-kpr-b (2026-12-06), the second of two kpr recordings of this path: two requests during the agents' restart on 1.19.7 completed their handshake and got no answer in 2 s, both to the same remote backend (the bundle README's generated part and the gate's lines give their times, backend and node). The property counts them, so check fails it; the leg recorded no capture of data packets on every node and no drop monitor, so the upgrade gate calls it INCONCLUSIVE, not BROKEN. Its run stored pass (the judge of its day counted both as the client's stall); check says the stored verdict came from an older judge",
  },
  "upgrade-1.19-1.20/kpr-3": {
    "restart.no-failed-requests":
      "run up-119-120-kpr-r1 (2026-12-07), the first recording with captures of every packet on every node: one request during the agents' restart was handed to its backend Pod and acknowledged within microseconds, and the answer left the backend Pod after the client's 2 s timeout (the README's generated part and the gate quote the lines). The datapath delivered both ways at once, so the gate calls it the backend's, INCONCLUSIVE, never BROKEN; check fails the property, which counts every failed request",
    "upgrade.rollback.client-kept-time":
      "the same run: during the rollback the loop's own process was not running across three requests' timeouts (its measured stall), so the rollback leg is inconclusive on them, never Cilium's",
  },
  "upgrade-1.18-1.19/kpr": {
    "upgrade.connections-survive":
      "run up-118-119-kpr (2026-12-06): during the upgrade 1.18.11 → 1.19.7 the long-lived connection to the address with externalTrafficPolicy Local (conn-local) broke and reconnected to the same backend (its times and node: the bundle README's generated part). Its holder did not yet measure its own lag and the leg had no capture of data packets on every node, so check fails the property and the upgrade gate calls it INCONCLUSIVE, naming what is missing",
    "upgrade.client-kept-time":
      "the same run: one request ran 4873 ms against its 2 s timeout — the loop's own process was not running (two cores, three nodes restarting their agents), so the leg is inconclusive on that request, never Cilium's",
  },
  "upgrade-1.18-1.19/kube-proxy": {
    "upgrade.client-kept-time":
      "run up-118-119-kp (2026-12-06): one request ran 3216 ms against its 2 s timeout during the upgrade — the loop's own stall, not the datapath's: the leg is inconclusive on it; everything else held",
  },
  "upgrade-1.19-1.20/kube-proxy": {
    "upgrade.client-kept-time":
      "run up-119-120-kp-d (2026-12-06): one request of 986 in the upgrade 1.19.7 → 1.20.2 failed after 2366 ms against its 2 s timeout; its handshake completed at once, the backend answered and closed, and the loop's own process was not running across the request's due time (a measured stall): the leg is inconclusive on that request, never the datapath's; the restart and the rollback held",
  },
  "profiles/dual-stack/kube-proxy": {
    "ipv6.ghost-seconds":
      "this bundle's run (Cilium 1.20.2, dual-stack, beside kube-proxy, one mode alone): the probe Pod's connect() to ghost6 (an IPv6 ClusterIP without backends) was refused only after 1.019 s, one SYN retransmission, where the IPv4 ghost is held to 0.1 s; ipv6.ghost-fails-fast passes it (exit 7). Every dual-stack run beside kube-proxy on 1.20.2 showed it: the run of the bundle this one replaced (1.027 s), its existing-provider run (1.024 s, profiles/dual-stack/existing-kube-proxy) and two more lab runs (1.001 s). bpf_lxc's ICMPv6 reject for the first SYN is not taken and the retransmitted one's is. No upstream report names it (1.20.2's ICMP sample-length change, PR 48020 'bpf: icmp*', is the nearest suspect, unconfirmed), so it stays a failure; the smallest reproduction is in the bundle's README",
  },
  "profiles/dual-stack/existing-kube-proxy": {
    "ipv6.ghost-seconds":
      "the same cluster as profiles/dual-stack/kube-proxy through the existing provider: refused after 1.024 s (one SYN retransmission); see that bundle. Its run stored no verdict for it (the property is newer than the recording)",
  },
};
