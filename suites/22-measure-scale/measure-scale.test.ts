/**
 * measure-scale's observation on a cluster SIMULATED BY US (no cluster here): the Services and EndpointSlices go
 * to a fake API server on loopback through the real api target (helpers/exec/api.ts), and three simulated agents
 * list them LAG_MS after the API has them (and drop them LAG_MS after they are deleted), in the formats the
 * agents print (`cilium-dbg service list -o json`, `bpf lb list`). Checked: one bulk create and one bulk delete
 * per point (no kubectl), the convergence it measures against the lag the agents were given, the observation's
 * own time beside it, and a replay of what it recorded giving the same record to the millisecond.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiExecutor, BULK_CONCURRENCY, kubeConfigHttp } from "../../helpers/exec/api.ts";
import { loadKubeConfig } from "../../helpers/exec/kube.ts";
import { RecordingExecutor } from "../../helpers/exec/record.ts";
import { ReplayExecutor } from "../../helpers/exec/replay.ts";
import type { ExecRequest, ExecResult, Executor } from "../../helpers/exec/types.ts";
import type { MeasureScaleRecord } from "../../helpers/measure/records.ts";
import { noSleep, nothingSpent, type RunContext } from "../../helpers/observe/context.ts";
import { BundleFiles, tallyEvidence } from "../../helpers/records/verify-evidence.ts";
import { FakeApiServer } from "../../helpers/testing/fake-api-server.ts";
import { observeScaling } from "./measure-scale.topic.ts";

type Json = Record<string, unknown>;
const LAG_MS = 300;
const NODES = ["n1", "n2", "n3"];
const SVC = "/api/v1/namespaces/cca-dp/services";
const SLICES = "/apis/discovery.k8s.io/v1/namespaces/cca-dp/endpointslices";

const fake = new FakeApiServer();
const dir = mkdtempSync(join(tmpdir(), "dpc-measure-scale-"));
/** When each Service appeared in (and left) the API, and its address and backends: sampled every 10 ms. */
const seen = new Map<string, { added: number; removed: number | null; ip: string; backends: string[] }>();
let sampler: NodeJS.Timeout | undefined;

beforeAll(async () => {
  await fake.start();
  for (const n of NODES)
    fake.put("/api/v1/namespaces/kube-system/pods", {
      metadata: { name: `cilium-${n}`, namespace: "kube-system", labels: { "k8s-app": "cilium" } },
      spec: { nodeName: n },
      status: { phase: "Running", podIP: "172.31.100.2", conditions: [{ type: "Ready", status: "True" }] },
    });
  sampler = setInterval(() => {
    const now = Date.now();
    const slices = new Map(
      fake
        .list(SLICES)
        .map((x) => [String(((x.metadata as Json).labels as Json)["kubernetes.io/service-name"]), x]),
    );
    const names = new Set<string>();
    for (const svc of fake.list(SVC)) {
      const n = String((svc.metadata as Json).name);
      names.add(n);
      const s = seen.get(n);
      const backends = ((slices.get(n)?.endpoints ?? []) as Json[]).map((e) =>
        String((e.addresses as string[])[0]),
      );
      const ip = String((svc.spec as Json).clusterIP);
      if (!s || s.removed !== null) seen.set(n, { added: now, removed: null, ip, backends });
      else Object.assign(s, { ip, backends });
    }
    for (const [n, s] of seen) if (!names.has(n) && s.removed === null) s.removed = now;
  }, 10);
});
afterAll(async () => {
  clearInterval(sampler);
  await fake.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** What every agent lists now: the Services the API has had for LAG_MS, and those deleted less than LAG_MS ago. */
function agentView(): { name: string; ip: string; backends: string[] }[] {
  const now = Date.now();
  const out: { name: string; ip: string; backends: string[] }[] = [];
  for (const [name, s] of seen)
    if (now - s.added >= LAG_MS && (s.removed === null || now - s.removed < LAG_MS))
      out.push({ name, ip: s.ip, backends: s.backends });
  return out;
}

const ok = (stdout: string): ExecResult => ({ stdout, stderr: "", exitCode: 0, durationMs: 2 });

/** The simulated cluster: api to the fake server, agents and node shells answered from agentView(). */
function cluster(): Executor {
  const api = new ApiExecutor(kubeConfigHttp(loadKubeConfig("fake", fake.kubeconfig)));
  return {
    run: async (req: ExecRequest) => {
      if (req.target.kind === "api") return api.run(req);
      const cmd = req.argv.join(" ");
      if (req.target.kind === "agent" && cmd === "cilium-dbg service list -o json")
        return ok(
          `${JSON.stringify(
            agentView().map((s, id) => ({
              spec: {
                id: id + 1,
                "frontend-address": { ip: s.ip, port: 80, protocol: "TCP", scope: "external" },
                flags: { type: "ClusterIP", namespace: "cca-dp", name: s.name },
                "backend-addresses": s.backends.map((ip) => ({ ip, port: 8080, state: "active" })),
              },
            })),
            null,
            2,
          )}\n`,
        );
      if (req.target.kind === "agent" && cmd === "cilium-dbg bpf lb list")
        return ok(
          [
            "SERVICE ADDRESS              BACKEND ADDRESS (REVNAT_ID) (SLOT)",
            ...agentView().flatMap((s, id) => [
              `${s.ip}:80/TCP (0)   0.0.0.0:0 (${id + 1}) (0) [ClusterIP, non-routable]`,
              ...s.backends.map((b, k) => `${s.ip}:80/TCP (${k + 1})   ${b}:8080/TCP (${id + 1}) (${k + 1})`),
            ]),
            "",
          ].join("\n"),
        );
      if (req.target.kind === "node" && cmd === "iptables-save")
        return ok("*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n");
      throw new Error(`simulated cluster: ${req.target.kind} ${cmd}`);
    },
  };
}

function context(exec: RunContext["exec"], recordedAt: () => number, replay: boolean): RunContext {
  return {
    exec,
    now: Date.now,
    recordedAt,
    spent: nothingSpent,
    mode: "kpr",
    ciliumMinor: "1.19",
    namespace: "cca-dp",
    replay,
    log: () => {},
    // the waits poll every second on a cluster: here every 100 ms
    sleep: replay ? noSleep : (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 100))),
    runStartedAt: "2026-12-03T10:00:00Z",
    earlierRecords: () => ({}),
  };
}

