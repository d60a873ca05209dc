// One file over 450 lines: the inventory's collectors and comparison tested on one set of scripted outputs
/**
 * The leftover inventory and the object comparison against command outputs WRITTEN BY US in the shapes kubectl,
 * kind, docker, ip and ls print them (docker's `{{json .}}` lines carry Names, Labels as "k=v,k=v", State,
 * Status, Image, Networks; kubectl's -o json a List of objects).
 */
import { describe, expect, it } from "vitest";
import type { ExecRequest, ExecResult, Executor } from "../helpers/exec/types.ts";
import {
  collectInventory,
  diffInventories,
  formatDiff,
  formatInventory,
  goDuration,
  IDENTITY_GC_DEFAULTS,
  type Inventory,
  identityExpiry,
  identityGcConfig,
  parseBpfPins,
  parseContainers,
  parseKindClusters,
  parseNetns,
  parseNetworks,
  parseRunIdentities,
  parseRunPods,
} from "./leftovers.ts";
import {
  compareObjects,
  formatComparison,
  type ObjectSnapshot,
  objectRef,
  parseApiResources,
} from "./objects.ts";

const list = (items: unknown[]) => JSON.stringify({ apiVersion: "v1", kind: "List", items });
const ns = (name: string, phase = "Active") => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: {
    name,
    labels: name.startsWith("cca-dp-") ? { "cilium-datapath-conformance/run": name.slice(7) } : {},
  },
  status: { phase },
});
const pod = (namespace: string, name: string, labels: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { namespace, name, labels },
  status: { phase: "Running" },
});
const identity = (name: string, podNs: string, marked?: string) => ({
  apiVersion: "cilium.io/v2",
  kind: "CiliumIdentity",
  metadata: {
    name,
    labels: { "io.kubernetes.pod.namespace": podNs },
    creationTimestamp: "2026-12-02T10:00:00Z",
    ...(marked ? { annotations: { "io.cilium.heartbeat": marked } } : {}),
  },
  "security-labels": { "k8s:io.kubernetes.pod.namespace": podNs },
});
const container = (name: string, labels: string, state = "running", image = "kindest/node") =>
  JSON.stringify({
    Names: name,
    Labels: labels,
    State: state,
    Status: "Up 2 hours",
    Image: image,
    Networks: "kind",
  });

describe("leftover inventory parsers (outputs written by us)", () => {
  it("node-shell Pods by label or by name in a run namespace; every Pod of a run namespace", () => {
    const items = parseRunPods(
      JSON.parse(
        list([
          pod("cca-dp-r1", "node-shell-worker", { "app.kubernetes.io/component": "node-shell" }),
          pod("cca-dp-r0", "node-shell-worker2"),
          pod("cca-dp", "web-1"),
          pod("team-a", "node-shell-x", { "app.kubernetes.io/component": "node-shell" }),
          pod("kube-system", "cilium-abcde"),
        ]),
      ),
    );
    expect(items.map((i) => `${i.kind} ${i.namespace}/${i.name}`)).toEqual([
      "Pod (node shell) cca-dp-r1/node-shell-worker",
      "Pod (node shell) cca-dp-r0/node-shell-worker2",
      "Pod cca-dp/web-1",
      "Pod (node shell) team-a/node-shell-x",
    ]);
  });

  it("identities of run namespaces only, with the operator's mark", () => {
    const ids = parseRunIdentities(
      JSON.parse(
        list([
          identity("12345", "cca-dp-r1"),
          identity("23456", "kube-system"),
          identity("34567", "cca-dp", "2026-12-02T11:00:00Z"),
        ]),
      ),
    );
    expect(ids).toEqual([
      { name: "12345", namespace: "cca-dp-r1", createdAt: "2026-12-02T10:00:00Z" },
      {
        name: "34567",
        namespace: "cca-dp",
        createdAt: "2026-12-02T10:00:00Z",
        markedAt: "2026-12-02T11:00:00Z",
      },
    ]);
  });

  it("docker containers: kind nodes by label, node tools, the outside client, testcontainers, the lab's build container", () => {
    const items = parseContainers(
      [
        container("cdc-kpr-control-plane", "io.x-k8s.kind.cluster=cdc-kpr,io.x-k8s.kind.role=control-plane"),
        container("cdc-kpr-worker", "io.x-k8s.kind.cluster=cdc-kpr,io.x-k8s.kind.role=worker", "exited"),
        container("other-control-plane", "io.x-k8s.kind.cluster=other"),
        container("cdc-tools-k3d-cdc-kpr-agent-0", ""),
        container(
          "eager_turing",
          "cilium-datapath-conformance/outside-client=cdc-kpr,org.testcontainers=true",
          "running",
          "localhost/lab/tools:bookworm",
        ),
        container("old_client", "org.testcontainers=true,org.testcontainers.session-id=abc"),
        container("lab-node-build", ""),
        container("postgres", "com.example=1"),
      ].join("\n"),
    );
    expect(items.map((i) => `${i.owner} ${i.kind} ${i.name}`)).toEqual([
      "ours kind node (cdc-kpr) cdc-kpr-control-plane",
      "ours kind node (cdc-kpr) cdc-kpr-worker",
      "other kind node (other) other-control-plane",
      "ours node tools container cdc-tools-k3d-cdc-kpr-agent-0",
      "ours outside client container eager_turing",
      "ours testcontainers container old_client",
      "ours lab build container lab-node-build",
    ]);
    expect(items[1]?.detail).toContain("exited");
  });

  it("kind clusters, networks, the kernel tests' namespaces and BPF pins", () => {
    expect(parseKindClusters("cdc-kp\ncdc-kpr\nmine\n").map((i) => `${i.owner} ${i.name}`)).toEqual([
      "ours cdc-kp",
      "ours cdc-kpr",
      "other mine",
    ]);
    expect(parseKindClusters("No kind clusters found.\n")).toEqual([]);
    const nets = parseNetworks(
      [
        '{"Name":"bridge","Driver":"bridge"}',
        '{"Name":"kind","Driver":"bridge"}',
        '{"Name":"k3d-cdc-kpr","Driver":"bridge"}',
      ].join("\n"),
    );
    expect(nets.map((i) => `${i.owner} ${i.name}`)).toEqual(["lab kind", "ours k3d-cdc-kpr"]);
    expect(parseNetns("dpc-123456-a (id: 3)\ndpc-123456-b\ncni-1234\n").map((i) => i.name)).toEqual([
      "dpc-123456-a",
      "dpc-123456-b",
    ]);
    expect(parseBpfPins("dpc-tcx-4242\ntc\nxdp\n").map((i) => i.name)).toEqual(["/sys/fs/bpf/dpc-tcx-4242"]);
  });
});

