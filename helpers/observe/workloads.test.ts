/**
 * The waits on Pods against a scripted API (written by us) that keeps the api target's contract
 * (helpers/exec/api.ts, tested against a fake API server in api.test.ts): a watch answers the list at the moment
 * its condition held, or at its deadline the last list seen with exit 1 and a progress line on the way. The
 * Pods never become ready, so the wait ends at its named deadline, and its progress lines and error name each
 * Pod's reason.
 */
import { describe, expect, it } from "vitest";
import type { ExecRequest, ExecResult, Executor } from "../exec/types.ts";
import { ipv6Big, ipv6Text } from "../parse/address.ts";
import { DeadlineError } from "../poll.ts";
import { clusterIp } from "./cluster.ts";
import { nothingSpent, type RunContext } from "./context.ts";
import * as F from "./pod-status.fixtures.ts";
import {
  apply,
  inRange6,
  parseLb6Range,
  parseLbRange,
  waitPodReady,
  waitPodsReady,
  withWeb,
} from "./workloads.ts";

function scriptedCtx(answer: (argv: string[]) => ExecResult, replay = false) {
  const calls: string[] = [];
  const lines: string[] = [];
  let clock = 0;
  const exec: Executor = {
    run: async (req: ExecRequest) => {
      calls.push(`${req.target.kind} ${req.argv.join(" ")}`);
      const r = answer(req.argv);
      const w = req.watch;
      if (!w || w.until(JSON.parse(r.stdout))) return r;
      const last = w.show(JSON.parse(r.stdout));
      w.progress?.(`still waiting for ${req.argv.at(-1)} (10 s of 180 s; last: ${last})`);
      return {
        ...r,
        exitCode: 1,
        stderr: `timed out after 180 s waiting for ${req.argv.at(-1)}; last observation: ${last}\n`,
      };
    },
  };
  const ctx: RunContext = {
    exec,
    mode: "kpr",
    ciliumMinor: "1.19",
    namespace: "cca-dp-run1",
    replay,
    log: (l) => lines.push(l),
    sleep: async (ms) => {
      clock += ms;
    },
    now: () => clock,
    recordedAt: () => clock,
    spent: nothingSpent,
    runStartedAt: "2026-12-02T10:00:00Z",
    earlierRecords: () => ({}),
  };
  return { ctx, calls, lines };
}

const ok = (v: unknown): ExecResult => ({
  stdout: JSON.stringify(v),
  stderr: "",
  exitCode: 0,
  durationMs: 1,
});

describe("waits on Pods name each Pod's reason", () => {
  it("waitPodsReady: progress and the timeout error name ImagePullBackOff and the image, plus the last Warning", async () => {
    const s = scriptedCtx((argv) =>
      argv.includes("events") ? ok(F.events) : ok({ kind: "List", items: [F.ready, F.imagePullBackOff] }),
    );
    const err = await waitPodsReady(s.ctx, "app=web", 2).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeadlineError);
    const msg = (err as Error).message;
    expect(msg).toMatch(
      /^timed out after 180 s waiting for 2 Ready Pods app=web in cca-dp-run1; last observation: 1\/2 ready; node-shell-worker: Pending, container shell ImagePullBackOff \(image docker\.io\/nicolaka\/netshoot:v0\.13\)/,
    );
    expect(msg).toContain("last Warning events: Pod/node-shell-worker Failed: Error: ImagePullBackOff (×5)");
    expect(s.lines.some((l) => /still waiting .*ImagePullBackOff/.test(l))).toBe(true);
    // one watch (one recorded call), then the events once, through the API
    expect(s.calls).toEqual([
      "api watch pods -n cca-dp-run1 -l app=web --until 2 ready",
      "api get events -n cca-dp-run1 --field-selector type=Warning",
    ]);
  });

  it("waitPodReady: an unscheduled Pod's scheduler message; a replay reads no events", async () => {
    const s = scriptedCtx(() => ok(F.unschedulable), true);
    const err = await waitPodReady(s.ctx, "holder").catch((e: unknown) => e);
    expect((err as Error).message).toMatch(
      /waiting for Pod cca-dp-run1\/holder Ready; last observation: holder: Pending, not scheduled: Unschedulable: 0\/3 nodes are available/,
    );
    expect(s.calls).toEqual(["api watch pod holder -n cca-dp-run1 --until ready"]);
  });

  it("no Pods at all says so; a ready Pod returns at once", async () => {
    const s = scriptedCtx((argv) =>
      argv.includes("events") ? ok({ items: [] }) : ok({ kind: "List", items: [] }),
    );
    await expect(waitPodsReady(s.ctx, "app=web", 2)).rejects.toThrow(
      /last observation: no Pods match app=web yet$/,
    );
    const r = scriptedCtx(() => ok(F.ready));
    await expect(waitPodReady(r.ctx, "web")).resolves.toMatchObject({
      name: "web-5d9c7b9f8-klmno",
      ready: true,
    });
    expect(r.calls).toHaveLength(1);
  });
});

