import type { UpgradeConnection } from "./types.ts";

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