describe("Cilium's identity GC (cilium v1.19.7 operator/identitygc)", () => {
  it("reads the operator's settings from cilium-config, with the chart's defaults", () => {
    expect(goDuration("15m0s")).toBe(900_000);
    expect(goDuration("1h0m0s")).toBe(3_600_000);
    expect(goDuration("90s")).toBe(90_000);
    expect(goDuration("soon")).toBeNull();
    expect(
      identityGcConfig({
        data: {
          "identity-gc-interval": "5m0s",
          "identity-heartbeat-timeout": "10m0s",
          "identity-allocation-mode": "crd",
        },
      }),
    ).toEqual({
      mode: "crd",
      intervalMs: 300_000,
      heartbeatTimeoutMs: 600_000,
      from: "cilium-config",
    });
    expect(identityGcConfig({ data: {} })).toBe(IDENTITY_GC_DEFAULTS);
  });

  it("an unmarked identity goes 2·timeout to 2·timeout + 2·interval after its Pods; a marked one timeout to timeout + interval after the mark", () => {
    const gone = new Date("2026-12-02T10:00:00Z");
    const e = identityExpiry(
      { name: "1", namespace: "cca-dp-r1", createdAt: "" },
      IDENTITY_GC_DEFAULTS,
      gone,
    );
    expect([e.earliest.toISOString(), e.latest.toISOString()]).toEqual([
      "2026-12-02T11:00:00.000Z",
      "2026-12-02T11:30:00.000Z",
    ]);
    expect(e.text).toBe(
      "collected by cilium-operator between 11:00 and 11:30 UTC (identity GC every 15 min, heartbeat timeout 30 min, from defaults)",
    );
    const m = identityExpiry(
      { name: "1", namespace: "cca-dp-r1", createdAt: "", markedAt: "2026-12-02T10:40:00Z" },
      IDENTITY_GC_DEFAULTS,
      gone,
    );
    expect([m.earliest.toISOString(), m.latest.toISOString()]).toEqual([
      "2026-12-02T11:10:00.000Z",
      "2026-12-02T11:25:00.000Z",
    ]);
  });
});

