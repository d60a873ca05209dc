/**
 * The properties of one leg under load (the upgrade and restart topics' legs: an upgrade, the rollback after it, an
 * agent restart on one version), declared once for every kind of leg: every connection survives on its backend, no
 * request fails, the load's own client kept time (issue 35: a starved client is not a lost packet), no target goes a
 * second without an answer, no drop of a reason not expected, every agent runs the version asked for.
 */

import type { Expect } from "../helpers/properties/expectation.ts";
import { UP, UPGRADE_CI, UPGRADE_GUIDE } from "../helpers/properties/sources.ts";
import type { Property } from "../helpers/properties/types.ts";
import { viewNotAllActive } from "../helpers/records/common.ts";
import type { EvidenceItem } from "../helpers/records/evidence.ts";
import type { LabRecords, UpgradeConnection, UpgradeLeg } from "../helpers/records/types.ts";
import { connectionSurvived } from "../helpers/records/upgrade.ts";

/**
 * The steps every leg runs to show where a failure's packets went (both leg topics declare them): the loop node's
 * SYN/FIN/RST capture, every node's capture read back per failed request and broken connection, and every node's
 * drop monitor (helpers/observe/leg-capture.ts).
 */
export const LEG_EVIDENCE_STEPS = [
  { on: "kubectl", run: "-n <ns> logs capture-", for: "the leg's capture of the loop's connections" },
  {
    on: "pod",
    run: "tcpdump -r /cap/leg.pcap",
    for: "each failed request and broken connection read back from every node's capture, data packets and the tunnel included",
  },
  {
    on: "kubectl",
    run: "-n <ns> logs pcap-",
    for: "every node's drop monitor during the leg (cilium-dbg monitor --type drop)",
  },
] as const;

/**
 * What every leg deploys (both leg topics): web behind a NodePort and a LoadBalancer from a pool of ours, the load
 * (helpers/observe/load.ts: the long-lived connections, the request loop, the captures) and leg-roll.
 */
export const LEG_DEPLOYS = [
  "web.yaml",
  "web-np.yaml",
  "lb-pool.yaml",
  "web-lb.yaml",
  "conn-client.yaml",
  "request-loop.yaml",
  "load-capture.yaml",
  "load-pcap.yaml",
  "leg-roll.yaml",
];

/** The steps that replace backends during every leg (helpers/observe/leg-roll.ts): both leg topics declare them. */
export const LEG_ROLL_STEPS = [
  {
    on: "kubectl",
    run: "-n <ns> rollout restart deployment/leg-roll",
    for: "leg-roll's backends replaced right after the leg's change starts",
  },
  {
    on: "agent",
    run: "cilium-dbg service list",
    for: "each node's view of leg-roll once its new Pods are ready (polled)",
  },
] as const;

/** The request loop's target period (ms): its interval times the number of targets, four with a pool of ours. */
export const LOOP_PERIOD_PER_TARGET_MS = 200;

function sameBackend(c: UpgradeConnection): boolean {
  // compared where an entry was found both before and after: an entry gone (its node's agent restarted, or the
  // connection's conntrack is the kernel's beside kube-proxy) points at no other backend (run up-118-119-kp's
  // NodePort connection: its entry found before, none after, the same backend answering)
  const ct =
    c.ct_backend_before === null || c.ct_backend_after === null || c.ct_backend_after === c.ct_backend_before;
  return c.backend_before !== null && c.backend_after === c.backend_before && ct;
}

type LegRecord = "upgrade" | "restart";

/**
 * A leg's connection evidence with the named connections' items first (their holder log's lines, found by the
 * log's file, `…-logs-<name>.txt`, and the sentences that start with their name), in their order otherwise.
 */
function brokenFirst(items: EvidenceItem[], names: string[]): EvidenceItem[] {
  const of = (e: EvidenceItem) =>
    names.some((n) => ("quote" in e ? e.at.file.includes(`-logs-${n}.`) : e.derived.startsWith(`${n} (`)));
  return [...items.filter(of), ...items.filter((e) => !of(e))];
}

