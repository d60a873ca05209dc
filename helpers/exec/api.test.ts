/**
 * The `api` target through the real @kubernetes/client-node KubeConfig and Node's http, against a fake API
 * server on loopback WRITTEN BY US (helpers/testing/fake-api-server.ts): gets, watches that react to the
 * server's events at once (and resume or list again when the stream ends or breaks), deadlines, interrupts,
 * and the bulk requests with their bounded concurrency.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FakeApiServer } from "../testing/fake-api-server.ts";
import { ApiExecutor, BULK_CONCURRENCY, bounded, kubeConfigHttp } from "./api.ts";
import { API_BULK_APPLY, apiBulkDelete, apiGet, apiWatch, itemsOf } from "./api-argv.ts";
import { ClusterExecutor } from "./cluster.ts";
import { loadKubeConfig } from "./kube.ts";
import type { ExecRequest, WatchCondition } from "./types.ts";

const fake = new FakeApiServer();
beforeAll(() => fake.start());
afterAll(() => fake.stop());
beforeEach(() => fake.reset());

const api = () =>
  new ApiExecutor(kubeConfigHttp(loadKubeConfig("fake", fake.kubeconfig)), {
    progressEveryMs: 50,
    retryMs: 20,
  });
const PODS = "/api/v1/namespaces/cca-dp/pods";

type Json = Record<string, unknown>;
const pod = (name: string, ready: boolean, labels: Record<string, string> = { app: "web" }) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "cca-dp", labels },
  status: {
    phase: ready ? "Running" : "Pending",
    podIP: ready ? `10.244.1.${name.length}` : "",
    conditions: [{ type: "Ready", status: ready ? "True" : "False" }],
  },
});
const readyCount = (a: unknown) =>
  itemsOf(a).filter((p) =>
    ((p.status as Json | undefined)?.conditions as Json[] | undefined)?.some(
      (c) => c.type === "Ready" && c.status === "True",
    ),
  ).length;
const twoReady = (progress?: (l: string) => void): WatchCondition => ({
  until: (a) => readyCount(a) === 2,
  show: (a) => `${readyCount(a)}/2 ready`,
  ...(progress ? { progress } : {}),
});
/** Until `cond` holds (polled every 5 ms; the test's own timeout bounds it). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}
const watching = () => until(() => fake.watcherCount() > 0);
const run = (argv: string[], extra: Partial<ExecRequest> = {}) =>
  api().run({ target: { kind: "api" }, argv, ...extra });

describe("api get", () => {
  it("answers the API's JSON indented like kubectl -o json; the request carries the kubeconfig's token", async () => {
    fake.put(PODS, pod("web-a", true));
    fake.put(PODS, pod("other", true, { app: "other" }));
    const r = await run(apiGet({ resource: "pods", namespace: "cca-dp", selector: "app=web" }));
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^\{\n {4}"kind": "List",/);
    expect(itemsOf(JSON.parse(r.stdout)).map((p) => (p.metadata as Json).name)).toEqual(["web-a"]);
    expect(fake.requests).toEqual([`GET ${PODS}?labelSelector=app%3Dweb`]);
    const one = await run(apiGet({ resource: "pod", name: "web-a", namespace: "cca-dp" }));
    expect(JSON.parse(one.stdout).metadata.name).toBe("web-a");
  });

  it("an object that is not there: exit 1 and the API's reason, worded as kubectl words it", async () => {
    const r = await run(apiGet({ resource: "pod", name: "nope", namespace: "cca-dp" }));
    expect(r).toMatchObject({
      exitCode: 1,
      stdout: "",
      stderr: 'Error from server (NotFound): pods "nope" not found\n',
    });
  });

  it("an API server that never answers: the call ends at its deadline, names the request, and closes its connection", async () => {
    fake.silent = true;
    const before = fake.openConnections();
    const t0 = performance.now();
    const r = await run(apiGet({ resource: "nodes" }), { timeoutMs: 200 });
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(r.exitCode).toBeNull();
    expect(r.stderr).toBe("timed out after 200 ms: no answer from the API server to `get nodes`\n");
    await new Promise((r) => setTimeout(r, 100));
    expect(fake.openConnections()).toBeLessThanOrEqual(before);
  });

  it("a request the api target does not know is an error naming it", async () => {
    await expect(run(["get", "pods"])).rejects.toThrow(/pods are namespaced: name the namespace \(-n\)/);
    await expect(run(["get", "gadgets", "-n", "x"])).rejects.toThrow(/unknown resource "gadgets"/);
  });
});

describe("api watch", () => {
  it("lists, then reacts to the server's change at once: one list, one watch, the list at the moment the condition held", async () => {
    fake.put(PODS, pod("web-a", true));
    fake.put(PODS, pod("web-b", false));
    const pending = run(
      apiWatch({ resource: "pods", namespace: "cca-dp", selector: "app=web", until: "2 ready" }),
      { timeoutMs: 10_000, watch: twoReady() },
    );
    await watching();
    const t0 = performance.now();
    fake.put(PODS, pod("web-b", true));
    const r = await pending;
    // no poll interval between the change and the answer (a poll every 2 s would take up to 2 s)
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(r.exitCode).toBe(0);
    expect(readyCount(JSON.parse(r.stdout))).toBe(2);
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[0]).toBe(`GET ${PODS}?labelSelector=app%3Dweb`);
    expect(fake.requests[1]).toMatch(
      /^GET \/api\/v1\/namespaces\/cca-dp\/pods\?labelSelector=app%3Dweb&watch=true&resourceVersion=\d+&allowWatchBookmarks=true&timeoutSeconds=10$/,
    );
    // the watch it opened is closed once the condition held
    await until(() => fake.watcherCount() === 0);
  });

  it("a change between the list and the watch is not lost: the watch starts at the list's resourceVersion", async () => {
    fake.put(PODS, pod("web-a", true));
    fake.put(PODS, pod("web-b", false));
    // the change lands right after the list was answered, before the watch is opened
    let listed = 0;
    fake.afterList = () => {
      listed = fake.resourceVersion();
      fake.put(PODS, pod("web-b", true));
    };
    const r = await run(
      apiWatch({ resource: "pods", namespace: "cca-dp", selector: "app=web", until: "2 ready" }),
      { timeoutMs: 5000, watch: twoReady() },
    );
    expect(r.exitCode).toBe(0);
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]).toContain(`&resourceVersion=${listed}&`);
  });

  it("a condition that holds at the first list needs no watch", async () => {
    fake.put(PODS, pod("web-a", true));
    fake.put(PODS, pod("web-b", true));
    const r = await run(
      apiWatch({ resource: "pods", namespace: "cca-dp", selector: "app=web", until: "2 ready" }),
      {
        watch: twoReady(),
      },
    );
    expect(r.exitCode).toBe(0);
    expect(fake.requests).toHaveLength(1);
  });

  it("at its deadline: the last list seen, exit 1, what it waited for and what it saw; progress lines while it waits", async () => {
    fake.put(PODS, pod("web-a", false));
    const lines: string[] = [];
    const r = await run(
      apiWatch({ resource: "pods", namespace: "cca-dp", selector: "app=web", until: "2 ready" }),
      {
        timeoutMs: 300,
        watch: twoReady((l) => lines.push(l)),
      },
    );
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe("timed out after 300 ms waiting for 2 ready; last observation: 0/2 ready\n");
    expect(itemsOf(JSON.parse(r.stdout))).toHaveLength(1);
    expect(lines[0]).toMatch(/^still waiting for 2 ready \(0 s of 300 ms; last: 0\/2 ready\)$/);
  });

  it("a stream broken by 410 Gone is listed again, and the condition is judged on the new list", async () => {
    fake.put(PODS, pod("web-a", true));
    const pending = run(
      apiWatch({ resource: "pods", namespace: "cca-dp", selector: "app=web", until: "2 ready" }),
      { timeoutMs: 5000, watch: twoReady() },
    );
    await watching();
    // the watch is expired without the change: only a new list sees it
    fake.quietly(() => fake.put(PODS, pod("web-b", true)));
    fake.expireWatches();
    const r = await pending;
    expect(r.exitCode).toBe(0);
    expect(fake.requests.filter((q) => !q.includes("watch=true"))).toHaveLength(2);
  });

  it("a named watch answers the object itself once it exists, and removal shows as an empty list", async () => {
    setTimeout(() => fake.put(PODS, pod("holder", true, { app: "holder" })), 80);
    const r = await run(apiWatch({ resource: "pod", name: "holder", namespace: "cca-dp", until: "ready" }), {
      timeoutMs: 5000,
      watch: { until: (a) => readyCount(a) === 1, show: (a) => `${readyCount(a)} ready` },
    });
    expect(JSON.parse(r.stdout).metadata.name).toBe("holder");
    expect(fake.requests[0]).toBe(`GET ${PODS}?fieldSelector=metadata.name%3Dholder`);
    setTimeout(() => fake.remove(PODS, "holder"), 80);
    const gone = await run(
      apiWatch({ resource: "pod", name: "holder", namespace: "cca-dp", until: "gone" }),
      {
        timeoutMs: 5000,
        watch: { until: (a) => itemsOf(a).length === 0, show: (a) => `${itemsOf(a).length} left` },
      },
    );
    expect(JSON.parse(gone.stdout)).toMatchObject({ kind: "List", items: [] });
  });

  it("interrupted (the run's signal): ends at once, saying so, with what it saw", async () => {
    fake.put(PODS, pod("web-a", false));
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const r = await run(
      apiWatch({ resource: "pods", namespace: "cca-dp", selector: "app=web", until: "2 ready" }),
      {
        timeoutMs: 60_000,
        signal: ac.signal,
        watch: twoReady(),
      },
    );
    expect(r.exitCode).toBeNull();
    expect(r.stderr).toBe(
      "interrupted: the run was stopped while waiting for 2 ready; last observation: 0/2 ready\n",
    );
  });

  it("an API server that never answers the list: the wait ends at its deadline with no list, and its connection is closed", async () => {
    fake.silent = true;
    const before = fake.openConnections();
    const r = await run(apiWatch({ resource: "nodes", until: "every node Ready" }), {
      timeoutMs: 250,
      watch: twoReady(),
    });
    expect(r).toMatchObject({ exitCode: 1, stdout: "" });
    expect(r.stderr).toMatch(
      /^timed out after 250 ms waiting for every node Ready; last observation: no list/,
    );
    await new Promise((r) => setTimeout(r, 100));
    expect(fake.openConnections()).toBeLessThanOrEqual(before);
  });
});

describe("a stream's end", () => {
  it("a stream aborted by the line that arrives with its end leaves no error behind (keep-alive)", async () => {
    // a server WRITTEN HERE that sends its headers, one watch line and the end in one write: the line's
    // handler aborts the stream (as a watch does once its condition holds) while the response is complete.
    // Through http.request's own `signal` that destroyed the socket, already back in the keep-alive pool,
    // with an AbortError no one listened for: an uncaught exception (seen under load on 2 busy cores).
    const server = createServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(`${JSON.stringify({ type: "ERROR", object: { code: 410 } })}\n`);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const dir = mkdtempSync(join(tmpdir(), "dpc-api-end-"));
    const config = join(dir, "config");
    const port = (server.address() as { port: number }).port;
    writeFileSync(
      config,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: t\n  cluster:\n    server: http://127.0.0.1:${port}\n    insecure-skip-tls-verify: true\ncontexts:\n- name: t\n  context:\n    cluster: t\n    user: t\ncurrent-context: t\nusers:\n- name: t\n  user:\n    token: x\n`,
    );
    const uncaught: unknown[] = [];
    const listener = (err: unknown) => uncaught.push(err);
    // vitest's own listener would fail the run; this test counts what reaches the process instead
    const theirs = process.listeners("uncaughtException");
    process.removeAllListeners("uncaughtException");
    process.on("uncaughtException", listener);
    const http = kubeConfigHttp(loadKubeConfig("t", config));
    try {
      for (let i = 0; i < 20; i++) {
        const ac = new AbortController();
        const lines: string[] = [];
        await http.stream({
          path: "/api/v1/pods",
          query: { watch: "true" },
          signal: ac.signal,
          onLine: (line) => {
            lines.push(line);
            ac.abort();
          },
        });
        expect(lines).toHaveLength(1);
      }
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      process.off("uncaughtException", listener);
      for (const l of theirs) process.on("uncaughtException", l);
      http.close?.();
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(dir, { recursive: true, force: true });
    }
    expect(uncaught).toEqual([]);
  });
});

describe("api bulk requests", () => {
  const svc = (i: number) => ({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: `dpc-m-${i}`, namespace: "cca-dp", labels: { "dpc-measure": "scale" } },
    spec: { ports: [{ port: 80 }] },
  });
  const slice = (i: number) => ({
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name: `dpc-m-${i}-dpc`, namespace: "cca-dp", labels: { "dpc-measure": "scale" } },
    addressType: "IPv4",
    endpoints: [],
  });
  const list = (n: number) =>
    JSON.stringify({
      apiVersion: "v1",
      kind: "List",
      items: Array.from({ length: n }, (_, i) => [svc(i), slice(i)]).flat(),
    });

  it("bulk-apply: every object by server-side apply, at most BULK_CONCURRENCY in flight; applying again is no error", async () => {
    fake.delayMs = 5;
    const r = await run(API_BULK_APPLY, { stdin: list(30), timeoutMs: 30_000 });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe("bulk-apply: 60 of 60 objects applied\n");
    expect(itemsOf(JSON.parse(r.stdout))).toHaveLength(60);
    expect(fake.list("/api/v1/namespaces/cca-dp/services")).toHaveLength(30);
    expect(fake.list("/apis/discovery.k8s.io/v1/namespaces/cca-dp/endpointslices")).toHaveLength(30);
    expect(fake.maxInflight).toBeGreaterThan(1);
    expect(fake.maxInflight).toBeLessThanOrEqual(BULK_CONCURRENCY);
    expect(fake.requests[0]).toMatch(
      /^PATCH \/api\/v1\/namespaces\/cca-dp\/services\/dpc-m-0\?fieldManager=cilium-datapath-conformance&force=true$/,
    );
    expect((await run(API_BULK_APPLY, { stdin: list(30) })).exitCode).toBe(0);
  });

  it("bulk-apply: an object that cannot be applied is named in stderr (exit 1), the others are applied", async () => {
    const stdin = JSON.stringify({
      kind: "List",
      items: [svc(0), { apiVersion: "v9", kind: "Gadget", metadata: { name: "g", namespace: "cca-dp" } }],
    });
    const r = await run(API_BULK_APPLY, { stdin });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      /^bulk-apply: 1 of 2 objects applied\nGadget cca-dp\/g: api: bulk-apply does not know v9 Gadget/,
    );
    expect(fake.list("/api/v1/namespaces/cca-dp/services")).toHaveLength(1);
  });

  it("bulk-delete: EndpointSlices by one deletecollection; Services, where the API serves none (405), one by one, bounded", async () => {
    fake.delayMs = 5;
    await run(API_BULK_APPLY, { stdin: list(40) });
    fake.put("/api/v1/namespaces/cca-dp/services", {
      ...svc(99),
      metadata: { name: "keep", namespace: "cca-dp" },
    });
    fake.requests.length = 0;
    fake.maxInflight = 0;
    const r = await run(apiBulkDelete(["services", "endpointslices"], "cca-dp", "dpc-measure=scale"), {
      timeoutMs: 30_000,
    });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe(
      `bulk-delete: services: no deletecollection on this API server (405); 40 deleted one by one, ${BULK_CONCURRENCY} at a time; endpointslices: 40 deleted by deletecollection\n`,
    );
    expect(itemsOf(JSON.parse(r.stdout))).toHaveLength(80);
    expect(fake.list("/api/v1/namespaces/cca-dp/services").map((s) => (s.metadata as Json).name)).toEqual([
      "keep",
    ]);
    expect(fake.list("/apis/discovery.k8s.io/v1/namespaces/cca-dp/endpointslices")).toHaveLength(0);
    expect(fake.requests.filter((q) => q.startsWith("DELETE /apis/discovery.k8s.io"))).toEqual([
      "DELETE /apis/discovery.k8s.io/v1/namespaces/cca-dp/endpointslices?labelSelector=dpc-measure%3Dscale",
    ]);
    expect(fake.maxInflight).toBeLessThanOrEqual(BULK_CONCURRENCY);
    expect(fake.maxInflight).toBeGreaterThan(1);
  });

  it("bulk-delete: where the API serves deletecollection for Services too, one request per resource", async () => {
    fake.servicesWithoutDeleteCollection = false;
    await run(API_BULK_APPLY, { stdin: list(5) });
    fake.requests.length = 0;
    const r = await run(apiBulkDelete(["services", "endpointslices"], "cca-dp", "dpc-measure=scale"));
    expect(r.stderr).toBe(
      "bulk-delete: services: 5 deleted by deletecollection; endpointslices: 5 deleted by deletecollection\n",
    );
    expect(fake.requests).toHaveLength(2);
  });

  it("bounded() keeps the items' order and never runs more than n at once", async () => {
    let now = 0;
    let most = 0;
    const out = await bounded([5, 1, 4, 2, 3], 2, async (x) => {
      most = Math.max(most, ++now);
      await new Promise((r) => setTimeout(r, x));
      now--;
      return x * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30]);
    expect(most).toBe(2);
  });
});

describe("cluster routing of the api target", () => {
  it("ClusterExecutor sends api requests to its api executor, with the api default deadline when none is named", async () => {
    const seen: ExecRequest[] = [];
    const rec = {
      run: async (req: ExecRequest) => {
        seen.push(req);
        return { stdout: "{}", stderr: "", exitCode: 0, durationMs: 1 };
      },
    };
    const none = { run: async () => Promise.reject(new Error("not here")) };
    const c = new ClusterExecutor(
      { context: "kind-x", nodeShell: { kind: "docker", containerOf: (n) => n } },
      none,
      none,
      rec,
    );
    await c.run({ target: { kind: "api" }, argv: apiGet({ resource: "nodes" }) });
    expect(seen[0]?.timeoutMs).toBe(30_000);
    const without = new ClusterExecutor(
      { context: "kind-x", nodeShell: { kind: "docker", containerOf: (n) => n } },
      none,
      none,
    );
    await expect(without.run({ target: { kind: "api" }, argv: ["get", "nodes"] })).rejects.toThrow(
      "no API client for cluster context kind-x",
    );
  });
});
