// One file over 450 lines: the api target: every request the suite makes to the API server, over one client and one recording
/**
 * The `api` target: requests to the Kubernetes API made in this process instead of a kubectl process per call,
 * recorded and replayed like any command (its argv the pseudo-command of api-argv.ts, its stdout the API's
 * answer as JSON, indented like `kubectl -o json` so evidence quotes its lines at their place).
 *
 * The server, credentials and TLS come from @kubernetes/client-node's KubeConfig (the kubeconfig and context
 * kubectl would use: client certificates, tokens, exec plugins, proxies); the requests go through Node's own
 * http(s) with the agent and headers client-node builds. client-node 1.4's Watch is not used for the stream:
 * it hands back its AbortController only once the server has answered the request's headers, so a wait on an
 * API server that accepts and never answers (a paused control plane) could not be ended at its deadline.
 */
import { setMaxListeners } from "node:events";
import http from "node:http";
import https from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import {
  API_RESOURCES,
  type ApiCall,
  type ApiQuery,
  apiPath,
  apiResource,
  parseApiArgv,
  resourceOfObject,
} from "./api-argv.ts";
import { loadKubeConfig } from "./kube.ts";
import type { ExecRequest, ExecResult, Executor, WatchCondition } from "./types.ts";

/** An `api` call that names no deadline of its own (a get); waits and bulk requests name theirs. */
export const DEFAULT_API_TIMEOUT_MS = 30_000;
/** Requests in flight at once in a bulk-apply or bulk-delete. */
export const BULK_CONCURRENCY = 16;
/** How often a watch that is still waiting says so. */
export const WATCH_PROGRESS_MS = 10_000;
/** After a watch stream broke (the API server restarted), the pause before listing again. */
export const WATCH_RETRY_MS = 1000;
/** The field manager of bulk-apply's server-side apply. */
export const FIELD_MANAGER = "cilium-datapath-conformance";

/** What the executor needs of an HTTP client for the API (tests pass the real one against a fake server). */
export interface ApiHttp {
  request(o: {
    method: string;
    path: string;
    query?: Record<string, string>;
    body?: string;
    contentType?: string;
    signal: AbortSignal;
  }): Promise<{ status: number; text: string }>;
  /** A streamed GET (a watch): each line as it comes; settles when the stream ends or breaks. */
  stream(o: {
    path: string;
    query: Record<string, string>;
    signal: AbortSignal;
    onLine(line: string): void;
  }): Promise<void>;
  /** Closes the connections it keeps. */
  close?(): void;
  /** Resolves once the kubeconfig is loaded (a failure to load it is the first request's to report). */
  ready?(): Promise<void>;
}

/**
 * The connections to the API server are kept and reused (a bulk request is hundreds of requests: one TLS
 * handshake each, on the API server's side too, was most of their cost), through an agent with the TLS
 * material client-node read from the kubeconfig; behind a proxy, client-node's own agent.
 */
function keepAliveAgent(
  server: string,
  proxied: boolean,
  opts: https.RequestOptions,
): http.Agent | https.Agent | undefined {
  if (proxied) return opts.agent instanceof http.Agent ? opts.agent : undefined;
  if (server.startsWith("http:")) return new http.Agent({ keepAlive: true });
  return new https.Agent({
    keepAlive: true,
    ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
    ...(opts.cert !== undefined ? { cert: opts.cert } : {}),
    ...(opts.key !== undefined ? { key: opts.key } : {}),
    ...(opts.pfx !== undefined ? { pfx: opts.pfx } : {}),
    ...(opts.passphrase !== undefined ? { passphrase: opts.passphrase } : {}),
    ...(opts.rejectUnauthorized !== undefined ? { rejectUnauthorized: opts.rejectUnauthorized } : {}),
    ...(opts.servername !== undefined ? { servername: opts.servername } : {}),
  });
}

/**
 * The API server of a kubeconfig context, through client-node's credentials and Node's http(s). The
 * kubeconfig may still be loading (loadKubeConfig imports client-node on first use): the first request waits.
 */
