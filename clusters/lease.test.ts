import { describe, expect, it } from "vitest";
import type { ExecRequest, ExecResult, Executor } from "../helpers/exec/types.ts";
import { acquireLease } from "./lease.ts";

/** A kubectl that keeps one Lease in memory (written by us for this test). */
function fakeKubectl(initial: unknown | null): Executor & { calls: string[] } {
  let lease = initial;
  const calls: string[] = [];
  return {
    calls,
    async run(req: ExecRequest): Promise<ExecResult> {
      const cmd = req.argv.join(" ");
      calls.push(cmd);
      const ok = (stdout = ""): ExecResult => ({ stdout, stderr: "", exitCode: 0, durationMs: 1 });
      if (cmd.includes("get lease"))
        return lease
          ? ok(JSON.stringify(lease))
          : { stdout: "", stderr: "NotFound", exitCode: 1, durationMs: 1 };
      if (cmd === "apply -f -") {
        lease = JSON.parse(req.stdin ?? "{}");
        return ok();
      }
      if (cmd.includes("delete lease")) {
        lease = null;
        return ok();
      }
      throw new Error(cmd);
    },
  };
}

describe("run Lease", () => {
  it("takes a free Lease and releases it", async () => {
    const k = fakeKubectl(null);
    const release = await acquireLease(k, "run-a");
    expect(k.calls).toContain("apply -f -");
    await release();
    expect(k.calls.at(-1)).toContain("delete lease");
  });

  it("refuses a Lease another live run holds, naming it", async () => {
    const k = fakeKubectl({
      spec: { holderIdentity: "run-b", renewTime: new Date().toISOString(), leaseDurationSeconds: 600 },
    });
    await expect(acquireLease(k, "run-a")).rejects.toThrow(
      /another run \(run-b\) holds Lease default\/cilium-datapath-conformance until/,
    );
  });

  it("takes over an expired Lease", async () => {
    const k = fakeKubectl({
      spec: { holderIdentity: "run-b", renewTime: "2026-01-01T00:00:00.000000Z", leaseDurationSeconds: 600 },
    });
    await expect(acquireLease(k, "run-a")).resolves.toBeTypeOf("function");
  });
});
