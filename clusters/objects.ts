/**
 * Every object of a cluster by name, before and after a run of the existing provider: "leave the cluster
 * exactly as it was found" checked by kind/namespace/name, never by counts. `kubectl api-resources --verbs=list
 * -o name` lists every listable type (built-in, CRDs, aggregated APIs); one `kubectl get <all of them> -A -o
 * json` reads them (kept in memory as names and the few fields the classification needs: nothing of a Secret's
 * or ConfigMap's data is kept or written). Each difference is then classified:
 *
 * - ours: the run namespace and everything in it, the Lease, anything labelled part-of the suite — must be none;
 * - cilium: CiliumIdentity objects of the run's Pods — Cilium's operator collects them later (leftovers.ts);
 * - churn, by a named rule: Events (written by every controller; kube-apiserver drops them after --event-ttl,
 *   1 h by default), Leases in kube-node-lease (kubelet heartbeats) and kube-system (leader election, and one
 *   apiserver-<id> Lease per API server start), objects a controller that still exists made or replaced
 *   (ownerReferences with controller=true: a DaemonSet's Pod, a Deployment's ReplicaSet, a Service's
 *   EndpointSlice), CiliumIdentities of other namespaces' Pods (they follow those Pods);
 * - unexplained: anything else — shown, never hidden.
 */
import type { ExecResult, Executor } from "../helpers/exec/types.ts";
import { LEASE_NAME } from "./lease.ts";
import { isRunNamespace } from "./leftovers.ts";

type Json = Record<string, unknown>;
const o = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});
const arr = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);

export interface ObjectRef {
  /** API group ("" for core). */
  group: string;
  kind: string;
  namespace: string;
  name: string;
  /** The controller owner (ownerReferences[controller=true]), if any. */
  controller?: { kind: string; name: string };
  /** The few labels the classification reads (part-of, io.kubernetes.pod.namespace). */
  labels?: Record<string, string>;
  created?: string;
}

export interface ObjectSnapshot {
  takenAt: string;
  context: string;
  /** Resource types read. */
  resources: string[];
  objects: ObjectRef[];
  /** Types that could not be listed (an aggregated API that is down, RBAC), with kubectl's reason. */
  notes: string[];
}

export const objectKey = (r: ObjectRef): string => `${r.group || "core"}/${r.kind}/${r.namespace}/${r.name}`;
export const objectName = (r: ObjectRef): string =>
  `${r.kind}${r.group ? `.${r.group}` : ""} ${r.namespace ? `${r.namespace}/` : ""}${r.name}`;

const KEPT_LABELS = ["app.kubernetes.io/part-of", "io.kubernetes.pod.namespace"];

/** One object of a `kubectl get … -o json` List as an ObjectRef. */
export function objectRef(item: unknown): ObjectRef {
  const i = o(item);
  const meta = o(i.metadata);
  const apiVersion = String(i.apiVersion ?? "");
  const group = apiVersion.includes("/") ? (apiVersion.split("/")[0] as string) : "";
  const ctrl = arr(meta.ownerReferences).find((r) => r.controller === true);
  const labels = Object.fromEntries(
    Object.entries(o(meta.labels)).filter(([k]) => KEPT_LABELS.includes(k)) as [string, string][],
  );
  return {
    group,
    kind: String(i.kind ?? ""),
    namespace: String(meta.namespace ?? ""),
    name: String(meta.name ?? ""),
    ...(ctrl ? { controller: { kind: String(ctrl.kind ?? ""), name: String(ctrl.name ?? "") } } : {}),
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
    ...(meta.creationTimestamp ? { created: String(meta.creationTimestamp) } : {}),
  };
}

/** `kubectl api-resources --verbs=list -o name`: one resource a line (partial output when an API is down). */
export function parseApiResources(stdout: string): string[] {
  return stdout
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => /^[a-z0-9.-]+$/.test(l));
}

const lastLine = (r: ExecResult) => (r.stderr.trim().split("\n").pop() ?? "").slice(0, 200);

/**
 * Reads every object of the cluster by name. One `kubectl get` for all types; when that call fails as a whole
 * (one type forbidden or unavailable makes kubectl exit non-zero, and its partial output may not be JSON), each
 * type is read on its own and the ones that fail are named in `notes`.
 */
