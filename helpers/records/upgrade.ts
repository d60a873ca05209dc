import type { LegRun, UpgradeConnection, UpgradeLeg } from "./types.ts";

/**
 * A long-lived connection survived a leg: it had connected, and after the leg it is the same connection, with no
 * close and no error in between. One definition for the verdict (upgrade.connections-survive), the upgrade gate,
 * the report's upgrade view and the runs table.
 */
export function connectionSurvived(c: UpgradeConnection): boolean {
  return (
    c.connection_before > 0 &&
    c.connection_after === c.connection_before &&
    c.closed_events === 0 &&
    c.error_events === 0
  );
}

/**
 * A leg's longest outage (ms): the longest a target of the loop went without a successful request, less only the
 * stall the loop measured itself (`judged_ms`; the raw gap in bundles whose loop did not measure its lag). One
 * figure for the verdict (upgrade.longest-outage), the gate's table, the report and docs/status.md (issue 42).
 */
export function legOutageMs(l: Pick<UpgradeLeg, "requests">): number | null {
  const o = l.requests.longest_outage;
  return o ? (o.judged_ms ?? o.ms) : null;
}

/** The run of legs that changed the version (an upgrade, and its rollback): the one with a path. */
export function upgradeRun(runs: readonly LegRun[]): LegRun | undefined {
  return runs.find((r) => r.to !== undefined);
}

/** Whether a verdict judges the upgrade or its rollback (a leg that changed the version). */
export const isUpgradeVerdict = (v: { leg?: UpgradeLeg["kind"] }) =>
  v.leg === "upgrade" || v.leg === "rollback";