/** A machine and cluster answering the inventory's commands (written by us). */
function scriptedHost(state: {
  namespaces: string[];
  identities: unknown[];
  kind: string;
  containers: string[];
  lease: boolean;
}): Executor {
  return {
    run: async (req: ExecRequest): Promise<ExecResult> => {
      const cmd = req.argv.join(" ");
      const ok = (stdout: string): ExecResult => ({ stdout, stderr: "", exitCode: 0, durationMs: 1 });
      if (cmd.endsWith("get namespaces -o json")) return ok(list(state.namespaces.map((n) => ns(n))));
      if (cmd.endsWith("get pods -A -o json"))
        return ok(
          list(
            state.namespaces
              .filter((n) => n.startsWith("cca-dp"))
              .map((n) => pod(n, "node-shell-w1", { "app.kubernetes.io/component": "node-shell" })),
          ),
        );
      if (cmd.includes("get lease"))
        return ok(
          state.lease
            ? JSON.stringify({
                spec: {
                  holderIdentity: "r1",
                  renewTime: "2026-12-02T10:00:00.000000Z",
                  leaseDurationSeconds: 600,
                },
              })
            : "",
        );
      if (cmd.includes("configmap cilium-config"))
        return ok(
          JSON.stringify({
            data: { "identity-gc-interval": "15m0s", "identity-heartbeat-timeout": "30m0s" },
          }),
        );
      if (cmd.endsWith("get ciliumidentities.cilium.io -o json")) return ok(list(state.identities));
      if (cmd.endsWith("get ciliumendpoints.cilium.io -A -o json")) return ok(list([]));
      if (cmd === "kind get clusters") return ok(state.kind);
      if (cmd.startsWith("docker ps")) return ok(state.containers.join("\n"));
      if (cmd.startsWith("docker network ls")) return ok('{"Name":"kind"}\n');
      if (cmd === "ip netns list") return { stdout: "", stderr: "", exitCode: 0, durationMs: 1 };
      if (cmd === "ls -1 /sys/fs/bpf")
        return {
          stdout: "",
          stderr: "ls: cannot access '/sys/fs/bpf': No such file or directory",
          exitCode: 2,
          durationMs: 1,
        };
      throw new Error(`scripted host: ${cmd}`);
    },
  };
}

describe("inventory before and after, by name", () => {
  const now = () => new Date("2026-12-02T10:00:00Z");
  it("after a clean teardown only Cilium's identities are new, each with when it goes", async () => {
    const before = await collectInventory({
      exec: scriptedHost({
        namespaces: ["default", "kube-system"],
        identities: [],
        kind: "",
        containers: [],
        lease: false,
      }),
      context: "kind-cdc-kpr",
      now,
    });
    const after = await collectInventory({
      exec: scriptedHost({
        namespaces: ["default", "kube-system"],
        identities: [identity("4242", "cca-dp-r1")],
        kind: "",
        containers: [],
        lease: false,
      }),
      context: "kind-cdc-kpr",
      now,
    });
    const d = diffInventories(before, after);
    expect(d.oursLeft).toEqual([]);
    expect(d.ciliumLeft.map((i) => i.name)).toEqual(["4242"]);
    expect(formatDiff(d)).toContain("left by the suite: nothing");
    expect(formatDiff(d)).toContain(
      "CiliumIdentity 4242 — for Pods of cca-dp-r1; collected by cilium-operator between 11:00 and 11:30 UTC (identity GC every 15 min, heartbeat timeout 30 min, from cilium-config)",
    );
    // /sys/fs/bpf absent is nothing pinned, not a failure
    expect(after.notes).toEqual([]);
  });

  it("a teardown that did not run leaves the namespace, node shells, Lease, cluster and containers, all named", async () => {
    const before = await collectInventory({
      exec: scriptedHost({ namespaces: ["default"], identities: [], kind: "", containers: [], lease: false }),
      context: "kind-cdc-kpr",
      now,
    });
    const after = await collectInventory({
      exec: scriptedHost({
        namespaces: ["default", "cca-dp-r1"],
        identities: [],
        kind: "cdc-kpr\n",
        containers: [container("cdc-kpr-worker", "io.x-k8s.kind.cluster=cdc-kpr")],
        lease: true,
      }),
      context: "kind-cdc-kpr",
      now,
    });
    const d = diffInventories(before, after);
    expect(d.oursLeft.map((i) => `${i.kind} ${i.namespace ?? ""}/${i.name}`)).toEqual([
      "Namespace /cca-dp-r1",
      "Pod (node shell) cca-dp-r1/node-shell-w1",
      "Lease default/cilium-datapath-conformance",
      "kind cluster /cdc-kpr",
      "kind node (cdc-kpr) /cdc-kpr-worker",
    ]);
    // KEEP_CLUSTER=1: the kept cluster and its nodes are expected
    const kept = diffInventories(before, after, (i) => /cdc-kpr/.test(i.name) && i.where === "host");
    expect(kept.oursLeft.map((i) => i.kind)).toEqual(["Namespace", "Pod (node shell)", "Lease"]);
    expect(formatInventory(after)).toContain("[ours] Lease default/cilium-datapath-conformance — held by r1");
  });

  it("a collector that cannot run adds a note and the others go on", async () => {
    const inv: Inventory = await collectInventory({
      exec: {
        run: async (req) =>
          req.argv[0] === "kind"
            ? { stdout: "", stderr: "spawn kind ENOENT", exitCode: null, durationMs: 0 }
            : scriptedHost({ namespaces: [], identities: [], kind: "", containers: [], lease: false }).run(
                req,
              ),
      },
      now,
    });
    expect(inv.notes).toEqual(["kind clusters: `kind get clusters` exited (no status): spawn kind ENOENT"]);
    expect(inv.items.map((i) => i.name)).toEqual(["kind"]);
  });
});

