// One file over 450 lines: the inventory: one collector and one parser per kind of leftover, compared by name in one place
/**
 * What a run might leave behind, listed: in the cluster (run namespaces `cca-dp*`, node-shell Pods, the Lease,
 * the CiliumIdentity and CiliumEndpoint objects of the run's Pods) and on this machine (kind clusters, docker
 * containers and networks, the kernel tests' network namespaces and BPF pins). Each collector is one command
 * through an Executor and one pure parser, so the inventory is tested against scripted outputs; two inventories
 * are compared by name (kind/namespace/name), never by counts.
 *
 * Cilium's own leftovers are described with when they go: a CiliumIdentity is collected by cilium-operator's
 * CRD identity GC, not by the namespace's deletion (identityExpiry below).
 */
import type { ExecResult, Executor } from "../helpers/exec/types.ts";
import { LEASE_NAME } from "./lease.ts";
import { NODE_TOOLS_PREFIX } from "./profile.ts";

type Json = Record<string, unknown>;
const o = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});
const arr = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);

/** A run namespace: `cca-dp` (kind/k3d) or `cca-dp-<run id>` (existing clusters). */
export const isRunNamespace = (ns: string | undefined): boolean =>
  ns !== undefined && /^cca-dp(-|$)/.test(ns);

/**
 * Who an item belongs to: `ours` — the suite made it and must remove it; `cilium` — Cilium made it for the
 * run's Pods and collects it itself, later; `lab` — `lab up` made it for every run (the kind docker network);
 * `other` — listed for context (another kind cluster, a container of something else) and never judged.
 */
export type Owner = "ours" | "cilium" | "lab" | "other";

export interface Item {
  where: "cluster" | "host";
  kind: string;
  namespace?: string;
  name: string;
  owner: Owner;
  /** Phase, holder, labels, expiry: shown, never compared. */
  detail?: string;
}

export interface Inventory {
  takenAt: string;
  /** The kubectl context the cluster part was read from, when one was. */
  context?: string;
  items: Item[];
  /** Collectors that could not run (no kind binary, no Cilium CRDs, no root for /sys/fs/bpf…). */
  notes: string[];
}

export const itemKey = (i: Item): string => `${i.where}/${i.kind}/${i.namespace ?? ""}/${i.name}`;
export const itemName = (i: Item): string => `${i.kind} ${i.namespace ? `${i.namespace}/` : ""}${i.name}`;

const lastLine = (r: ExecResult) => (r.stderr.trim().split("\n").pop() ?? "").slice(0, 200);

// ---- the cluster ---------------------------------------------------------------------------------------

/** `kubectl get namespaces -o json` → the run namespaces, with phase and run label. */
export function parseRunNamespaces(json: unknown): Item[] {
  return arr(o(json).items)
    .filter((n) => isRunNamespace(String(o(n.metadata).name ?? "")))
    .map((n) => {
      const meta = o(n.metadata);
      const run = o(meta.labels)["cilium-datapath-conformance/run"];
      return {
        where: "cluster",
        kind: "Namespace",
        name: String(meta.name),
        owner: "ours",
        detail: `${String(o(n.status).phase ?? "")}${run ? `, run ${String(run)}` : ""}`,
      };
    });
}

/**
 * `kubectl get pods -A -o json` → node-shell Pods (labelled app.kubernetes.io/component=node-shell, or named
 * node-shell-* in a run namespace, as runs before the label made them) and every other Pod in a run namespace.
 */
export function parseRunPods(json: unknown): Item[] {
  return arr(o(json).items).flatMap((p): Item[] => {
    const meta = o(p.metadata);
    const ns = String(meta.namespace ?? "");
    const name = String(meta.name ?? "");
    const shell =
      o(meta.labels)["app.kubernetes.io/component"] === "node-shell" ||
      (isRunNamespace(ns) && name.startsWith("node-shell-"));
    if (!shell && !isRunNamespace(ns)) return [];
    return [
      {
        where: "cluster",
        kind: shell ? "Pod (node shell)" : "Pod",
        namespace: ns,
        name,
        owner: "ours",
        detail: `${String(o(p.status).phase ?? "")}${meta.deletionTimestamp ? ", terminating" : ""}`,
      },
    ];
  });
}

