import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { API_BULK_APPLY, apiGet, apiWatch } from "./api-argv.ts";
import { ClusterExecutor } from "./cluster.ts";
import { RecordingExecutor } from "./record.ts";
import { ReplayExecutor } from "./replay.ts";
import type { ExecRequest, ExecResult, Executor } from "./types.ts";

const dir = mkdtempSync(join(tmpdir(), "dpc-rr-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An executor WRITTEN BY US for the test: answers with a counter so every call differs. */
function counting(): Executor & { seen: ExecRequest[] } {
  const seen: ExecRequest[] = [];
  return {
    seen,
    run: async (req) => {
      seen.push(req);
      return {
        stdout: `${req.argv.join(" ")} #${seen.length}\n`,
        stderr: seen.length === 2 ? "warn\n" : "",
        exitCode: seen.length === 3 ? 7 : 0,
        durationMs: 5,
      };
    },
  };
}

describe("record and replay", () => {
  it("records every call with its output, and replays them in order; the last recording repeats", async () => {
    let t = Date.parse("2026-12-02T09:00:00Z");
    const clock = () => {
      t += 100;
      return t;
    };
    const rec = new RecordingExecutor(counting(), dir, "topic", clock);
    const iptables: ExecRequest = { target: { kind: "node", node: "n1" }, argv: ["iptables-save"] };
    await rec.run(iptables);
    await rec.run(iptables);
    await rec.run({ target: { kind: "agent", node: "n1" }, argv: ["cilium-dbg", "status"] });
    const calls = readFileSync(join(dir, "calls", "topic.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(calls.map((c) => [c.seq, c.target, c.exitCode, c.at])).toEqual([
      [1, "node/n1", 0, "2026-12-02T09:00:00.100Z"],
      [2, "node/n1", 0, "2026-12-02T09:00:00.200Z"],
      [3, "agent/n1", 7, "2026-12-02T09:00:00.300Z"],
    ]);
    const replay = new ReplayExecutor(dir, "topic");
    expect((await replay.run(iptables)).stdout).toBe("iptables-save #1\n");
    expect(await replay.run(iptables)).toMatchObject({ stdout: "iptables-save #2\n", stderr: "warn\n" });
    expect(replay.spent()).toEqual({ count: 0, key: null });
    const repeated = await replay.run(iptables);
    expect(repeated.stdout).toBe("iptables-save #2\n");
    // the last recording repeats, counted as spent, at its recorded place and time
    expect(replay.spent()).toEqual({ count: 1, key: 'node/n1 ["iptables-save"]' });
    expect(repeated.recorded).toEqual({
      topic: "topic",
      seq: 2,
      stdoutFile: "raw/topic/002-iptables-save.txt",
      at: Date.parse("2026-12-02T09:00:00.200Z"),
    });
    expect(replay.now()).toBe(Date.parse("2026-12-02T09:00:00.200Z"));
    expect(replay.unused()).toEqual(['agent/n1 ["cilium-dbg","status"]']);
    await expect(
      replay.run({ target: { kind: "node", node: "n2" }, argv: ["iptables-save"] }),
    ).rejects.toThrow(/has no recording of node\/n2 \["iptables-save"\]/);
  });

  it("a topic the bundle never recorded is a one-line error", () => {
    expect(() => new ReplayExecutor(dir, "nope")).toThrow(
      /has no recorded calls for nope \(calls\/nope\.jsonl\)/,
    );
  });
});

describe("cluster routing", () => {
  const ok = async (): Promise<ExecResult> => ({ stdout: "", stderr: "", exitCode: 0, durationMs: 1 });
  it("kubectl gets the context, kind/k3d node shells are docker exec, existing node shells nsenter from a Pod", async () => {
    const local = counting();
    const pods = counting();
    const kind = new ClusterExecutor(
      {
        context: "kind-cdc-kpr",
        nodeShell: { kind: "docker", containerOf: (n) => n },
        outsideContainer: "curl-1",
      },
      pods,
      local,
    );
    await kind.run({ target: { kind: "kubectl" }, argv: ["get", "nodes"] });
    await kind.run({ target: { kind: "node", node: "cdc-kpr-worker" }, argv: ["iptables-save"] });
    await kind.run({ target: { kind: "outside" }, argv: ["curl", "http://172.18.0.3:30780/"] });
    await kind.run({ target: { kind: "agent", node: "cdc-kpr-worker" }, argv: ["cilium-dbg", "status"] });
    expect(local.seen.map((r) => r.argv.join(" "))).toEqual([
      "kubectl --context kind-cdc-kpr get nodes",
      "docker exec cdc-kpr-worker iptables-save",
      "docker exec curl-1 curl http://172.18.0.3:30780/",
    ]);
    expect(pods.seen[0]?.target).toEqual({ kind: "agent", node: "cdc-kpr-worker" });
    const existing = new ClusterExecutor(
      {
        context: "prod",
        nodeShell: { kind: "pod", namespace: "cca-dp-r1", podOf: (n) => `node-shell-${n}` },
      },
      pods,
      { run: ok },
    );
    await existing.run({ target: { kind: "node", node: "n1" }, argv: ["ss", "-Htln"] });
    expect(pods.seen[1]).toMatchObject({
      target: { kind: "pod", namespace: "cca-dp-r1", pod: "node-shell-n1" },
      argv: ["nsenter", "-t", "1", "-m", "-u", "-i", "-n", "-p", "--", "ss", "-Htln"],
    });
    await expect(existing.run({ target: { kind: "outside" }, argv: ["curl"] })).rejects.toThrow(
      /no client container outside the nodes/,
    );
  });
});

describe("replaying an older bundle: api calls answered from the kubectl commands it recorded", () => {
  /** WRITTEN BY US: a poll of web's Pods as an older bundle recorded it (kubectl -o json), then one apply. */
  async function olderBundle(): Promise<string> {
    const d = mkdtempSync(join(dir, "older-"));
    const podsList = (ready: number) =>
      `${JSON.stringify({ kind: "List", items: Array.from({ length: ready }, (_, i) => ({ metadata: { name: `web-${i}` } })) }, null, 4)}\n`;
    const answers = [podsList(0), podsList(1), podsList(2), "service/dpc-m-0 created\n"];
    let i = 0;
    const scripted: Executor = {
      run: async () => ({ stdout: answers[i++] ?? "", stderr: "", exitCode: 0, durationMs: 3 }),
    };
    let t = Date.parse("2026-12-02T09:00:00Z");
    const clock = () => {
      t += 1000;
      return t;
    };
    const rec = new RecordingExecutor(scripted, d, "topic", clock);
    const poll: ExecRequest = {
      target: { kind: "kubectl" },
      argv: ["-n", "cca-dp", "get", "pods", "-l", "app=web", "-o", "json"],
    };
    await rec.run(poll);
    await rec.run(poll);
    await rec.run(poll);
    await rec.run({ target: { kind: "kubectl" }, argv: ["apply", "-f", "-"], stdin: "{}" });
    return d;
  }
  const count = (a: unknown) => ((a as { items?: unknown[] }).items ?? []).length;
  const watchWeb = (n: number): ExecRequest => ({
    target: { kind: "api" },
    argv: apiWatch({ resource: "pods", namespace: "cca-dp", selector: "app=web", until: `${n} ready` }),
    watch: { until: (a) => count(a) === n, show: (a) => `${count(a)} Pods` },
  });

  it("a watch is served the poll's recordings in order until one meets its condition, at that call's place", async () => {
    const replay = new ReplayExecutor(await olderBundle(), "topic");
    const r = await replay.run(watchWeb(1));
    expect(count(JSON.parse(r.stdout))).toBe(1);
    expect(r.recorded).toMatchObject({
      seq: 2,
      stdoutFile: "raw/topic/002--n-cca-dp-get-pods-l-app-web-o-json.txt",
    });
    // the next read goes on from there, as the poll did
    const get = await replay.run({
      target: { kind: "api" },
      argv: apiGet({ resource: "pods", namespace: "cca-dp", selector: "app=web" }),
    });
    expect(count(JSON.parse(get.stdout))).toBe(2);
    expect(replay.spent().count).toBe(0);
    const bulk = await replay.run({ target: { kind: "api" }, argv: API_BULK_APPLY, stdin: "{}" });
    expect(bulk.stdout).toBe("service/dpc-m-0 created\n");
    expect(replay.unused()).toEqual([]);
  });

  it("a watch whose recordings never meet the condition gets the last one, counted as spent (the wait ends)", async () => {
    const replay = new ReplayExecutor(await olderBundle(), "topic");
    const r = await replay.run(watchWeb(3));
    expect(count(JSON.parse(r.stdout))).toBe(2);
    expect(replay.spent()).toEqual({
      count: 1,
      key: 'kubectl ["-n","cca-dp","get","pods","-l","app=web","-o","json"]',
    });
  });

  it("an api call with neither recording is NotRecorded, naming both forms", async () => {
    const replay = new ReplayExecutor(await olderBundle(), "topic");
    await expect(
      replay.run({ target: { kind: "api" }, argv: apiGet({ resource: "nodes" }) }),
    ).rejects.toThrow(
      /has no recording of api \["get","nodes"\] \(nor, as older bundles ran it, kubectl \["get","nodes","-o","json"\]\)/,
    );
  });

  it("a bundle that recorded the api call itself is served that, never the kubectl form", async () => {
    const d = mkdtempSync(join(dir, "newer-"));
    const rec = new RecordingExecutor(
      { run: async () => ({ stdout: '{"items":[]}\n', stderr: "", exitCode: 0, durationMs: 1 }) },
      d,
      "topic",
    );
    await rec.run(watchWeb(0));
    const replay = new ReplayExecutor(d, "topic");
    expect((await replay.run(watchWeb(0))).recorded?.stdoutFile).toMatch(
      /^raw\/topic\/001-watch-pods-n-cca-dp-l-app-web-until-0-ready\.txt$/,
    );
  });
});