export function kubeConfigHttp(config: KubeConfig | Promise<KubeConfig>): ApiHttp {
  // a kubeconfig that cannot be read fails the first request; until then its rejection is not unhandled
  if (config instanceof Promise) config.catch(() => {});
  let agent: http.Agent | https.Agent | undefined;
  const open = async (
    method: string,
    path: string,
    query: Record<string, string>,
    signal: AbortSignal,
    headers: Record<string, string | number> = {},
  ) => {
    const kc = await config;
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("the kubeconfig has no current cluster");
    // credentials per request (client-node refreshes an exec plugin's token), the connection kept
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    agent ??= keepAliveAgent(cluster.server, Boolean(cluster.proxyUrl), opts);
    const url = new URL(`${cluster.server.replace(/\/+$/, "")}${path}`);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const mod = url.protocol === "https:" ? https : http;
    const req = mod.request(url, {
      method,
      ...(agent ? { agent } : {}),
      ...(opts.auth ? { auth: opts.auth } : {}),
      headers: { ...(opts.headers ?? {}), Accept: "application/json", ...headers },
    });
    // Not http.request's own `signal`: aborting a request whose response is complete (a watch line that
    // settles the wait arrives with the stream's end) destroyed its socket, already back in the keep-alive
    // pool, with an AbortError nobody listened for: an uncaught exception. A complete response is left to end.
    let res: http.IncomingMessage | undefined;
    req.once("response", (r) => {
      res = r;
    });
    const onAbort = () => {
      if (res?.complete) return;
      req.destroy(Object.assign(new Error("The operation was aborted"), { name: "AbortError" }));
    };
    if (signal.aborted) onAbort();
    else {
      signal.addEventListener("abort", onAbort, { once: true });
      req.once("close", () => signal.removeEventListener("abort", onAbort));
    }
    return req;
  };
  return {
    ready: async () => {
      await Promise.resolve(config).catch(() => {});
    },
    close: () => agent?.destroy(),
    request: async (o) => {
      const body = o.body;
      const req = await open(
        o.method,
        o.path,
        o.query ?? {},
        o.signal,
        body === undefined
          ? {}
          : {
              "Content-Type": o.contentType ?? "application/json",
              "Content-Length": Buffer.byteLength(body),
            },
      );
      return new Promise((resolve, reject) => {
        req.on("error", reject);
        req.on("response", (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
          );
        });
        req.end(body);
      });
    },
    stream: async (o) => {
      const req = await open("GET", o.path, o.query, o.signal);
      return new Promise<void>((resolve, reject) => {
        let settled = false;
        const settle = (err?: unknown) => {
          if (settled) return;
          settled = true;
          if (err) reject(err);
          else resolve();
        };
        req.on("error", settle);
        req.on("response", (res) => {
          if (res.statusCode !== 200) {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () =>
              settle(new ApiStatusError(res.statusCode ?? 0, Buffer.concat(chunks).toString("utf8"))),
            );
            res.on("error", settle);
            return;
          }
          let buf = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => {
            buf += c;
            for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
              const line = buf.slice(0, i);
              buf = buf.slice(i + 1);
              if (line.trim() !== "") o.onLine(line);
            }
          });
          res.on("end", () => settle());
          res.on("error", settle);
          res.on("close", () => settle());
        });
        req.end();
      });
    },
  };
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});

/** The answer as a bundle keeps it: indented like `kubectl -o json`, so its lines can be quoted. */
export const showJson = (v: unknown) => `${JSON.stringify(v, null, 4)}\n`;

/** An answer other than 2xx, worded as kubectl words it: `Error from server (NotFound): pods "x" not found`. */
export class ApiStatusError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    let said = `HTTP ${status}${body.trim() ? `: ${body.trim().slice(0, 300)}` : ""}`;
    try {
      const s = obj(JSON.parse(body));
      if (typeof s.message === "string")
        said = `Error from server (${typeof s.reason === "string" && s.reason ? s.reason : status}): ${s.message}`;
    } catch {
      // not a Status: the body as it came
    }
    super(said);
    this.name = "ApiStatusError";
  }
}

