import { describe, expect, it } from "vitest";
import type { ExecRequest, ExecResult, Executor } from "../helpers/exec/types.ts";
import { acquireLease, dnsLabel } from "./lease.ts";

type Lease = { metadata: { resourceVersion: string }; spec: Record<string, unknown> };

/**
 * A kubectl that keeps one Lease in memory with the API server's semantics that matter here (written by us):
 * create fails when it exists, replace fails on a stale resourceVersion. Every call yields first, so two
 * concurrent runs interleave.
 */
function fakeKubectl(
  initial: Record<string, unknown> | null,
): Executor & { calls: string[]; lease(): Lease | null } {
  let lease: Lease | null = initial ? { metadata: { resourceVersion: "1" }, spec: initial } : null;
  let rv = 1;
  const calls: string[] = [];
  const ok = (stdout = ""): ExecResult => ({ stdout, stderr: "", exitCode: 0, durationMs: 1 });
  const fail = (stderr: string): ExecResult => ({ stdout: "", stderr, exitCode: 1, durationMs: 1 });
  return {
    calls,
    lease: () => lease,
    async run(req: ExecRequest): Promise<ExecResult> {
      await new Promise((r) => setImmediate(r));
      const cmd = req.argv.join(" ");
      calls.push(cmd);
      const body = () => JSON.parse(req.stdin ?? "{}") as Lease;
      if (cmd.includes("get lease")) return lease ? ok(JSON.stringify(lease)) : fail("NotFound");
      if (cmd === "create -f -") {
        if (lease) return fail('Error from server (AlreadyExists): leases "x" already exists');
        lease = { metadata: { resourceVersion: String(++rv) }, spec: body().spec };
        return ok();
      }
      if (cmd === "replace -f -") {
        if (body().metadata.resourceVersion !== lease?.metadata.resourceVersion)
          return fail("Error from server (Conflict): the object has been modified");
        lease = { metadata: { resourceVersion: String(++rv) }, spec: body().spec };
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

const live = (holder: string) => ({
  holderIdentity: holder,
  renewTime: new Date().toISOString(),
  leaseDurationSeconds: 600,
});
const expired = (holder: string) => ({
  holderIdentity: holder,
  renewTime: "2026-01-01T00:00:00.000000Z",
  leaseDurationSeconds: 600,
});

describe("run Lease", () => {
  it("takes a free Lease with create and releases it", async () => {
    const k = fakeKubectl(null);
    const release = await acquireLease(k, "run-a");
    expect(k.calls).toContain("create -f -");
    expect(k.lease()?.spec.holderIdentity).toBe("run-a");
    await release();
    expect(k.lease()).toBeNull();
  });

  it("refuses a Lease another live run holds, naming it", async () => {
    const k = fakeKubectl(live("run-b"));
    await expect(acquireLease(k, "run-a")).rejects.toThrow(
      /another run \(run-b\) holds Lease default\/cilium-datapath-conformance until/,
    );
  });

  it("takes over an expired Lease", async () => {
    const k = fakeKubectl(expired("run-b"));
    await expect(acquireLease(k, "run-a")).resolves.toBeTypeOf("function");
    expect(k.lease()?.spec.holderIdentity).toBe("run-a");
  });

  it("of two concurrent runs on a free Lease exactly one wins", async () => {
    const k = fakeKubectl(null);
    const r = await Promise.allSettled([acquireLease(k, "run-a"), acquireLease(k, "run-b")]);
    expect(r.map((x) => x.status).sort()).toEqual(["fulfilled", "rejected"]);
    const loser = r.find((x) => x.status === "rejected") as PromiseRejectedResult;
    expect(String(loser.reason)).toMatch(/another run \(run-[ab]\) holds Lease/);
  });

  it("of two concurrent runs on an expired Lease exactly one wins (resourceVersion precondition)", async () => {
    const k = fakeKubectl(expired("run-old"));
    const r = await Promise.allSettled([acquireLease(k, "run-a"), acquireLease(k, "run-b")]);
    expect(r.map((x) => x.status).sort()).toEqual(["fulfilled", "rejected"]);
    const winner = r.findIndex((x) => x.status === "fulfilled") === 0 ? "run-a" : "run-b";
    expect(k.lease()?.spec.holderIdentity).toBe(winner);
  });

  it("the release leaves a Lease another run has taken since", async () => {
    const k = fakeKubectl(null);
    const release = await acquireLease(k, "run-a", 1);
    // run-a's Lease expired and run-b took it over
    const k2 = k as unknown as { lease(): Lease };
    k2.lease().spec = live("run-b");
    await release();
    expect(k.lease()?.spec.holderIdentity).toBe("run-b");
  });
});

describe("run ids as DNS-1123 labels", () => {
  it("lower-cases, replaces dots and other characters, trims to the limit without a trailing dash", () => {
    expect(dnsLabel("20261202T1130-4242-kpr-1.20")).toBe("20261202t1130-4242-kpr-1-20");
    expect(dnsLabel("A_B..C")).toBe("a-b-c");
    expect(dnsLabel("x".repeat(70), 56)).toHaveLength(56);
    expect(dnsLabel(`${"a".repeat(55)}-b`, 56)).toBe("a".repeat(55));
    expect(dnsLabel("...")).toBe("run");
  });
});
