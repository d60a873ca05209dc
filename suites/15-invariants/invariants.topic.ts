/**
 * Topic "invariants" — Knowledge: peers-and-pitfalls.md §0, §5.
 * What must hold after every topic: no unexpected drop reasons, no unexpected error lines in the agents' logs.
 *
 * Read top to bottom: what it deploys, the commands it runs (in order, and where), the records it builds,
 * then each property with its claim, source, expectation per mode and per Cilium version, and how it is
 * judged. The observation code and the record builders follow the declaration.
 */
import { ciliumDbg } from "../../helpers/observe/agent.ts";
import { kubectl, pods } from "../../helpers/observe/cluster.ts";
import type { RunContext } from "../../helpers/observe/context.ts";
import { dropReasons, errorLines, parseMetricsJson } from "../../helpers/parse/metrics-json.ts";
import { KN } from "../../helpers/properties/sources.ts";
import type { RecordSet } from "../../helpers/records/types.ts";
import { defineTopic } from "../../helpers/topic.ts";

export const topic = defineTopic({
  name: "invariants",
  title:
    "What must hold after every topic: no unexpected drop reasons, no unexpected error lines in the agents' logs",
  source: KN("peers-and-pitfalls.md §0, §5"),
  deploys: [],
  steps: [
    { on: "agent", run: "cilium-dbg metrics list -o json", for: "drop counters by reason, every agent" },
    {
      on: "kubectl",
      run: "-n kube-system logs <pod> -c cilium-agent",
      for: "each agent's log since the run started",
    },
  ],
  builds: ["invariants"],
  observe: observeInvariants,
  properties: [
    {
      id: "invariants.no-unexpected-drops",
      claim:
        "The agents' cilium_drop_count_total has no reason outside the allowlist (e.g. 'Service backend not found' from ghost is expected)",
      source: KN("peers-and-pitfalls.md §0, §5 (cilium connectivity test's no-unexpected-packet-drops)"),
      why: "the allow-list is cilium-cli's (defaults.ExpectedDropReasons, 15 reasons); the counts are this run's: the agents' counters now minus when Cilium was ready (bundle baseline/); a bundle without a baseline counts the agents' lifetime and says so",
      expect: { kpr: { eq: [] }, "kube-proxy": { eq: [] } },
      needs: ["invariants"],
      observe: (r) => {
        const i = r.get("invariants");
        return {
          value: i.unexpected_drops,
          evidence: [
            `over ${i.drop_window ?? "the agents' lifetime"}:`,
            ...Object.entries(i.drop_reasons).map(([k, v]) => `${k}: ${v}`),
          ],
        };
      },
    },
    {
      id: "invariants.no-agent-errors",
      claim: "No agent logged an error-level line during the run",
      source: KN("peers-and-pitfalls.md §0, §5 (cilium connectivity test's check-log-errors)"),
      expect: { kpr: { eq: 0 }, "kube-proxy": { eq: 0 } },
      needs: ["invariants"],
      observe: (r) => {
        const i = r.get("invariants");
        return { value: i.error_lines.length, evidence: i.error_lines.slice(0, 10) };
      },
    },
  ],
});

// ── observe ─────────────────────────────────────────────────────────────────────────────────────

/**
 * Drop reasons a healthy run produces by design: cilium-cli's connectivity test tolerates exactly these
 * (`--expected-drop-reasons` default, defaults.ExpectedDropReasons in cilium-cli for Cilium 1.18–1.19:
 * ghost's "Service backend not found" among them, and the background noise of a kind network).
 */
const EXPECTED_DROP_REASONS = [
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
];
/** Error lines known to be harmless. */
const EXPECTED_ERRORS = [/The kernel does not support --service-no-backend-response=reject/];

/** Global invariants: drop reasons in every agent's metrics, error lines in every agent's log since the run started. */
export async function observeInvariants(ctx: RunContext): Promise<RecordSet> {
  const agents = (await pods(ctx, "kube-system", "k8s-app=cilium")).sort((a, b) =>
    a.node.localeCompare(b.node),
  );
  const drops: Record<string, number> = {};
  const errors: string[] = [];
  const baseline = ctx.baselineMetrics?.() ?? null;
  for (const agent of agents) {
    const now = dropReasons(
      parseMetricsJson(await ciliumDbg(ctx, agent.node, ["metrics", "list", "-o", "json"])),
    );
    const start = baseline?.[agent.node];
    const before = baseline && start !== undefined ? dropReasons(parseMetricsJson(start)) : {};
    for (const [reason, n] of Object.entries(dropsSince(before, now)))
      drops[reason] = (drops[reason] ?? 0) + n;
    const log = await kubectl(ctx, [
      "-n",
      "kube-system",
      "logs",
      agent.name,
      "-c",
      "cilium-agent",
      `--since-time=${ctx.runStartedAt}`,
    ]);
    for (const line of errorLines(log))
      if (!EXPECTED_ERRORS.some((re) => re.test(line))) errors.push(`${agent.node}: ${line}`);
  }
  return {
    invariants: {
      record: {
        drop_reasons: drops,
        unexpected_drops: Object.keys(drops)
          .filter((r) => !EXPECTED_DROP_REASONS.includes(r))
          .sort(),
        error_lines: errors,
        drop_window: baseline
          ? "this run (from the agents' counters when Cilium was ready)"
          : "the agents' lifetime (this bundle has no baseline)",
      },
      evidence: { drop_reasons: Object.entries(drops).map(([k, v]) => `${k}: ${v}`) },
    },
  };
}

/** Drops per reason between two readings of one agent's counters (a counter that went down means a restart: its new value). */
export function dropsSince(
  before: Record<string, number>,
  now: Record<string, number>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [reason, n] of Object.entries(now)) {
    const b = before[reason] ?? 0;
    const d = n >= b ? n - b : n;
    if (d > 0) out[reason] = d;
  }
  return out;
}