const key = (o: Json) => {
  const m = obj(o.metadata);
  return `${String(m.namespace ?? "")}/${String(m.name ?? "")}`;
};

/** Runs `fn` over `items` with at most `n` in flight; results in the items' order. */
export async function bounded<T, R>(
  items: T[],
  n: number,
  fn: (t: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i] as T, i);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}

const abortableDelay = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });

interface Outcome {
  stdout: string;
  stderr: string;
  exitCode: number | null;
}

/**
 * Runs `api` requests on a cluster. Every call ends by its deadline (`timeoutMs`, default
 * DEFAULT_API_TIMEOUT_MS) or when the run is interrupted (`signal`), with a result that says which:
 * - get: the answer (exit 0); an error status worded as kubectl words it (exit 1); no answer in time (status
 *   lost, null);
 * - watch: lists, then watches from the list's resourceVersion, judging `req.watch.until` on the list at every
 *   change; answers the list at the moment the condition held (exit 0), or at the deadline the last list seen
 *   (exit 1, `timed out after … waiting for <until>; last observation: …`). A stream that ends is resumed, one
 *   that breaks (410 Gone, the API server restarting) is listed again;
 * - bulk-apply: server-side apply of every object of stdin (a List), BULK_CONCURRENCY at a time; the answers
 *   as a List, every failure named in stderr (exit 1 when any);
 * - bulk-delete: each resource by deletecollection; where the API does not serve it (405, Services before
 *   Kubernetes added it) the matching objects are listed and deleted BULK_CONCURRENCY at a time. Nothing waits
 *   for the objects to be gone: the caller waits for what it needs (the agents dropping them).
 */
export class ApiExecutor implements Executor {
  private readonly progressEveryMs: number;
  private readonly retryMs: number;

  constructor(
    private readonly api: ApiHttp,
    limits: { progressEveryMs?: number; retryMs?: number } = {},
  ) {
    this.progressEveryMs = limits.progressEveryMs ?? WATCH_PROGRESS_MS;
    this.retryMs = limits.retryMs ?? WATCH_RETRY_MS;
  }

  close(): Promise<void> {
    this.api.close?.();
    return Promise.resolve();
  }

  /** The API server of a kubeconfig context (the default kubeconfig, or a file). */
  static forContext(context?: string, kubeconfig?: string): ApiExecutor {
    return new ApiExecutor(kubeConfigHttp(loadKubeConfig(context, kubeconfig)));
  }