export async function snapshotObjects(
  exec: Executor,
  context: string,
  now: () => Date = () => new Date(),
): Promise<ObjectSnapshot> {
  const k = (argv: string[], timeoutMs = 120_000) =>
    exec.run({ target: { kind: "local" }, argv: ["kubectl", "--context", context, ...argv], timeoutMs });
  const notes: string[] = [];
  const api = await k(["api-resources", "--verbs=list", "-o", "name"]);
  const resources = parseApiResources(api.stdout);
  if (api.exitCode !== 0)
    notes.push(`api-resources exited ${api.exitCode ?? "(no status)"}: ${lastLine(api)}`);
  if (resources.length === 0) throw new Error(`kubectl api-resources listed nothing: ${lastLine(api)}`);
  const parse = (stdout: string): ObjectRef[] => arr(o(JSON.parse(stdout)).items).map(objectRef);
  let objects: ObjectRef[] = [];
  const all = await k(["get", resources.join(","), "-A", "-o", "json"], 600_000);
  let whole = false;
  if (all.exitCode === 0) {
    try {
      objects = parse(all.stdout);
      whole = true;
    } catch {
      whole = false;
    }
  }
  if (!whole) {
    for (const r of resources) {
      const one = await k(["get", r, "-A", "-o", "json"]);
      try {
        if (one.exitCode !== 0) throw new Error(lastLine(one));
        objects.push(...parse(one.stdout));
      } catch (err) {
        notes.push(`${r}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
  // the same object listed through two resources (core Events and events.k8s.io Events) counts once per group
  const seen = new Set<string>();
  objects = objects.filter((x) => {
    if (seen.has(objectKey(x))) return false;
    seen.add(objectKey(x));
    return true;
  });
  return { takenAt: now().toISOString(), context, resources, objects, notes };
}

export type Class = "ours" | "cilium" | "churn" | "unexplained";

export interface Classified {
  ref: ObjectRef;
  change: "added" | "removed";
  class: Class;
  /** The rule that put it there, in words. */
  rule: string;
}

export interface ObjectComparison {
  before: { takenAt: string; count: number };
  after: { takenAt: string; count: number };
  differences: Classified[];
  /** No difference of ours and none unexplained (Cilium's and churn listed, allowed). */
  clean: boolean;
}

/** Why one difference is what it is (the first rule that matches). */
export function classify(
  ref: ObjectRef,
  change: "added" | "removed",
  after: Set<string>,
): Omit<Classified, "ref" | "change"> {
  const partOf = ref.labels?.["app.kubernetes.io/part-of"] === "cilium-datapath-conformance";
  if (ref.kind === "Namespace" && isRunNamespace(ref.name))
    return { class: "ours", rule: "the run namespace" };
  if (isRunNamespace(ref.namespace)) {
    if (ref.kind === "Event") return { class: "ours", rule: "an Event in the run namespace (goes with it)" };
    return { class: "ours", rule: "an object in the run namespace" };
  }
  if (ref.kind === "Lease" && ref.namespace === "default" && ref.name === LEASE_NAME)
    return { class: "ours", rule: "the run Lease" };
  if (partOf)
    return { class: "ours", rule: "labelled app.kubernetes.io/part-of=cilium-datapath-conformance" };
  if (ref.kind === "CiliumIdentity") {
    const ns = ref.labels?.["io.kubernetes.pod.namespace"];
    if (isRunNamespace(ns))
      return {
        class: "cilium",
        rule: `the identity of the run's Pods (namespace ${ns}): cilium-operator's identity GC deletes it later`,
      };
    return {
      class: "churn",
      rule: `an identity of ${ns ? `namespace ${ns}'s` : "other"} Pods (follows those Pods)`,
    };
  }
  if (ref.kind === "Event")
    return {
      class: "churn",
      rule: "Events: written by controllers, dropped after kube-apiserver's --event-ttl (1 h)",
    };
  if (ref.kind === "Lease" && ref.namespace === "kube-node-lease")
    return { class: "churn", rule: "a node heartbeat Lease" };
  if (ref.kind === "Lease" && ref.namespace === "kube-system")
    return {
      class: "churn",
      rule: "a kube-system Lease (leader election; apiserver-<id> per API server start)",
    };
  if (ref.controller) {
    const owner = [...after].some((k) =>
      k.endsWith(`/${ref.controller?.kind}/${ref.namespace}/${ref.controller?.name}`),
    );
    if (owner)
      return {
        class: "churn",
        rule: `${change === "added" ? "made" : "replaced"} by its controller ${ref.controller.kind}/${ref.controller.name}, which still exists`,
      };
  }
  return { class: "unexplained", rule: "no rule explains it" };
}

/** Before and after by name, each difference classified. */
export function compareObjects(before: ObjectSnapshot, after: ObjectSnapshot): ObjectComparison {
  const b = new Set(before.objects.map(objectKey));
  const a = new Set(after.objects.map(objectKey));
  const differences: Classified[] = [
    ...after.objects.filter((x) => !b.has(objectKey(x))).map((ref) => ({ ref, change: "added" as const })),
    ...before.objects.filter((x) => !a.has(objectKey(x))).map((ref) => ({ ref, change: "removed" as const })),
  ].map((d) => ({ ...d, ...classify(d.ref, d.change, a) }));
  return {
    before: { takenAt: before.takenAt, count: before.objects.length },
    after: { takenAt: after.takenAt, count: after.objects.length },
    differences,
    clean: !differences.some((d) => d.class === "ours" || d.class === "unexplained"),
  };
}

/** The comparison as markdown: a verdict line, then one table row per difference, ours and unexplained first. */
export function formatComparison(c: ObjectComparison): string {
  const order: Class[] = ["ours", "unexplained", "cilium", "churn"];
  const rows = [...c.differences].sort((x, y) => order.indexOf(x.class) - order.indexOf(y.class));
  const count = (k: Class) => c.differences.filter((d) => d.class === k).length;
  const lines = [
    `**${c.clean ? "clean" : "NOT clean"}**: ${c.before.count} objects before (${c.before.takenAt}), ${c.after.count} after (${c.after.takenAt}); differences by name: ours ${count("ours")}, unexplained ${count("unexplained")}, Cilium's ${count("cilium")}, churn ${count("churn")}`,
    "",
  ];
  if (rows.length > 0) {
    lines.push("| change | object | class | rule |", "|---|---|---|---|");
    for (const d of rows) lines.push(`| ${d.change} | \`${objectName(d.ref)}\` | ${d.class} | ${d.rule} |`);
  }
  return `${lines.join("\n")}\n`;
}
