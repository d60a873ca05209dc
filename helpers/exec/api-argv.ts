/**
 * The `api` target's pseudo-commands: what a request to the Kubernetes API asked, as a short argv that a bundle
 * records and a replay matches (helpers/exec/api.ts runs them). They read like the kubectl command a user would
 * type for the same question, and name every input the answer depends on:
 *
 *   get <resource> [<name>] [-n NS] [-l SELECTOR] [--field-selector F]      one object, or a list
 *   watch <resource> [<name>] [-n NS] [-l SELECTOR] [--field-selector F] --until <words>
 *                                                                          list, then watch until a condition
 *   bulk-apply --server-side -f -                                          every object of stdin (a List)
 *   bulk-delete <resource>[,<resource>…] -n NS -l SELECTOR                  every object the selector matches
 *
 * Pure: no client, no I/O. Bundles recorded before the `api` target ran the same reads as `kubectl … -o json`;
 * `kubectlEquivalent` gives that command, so a replay of such a bundle still answers (helpers/exec/replay.ts).
 */

/** A resource type the suite asks the API for. */
export interface ApiResource {
  /** `/api/v1` or `/apis/<group>/<version>`. */
  base: string;
  apiVersion: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  /** Other words a command may name it by (kubectl's singular, short names, plural.group). */
  aliases: string[];
}

const core = (plural: string, kind: string, namespaced: boolean, aliases: string[]): ApiResource => ({
  base: "/api/v1",
  apiVersion: "v1",
  plural,
  kind,
  namespaced,
  aliases,
});
const grouped = (
  gv: string,
  plural: string,
  kind: string,
  aliases: string[],
  namespaced = true,
): ApiResource => ({
  base: `/apis/${gv}`,
  apiVersion: gv,
  plural,
  kind,
  namespaced,
  aliases: [...aliases, `${plural}.${gv.split("/")[0]}`],
});

export const API_RESOURCES: ApiResource[] = [
  core("pods", "Pod", true, ["pod", "po"]),
  core("services", "Service", true, ["service", "svc"]),
  core("nodes", "Node", false, ["node", "no"]),
  core("events", "Event", true, ["event", "ev"]),
  core("namespaces", "Namespace", false, ["namespace", "ns"]),
  core("configmaps", "ConfigMap", true, ["configmap", "cm"]),
  grouped("apps/v1", "daemonsets", "DaemonSet", ["daemonset", "ds"]),
  grouped("apps/v1", "deployments", "Deployment", ["deployment", "deploy"]),
  grouped("discovery.k8s.io/v1", "endpointslices", "EndpointSlice", ["endpointslice"]),
  grouped("cilium.io/v2", "ciliumendpoints", "CiliumEndpoint", ["ciliumendpoint", "cep"]),
  grouped(
    "cilium.io/v2",
    "ciliumloadbalancerippools",
    "CiliumLoadBalancerIPPool",
    ["ciliumloadbalancerippool", "ippools"],
    false,
  ),
];

export function apiResource(word: string): ApiResource {
  const r = API_RESOURCES.find((x) => x.plural === word || x.aliases.includes(word));
  if (!r)
    throw new Error(
      `api: unknown resource ${JSON.stringify(word)}; known: ${API_RESOURCES.map((x) => x.plural).join(", ")}`,
    );
  return r;
}

/** The resource of an object (its apiVersion and kind), for bulk-apply. */
export function resourceOfObject(apiVersion: string, kind: string): ApiResource {
  const r = API_RESOURCES.find((x) => x.apiVersion === apiVersion && x.kind === kind);
  if (!r)
    throw new Error(
      `api: bulk-apply does not know ${apiVersion} ${kind}; known: ${API_RESOURCES.map((x) => `${x.apiVersion} ${x.kind}`).join(", ")}`,
    );
  return r;
}

/** The URL path of a resource's collection, or of one object. */
export function apiPath(r: ApiResource, namespace?: string, name?: string): string {
  const ns = r.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  return `${r.base}${ns}/${r.plural}${name ? `/${encodeURIComponent(name)}` : ""}`;
}

export interface ApiQuery {
  /** The resource as the command names it (kept verbatim: it is part of the recorded key). */
  resource: string;
  name?: string;
  namespace?: string;
  selector?: string;
  fieldSelector?: string;
}

export type ApiCall =
  | ({ verb: "get" } & ApiQuery)
  | ({ verb: "watch"; until: string } & ApiQuery)
  | { verb: "bulk-apply" }
  | { verb: "bulk-delete"; resources: string[]; namespace: string; selector: string };

function queryArgv(q: ApiQuery): string[] {
  return [
    q.resource,
    ...(q.name ? [q.name] : []),
    ...(q.namespace ? ["-n", q.namespace] : []),
    ...(q.selector ? ["-l", q.selector] : []),
    ...(q.fieldSelector ? ["--field-selector", q.fieldSelector] : []),
  ];
}