  async run(req: ExecRequest): Promise<ExecResult> {
    if (req.target.kind !== "api") throw new Error(`ApiExecutor cannot reach target ${req.target.kind}`);
    const call = parseApiArgv(req.argv);
    const said = req.argv.join(" ");
    const timeoutMs = req.timeoutMs ?? DEFAULT_API_TIMEOUT_MS;
    // loading the kubeconfig (client-node is imported on first use) is not the API server's time
    await this.api.ready?.();
    const t0 = performance.now();
    const ac = new AbortController();
    // a bulk request's requests in flight each listen on it
    setMaxListeners(BULK_CONCURRENCY + 8, ac.signal);
    let ended: "deadline" | "interrupted" | null = null;
    const timer = setTimeout(() => {
      ended ??= "deadline";
      ac.abort();
    }, timeoutMs);
    const onAbort = () => {
      ended ??= "interrupted";
      ac.abort();
    };
    if (req.signal?.aborted) onAbort();
    else req.signal?.addEventListener("abort", onAbort, { once: true });
    const why = () =>
      ended === "interrupted"
        ? `interrupted: the run was stopped while the API server answered \`${said}\`\n`
        : `timed out after ${timeoutMs} ms: no answer from the API server to \`${said}\`\n`;
    let out: Outcome;
    try {
      switch (call.verb) {
        case "get":
          out = { stdout: showJson(await this.get(call, ac.signal)), stderr: "", exitCode: 0 };
          break;
        case "watch":
          out = await this.watch(call, req.watch, ac.signal, timeoutMs, () => ended);
          break;
        case "bulk-apply":
          out = await this.bulkApply(req.stdin ?? "", ac.signal);
          break;
        case "bulk-delete":
          out = await this.bulkDelete(call, ac.signal);
          break;
      }
    } catch (err) {
      if (ended) out = { stdout: "", stderr: why(), exitCode: null };
      else if (err instanceof ApiStatusError) out = { stdout: "", stderr: `${err.message}\n`, exitCode: 1 };
      else
        out = {
          stdout: "",
          stderr: `the API server could not be asked \`${said}\`: ${err instanceof Error ? err.message : String(err)}\n`,
          exitCode: null,
        };
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener("abort", onAbort);
    }
    // a bulk request cut off by its deadline says so beside what it got done
    if (ended && call.verb.startsWith("bulk") && out.exitCode === 0)
      out = { ...out, stderr: `${out.stderr}${why()}`, exitCode: null };
    return { ...out, durationMs: performance.now() - t0 };
  }

  private async send(
    method: string,
    path: string,
    signal: AbortSignal,
    o: { query?: Record<string, string>; body?: string; contentType?: string } = {},
  ): Promise<Json> {
    const r = await this.api.request({ method, path, signal, ...o });
    if (r.status < 200 || r.status > 299) throw new ApiStatusError(r.status, r.text);
    try {
      return obj(JSON.parse(r.text));
    } catch {
      throw new Error(
        `${method} ${path}: the API server answered ${r.status} with no JSON: ${r.text.slice(0, 120)}`,
      );
    }
  }

  private listQuery(q: ApiQuery): Record<string, string> {
    const fields = [
      ...(q.fieldSelector ? [q.fieldSelector] : []),
      ...(q.name ? [`metadata.name=${q.name}`] : []),
    ];
    return {
      ...(q.selector ? { labelSelector: q.selector } : {}),
      ...(fields.length > 0 ? { fieldSelector: fields.join(",") } : {}),
    };
  }

  private get(q: ApiQuery, signal: AbortSignal): Promise<Json> {
    const r = apiResource(q.resource);
    if (q.name && !q.selector && !q.fieldSelector)
      return this.send("GET", apiPath(r, q.namespace, q.name), signal);
    const query = this.listQuery(q);
    return this.send("GET", apiPath(r, q.namespace), signal, { query });
  }

