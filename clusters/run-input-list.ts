/**
 * The inputs of a cluster run, as data only (no imports: `plan --help` and `run --help` are built from it without
 * loading the cluster code). clusters/run-inputs.ts parses them.
 */
/** One input of a cluster run: its flag, the variable the conformance project reads for it, how `--help` shows it. */
export interface RunInput {
  flag: string;
  /** The environment variable (absent: a flag of `run` only, given to vitest itself). */
  env?: string;
  type: "string" | "boolean";
  value?: string;
  help: string;
}

export const RUN_INPUTS: readonly RunInput[] = [
  {
    flag: "provider",
    env: "CLUSTER_PROVIDER",
    type: "string",
    value: "kind|k3d|existing|replay",
    help: "the cluster provider (kind)",
  },
  {
    flag: "mode",
    env: "CONFORMANCE_MODE",
    type: "string",
    value: "kpr|kube-proxy",
    help: "one mode (both by default, or the profile's modes)",
  },
  {
    flag: "cilium",
    env: "CILIUM_VERSION",
    type: "string",
    value: "X.Y[.Z]",
    help: "the Cilium minor (its pinned patch) or patch (default: the newest minor's pinned patch)",
  },
  {
    flag: "profile",
    env: "DATAPATH_PROFILE",
    type: "string",
    value: "NAME",
    help: "a datapath profile beside the mode (clusters/datapath-profiles.ts; none by default)",
  },
  {
    flag: "values",
    env: "CILIUM_VALUES",
    type: "string",
    value: "FILE",
    help: "your Helm values, merged under what the suite sets",
  },
  {
    flag: "upgrade-to",
    env: "UPGRADE_TO",
    type: "string",
    value: "X.Y[.Z]",
    help: "then the upgrade leg under load to this version (the next minor, or a newer patch)",
  },
  { flag: "rollback", env: "ROLLBACK", type: "boolean", help: "after the upgrade, back with helm rollback" },
  { flag: "test", type: "string", value: "REGEX", help: "only the tests whose name matches (vitest -t)" },
  { flag: "skip", type: "string", value: "REGEX", help: "leave out the tests whose name matches" },
  {
    flag: "part",
    type: "string",
    value: "PART",
    help: "one of a mode's two parts, for two jobs at once: disruptions (config, then the three topics that restart the agents and the operator or cut a node from the API server) or without-disruptions (every other topic)",
  },
  {
    flag: "junit",
    env: "CONFORMANCE_JUNIT",
    type: "string",
    value: "FILE",
    help: "also write a JUnit report of the run (every test case with mode, versions and attach mode)",
  },
  {
    flag: "keep",
    env: "KEEP_CLUSTER",
    type: "boolean",
    help: "keep the clusters (the next run reuses them by name)",
  },
];

/**
 * The environment variables a run still reads that no flag sets (docs/running.md describes each); `run --help`
 * lists them with the flags' own variables.
 */
export const OTHER_RUN_VARIABLES: readonly [string, string][] = [
  ["RUN_ID", "the bundles go to results/<RUN_ID>/<mode>/ (default run-<date>-<time>)"],
  ["MODES_CONCURRENT", "0 runs the two modes one after the other (both at once by default)"],
  ["CONFORMANCE_WORKERS", "topics observed at once within a mode (4; 1 runs one at a time)"],
  ["CONFORMANCE_EXISTING_OK", "1 is required for --provider existing (it runs in your KUBECONFIG context)"],
  ["NO_BACKEND_RESPONSE", "drop installs the opt-in drop profile"],
  ["PRELOAD_IMAGES", "1 drops image digests from the Helm values, for preloaded images"],
  ["LAB_IMAGES", "1 runs on the offline lab's images (kind only; LAB_CACHE: where they are)"],
  [
    "OUTSIDE_CONTAINER",
    "existing provider: a running container on the nodes' network as the client outside the nodes",
  ],
  ["LEASE_WAIT_S", "wait this long for another run's Lease on the same cluster"],
  ["READY_DEADLINE_S", "the Cilium-start gates' deadline (300 s)"],
  ["LB_IP_RANGE", "START-STOP: the addresses of ours for LoadBalancer Services"],
  [
    "AGNHOST_IMAGE, CURL_IMAGE, HOLDER_IMAGE, NETSHOOT_IMAGE",
    "images of your own instead of the pinned ones",
  ],
  ["BUNDLE", "--provider replay: the bundles to serve (comma-separated; default the shipped ones)"],
  ["LB_IP6_RANGE", "the same for the IPv6 family of a dual-stack cluster"],
  [
    "CONFORMANCE_STRICT, CONFORMANCE_KNOWN_ISSUES",
    "how a known issue shows in the run's JUnit (docs/verdicts.md)",
  ],
  ["CONFORMANCE_RESULTS", "where runs write their bundles (default results/ in the checkout)"],
];