describe("a topic that reads web deploys it when it runs alone (withWeb)", () => {
  const notFound: ExecResult = {
    stdout: "",
    stderr: 'Error from server (NotFound): services "web" not found\n',
    exitCode: 1,
    durationMs: 1,
  };
  const service = ok({ kind: "Service", metadata: { name: "web" }, spec: { clusterIP: "10.96.0.42" } });
  const fourReady = ok({
    kind: "List",
    items: [1, 2, 3, 4].map((i) => ({ ...F.ready, metadata: { ...F.ready.metadata, name: `web-${i}` } })),
  });

  it("web not there (a fresh cluster): deployed at the replicas asked, then the observation runs again", async () => {
    let deployed = false;
    const s = scriptedCtx((argv) => {
      if (argv.includes("scale")) deployed = true;
      if (argv[0] === "get" && argv[1] === "service") return deployed ? service : notFound;
      return argv[0] === "watch" ? fourReady : ok({});
    });
    const ip = await withWeb(s.ctx, 4, () => clusterIp(s.ctx, s.ctx.namespace, "web"));
    expect(ip).toBe("10.96.0.42");
    expect(s.calls).toEqual([
      "api get service web -n cca-dp-run1",
      "kubectl apply -f -",
      "kubectl -n cca-dp-run1 scale deployment web --replicas=4",
      "api watch pods -n cca-dp-run1 -l app=web --until 4 ready",
      "api get service web -n cca-dp-run1",
    ]);
    expect(s.lines).toContain(
      "web is not deployed (the topics that deploy it did not run before this one): deploying it at 4 replicas",
    );
  });

  it("web there (after the topics that deploy it, or a bundle's replay): no call is added", async () => {
    const s = scriptedCtx(() => service);
    await withWeb(s.ctx, 4, () => clusterIp(s.ctx, s.ctx.namespace, "web"));
    expect(s.calls).toEqual(["api get service web -n cca-dp-run1"]);
  });

  it("any other failure is the observation's own: passed on, nothing deployed", async () => {
    const s = scriptedCtx(() => ({ ...notFound, stderr: "Error from server (Forbidden): nope\n" }));
    await expect(withWeb(s.ctx, 4, () => clusterIp(s.ctx, s.ctx.namespace, "web"))).rejects.toThrow(
      /Forbidden/,
    );
    expect(s.calls).toHaveLength(1);
  });
});