  private async watch(
    q: ApiQuery & { until: string },
    cond: WatchCondition | undefined,
    signal: AbortSignal,
    timeoutMs: number,
    ended: () => "deadline" | "interrupted" | null,
  ): Promise<Outcome> {
    const r = apiResource(q.resource);
    const path = apiPath(r, q.namespace);
    const query = this.listQuery(q);
    const until = cond?.until ?? (() => true);
    const show = cond?.show ?? ((a: unknown) => `${itemsCount(a)} object(s)`);
    const objects = new Map<string, Json>();
    let rv = "";
    let listKind = `${r.kind}List`;
    let listed = false;
    let last: unknown = null;
    let lastError = "";
    const answer = (): unknown => {
      const items = [...objects.values()].sort((a, b) => key(a).localeCompare(key(b)));
      if (q.name && items.length === 1) return items[0];
      return { apiVersion: r.apiVersion, kind: listKind, metadata: { resourceVersion: rv }, items };
    };
    const t0 = performance.now();
    const progress = cond?.progress
      ? setInterval(() => {
          const s = Math.round((performance.now() - t0) / 1000);
          cond.progress?.(
            `still waiting for ${q.until} (${s} s of ${fmtMs(timeoutMs)}; last: ${listed ? show(last) : `no list yet${lastError ? `: ${lastError}` : ""}`})`,
          );
        }, this.progressEveryMs)
      : undefined;
    const relist = async () => {
      const list = await this.send("GET", path, signal, { query });
      objects.clear();
      for (const item of Array.isArray(list.items) ? list.items : []) objects.set(key(obj(item)), obj(item));
      rv = String(obj(list.metadata).resourceVersion ?? "");
      if (typeof list.kind === "string") listKind = list.kind;
      listed = true;
      last = answer();
      return until(last);
    };
    try {
      let fresh = true;
      while (!signal.aborted) {
        if (fresh) {
          try {
            if (await relist()) return { stdout: showJson(last), stderr: "", exitCode: 0 };
          } catch (err) {
            if (signal.aborted) break;
            // no permission will not come by waiting; anything else (the API server restarting) may
            if (err instanceof ApiStatusError && (err.status === 401 || err.status === 403)) throw err;
            lastError = err instanceof Error ? err.message : String(err);
            await abortableDelay(this.retryMs, signal);
            continue;
          }
          fresh = false;
        }
        const inner = new AbortController();
        const stop = () => inner.abort();
        signal.addEventListener("abort", stop, { once: true });
        let held = false;
        let gone = false;
        try {
          await this.api.stream({
            path,
            query: {
              ...query,
              watch: "true",
              resourceVersion: rv,
              allowWatchBookmarks: "true",
              timeoutSeconds: String(Math.max(1, Math.min(300, Math.ceil(timeoutMs / 1000)))),
            },
            signal: inner.signal,
            onLine: (line) => {
              if (held || gone) return;
              let ev: Json;
              try {
                ev = obj(JSON.parse(line));
              } catch {
                return;
              }
              const o = obj(ev.object);
              const orv = obj(o.metadata).resourceVersion;
              if (ev.type === "ERROR") {
                // 410 Gone (the resourceVersion is too old) or another error: list again
                lastError = String(o.message ?? "watch error");
                gone = true;
                inner.abort();
                return;
              }
              if (typeof orv === "string") rv = orv;
              if (ev.type === "ADDED" || ev.type === "MODIFIED") objects.set(key(o), o);
              else if (ev.type === "DELETED") objects.delete(key(o));
              else return;
              last = answer();
              if (until(last)) {
                held = true;
                inner.abort();
              }
            },
          });
        } catch (err) {
          if (!held && !gone && !signal.aborted) {
            lastError = err instanceof Error ? err.message : String(err);
            gone = true;
            await abortableDelay(this.retryMs, signal);
          }
        } finally {
          signal.removeEventListener("abort", stop);
        }
        if (held) return { stdout: showJson(last), stderr: "", exitCode: 0 };
        // a stream the server ended (its timeout) resumes from the last resourceVersion; a broken one lists again
        if (gone) fresh = true;
      }
    } finally {
      if (progress) clearInterval(progress);
    }
    const seen = listed ? show(last) : `no list${lastError ? `: ${lastError}` : ""}`;
    const stdout = listed ? showJson(last) : "";
    if (ended() === "interrupted")
      return {
        stdout,
        stderr: `interrupted: the run was stopped while waiting for ${q.until}; last observation: ${seen}\n`,
        exitCode: null,
      };
    return {
      stdout,
      stderr: `timed out after ${fmtMs(timeoutMs)} waiting for ${q.until}; last observation: ${seen}\n`,
      exitCode: 1,
    };
  }

