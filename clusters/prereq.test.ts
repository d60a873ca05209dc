import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LocalExecutor } from "../helpers/exec/local.ts";
import { which } from "../helpers/which.ts";
import { checkBinaries, dockerReachable } from "./prereq.ts";

const bin = mkdtempSync(join(tmpdir(), "dpc-bin-"));
afterAll(() => rmSync(bin, { recursive: true, force: true }));

function fake(name: string, script: string) {
  const p = join(bin, name);
  writeFileSync(p, `#!/bin/sh\n${script}\n`);
  chmodSync(p, 0o755);
}

describe("prerequisites", () => {
  it("names every missing binary in one line", () => {
    fake("kubectl", "exit 0");
    expect(() => checkBinaries("kind", bin)).toThrowError(
      /^CLUSTER_PROVIDER=kind needs docker, kind, helm on PATH; install Docker \(client and a running daemon\); kind v0\.31\.0; helm ≥ 3\.8 \(OCI charts\)$/,
    );
    expect(() => checkBinaries("existing", bin)).not.toThrow();
    expect(which("kubectl", bin)).toBe(join(bin, "kubectl"));
  });

  it("a docker client without a daemon is reported as such, fast", async () => {
    const path = process.env.PATH;
    fake(
      "docker",
      'echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2; exit 1',
    );
    process.env.PATH = `${bin}:${path}`;
    try {
      const t0 = Date.now();
      const r = await dockerReachable(new LocalExecutor());
      expect(r).toEqual({
        ok: false,
        why: "no Docker daemon reachable (Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?)",
      });
      expect(Date.now() - t0).toBeLessThan(5000);
    } finally {
      process.env.PATH = path;
    }
  });
});
