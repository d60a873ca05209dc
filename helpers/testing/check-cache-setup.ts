/**
 * Global setup of the unit and replay projects: a fresh directory for the run's shared judgements
 * (helpers/check-cache.ts), named in DATAPATH_CONFORMANCE_CHECK_CACHE for the test workers and every CLI they
 * start, and removed when the run ends. A directory named already (a caller's own) is used as it is and kept.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CHECK_CACHE_ENV } from "../check-cache.ts";

export default function setup(): () => void {
  if (process.env[CHECK_CACHE_ENV]) return () => {};
  const dir = mkdtempSync(join(tmpdir(), "dpc-judged-"));
  process.env[CHECK_CACHE_ENV] = dir;
  return () => {
    rmSync(dir, { recursive: true, force: true });
    delete process.env[CHECK_CACHE_ENV];
  };
}
