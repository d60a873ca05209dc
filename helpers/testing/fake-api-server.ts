/**
 * A fake Kubernetes API server on loopback, WRITTEN BY US for the tests of the `api` target: objects kept in
 * memory per collection, lists with label (equality) and field (metadata.name) selectors and a resourceVersion,
 * watches streamed as the API server streams them (one JSON event a line; from a resourceVersion, the events
 * after it first, as the API server does; ERROR 410 on demand), server-side apply (PATCH application/apply-patch+yaml creates or replaces), DELETE of one object and
 * of a collection (Services can be made to answer 405, as before Kubernetes served it). It counts requests and
 * the most in flight at once, and can accept connections and never answer (a paused API server).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { API_RESOURCES } from "../exec/api-argv.ts";

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});
const PLURALS = new Set(API_RESOURCES.map((r) => r.plural));

interface Watcher {
  collection: string;
  selector: string;
  field: string;
  res: ServerResponse;
}

function matches(o: Json, selector: string, field: string): boolean {
  const labels = obj(obj(o.metadata).labels);
  for (const term of selector.split(",").filter(Boolean)) {
    const [k, v] = term.split("=");
    if (labels[k as string] !== v) return false;
  }
  for (const term of field.split(",").filter(Boolean)) {
    const [k, v] = term.split("=");
    if (k === "metadata.name" && obj(o.metadata).name !== v) return false;
  }
  return true;
}

export class FakeApiServer {
  private server!: Server;
  private readonly sockets = new Set<Socket>();
  private readonly store = new Map<string, Map<string, Json>>();
  private readonly watchers = new Set<Watcher>();
  /** Every change, in order: a watch from a resourceVersion is sent the changes after it first. */
  private readonly history: { collection: string; rv: number; type: string; object: Json }[] = [];
  private rv = 100;
  private inflight = 0;
  dir = "";
  kubeconfig = "";
  /** Every request: `METHOD path?query`. */
  readonly requests: string[] = [];
  maxInflight = 0;
  /** Accept connections and never answer. */
  silent = false;
  /** Services answer 405 to a collection DELETE. */
  servicesWithoutDeleteCollection = true;
  /** Each answer waits this long (so concurrent requests overlap). */
  delayMs = 0;
  /** Called once, right after the next list has been answered (a change between a list and its watch). */
  afterList: (() => void) | null = null;
  private silentChanges = false;
  /** The token every request must carry. */
  readonly token = "t0ken";

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on("connection", (s) => {
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
    });
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", () => r()));
    const port = (this.server.address() as { port: number }).port;
    this.dir = mkdtempSync(join(tmpdir(), "dpc-fake-api-"));
    this.kubeconfig = join(this.dir, "config");
    writeFileSync(
      this.kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: http://127.0.0.1:${port}\n    insecure-skip-tls-verify: true\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\ncurrent-context: fake\nusers:\n- name: fake\n  user:\n    token: ${this.token}\n`,
    );
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** The newest resourceVersion (a list answered now carries it). */
  resourceVersion(): number {
    return this.rv;
  }

  /** Open connections (a client that gave up must have closed its own). */
  openConnections(): number {
    return this.sockets.size;
  }

  reset(): void {
    this.store.clear();
    this.history.length = 0;
    this.requests.length = 0;
    this.maxInflight = 0;
    this.silent = false;
    this.delayMs = 0;
    this.servicesWithoutDeleteCollection = true;
    this.afterList = null;
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
  }

  private coll(path: string): Map<string, Json> {
    let m = this.store.get(path);
    if (!m) {
      m = new Map();
      this.store.set(path, m);
    }
    return m;
  }

  /** Adds or replaces an object in a collection (`/api/v1/namespaces/ns/pods`), telling the watchers. */
  put(collection: string, o: Json): Json {
    const c = this.coll(collection);
    const name = String(obj(o.metadata).name);
    const type = c.has(name) ? "MODIFIED" : "ADDED";
    const stored = { ...o, metadata: { ...obj(o.metadata), resourceVersion: String(++this.rv) } };
    c.set(name, stored);
    this.notify(collection, type, stored);
    return stored;
  }

  remove(collection: string, name: string): Json | null {
    const c = this.coll(collection);
    const o = c.get(name);
    if (!o) return null;
    c.delete(name);
    const gone = { ...o, metadata: { ...obj(o.metadata), resourceVersion: String(++this.rv) } };
    this.notify(collection, "DELETED", gone);
    return gone;
  }

  list(collection: string): Json[] {
    return [...this.coll(collection).values()];
  }

  watcherCount(): number {
    return this.watchers.size;
  }

  /** Every open watch gets ERROR 410 Gone and its stream ends (a compacted resourceVersion). */
  expireWatches(): void {
    for (const w of this.watchers) {
      w.res.end(
        `${JSON.stringify({ type: "ERROR", object: { kind: "Status", status: "Failure", reason: "Expired", code: 410, message: "too old resource version" } })}\n`,
      );
    }
    this.watchers.clear();
  }

  /** Changes made by `fn` reach no watch and no history (as if compacted away): only a new list sees them. */
  quietly(fn: () => void): void {
    this.silentChanges = true;
    try {
      fn();
    } finally {
      this.silentChanges = false;
    }
  }

  private notify(collection: string, type: string, o: Json): void {
    if (this.silentChanges) return;
    this.history.push({ collection, rv: this.rv, type, object: o });
    for (const w of this.watchers)
      if (w.collection === collection && matches(o, w.selector, w.field))
        w.res.write(`${JSON.stringify({ type, object: o })}\n`);
  }

  private status(res: ServerResponse, code: number, reason: string, message: string): void {
    res.statusCode = code;
    res.setHeader("Content-Type", "application/json");
    res.end(JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", reason, message, code }));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    this.requests.push(`${req.method} ${url.pathname}${url.search}`);
    if (this.silent) return;
    if (req.headers.authorization !== `Bearer ${this.token}`)
      return this.status(res, 401, "Unauthorized", "no or wrong token");
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const segs = url.pathname.split("/").filter(Boolean);
    const last = segs.at(-1) ?? "";
    const collection = PLURALS.has(last) ? url.pathname : `/${segs.slice(0, -1).join("/")}`;
    const name = PLURALS.has(last) ? null : last;
    const plural = collection.split("/").at(-1) ?? "";
    const selector = url.searchParams.get("labelSelector") ?? "";
    const field = url.searchParams.get("fieldSelector") ?? "";
    if (req.method === "GET" && url.searchParams.get("watch") === "true") {
      res.statusCode = 200;
      res.setHeader("Content-Type", "application/json");
      res.flushHeaders();
      const w: Watcher = { collection, selector, field, res };
      const from = Number(url.searchParams.get("resourceVersion") ?? "0");
      for (const e of this.history)
        if (e.collection === collection && e.rv > from && matches(e.object, selector, field))
          res.write(`${JSON.stringify({ type: e.type, object: e.object })}\n`);
      this.watchers.add(w);
      res.on("close", () => this.watchers.delete(w));
      return;
    }
    this.inflight++;
    this.maxInflight = Math.max(this.maxInflight, this.inflight);
    try {
      if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
      res.setHeader("Content-Type", "application/json");
      const c = this.coll(collection);
      if (req.method === "GET" && name === null) {
        const items = [...c.values()].filter((o) => matches(o, selector, field));
        res.end(
          JSON.stringify({
            kind: "List",
            apiVersion: "v1",
            metadata: { resourceVersion: String(this.rv) },
            items,
          }),
        );
        const after = this.afterList;
        this.afterList = null;
        after?.();
        return;
      }
      if (req.method === "GET" && name !== null) {
        const o = c.get(name);
        if (!o) return this.status(res, 404, "NotFound", `${plural} "${name}" not found`);
        res.end(JSON.stringify(o));
        return;
      }
      if (req.method === "PATCH" && name !== null) {
        if (req.headers["content-type"] !== "application/apply-patch+yaml")
          return this.status(res, 415, "UnsupportedMediaType", "not an apply patch");
        if (url.searchParams.get("fieldManager") === null)
          return this.status(res, 422, "Invalid", "fieldManager is required for apply requests");
        const o = obj(JSON.parse(body));
        const prev = c.get(name);
        const spec = obj(o.spec);
        const assigned =
          plural === "services"
            ? {
                spec: {
                  ...spec,
                  clusterIP: String(obj(prev?.spec).clusterIP ?? `10.96.${this.rv % 250}.${c.size % 250}`),
                },
              }
            : {};
        res.end(JSON.stringify(this.put(collection, { ...o, ...assigned })));
        return;
      }
      if (req.method === "DELETE" && name !== null) {
        const gone = this.remove(collection, name);
        if (!gone) return this.status(res, 404, "NotFound", `${plural} "${name}" not found`);
        res.end(JSON.stringify(gone));
        return;
      }
      if (req.method === "DELETE" && name === null) {
        if (plural === "services" && this.servicesWithoutDeleteCollection)
          return this.status(
            res,
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
          );
        const gone = [...c.values()]
          .filter((o) => matches(o, selector, field))
          .map((o) => this.remove(collection, String(obj(o.metadata).name)));
        res.end(JSON.stringify({ kind: "List", apiVersion: "v1", metadata: {}, items: gone }));
        return;
      }
      this.status(res, 405, "MethodNotAllowed", `${req.method} ${url.pathname}`);
    } finally {
      this.inflight--;
    }
  }
}