  private async bulkApply(stdin: string, signal: AbortSignal): Promise<Outcome> {
    let doc: unknown;
    try {
      doc = JSON.parse(stdin);
    } catch {
      throw new Error("bulk-apply reads a JSON List (or array, or one object) on stdin");
    }
    const d = obj(doc);
    const items = Array.isArray(doc) ? doc.map(obj) : Array.isArray(d.items) ? d.items.map(obj) : [d];
    const failures: string[] = [];
    const answers = await bounded(items, BULK_CONCURRENCY, async (item) => {
      const m = obj(item.metadata);
      const what = `${String(item.kind)} ${m.namespace ? `${String(m.namespace)}/` : ""}${String(m.name)}`;
      try {
        const r = resourceOfObject(String(item.apiVersion ?? ""), String(item.kind ?? ""));
        if (typeof m.name !== "string" || (r.namespaced && typeof m.namespace !== "string"))
          throw new Error("metadata.name (and for a namespaced kind metadata.namespace) must be set");
        return await this.send("PATCH", apiPath(r, m.namespace as string | undefined, m.name), signal, {
          query: { fieldManager: FIELD_MANAGER, force: "true" },
          body: JSON.stringify(item),
          contentType: "application/apply-patch+yaml",
        });
      } catch (err) {
        if (signal.aborted) throw err;
        failures.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
        return null;
      }
    });
    return this.bulkOutcome(
      answers.filter((a): a is Json => a !== null),
      failures,
      `bulk-apply: ${items.length - failures.length} of ${items.length} objects applied`,
    );
  }

  private async bulkDelete(
    call: Extract<ApiCall, { verb: "bulk-delete" }>,
    signal: AbortSignal,
  ): Promise<Outcome> {
    const answers: Json[] = [];
    const failures: string[] = [];
    const notes: string[] = [];
    for (const word of call.resources) {
      const r = apiResource(word);
      const query = { labelSelector: call.selector };
      try {
        const list = await this.send("DELETE", apiPath(r, call.namespace), signal, { query });
        const deleted = Array.isArray(list.items) ? list.items.map(obj) : [];
        answers.push(...deleted);
        notes.push(`${r.plural}: ${deleted.length} deleted by deletecollection`);
        continue;
      } catch (err) {
        if (!(err instanceof ApiStatusError) || err.status !== 405) {
          if (signal.aborted) throw err;
          failures.push(
            `${r.plural} -l ${call.selector}: ${err instanceof Error ? err.message : String(err)}`,
          );
          continue;
        }
      }
      // this API server serves no deletecollection for the resource: each object, a few at a time
      const list = await this.send("GET", apiPath(r, call.namespace), signal, { query });
      const names = (Array.isArray(list.items) ? list.items : []).map((i) =>
        String(obj(obj(i).metadata).name),
      );
      const each = await bounded(names, BULK_CONCURRENCY, async (name) => {
        try {
          return await this.send("DELETE", apiPath(r, call.namespace, name), signal);
        } catch (err) {
          if (signal.aborted) throw err;
          if (err instanceof ApiStatusError && err.status === 404) return null; // gone already
          failures.push(
            `${r.kind} ${call.namespace}/${name}: ${err instanceof Error ? err.message : String(err)}`,
          );
          return null;
        }
      });
      answers.push(...each.filter((a): a is Json => a !== null));
      notes.push(
        `${r.plural}: no deletecollection on this API server (405); ${names.length} deleted one by one, ${BULK_CONCURRENCY} at a time`,
      );
    }
    return this.bulkOutcome(answers, failures, `bulk-delete: ${notes.join("; ")}`);
  }

  private bulkOutcome(answers: Json[], failures: string[], summary: string): Outcome {
    const shown = failures.slice(0, 20);
    return {
      stdout: showJson({ apiVersion: "v1", kind: "List", items: answers }),
      stderr: `${summary}\n${shown.join("\n")}${shown.length ? "\n" : ""}${failures.length > shown.length ? `and ${failures.length - shown.length} more failures\n` : ""}`,
      exitCode: failures.length > 0 ? 1 : 0,
    };
  }
}

const fmtMs = (ms: number) => (ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`);

function itemsCount(a: unknown): number {
  const o = obj(a);
  return Array.isArray(o.items) ? o.items.length : Object.keys(o).length > 0 ? 1 : 0;
}

/** The resources the api target knows (for a one-line error elsewhere). */
export const API_RESOURCE_NAMES = API_RESOURCES.map((r) => r.plural);
