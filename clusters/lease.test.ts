import { describe, expect, it } from "vitest";
import type { ExecRequest, ExecResult, Executor } from "../helpers/exec/types.ts";
import { acquireLease, dnsLabel, leaseWaitMs } from "./lease.ts";

/** Until `cond` holds, polled every 5 ms; gives up after 10 s (the test then fails on what it expected). */
async function eventually(cond: () => boolean): Promise<void> {
  const until = performance.now() + 10_000;
  while (!cond() && performance.now() < until) await new Promise((r) => setTimeout(r, 5));
}

type Lease = { metadata: { resourceVersion: string; uid: string }; spec: Record<string, unknown> };

/**
 * A kubectl that keeps one Lease in memory with the API server's semantics that matter here (written by us):
 * create fails when it exists, replace fails on a stale resourceVersion, a delete with preconditions fails
 * when the uid or resourceVersion changed. Every call yields first, so two concurrent runs interleave.
 */
function fakeKubectl(
  initial: Record<string, unknown> | null,
): Executor & { calls: string[]; lease(): Lease | null; set(spec: Record<string, unknown> | null): void } {
  let rv = 1;
  let uid = 1;
  let lease: Lease | null = initial ? { metadata: { resourceVersion: "1", uid: "u1" }, spec: initial } : null;
  const calls: string[] = [];
  const ok = (stdout = ""): ExecResult => ({ stdout, stderr: "", exitCode: 0, durationMs: 1 });
  const fail = (stderr: string): ExecResult => ({ stdout: "", stderr, exitCode: 1, durationMs: 1 });
  return {
    calls,
    lease: () => lease,
    /** Another run (or its expiry) changes the Lease: a new resourceVersion, and a new uid when re-created. */
    set: (spec) => {
      lease = spec ? { metadata: { resourceVersion: String(++rv), uid: `u${++uid}` }, spec } : null;
    },
    async run(req: ExecRequest): Promise<ExecResult> {
      await new Promise((r) => setImmediate(r));
      const cmd = req.argv.join(" ");
      calls.push(cmd);
      const body = () => JSON.parse(req.stdin ?? "{}") as Lease & { preconditions?: Record<string, string> };
      if (cmd.includes("get lease"))
        return lease
          ? ok(JSON.stringify(lease))
          : fail('Error from server (NotFound): leases.coordination.k8s.io "x" not found');
      if (cmd === "create -f -") {
        if (lease) return fail('Error from server (AlreadyExists): leases "x" already exists');
        lease = { metadata: { resourceVersion: String(++rv), uid: `u${++uid}` }, spec: body().spec };
        return ok();
      }
      if (cmd === "replace -f -") {
        if (!lease || body().metadata.resourceVersion !== lease.metadata.resourceVersion)
          return fail("Error from server (Conflict): the object has been modified");
        lease = { metadata: { resourceVersion: String(++rv), uid: lease.metadata.uid }, spec: body().spec };
        return ok();
      }
      if (
        cmd ===
        "delete --raw /apis/coordination.k8s.io/v1/namespaces/default/leases/cilium-datapath-conformance -f -"
      ) {
        if (!lease) return fail("Error from server (NotFound)");
        const pre = body().preconditions ?? {};
        if (pre.uid !== lease.metadata.uid || pre.resourceVersion !== lease.metadata.resourceVersion)
          return fail(
            'Error from server (Conflict): Operation cannot be fulfilled on leases.coordination.k8s.io "cilium-datapath-conformance": Precondition failed: ResourceVersion in precondition: 2, ResourceVersion in object meta: 3',
          );
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
    const release = await acquireLease(k, "run-a", { renewEveryMs: 0 });
    expect(k.calls).toContain("create -f -");
    expect(k.lease()?.spec.holderIdentity).toBe("run-a");
    await release();
    expect(k.lease()).toBeNull();
  });

  it("refuses a Lease another live run holds, naming it", async () => {
    const k = fakeKubectl(live("run-b"));
    await expect(acquireLease(k, "run-a")).rejects.toThrow(
      /^another run \(run-b\) holds Lease default\/cilium-datapath-conformance until .*; wait for it \(LEASE_WAIT_S=<seconds> waits\)/,
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
    const release = await acquireLease(k, "run-a", { seconds: 1, renewEveryMs: 0 });
    // run-a's Lease expired and run-b took it over
    k.set(live("run-b"));
    await release();
    expect(k.lease()?.spec.holderIdentity).toBe("run-b");
  });

  it("the release is conditional: a takeover between its read and its delete is not deleted", async () => {
    const k = fakeKubectl(null);
    const lines: string[] = [];
    const release = await acquireLease(k, "run-a", { renewEveryMs: 0, log: (l) => lines.push(l) });
    // run-b takes it over right after run-a's read (the read still says run-a)
    const run = k.run.bind(k);
    k.run = async (req) => {
      const r = await run(req);
      if (req.argv.includes("get")) k.set(live("run-b"));
      return r;
    };
    await release();
    expect(k.lease()?.spec.holderIdentity).toBe("run-b");
    expect(lines).toEqual([
      "Lease default/cilium-datapath-conformance changed hands before the release: left to its new holder",
    ]);
  });

  it("waits for the holder with LEASE_WAIT_S, saying whom it waits for, then takes it", async () => {
    const k = fakeKubectl(live("run-b"));
    let clock = Date.now();
    const lines: string[] = [];
    let polls = 0;
    const release = await acquireLease(k, "run-a", {
      waitMs: 60_000,
      pollMs: 5000,
      renewEveryMs: 0,
      now: () => clock,
      log: (l) => lines.push(l),
      sleep: async (ms) => {
        clock += ms;
        // run-b finishes after three polls
        if (++polls === 3) k.set(null);
      },
    });
    expect(k.lease()?.spec.holderIdentity).toBe("run-a");
    expect(lines[0]).toMatch(
      /^waiting for run run-b to release Lease default\/cilium-datapath-conformance \(held until .*; 0 s of LEASE_WAIT_S=60 s\)$/,
    );
    expect(lines.at(-1)).toBe("took Lease default/cilium-datapath-conformance after 15 s");
    await release();
  });

  it("gives up at LEASE_WAIT_S, naming the holder and how long it waited", async () => {
    const k = fakeKubectl(live("run-b"));
    let clock = Date.now();
    await expect(
      acquireLease(k, "run-a", {
        waitMs: 12_000,
        pollMs: 5000,
        now: () => clock,
        sleep: async (ms) => {
          clock += ms;
        },
      }),
    ).rejects.toThrow(
      /^another run \(run-b\) holds Lease default\/cilium-datapath-conformance until .*; waited 12 s \(LEASE_WAIT_S=12\)/,
    );
    expect(k.lease()?.spec.holderIdentity).toBe("run-b");
  });

  it("two runs at once, the second waiting: one holds it, the other takes it after the release; both end cleanly", async () => {
    const k = fakeKubectl(null);
    const order: string[] = [];
    const run = async (id: string, workMs: number) => {
      const release = await acquireLease(k, id, {
        waitMs: 10_000,
        pollMs: 5,
        renewEveryMs: 0,
        sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
      });
      order.push(`${id} holds`);
      expect(k.lease()?.spec.holderIdentity).toBe(id);
      await new Promise((r) => setTimeout(r, workMs));
      order.push(`${id} releases`);
      await release();
    };
    await Promise.all([run("run-a", 30), run("run-b", 30)]);
    expect(order).toHaveLength(4);
    // never two holders at once: each hold is followed by its own release
    expect(order[0]?.replace(" holds", "")).toBe(order[1]?.replace(" releases", ""));
    expect(k.lease()).toBeNull();
  });

  it("renews renewTime while held, and warns when another run holds it now", async () => {
    const k = fakeKubectl(null);
    const lines: string[] = [];
    const release = await acquireLease(k, "run-a", { renewEveryMs: 20, log: (l) => lines.push(l) });
    const rv = k.lease()?.metadata.resourceVersion;
    // waited for, not slept on: a busy machine runs the renewals late, never out of order
    await eventually(() => Number(k.lease()?.metadata.resourceVersion) > Number(rv));
    expect(k.lease()?.spec.holderIdentity).toBe("run-a");
    k.set(live("run-b"));
    await eventually(() => lines.some((l) => l.includes("is now held by run-b")));
    expect(lines).toContain(
      "warning: Lease default/cilium-datapath-conformance is now held by run-b, not this run",
    );
    await release();
    expect(k.lease()?.spec.holderIdentity).toBe("run-b");
  });

  it("LEASE_WAIT_S: whole seconds, or one line saying what is valid", () => {
    expect(leaseWaitMs(undefined)).toBe(0);
    expect(leaseWaitMs("90")).toBe(90_000);
    expect(() => leaseWaitMs("1m")).toThrow(/^LEASE_WAIT_S=1m: give the seconds to wait/);
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

describe("joinLease: a run started by the holder (the upgrade's nested runs)", () => {
  it("runs under the caller's Lease, never taking or releasing it; refused when another run holds it", async () => {
    const { joinLease } = await import("./lease.ts");
    const k = fakeKubectl({ holderIdentity: "up-119-120-kpr", leaseDurationSeconds: 60 });
    const release = await joinLease(k, "up-119-120-kpr");
    await release();
    expect(k.calls.filter((c) => !c.includes("get lease"))).toEqual([]);
    expect(k.lease()?.spec.holderIdentity).toBe("up-119-120-kpr");
    await expect(joinLease(k, "another-run")).rejects.toThrow(
      "CONFORMANCE_LEASE_HELD_BY=another-run: Lease default/cilium-datapath-conformance is held by up-119-120-kpr, not by that run",
    );
    await expect(joinLease(fakeKubectl(null), "x")).rejects.toThrow(/is not held, not by that run/);
  });
});
