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
  "upgrade-1.19-1.20/kpr": {
    "upgrade.no-failed-requests":
      "run up-119-120-kpr-2 (2026-12-03, nothing else running): 2 of 570 new connections of the loop timed out (ETIMEDOUT after 2 s, one to the ClusterIP and one to the NodePort, the same 100 ms) right after worker2's agent became ready; every long-lived connection survived; no declaration names it (no upstream reference found), so it stays a failure. Every kpr upgrade run of the day saw new connections time out or a long-lived one stall during an agent restart, no kube-proxy run did (README, Status)",
  },
};