/** `kubectl -n default get lease cilium-datapath-conformance -o json` (empty: none). */
export function parseLease(stdout: string): Item[] {
  if (stdout.trim() === "") return [];
  const l = o(JSON.parse(stdout));
  const spec = o(l.spec);
  return [
    {
      where: "cluster",
      kind: "Lease",
      namespace: "default",
      name: LEASE_NAME,
      owner: "ours",
      detail: `held by ${String(spec.holderIdentity ?? "?")}, renewed ${String(spec.renewTime ?? "?")} for ${String(spec.leaseDurationSeconds ?? "?")} s`,
    },
  ];
}

/** A CiliumIdentity as far as its collection goes. */
export interface IdentityInfo {
  name: string;
  namespace: string;
  createdAt: string;
  /** io.cilium.heartbeat: when cilium-operator marked it unused (RFC 3339), if it has. */
  markedAt?: string;
}

/** `kubectl get ciliumidentities.cilium.io -o json` → the identities whose Pods lived in a run namespace. */
export function parseRunIdentities(json: unknown): IdentityInfo[] {
  return arr(o(json).items).flatMap((i) => {
    const meta = o(i.metadata);
    // the CRD backend copies the Pod's namespace into this label (pkg/k8s/identitybackend SelectK8sLabels)
    const ns = String(o(meta.labels)["io.kubernetes.pod.namespace"] ?? "");
    if (!isRunNamespace(ns)) return [];
    const marked = o(meta.annotations)["io.cilium.heartbeat"];
    return [
      {
        name: String(meta.name ?? ""),
        namespace: ns,
        createdAt: String(meta.creationTimestamp ?? ""),
        ...(typeof marked === "string" ? { markedAt: marked } : {}),
      },
    ];
  });
}

/** `kubectl get ciliumendpoints.cilium.io -A -o json` → the endpoints in run namespaces. */
export function parseRunEndpoints(json: unknown): Item[] {
  return arr(o(json).items)
    .filter((e) => isRunNamespace(String(o(e.metadata).namespace ?? "")))
    .map((e) => ({
      where: "cluster" as const,
      kind: "CiliumEndpoint",
      namespace: String(o(e.metadata).namespace),
      name: String(o(e.metadata).name),
      owner: "cilium" as const,
      detail: `identity ${String(o(o(e.status).identity).id ?? "?")}; goes with its Pod`,
    }));
}

// ---- Cilium's identity garbage collection ----------------------------------------------------------------

/** cilium-operator's CRD identity GC settings (cilium-config), or its defaults. */
export interface IdentityGc {
  /** identity-allocation-mode: crd (the default), kvstore, doublewrite-*. */
  mode: string;
  intervalMs: number;
  heartbeatTimeoutMs: number;
  from: "cilium-config" | "defaults";
}

/**
 * The defaults, from Cilium v1.19.7: operator/identitygc/cell.go (defaultConfig: Interval =
 * defaults.KVstoreLeaseTTL, 15 min in pkg/defaults/defaults.go; HeartbeatTimeout = 2 × that), written by the
 * chart as identity-gc-interval "15m0s" and identity-heartbeat-timeout "30m0s" (values.yaml,
 * operator.identityGCInterval / identityHeartbeatTimeout; templates/cilium-configmap.yaml).
 */
export const IDENTITY_GC_DEFAULTS: IdentityGc = {
  mode: "crd",
  intervalMs: 15 * 60_000,
  heartbeatTimeoutMs: 30 * 60_000,
  from: "defaults",
};

/** A Go duration as the chart writes it ("15m0s", "30m", "1h0m0s", "90s") in ms; null when unreadable. */
export function goDuration(s: string | undefined): number | null {
  if (!s) return null;
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s)/g;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let total = 0;
  let seen = "";
  for (const m of s.matchAll(re)) {
    total += Number(m[1]) * (unit[m[2] as string] ?? 0);
    seen += m[0];
  }
  return seen === s.trim() && seen !== "" ? total : null;
}

/** `kubectl -n kube-system get configmap cilium-config -o json` → the GC settings (defaults where absent). */
export function identityGcConfig(json: unknown): IdentityGc {
  const data = o(o(json).data);
  const interval = goDuration(data["identity-gc-interval"] as string | undefined);
  const timeout = goDuration(data["identity-heartbeat-timeout"] as string | undefined);
  if (interval === null && timeout === null && !data["identity-allocation-mode"]) return IDENTITY_GC_DEFAULTS;
  return {
    mode: String(data["identity-allocation-mode"] ?? "crd"),
    intervalMs: interval ?? IDENTITY_GC_DEFAULTS.intervalMs,
    heartbeatTimeoutMs: timeout ?? IDENTITY_GC_DEFAULTS.heartbeatTimeoutMs,
    from: "cilium-config",
  };
}