describe("measure-scale on a simulated cluster", () => {
  let record: MeasureScaleRecord;

  it("creates and deletes each point in bulk through the API, and measures the agents' lag as its convergence", async () => {
    fake.delayMs = 2;
    const exec = new RecordingExecutor(cluster(), dir, "measure-scale");
    const ctx = context(exec, () => exec.recordedAt() ?? Date.now(), false);
    const t0 = Date.now();
    const records = await observeScaling(ctx);
    const wall = Date.now() - t0;
    record = records.scaling?.record as MeasureScaleRecord;
    const calls = readFileSync(join(dir, "calls", "measure-scale.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { target: string; argv: string[]; exitCode: number });
    const api = calls.filter((c) => c.target === "api").map((c) => c.argv.slice(0, 2).join(" "));
    expect(api).toEqual([
      "get pods",
      ...[1, 2, 3].flatMap(() => ["bulk-apply --server-side", "bulk-delete services,endpointslices"]),
    ]);
    expect(calls.every((c) => c.target !== "kubectl" && c.exitCode === 0)).toBe(true);
    expect(fake.maxInflight).toBeLessThanOrEqual(BULK_CONCURRENCY);
    expect(fake.list(SVC)).toEqual([]);
    expect(record.points.map((p) => [p.services, p.lb_entries])).toEqual([
      [1, { n1: 5, n2: 5, n3: 5 }],
      [50, { n1: 250, n2: 250, n3: 250 }],
      [200, { n1: 1000, n2: 1000, n3: 1000 }],
    ]);
    for (const p of record.points) {
      // the agents show a Service LAG_MS after the API has it (the first ones during the bulk request, which the
      // times start after): converged no sooner, and within a few polls
      expect(p.converged_ms).toBeGreaterThanOrEqual(LAG_MS - (p.apply_ms ?? 0) - 20);
      expect(p.converged_ms).toBeLessThan(LAG_MS + 1500);
      expect(p.gone_ms).toBeGreaterThanOrEqual(LAG_MS - (p.delete_ms ?? 0) - 20);
      expect(p.gone_ms).toBeLessThan(LAG_MS + 1500);
      expect(p.programmed_ms).toBeGreaterThanOrEqual((p.apply_ms ?? 0) + (p.converged_ms ?? 0));
    }
    const sum = record.points.reduce((a, p) => a + (p.converged_ms ?? 0) + (p.gone_ms ?? 0), 0);
    expect(record.convergence_ms).toBe(sum);
    expect(record.suite_ms).toBeGreaterThan(sum);
    expect(record.suite_ms).toBeLessThanOrEqual(wall + 5);
    // and its evidence is at its places in what was recorded
    const items = Object.values(records.scaling?.evidence ?? {}).flat();
    expect(tallyEvidence(new BundleFiles(dir), items).faults).toEqual([]);
  }, 60_000);

  it("a replay of what it recorded gives the same record, to the millisecond (times are recorded times)", async () => {
    expect(record).toBeDefined();
    const exec = new ReplayExecutor(dir, "measure-scale");
    const again = await observeScaling(context(exec, () => exec.now(), true));
    expect(again.scaling?.record).toEqual(record);
  });
});