/** The properties of the legs of `kind` in the `record` record (upgrade: upgrade and rollback; restart: restart). */
export function legProperties(record: LegRecord, kind: UpgradeLeg["kind"]): Omit<Property, "topic">[] {
  const prefix = kind === "upgrade" ? "upgrade" : kind === "rollback" ? "upgrade.rollback" : "restart";
  const what =
    kind === "upgrade"
      ? "the upgrade"
      : kind === "rollback"
        ? "the rollback (helm rollback to the revision before)"
        : "an agent restart on the same version (kubectl rollout restart of the DaemonSet and the operator)";
  const leg = (r: { get(n: LegRecord): LabRecords[LegRecord] }) =>
    r.get(record).legs.find((x) => x.kind === kind) ?? null;
  const noLeg =
    kind === "rollback"
      ? "this run has no rollback leg (ROLLBACK=1 rolls back after the upgrade)"
      : kind === "restart"
        ? "this run has no restart leg (an upgrade run restarts the agents first)"
        : "this run has no upgrade leg (UPGRADE_TO)";
  const both = (e: Expect) => ({ kpr: e, "kube-proxy": e });
  const props: Omit<Property, "topic">[] = [
    {
      id: `${prefix}.connections-survive`,
      claim: `Every long-lived connection (a Pod on every node to the ClusterIP, a node to the NodePort, Pods to a LoadBalancer address and to one with externalTrafficPolicy Local) survives ${what}: same connection, no close, no error`,
      source: UP(`${UPGRADE_CI}; ${UPGRADE_GUIDE}#upgrade-impact`),
      expect: both({ eq: true }),
      config: "none",
      needs: [record],
      observe: (r) => {
        const l = leg(r);
        if (!l) return { value: null, evidence: [], skip: noLeg };
        // a break the holder's own stall explains (it measured its lag, issue 42) is client-kept-time's
        const broken = l.connections
          .filter((c) => !connectionSurvived(c) && !c.client_stall)
          .map((c) => c.name);
        return {
          value: l.connections.length > 0 && broken.length === 0,
          // the broken connections' lines first: the line a reader checks is the one that broke
          evidence: [...brokenFirst(l.evidence.connections, broken), ...l.evidence.context],
        };
      },
    },
    {
      id: `${prefix}.same-backend`,
      claim: `Every long-lived connection is answered by the same backend before and after ${what}, and where Cilium's conntrack holds its entry, the entry points at that backend`,
      source: UP(UPGRADE_CI),
      why: "the conntrack entry is looked for on every node (the client's OUT entry, or the backend node's IN entry of a connection translated at its socket) and compared where one is found before and after, so the expectation is the same in every configuration",
      expect: both({ eq: true }),
      config: "none",
      needs: [record],
      observe: (r) => {
        const l = leg(r);
        if (!l) return { value: null, evidence: [], skip: noLeg };
        return {
          value: l.connections.length > 0 && l.connections.every(sameBackend),
          evidence: l.evidence.backends,
        };
      },
    },
    {
      id: `${prefix}.rolled-backends-active`,
      claim: `A Deployment rolled while ${what} runs (leg-roll: its new Pods created as the agents restart) ends with every node's agent listing exactly its new Pods as the Service's backends, each active`,
      source: UP(
        "https://github.com/cilium/cilium/blob/v1.20.2/pkg/loadbalancer/reconciler/bpf_reconciler.go (a restarted agent restores its maps, then prunes them to the EndpointSlices once synced); Kubernetes docs, Deployment rolling update: https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#rolling-update-deployment",
      ),
      why: "the roll starts right after the leg's change, so the new Pods' endpoints are created while agents are down or restoring; after the leg the old Pods' addresses must be gone from every node and the new ones active (not quarantined, not terminating). Read from each agent's service list once the new Pods are ready, polled up to 30 s",
      expect: both({ eq: true }),
      config: "none",
      needs: [record],
      observe: (r) => {
        const l = leg(r);
        if (!l) return { value: null, evidence: [], skip: noLeg };
        const x = l.rolled;
        if (!x)
          return {
            value: null,
            evidence: [],
            skip: "this bundle predates the legs rolling a Deployment (leg-roll)",
          };
        if (x.error) return { value: x.error, evidence: l.evidence.rolled ?? [] };
        const bad = viewNotAllActive(x.views, x.backends);
        return {
          value:
            x.views.length === 0
              ? "no node read"
              : bad
                ? `${bad.node}: [${bad.backends.join(", ") || "none"}]`
                : true,
          evidence: l.evidence.rolled ?? [],
        };
      },
    },
    {
      id: `${prefix}.no-failed-requests`,
      claim: `No request of the loop (a new connection to each target in turn) fails during ${what}, other than those the client's own stall explains`,
      source: UP(UPGRADE_CI),
      why: "a request counts against the datapath unless the loop's own lag explains it (it ran past its timeout by over 500 ms, or started late or inside a measured stall of 500 ms or more: its process was not running); each failure is shown with where its packets were seen on the loop's node (the leg's capture, by its local port). Those the stall explains are judged by the client-kept-time property instead",
      expect: both({ eq: 0 }),
      config: "none",
      needs: [record],
      observe: (r) => {
        const l = leg(r);
        if (!l) return { value: null, evidence: [], skip: noLeg };
        const own = l.requests.failures.filter((f) => !f.stall).length;
        return { value: own, evidence: [...l.evidence.requests, ...l.evidence.context] };
      },
    },
    {
      id: `${prefix}.client-kept-time`,
      claim: `The load's own clients kept time during ${what}: no failed request is explained by the loop's process not running, no broken connection by its holder's`,
      source: UP(`${UPGRADE_CI}; a failure blamed on Cilium must show the datapath lost it`),
      why: "the suite's client shares two cores with three kind nodes whose agents restart and compile programs: a request that runs past its own 2 s timeout by over 500 ms, or started in a stall of 500 ms or more the loop measured itself, says the client was starved, not that the datapath lost the packet. A failure here makes the leg inconclusive (rerun on a quieter machine), never Cilium's. A loop recorded before it measured its lag is judged on the overrun alone (its start line names its timeout)",
      expect: both({ eq: 0 }),
      config: "none",
      needs: [record],
      observe: (r) => {
        const l = leg(r);
        if (!l) return { value: null, evidence: [], skip: noLeg };
        const stalled = l.connections.filter((c) => !connectionSurvived(c) && c.client_stall);
        return {
          value: l.requests.failures.filter((f) => f.stall).length + stalled.length,
          evidence: [
            ...l.evidence.requests,
            ...brokenFirst(
              l.evidence.connections,
              stalled.map((c) => c.name),
            ).slice(0, stalled.length > 0 ? 3 : 0),
          ],
        };
      },
    },
    {
      id: `${prefix}.longest-outage`,
      claim: `During ${what}, no target of the loop goes longer than a second without a successful request (the raw gap, less only the stall the loop measured itself)`,
      source: UP(UPGRADE_CI),
      why: `the loop starts a request to each target every ${LOOP_PERIOD_PER_TARGET_MS} ms and never waits for an answer (a hung request fails at its 2 s timeout, the next starts on time), so a target's time between successes is ${LOOP_PERIOD_PER_TARGET_MS} ms when nothing is wrong. The outage is judged on the raw gap; only a stall the loop measured itself (its lag sampler) is taken off, never one inferred from missing starts (both figures are in the evidence). A bundle whose loop did not measure its lag is judged on the raw gap. Over 1000 ms means the target went unanswered for five of its periods`,
      expect: both({ lte: 1000 }),
      config: "none",
      needs: [record],
      tolerance: { factor: 3, floor: 500, unit: "ms" },
      observe: (r) => {
        const l = leg(r);
        if (!l) return { value: null, evidence: [], skip: noLeg };
        const o = l.requests.longest_outage;
        return { value: o ? (o.judged_ms ?? o.ms) : 0, evidence: l.evidence.gap };
      },
    },
    {
      id: `${prefix}.no-unexpected-drops`,
      claim: `The datapath drops nothing for a reason outside the expected ones during ${what} (drop counters by reason, every node, before and after)`,
      source: UP(
        "cilium-cli's connectivity tests: no-unexpected-packet-drops (defaults.ExpectedDropReasons), https://github.com/cilium/cilium/blob/v1.20.2/cilium-cli/connectivity/tests/errors.go, https://github.com/cilium/cilium/blob/v1.20.2/cilium-cli/defaults/defaults.go",
      ),
      why: "the pinned metrics map counts every drop by reason and outlives the agents: its difference over the leg on every node, against cilium-cli's expected reasons (the invariants topic's list)",
      expect: both({ eq: [] }),
      config: "none",
      needs: [record],
      observe: (r) => {
        const l = leg(r);
        if (!l) return { value: null, evidence: [], skip: noLeg };
        if (!l.unexpected_drops)
          return {
            value: null,
            evidence: [],
            skip: "this bundle did not judge a leg's drops by reason (recorded before issue 35)",
          };
        return {
          value: l.unexpected_drops,
          evidence: [...(l.evidence.drops ?? []), ...(l.evidence.errors ?? [])],
        };
      },
    },
    {
      id: `${prefix}.agents-run-target`,
      claim: `After ${what} every agent runs exactly the version asked for and reports OK`,
      source: UP(UPGRADE_GUIDE),
      expect: both({ eq: true }),
      config: "none",
      needs: [record],
      observe: (r) => {
        const l = leg(r);
        if (!l) return { value: null, evidence: [], skip: noLeg };
        const agents = Object.values(l.agents_after);
        return {
          value: agents.length > 0 && agents.every((v) => v.version === l.to && v.ok),
          evidence: l.evidence.agents,
        };
      },
    },
  ];
  return props.map((p) => ({ ...p, leg: kind }));
}