describe("every object before and after (existing provider)", () => {
  const snap = (objects: unknown[], takenAt: string): ObjectSnapshot => ({
    takenAt,
    context: "ctx",
    resources: ["pods"],
    objects: objects.map(objectRef),
    notes: [],
  });
  const obj = (
    apiVersion: string,
    kind: string,
    namespace: string,
    name: string,
    extra: Record<string, unknown> = {},
  ) => ({
    apiVersion,
    kind,
    metadata: { name, ...(namespace ? { namespace } : {}), ...extra },
  });

  it("api-resources: names only (warnings about unavailable APIs are not names)", () => {
    expect(
      parseApiResources(
        "bindings\npods\nevents.events.k8s.io\nciliumidentities.cilium.io\nerror: unable to retrieve the complete list of server APIs\n",
      ),
    ).toEqual(["bindings", "pods", "events.events.k8s.io", "ciliumidentities.cilium.io"]);
  });

  it("classifies by rule: ours, Cilium's identities, churn (events, leases, controllers), unexplained", () => {
    const ds = obj("apps/v1", "DaemonSet", "kube-system", "cilium");
    const before = snap(
      [
        ds,
        obj("v1", "Pod", "kube-system", "cilium-old", {
          ownerReferences: [{ kind: "DaemonSet", name: "cilium", controller: true }],
        }),
        obj("v1", "ConfigMap", "team", "kept"),
      ],
      "2026-12-02T10:00:00Z",
    );
    const after = snap(
      [
        ds,
        obj("v1", "Pod", "kube-system", "cilium-new", {
          ownerReferences: [{ kind: "DaemonSet", name: "cilium", controller: true }],
        }),
        obj("v1", "ConfigMap", "team", "kept"),
        obj("v1", "Namespace", "", "cca-dp-r1"),
        obj("v1", "Pod", "cca-dp-r1", "node-shell-w1"),
        obj("coordination.k8s.io/v1", "Lease", "default", "cilium-datapath-conformance"),
        obj("cilium.io/v2", "CiliumIdentity", "", "4242", {
          labels: { "io.kubernetes.pod.namespace": "cca-dp-r1" },
        }),
        obj("v1", "Event", "kube-system", "cilium-new.1"),
        obj("coordination.k8s.io/v1", "Lease", "kube-system", "apiserver-abc"),
        obj("v1", "Secret", "team", "surprise"),
      ],
      "2026-12-02T10:30:00Z",
    );
    const c = compareObjects(before, after);
    const by = Object.fromEntries(
      c.differences.map((d) => [`${d.change} ${d.ref.kind} ${d.ref.namespace}/${d.ref.name}`, d.class]),
    );
    expect(by).toEqual({
      "added Pod kube-system/cilium-new": "churn",
      "added Namespace /cca-dp-r1": "ours",
      "added Pod cca-dp-r1/node-shell-w1": "ours",
      "added Lease default/cilium-datapath-conformance": "ours",
      "added CiliumIdentity /4242": "cilium",
      "added Event kube-system/cilium-new.1": "churn",
      "added Lease kube-system/apiserver-abc": "churn",
      "added Secret team/surprise": "unexplained",
      "removed Pod kube-system/cilium-old": "churn",
    });
    expect(c.clean).toBe(false);
    const md = formatComparison(c);
    expect(md).toMatch(/^\*\*NOT clean\*\*: 3 objects before .* ours 3, unexplained 1, Cilium's 1, churn 4/);
    expect(md.indexOf("surprise")).toBeLessThan(md.indexOf("apiserver-abc"));
    // a clean run: only churn and Cilium's identities differ
    const clean = compareObjects(
      before,
      snap(
        [
          ds,
          obj("v1", "ConfigMap", "team", "kept"),
          obj("cilium.io/v2", "CiliumIdentity", "", "4242", {
            labels: { "io.kubernetes.pod.namespace": "cca-dp-r1" },
          }),
        ],
        "t",
      ),
    );
    expect(clean.clean).toBe(true);
    expect(clean.differences.map((d) => d.class).sort()).toEqual(["churn", "cilium"]);
  });
});