const hm = (ms: number) => (ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : `${Math.round(ms / 60_000)} min`);

/**
 * When cilium-operator deletes an identity no CiliumEndpoint uses any more (Cilium v1.19.7,
 * operator/identitygc/crd_gc.go `gc`, heartbeat.go `isAlive`): every GC pass (identity-gc-interval) looks at
 * each identity; one in use gets a lifesign; one whose last lifesign is older than identity-heartbeat-timeout
 * is first marked (annotation io.cilium.heartbeat) — that update is itself a lifesign (runHeartbeatUpdater
 * marks every upserted identity alive) — and deleted by the first pass after another timeout. So, counting from
 * when the run's Pods (and their CiliumEndpoints) went, `goneAt`:
 *   not yet marked: deleted between goneAt + 2·timeout and goneAt + 2·timeout + 2·interval (60–90 min by default);
 *   marked at M:    deleted between M + timeout and M + timeout + interval.
 * An operator that restarts forgets its lifesigns and waits a full timeout from its start; the window then moves.
 */
export function identityExpiry(
  id: IdentityInfo,
  gc: IdentityGc,
  goneAt: Date,
): { earliest: Date; latest: Date; text: string } {
  const t = gc.heartbeatTimeoutMs;
  const i = gc.intervalMs;
  const marked = id.markedAt ? Date.parse(id.markedAt) : Number.NaN;
  const [from, to] = Number.isFinite(marked)
    ? [marked + t, marked + t + i]
    : [goneAt.getTime() + 2 * t, goneAt.getTime() + 2 * t + 2 * i];
  const earliest = new Date(from);
  const latest = new Date(to);
  const hhmm = (d: Date) => d.toISOString().slice(11, 16);
  return {
    earliest,
    latest,
    text: `${Number.isFinite(marked) ? `marked unused at ${id.markedAt}; ` : ""}collected by cilium-operator between ${hhmm(earliest)} and ${hhmm(latest)} UTC (identity GC every ${hm(i)}, heartbeat timeout ${hm(t)}, from ${gc.from})`,
  };
}

/** The identities as inventory items, each with its expected collection. */
export function identityItems(ids: IdentityInfo[], gc: IdentityGc, goneAt: Date): Item[] {
  return ids.map((id) => ({
    where: "cluster",
    kind: "CiliumIdentity",
    name: id.name,
    owner: "cilium",
    detail: `for Pods of ${id.namespace}; ${identityExpiry(id, gc, goneAt).text}`,
  }));
}

// ---- this machine ----------------------------------------------------------------------------------------

/** `kind get clusters` → clusters; ours are the profiles' `cdc-*`. */
export function parseKindClusters(stdout: string): Item[] {
  return stdout
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !/^No kind clusters found/.test(l))
    .map((name) => ({
      where: "host",
      kind: "kind cluster",
      name,
      owner: name.startsWith("cdc-") ? "ours" : "other",
    }));
}

const labelsOf = (s: unknown): Record<string, string> =>
  Object.fromEntries(
    String(s ?? "")
      .split(",")
      .filter((kv) => kv.includes("="))
      .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
  );

/**
 * `docker ps -a --format '{{json .}}'` → the containers a run makes: kind nodes (label io.x-k8s.kind.cluster),
 * k3d's node tools (cdc-tools-*), the outside client (labelled by the suite; older runs: any testcontainers
 * container, label org.testcontainers), and the lab's image build container.
 */
export function parseContainers(stdout: string): Item[] {
  return stdout
    .split("\n")
    .filter((l) => l.trim().startsWith("{"))
    .flatMap((l): Item[] => {
      const c = o(JSON.parse(l));
      const name = String(c.Names ?? "");
      const labels = labelsOf(c.Labels);
      const detail = `${String(c.State ?? "")} (${String(c.Status ?? "")}), image ${String(c.Image ?? "")}, networks ${String(c.Networks ?? "")}`;
      const item = (kind: string, owner: Owner): Item[] => [{ where: "host", kind, name, owner, detail }];
      const kindCluster = labels["io.x-k8s.kind.cluster"];
      if (kindCluster)
        return item(`kind node (${kindCluster})`, kindCluster.startsWith("cdc-") ? "ours" : "other");
      if (name.startsWith(NODE_TOOLS_PREFIX)) return item("node tools container", "ours");
      if (labels[OUTSIDE_LABEL] !== undefined) return item("outside client container", "ours");
      if (labels["org.testcontainers"] === "true") return item("testcontainers container", "ours");
      if (name === "lab-node-build") return item("lab build container", "ours");
      return [];
    });
}