describe("apply beside another topic's apply (topics observed at once, suites/schedule.ts)", () => {
  const exists: ExecResult = {
    stdout: "",
    stderr:
      'Error from server (AlreadyExists): error when creating "STDIN": namespaces "cca-dp-run1" already exists\n',
    exitCode: 1,
    durationMs: 1,
  };

  it("the second creator of an object is told AlreadyExists: it applies again, once, and says so", async () => {
    let n = 0;
    const s = scriptedCtx(() => (n++ === 0 ? exists : ok({})));
    await apply(s.ctx, "kind: ConfigMap\n");
    expect(s.calls).toEqual(["kubectl apply -f -", "kubectl apply -f -"]);
    expect(s.lines[0]).toMatch(/^apply raced another topic's \(Error from server \(AlreadyExists\)/);
  });

  it("any other failure, or AlreadyExists twice, is the apply's own failure", async () => {
    const s = scriptedCtx(() => exists);
    await expect(apply(s.ctx, "kind: ConfigMap\n")).rejects.toThrow(/AlreadyExists/);
    expect(s.calls).toHaveLength(2);
    const f = scriptedCtx(() => ({ ...exists, stderr: "Error from server (Forbidden): nope\n" }));
    await expect(apply(f.ctx, "kind: ConfigMap\n")).rejects.toThrow(/Forbidden/);
    expect(f.calls).toHaveLength(1);
  });
});

// addresses written by us, in the lab's kind-dual network (fd00:ca1d:101::/64)
describe("the IPv6 range of ours", () => {
  it("reads and writes IPv6 addresses as numbers, compressed or not", () => {
    expect(ipv6Big("fd00:ca1d:101::3")).toBe(ipv6Big("fd00:ca1d:0101:0:0:0:0:0003"));
    expect(ipv6Text((ipv6Big("fd00:ca1d:101::3") as bigint) + 0xedn)).toBe("fd00:ca1d:101::f0");
    expect(ipv6Text(0n)).toBe("::");
    expect(ipv6Big("::1")).toBe(1n);
    for (const bad of ["172.31.101.3", "fd00::1::2", "fd00:xyz::1", "1:2:3:4:5:6:7", "::ffff:1.2.3.4"])
      expect(ipv6Big(bad)).toBeNull();
  });

  it("LB_IP6_RANGE: the pool is START to STOP less one, the externalIP STOP; else one line saying why", () => {
    expect(parseLb6Range("fd00:ca1d:101::f0-fd00:ca1d:101::f8")).toEqual({
      start: "fd00:ca1d:101::f0",
      stop: "fd00:ca1d:101::f7",
      externalIp: "fd00:ca1d:101::f8",
    });
    expect(parseLb6Range(" FD00:CA1D:101::F0 - fd00:ca1d:101::f2 ")).toEqual({
      start: "fd00:ca1d:101::f0",
      stop: "fd00:ca1d:101::f1",
      externalIp: "fd00:ca1d:101::f2",
    });
    expect(parseLb6Range("172.31.101.240-172.31.101.248")).toMatch(
      /is not START-STOP \(two IPv6 addresses\)/,
    );
    expect(parseLb6Range("fd00::1-fd00::2")).toMatch(/must hold 3 to 256 addresses/);
    expect(parseLb6Range("fd00::1-fd00::1:0")).toMatch(/must hold 3 to 256 addresses/);
  });

  it("LB_IP_RANGE, its IPv4 twin, the same way", () => {
    expect(parseLbRange("172.31.100.240-172.31.100.248")).toEqual({
      start: "172.31.100.240",
      stop: "172.31.100.247",
      externalIp: "172.31.100.248",
    });
    expect(parseLbRange("fd00::1-fd00::9")).toMatch(
      /^LB_IP_RANGE=.* is not START-STOP \(two IPv4 addresses\)$/,
    );
    expect(parseLbRange("172.31.100.1-172.31.101.1")).toMatch(/must hold 3 to 256 addresses/);
    expect(parseLbRange("10.0.0.1-10.0.0.300")).toMatch(/is not START-STOP/);
  });

  it("inRange6 holds the pool's ends and nothing past them", () => {
    const pool = "fd00:ca1d:101::f0-fd00:ca1d:101::f7";
    expect(inRange6("fd00:ca1d:101::f0", pool)).toBe(true);
    expect(inRange6("fd00:ca1d:101::f7", pool)).toBe(true);
    expect(inRange6("fd00:ca1d:101::f8", pool)).toBe(false);
    expect(inRange6("fd00:ca1d:102::f1", pool)).toBe(false);
    expect(inRange6("172.31.101.240", pool)).toBe(false);
  });
});
