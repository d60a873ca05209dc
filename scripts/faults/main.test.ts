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