/** The label the suite puts on its outside client container (its value: the run id). */
export const OUTSIDE_LABEL = "cilium-datapath-conformance/outside-client";

/** `docker network ls --format '{{json .}}'` → kind's network (made by `lab up` or kind) and k3d's. */
export function parseNetworks(stdout: string): Item[] {
  return stdout
    .split("\n")
    .filter((l) => l.trim().startsWith("{"))
    .flatMap((l): Item[] => {
      const n = o(JSON.parse(l));
      const name = String(n.Name ?? "");
      if (name === "kind")
        return [
          {
            where: "host",
            kind: "docker network",
            name,
            owner: "lab",
            detail: "kind's network: kept for every run (lab up creates it; kind reuses it)",
          },
        ];
      if (name.startsWith("k3d-cdc-"))
        return [{ where: "host", kind: "docker network", name, owner: "ours" }];
      return [];
    });
}

/** `ip netns list` → the kernel tests' namespaces (helpers/kernel/netns-lab.ts: dpc-<id>-a, dpc-<id>-b). */
export function parseNetns(stdout: string): Item[] {
  return stdout
    .split("\n")
    .map((l) => l.trim().split(/\s+/)[0] ?? "")
    .filter((n) => /^dpc-/.test(n))
    .map((name) => ({ where: "host", kind: "network namespace", name, owner: "ours" }));
}

/** `ls -1 /sys/fs/bpf` → the kernel tests' pins (helpers/kernel/tc-bpf.kernel.test.ts: /sys/fs/bpf/dpc-tcx-<id>). */
export function parseBpfPins(stdout: string): Item[] {
  return stdout
    .split("\n")
    .map((l) => l.trim())
    .filter((n) => /^dpc-/.test(n))
    .map((name) => ({ where: "host", kind: "BPF pin", name: `/sys/fs/bpf/${name}`, owner: "ours" }));
}

// ---- collecting ------------------------------------------------------------------------------------------

export interface CollectOptions {
  /** Runs kubectl, kind, docker, ip and ls on this machine. */
  exec: Executor;
  /** The cluster to read (kubectl context); none: the host only. */
  context?: string;
  host?: boolean;
  /** When the run's Pods went (for the identities' expiry); default now. */
  goneAt?: Date;
  now?: () => Date;
}

const TIMEOUT_MS = 60_000;

/** Everything a run might leave, read once. A collector that cannot run adds a note and the rest go on. */
export async function collectInventory(c: CollectOptions): Promise<Inventory> {
  const items: Item[] = [];
  const notes: string[] = [];
  const run = async (argv: string[]): Promise<ExecResult> =>
    c.exec.run({ target: { kind: "local" }, argv, timeoutMs: TIMEOUT_MS });
  const step = async (
    what: string,
    argv: string[],
    parse: (stdout: string) => Item[],
    ok = (r: ExecResult) => r.exitCode === 0,
  ) => {
    try {
      const r = await run(argv);
      if (!ok(r)) {
        notes.push(`${what}: \`${argv.join(" ")}\` exited ${r.exitCode ?? "(no status)"}: ${lastLine(r)}`);
        return;
      }
      items.push(...parse(r.stdout));
    } catch (err) {
      notes.push(`${what}: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`);
    }
  };
  const now = c.now ?? (() => new Date());
  if (c.context) {
    const k = ["kubectl", "--context", c.context];
    await step("run namespaces", [...k, "get", "namespaces", "-o", "json"], (s) =>
      parseRunNamespaces(JSON.parse(s)),
    );
    await step("run Pods and node shells", [...k, "get", "pods", "-A", "-o", "json"], (s) =>
      parseRunPods(JSON.parse(s)),
    );
    await step(
      "Lease",
      [...k, "-n", "default", "get", "lease", LEASE_NAME, "-o", "json", "--ignore-not-found"],
      parseLease,
    );
    let gc = IDENTITY_GC_DEFAULTS;
    await step(
      "cilium-config",
      [...k, "-n", "kube-system", "get", "configmap", "cilium-config", "-o", "json"],
      (s) => {
        gc = identityGcConfig(JSON.parse(s));
        return [];
      },
    );
    await step("CiliumIdentities", [...k, "get", "ciliumidentities.cilium.io", "-o", "json"], (s) =>
      identityItems(parseRunIdentities(JSON.parse(s)), gc, c.goneAt ?? now()),
    );
    await step("CiliumEndpoints", [...k, "get", "ciliumendpoints.cilium.io", "-A", "-o", "json"], (s) =>
      parseRunEndpoints(JSON.parse(s)),
    );
  }
  if (c.host !== false) {
    await step("kind clusters", ["kind", "get", "clusters"], parseKindClusters);
    await step(
      "docker containers",
      ["docker", "ps", "-a", "--no-trunc", "--format", "{{json .}}"],
      parseContainers,
    );
    await step("docker networks", ["docker", "network", "ls", "--format", "{{json .}}"], parseNetworks);
    await step("network namespaces", ["ip", "netns", "list"], parseNetns);
    await step(
      "BPF pins",
      ["ls", "-1", "/sys/fs/bpf"],
      parseBpfPins,
      (r) => r.exitCode === 0 || /No such file/.test(r.stderr),
    );
  }
  return { takenAt: now().toISOString(), ...(c.context ? { context: c.context } : {}), items, notes };
}