/** `get <resource> [<name>] [-n NS] [-l SEL] [--field-selector F]` */
export const apiGet = (q: ApiQuery): string[] => ["get", ...queryArgv(q)];
/** `watch … --until <words>`: the words say what the condition is (the caller passes it as a function). */
export const apiWatch = (q: ApiQuery & { until: string }): string[] => [
  "watch",
  ...queryArgv(q),
  "--until",
  q.until,
];
export const API_BULK_APPLY = ["bulk-apply", "--server-side", "-f", "-"];
export const apiBulkDelete = (resources: string[], namespace: string, selector: string): string[] => [
  "bulk-delete",
  resources.join(","),
  "-n",
  namespace,
  "-l",
  selector,
];

const bad = (argv: string[], why: string) =>
  new Error(`api: \`${argv.join(" ")}\` is not a request the api target knows: ${why}`);

/** The request an argv stands for; anything else is an error naming it. */
export function parseApiArgv(argv: string[]): ApiCall {
  const [verb, ...rest] = argv;
  if (verb === "bulk-apply") {
    if (rest.join(" ") !== "--server-side -f -") throw bad(argv, "bulk-apply takes --server-side -f -");
    return { verb };
  }
  const opts: Record<string, string> = {};
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i] as string;
    if (w === "-n" || w === "-l" || w === "--field-selector" || w === "--until") {
      const v = rest[i + 1];
      if (v === undefined) throw bad(argv, `${w} needs a value`);
      if (opts[w] !== undefined) throw bad(argv, `${w} given twice`);
      opts[w] = v;
      i++;
    } else if (w.startsWith("-")) throw bad(argv, `unknown option ${w}`);
    else positional.push(w);
  }
  if (verb === "bulk-delete") {
    const [resources] = positional;
    if (!resources || positional.length !== 1 || !opts["-n"] || !opts["-l"] || opts["--until"])
      throw bad(argv, "bulk-delete takes <resource>[,<resource>] -n NS -l SELECTOR");
    const list = resources.split(",");
    for (const r of list) apiResource(r);
    return { verb, resources: list, namespace: opts["-n"], selector: opts["-l"] };
  }
  if (verb !== "get" && verb !== "watch")
    throw bad(argv, "the verbs are get, watch, bulk-apply and bulk-delete");
  const [resource, name, ...more] = positional;
  if (!resource || more.length > 0) throw bad(argv, `${verb} takes <resource> [<name>]`);
  const r = apiResource(resource);
  if (r.namespaced && !opts["-n"]) throw bad(argv, `${r.plural} are namespaced: name the namespace (-n)`);
  const q: ApiQuery = {
    resource,
    ...(name ? { name } : {}),
    ...(opts["-n"] ? { namespace: opts["-n"] } : {}),
    ...(opts["-l"] ? { selector: opts["-l"] } : {}),
    ...(opts["--field-selector"] ? { fieldSelector: opts["--field-selector"] } : {}),
  };
  if (verb === "watch") {
    if (!opts["--until"]) throw bad(argv, "watch needs --until <what it waits for>");
    return { verb, until: opts["--until"], ...q };
  }
  if (opts["--until"]) throw bad(argv, "--until belongs to watch");
  return { verb, ...q };
}

/**
 * The kubectl command the suite ran for the same question before the `api` target existed, as older bundles
 * recorded it (argv after `kubectl --context C`): a get or a watch was `[-n NS] get <resource> [<name>] [-l SEL]
 * [--field-selector F] -o json` (a watch polled it), a bulk-apply `apply -f -`, a bulk-delete `-n NS delete
 * <resources> -l SEL --wait=true`.
 */
export function kubectlEquivalent(call: ApiCall): string[] {
  switch (call.verb) {
    case "get":
    case "watch":
      return [
        ...(call.namespace ? ["-n", call.namespace] : []),
        "get",
        call.resource,
        ...(call.name ? [call.name] : []),
        ...(call.selector ? ["-l", call.selector] : []),
        ...(call.fieldSelector ? ["--field-selector", call.fieldSelector] : []),
        "-o",
        "json",
      ];
    case "bulk-apply":
      return ["apply", "-f", "-"];
    case "bulk-delete":
      return ["-n", call.namespace, "delete", call.resources.join(","), "-l", call.selector, "--wait=true"];
  }
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});

/**
 * The objects of an answer: a list's items, or the one object a named get or watch answers (none when it
 * answered an empty list: the object does not exist).
 */
export function itemsOf(answer: unknown): Json[] {
  const a = obj(answer);
  if (Array.isArray(a.items)) return a.items.map(obj);
  return Object.keys(a).length > 0 ? [a] : [];
}
