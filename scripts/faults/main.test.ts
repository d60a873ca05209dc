/** Bad input to `npm run faults` gets one line each, before anything runs. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { faultsMain } from "./main.ts";

const dir = mkdtempSync(join(tmpdir(), "dpc-faults-main-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const io = { out: () => {}, err: () => {}, resultsDir: dir };

it("names what is wrong and what is valid", async () => {
  await expect(faultsMain([], io)).rejects.toThrow(
    /^which subcommand\?; valid: run, all, table, existing, concurrent \(faults: agent-delete, /,
  );
  await expect(faultsMain(["go"], io)).rejects.toThrow(/^unknown subcommand "go"/);
  await expect(faultsMain(["run", "--fault", "sigint"], io)).rejects.toThrow(
    "run: which mode? --mode kpr|kube-proxy",
  );
  await expect(faultsMain(["run", "--mode", "kpr", "--fault", "nope"], io)).rejects.toThrow(
    /^--fault nope: valid: /,
  );
  await expect(faultsMain(["run", "--mode", "ipvs", "--fault", "sigint"], io)).rejects.toThrow(
    /^unknown mode "ipvs"; valid: kpr, kube-proxy/,
  );
  await expect(faultsMain(["existing"], io)).rejects.toThrow("existing: which cluster? --context C");
  await expect(faultsMain(["table"], io)).rejects.toThrow(/^no fault runs recorded yet/);
  await expect(faultsMain(["concurrent", "--context", "c", "--lease-wait-s", "soon"], io)).rejects.toThrow(
    '--lease-wait-s takes a whole number of seconds, got "soon"',
  );
});

it("--dry-run checks the arguments and says what would run, starting nothing; table reads a file named", async () => {
  let out = "";
  const said = {
    out: (s: string) => {
      out += s;
    },
    err: () => {},
    resultsDir: dir,
  };
  expect(await faultsMain(["run", "--fault", "sigint", "--mode", "kpr", "--dry-run"], said)).toBe(0);
  expect(out).toMatch(
    /^would run fault-sigint-kpr-\d{8}t\d{6}: fault sigint when \S+ starts observing, \d+ s later, mode kpr; /,
  );
  out = "";
  expect(await faultsMain(["all", "--dry-run"], said)).toBe(0);
  expect(out.trim().split("\n")).toHaveLength(14);
  out = "";
  expect(await faultsMain(["concurrent", "--context", "c", "--lease-wait-s", "900", "--dry-run"], said)).toBe(
    0,
  );
  expect(out).toContain("LEASE_WAIT_S=900");
  await expect(faultsMain(["run", "--fault", "nope", "--mode", "kpr", "--dry-run"], said)).rejects.toThrow(
    /^--fault nope: valid: /,
  );
  out = "";
  const shipped = join(import.meta.dirname, "..", "..", "suites", "bundles", "faults", "faults.jsonl");
  expect(await faultsMain(["table", shipped], said)).toBe(0);
  expect(out).toMatch(/^\| fault \| mode \| outcome \| time to report \| leftovers \|\n/);
});