// ---- comparing ------------------------------------------------------------------------------------------

export interface InventoryDiff {
  /** In `after` and not in `before`, by kind/namespace/name. */
  added: Item[];
  /** In `before` and gone in `after`. */
  removed: Item[];
  /** Added items the suite owns (must be none after a teardown); kept ones excepted. */
  oursLeft: Item[];
  /** Added items Cilium owns and collects later (with when). */
  ciliumLeft: Item[];
}

/**
 * Two inventories compared by name. `expected` names what may stay on purpose (KEEP_CLUSTER=1: the kept kind
 * cluster, its node containers and the cluster objects read through it), matched against itemName.
 */
export function diffInventories(
  before: Inventory,
  after: Inventory,
  expected: (i: Item) => boolean = () => false,
): InventoryDiff {
  const b = new Set(before.items.map(itemKey));
  const a = new Set(after.items.map(itemKey));
  const added = after.items.filter((i) => !b.has(itemKey(i)));
  const removed = before.items.filter((i) => !a.has(itemKey(i)));
  return {
    added,
    removed,
    oursLeft: added.filter((i) => i.owner === "ours" && !expected(i)),
    ciliumLeft: added.filter((i) => i.owner === "cilium"),
  };
}

/** The inventory as text: one line per item, grouped by where; notes last. */
export function formatInventory(inv: Inventory): string {
  const lines = [`inventory at ${inv.takenAt}${inv.context ? ` (context ${inv.context})` : ""}:`];
  for (const where of ["cluster", "host"] as const) {
    const items = inv.items.filter((i) => i.where === where);
    if (items.length === 0) continue;
    lines.push(`  ${where}:`);
    for (const i of items) lines.push(`    [${i.owner}] ${itemName(i)}${i.detail ? ` — ${i.detail}` : ""}`);
  }
  if (inv.items.length === 0) lines.push("  nothing a run leaves");
  for (const n of inv.notes) lines.push(`  (not read: ${n})`);
  return `${lines.join("\n")}\n`;
}

export function formatDiff(d: InventoryDiff): string {
  const lines: string[] = [];
  const show = (i: Item) => `  ${itemName(i)}${i.detail ? ` — ${i.detail}` : ""}`;
  lines.push(
    d.oursLeft.length === 0 ? "left by the suite: nothing" : `left by the suite (${d.oursLeft.length}):`,
  );
  lines.push(...d.oursLeft.map(show));
  if (d.ciliumLeft.length > 0)
    lines.push(`owned by Cilium, collected later (${d.ciliumLeft.length}):`, ...d.ciliumLeft.map(show));
  const other = d.added.filter((i) => !d.oursLeft.includes(i) && !d.ciliumLeft.includes(i));
  if (other.length > 0) lines.push(`new, expected or not ours (${other.length}):`, ...other.map(show));
  if (d.removed.length > 0) lines.push(`gone since before (${d.removed.length}):`, ...d.removed.map(show));
  return `${lines.join("\n")}\n`;
}
