/**
 * Global setup of the unit project: the CLI's bundle (bin/load-cli.mjs) made fresh once, before any test starts a
 * CLI. On a fresh clone the README test's first commands, started at once, had each built it (four builds where
 * one does). Where it cannot be built the CLIs take tsx, as they would without this.
 */
import { freshBundle } from "../bin/load-cli.mjs";

export default async function setup(): Promise<void> {
  if (process.env.DATAPATH_CONFORMANCE_TSX === "1") return;
  await freshBundle().catch(() => {});
}
