// One file over 450 lines: a run's profile and its plan: provider, mode, versions and datapath profile combine in one place
import { release } from "node:os";
import { stringify } from "yaml";
import { UserError } from "../helpers/errors.ts";
import type { Mode } from "../helpers/properties/expectation.ts";
import { IMAGES } from "../manifests/images.ts";
import { COREDNS_PATCH } from "./coredns.ts";
import {
  type DatapathProfileName,
  datapathProfile,
  formatOverridden,
  kernelRefusal,
  mergeUserValues,
  PROFILES,
  readKernelConfig,
} from "./datapath-profiles.ts";
import {
  depLabel,
  LAB_KUBEADM_PATCHES,
  type Lab,
  type LabProfile,
  labCilium,
  labHelmValues,
  labProfile,
} from "./lab.ts";
import { dnsLabel } from "./lease.ts";
import { GATE_DEADLINES } from "./readiness.ts";

const min = (ms: number) => `${ms / 60_000} min`;

import type { Provider } from "./choices.ts";
import { CILIUM_CHART, type CiliumVersion, K3D, KIND, neverRunHere, resolveCilium } from "./versions.ts";

export {
  PROVIDERS,
  type Provider,
  parseMode,
  parseOptionalMode,
  parseProvider,
  parseRunProvider,
  RUN_PROVIDERS,
} from "./choices.ts";

/** A declared profile: provider × mode × Cilium version, and everything a run derives from it. */
export interface Profile {
  provider: Provider;
  mode: Mode;
  cilium: CiliumVersion;
  /** Cluster name (kind/k3d), suffixed per mode so both modes can run side by side. */
  cluster: string;
  /** kubectl context of the cluster. */
  context: string;
  /** Node names as Kubernetes sees them (= container names for kind and k3d). */
  nodes: string[];
  helmValues: Record<string, unknown>;
  kindConfig?: Record<string, unknown>;
  k3dArgs?: string[];
  /** LAB_IMAGES=1: images, chart and values from the offline lab (kind only). */
  lab?: LabProfile;
  /** Images loaded onto the nodes from the local Docker before Cilium is installed (lab or PRELOAD_IMAGES=1). */
  load?: string[];
  /** The datapath profile (clusters/datapath-profiles.ts); `refusal`: the one line a run here refuses it with. */
  datapath?: { name: DatapathProfileName; refusal: string | null };
  /** The user's values file, merged under the suite's values, and the keys the suite overrode. */
  userValues?: { file: string; overridden: string[] };
  /** kind: the Docker network the nodes join (KIND_EXPERIMENTAL_DOCKER_NETWORK), where the datapath profile names one. */
  dockerNetwork?: string;
}

/** PRELOAD_IMAGES=1: the Cilium images of a version as the chart names them, and the suite's workload images. */
export function preloadImages(version: string): string[] {
  return [
    `quay.io/cilium/cilium:v${version}`,
    `quay.io/cilium/operator-generic:v${version}`,
    IMAGES.agnhost,
    IMAGES.curl,
    IMAGES.node,
    IMAGES.netshoot,
  ];
}

type Values = Record<string, unknown>;
const isObject = (v: unknown): v is Values => typeof v === "object" && v !== null && !Array.isArray(v);

/** Helm-style values merge: objects merge key by key, anything else in `over` replaces. */
export function mergeValues(base: Values, over: Values): Values {
  const out: Values = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isObject(b) && isObject(v) ? mergeValues(b, v) : v;
  }
  return out;
}

const SHORT: Record<Mode, string> = { kpr: "kpr", "kube-proxy": "kp" };

export function helmValues(
  provider: Provider,
  mode: Mode,
  cluster: string,
  preload: boolean,
  noBackendResponse: "reject" | "drop" = "reject",
): Record<string, unknown> {
  const apiServer =
    provider === "k3d"
      ? { k8sServiceHost: "127.0.0.1", k8sServicePort: 6444 }
      : provider === "kind"
        ? { k8sServiceHost: `${cluster}-control-plane`, k8sServicePort: 6443 }
        : {};
  return {
    kubeProxyReplacement: mode === "kpr",
    ...apiServer,
    ipam: { mode: "kubernetes" },
    operator: {
      replicas: 1,
      ...(preload ? { image: { useDigest: false, pullPolicy: "IfNotPresent" } } : {}),
    },
    routingMode: "tunnel",
    tunnelProtocol: "vxlan",
    // KPR=true turns socket LB on by itself; with kube-proxy it stays off (the chart default), as in the notebook.
    ...(mode === "kube-proxy" ? { socketLB: { enabled: false } } : {}),
    // Gateway API would force bpf-lb-sock-hostns-only and change Pod ClusterIP handling (the chart's cilium-configmap.yaml).
    gatewayAPI: { enabled: false },
    // the chart default is reject; `drop` is the opt-in profile that shows the client timeout reject avoids
    ...(noBackendResponse === "drop" ? { serviceNoBackendResponse: "drop" } : {}),
    ...(preload
      ? { image: { useDigest: false, pullPolicy: "IfNotPresent" }, envoy: { image: { useDigest: false } } }
      : {}),
  };
}

/**
 * The kind cluster's configuration. On the lab (`lab`), `store` is the directory where lab.sh unpacked every image
 * once (clusters/lab/lab.sh image_node): each node mounts it read-only where its node image's links point, so no
 * node copies or unpacks an image of its own.
 */
export function kindConfig(
  mode: Mode,
  cluster: string,
  lab = false,
  store: string | null = null,
): Record<string, unknown> {
  const mounts = store
    ? { extraMounts: [{ hostPath: store, containerPath: "/kind/lab-store", readOnly: true }] }
    : {};
  return {
    kind: "Cluster",
    apiVersion: "kind.x-k8s.io/v1alpha4",
    name: cluster,
    nodes: (["control-plane", "worker", "worker"] as const).map((role) => ({ role, ...mounts })),
    ...(lab ? { kubeadmConfigPatches: LAB_KUBEADM_PATCHES } : {}),
    networking: {
      disableDefaultCNI: true,
      kubeProxyMode: mode === "kpr" ? "none" : "iptables",
      podSubnet: "10.244.0.0/16",
      serviceSubnet: "10.96.0.0/16",
    },
  };
}

export function k3dArgs(mode: Mode, cluster: string): string[] {
  const server = (arg: string) => ["--k3s-arg", `${arg}@server:*`];
  return [
    "cluster",
    "create",
    cluster,
    "--servers",
    "1",
    "--agents",
    "2",
    "--image",
    K3D.image,
    "--no-lb",
    ...server("--flannel-backend=none"),
    ...server("--disable-network-policy"),
    ...server("--disable=traefik"),
    ...server("--disable=servicelb"),
    ...(mode === "kpr" ? server("--disable-kube-proxy") : []),
    "--wait",
  ];
}

export interface ProfileOptions {
  provider: Provider;
  mode: Mode;
  cilium?: string;
  /** Run suffix for cluster names when several runs share a machine. */
  suffix?: string;
  preload?: boolean;
  /** Opt-in: serviceNoBackendResponse=drop (NO_BACKEND_RESPONSE=drop). */
  noBackendResponse?: "reject" | "drop";
  /** Context to use for `existing`. */
  existingContext?: string;
  /** LAB_IMAGES=1: the offline lab's images (kind only). */
  lab?: Lab;
  /** A datapath profile beside the mode (issue 25); absent: today's tunnel configuration. */
  datapath?: DatapathProfileName;
  /** `--values FILE` / CILIUM_VALUES: the user's Helm values (read), merged under the suite's (kind and k3d). */
  userValues?: { file: string; values: Record<string, unknown> };
  /** This machine's kernel config (tests); default: read from /proc/config.gz when a profile needs a feature. */
  kernelConfig?: string | null;
}

/** The profile's values and kind networking over the suite's, then the user's values under all of them. */
function applyDatapath(
  o: ProfileOptions,
  suiteValues: Record<string, unknown>,
): Pick<Profile, "helmValues" | "datapath" | "userValues"> & {
  networking: Record<string, unknown>;
  k3d: string[];
  dockerNetwork?: string;
} {
  const dp = o.datapath ? datapathProfile(o.datapath, o.mode) : undefined;
  if (dp && o.provider === "k3d" && dp.k3dArgs === null)
    throw new UserError(`datapath profile ${dp.name} is not declared for k3d: ${dp.k3dWhy ?? ""}`);
  const values = dp ? mergeValues(suiteValues, dp.helm(o.mode)) : suiteValues;
  const merged = o.userValues ? mergeUserValues(o.userValues.values, values) : undefined;
  const kernel = dp?.needs?.length
    ? o.kernelConfig !== undefined
      ? o.kernelConfig
      : readKernelConfig(release())
    : null;
  return {
    helmValues: merged ? merged.values : values,
    networking: dp?.kindNetworking ?? {},
    k3d: dp?.k3dArgs ?? [],
    ...(dp?.kindDockerNetwork ? { dockerNetwork: dp.kindDockerNetwork.name } : {}),
    ...(dp ? { datapath: { name: dp.name, refusal: kernelRefusal(dp, kernel) } } : {}),
    ...(o.userValues && merged
      ? { userValues: { file: o.userValues.file, overridden: merged.overridden } }
      : {}),
  };
}

/** Refuses, in one line, a profile this machine's kernel cannot run (netkit without CONFIG_NETKIT, …). */
export function assertRunnable(p: Profile): void {
  if (p.datapath?.refusal) throw new UserError(p.datapath.refusal);
}

export function makeProfile(o: ProfileOptions): Profile {
  if (o.lab && o.provider !== "kind")
    throw new UserError(`LAB_IMAGES=1 works with CLUSTER_PROVIDER=kind only (got ${o.provider})`);
  // with the lab: the lab's build of the asked (or its newest) version
  const cilium = o.lab ? labCilium(o.lab, o.cilium) : resolveCilium(o.cilium);
  const cluster = `cdc-${SHORT[o.mode]}${o.suffix ? `-${o.suffix}` : ""}`;
  switch (o.provider) {
    case "kind": {
      const lab = o.lab ? labProfile(o.lab, cilium.version) : undefined;
      const base = helmValues("kind", o.mode, cluster, o.preload ?? false, o.noBackendResponse);
      const dp = applyDatapath(o, lab ? mergeValues(base, labHelmValues(lab)) : base);
      const kc = kindConfig(o.mode, cluster, lab !== undefined, lab?.store ?? null);
      return {
        provider: "kind",
        mode: o.mode,
        cilium,
        cluster,
        context: `kind-${cluster}`,
        nodes: [`${cluster}-control-plane`, `${cluster}-worker`, `${cluster}-worker2`],
        helmValues: dp.helmValues,
        kindConfig: {
          ...kc,
          networking: { ...(kc.networking as Record<string, unknown>), ...dp.networking },
        },
        ...(lab ? { lab, load: lab.load } : o.preload ? { load: preloadImages(cilium.version) } : {}),
        ...(dp.datapath ? { datapath: dp.datapath } : {}),
        ...(dp.userValues ? { userValues: dp.userValues } : {}),
        ...(dp.dockerNetwork ? { dockerNetwork: dp.dockerNetwork } : {}),
      };
    }
    case "k3d": {
      const dp = applyDatapath(
        o,
        helmValues("k3d", o.mode, cluster, o.preload ?? false, o.noBackendResponse),
      );
      const args = k3dArgs(o.mode, cluster);
      return {
        provider: "k3d",
        mode: o.mode,
        cilium,
        cluster,
        context: `k3d-${cluster}`,
        nodes: [`k3d-${cluster}-server-0`, `k3d-${cluster}-agent-0`, `k3d-${cluster}-agent-1`],
        helmValues: dp.helmValues,
        k3dArgs: [...args.slice(0, -1), ...dp.k3d, ...args.slice(-1)],
        ...(o.preload ? { load: preloadImages(cilium.version) } : {}),
        ...(dp.datapath ? { datapath: dp.datapath } : {}),
        ...(dp.userValues ? { userValues: dp.userValues } : {}),
      };
    }
    case "existing":
    case "replay":
      return {
        provider: o.provider,
        mode: o.mode,
        cilium,
        cluster: o.existingContext ?? "(current context)",
        context: o.existingContext ?? "",
        nodes: [],
        helmValues: {},
      };
  }
}

export interface PlannedStep {
  phase: string;
  /** argv of the command, or null for a wait the suite performs itself. */
  argv: string[] | null;
  /** Files the step writes first (name → content). */
  files?: Record<string, string>;
  note?: string;
}

/** Every command, generated file and wait of a run, in order; `plan` prints it and runs nothing. */
/** `kind create cluster …` for a profile, with its config at `configFile` (no --wait: nodes stay NotReady until the CNI). */
export function kindCreateArgv(p: Profile, configFile: string): string[] {
  return [
    // kind reads the network its nodes join from its environment only
    ...(p.dockerNetwork ? ["env", `KIND_EXPERIMENTAL_DOCKER_NETWORK=${p.dockerNetwork}`] : []),
    "kind",
    "create",
    "cluster",
    "--name",
    p.cluster,
    "--config",
    configFile,
    "--image",
    p.lab?.nodeImage ?? KIND.nodeImage,
  ];
}

export const NODE_TOOLS_PREFIX = "cdc-tools-";

/** k3d: a tools container in a node's network and PID namespaces, where node probes run. */
export function nodeToolsArgv(node: string): string[] {
  return [
    "docker",
    "run",
    "-d",
    "--rm",
    "--name",
    `${NODE_TOOLS_PREFIX}${node}`,
    "--network",
    `container:${node}`,
    "--pid",
    `container:${node}`,
    "--privileged",
    "--entrypoint",
    "sleep",
    IMAGES.netshoot,
    "infinity",
  ];
}

/** The run namespace on an existing cluster: labelled for cleanup and privileged for Pod Security Admission. */
export function runNamespace(name: string, runId: string): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name,
      labels: {
        "app.kubernetes.io/part-of": "cilium-datapath-conformance",
        "cilium-datapath-conformance/run": dnsLabel(runId),
        "pod-security.kubernetes.io/enforce": "privileged",
        "pod-security.kubernetes.io/audit": "privileged",
        "pod-security.kubernetes.io/warn": "privileged",
      },
    },
  };
}

/** `cca-dp-<run id>` as a DNS-1123 label (run ids such as the workflow's `…-1.20` are sanitised). */
export function runNamespaceName(runId: string): string {
  return `cca-dp-${dnsLabel(runId, 63 - "cca-dp-".length)}`;
}

/**
 * Loads `p.load` from the local Docker onto every node: the lab's Cilium images (no registry to pull from), or
 * with PRELOAD_IMAGES=1 the images the user pulled beforehand.
 */
export function loadArgv(p: Profile): string[] | null {
  if (!p.load?.length) return null;
  if (p.provider === "kind") return ["kind", "load", "docker-image", "--name", p.cluster, ...p.load];
  if (p.provider === "k3d") return ["k3d", "image", "import", "--cluster", p.cluster, ...p.load];
  return null;
}

/** `helm upgrade --install cilium …` for a profile, with the values file at `valuesFile`. */
export function ciliumInstallArgv(p: Profile, valuesFile: string): string[] {
  return [
    "helm",
    "upgrade",
    "--install",
    "cilium",
    ...(p.lab ? [p.lab.chart] : [CILIUM_CHART, "--version", p.cilium.version]),
    "--namespace",
    "kube-system",
    "--kube-context",
    p.context,
    "--values",
    valuesFile,
  ];
}

export function plan(p: Profile): PlannedStep[] {
  const values = stringify(p.helmValues);
  const helm = ciliumInstallArgv(p, "cilium-values.yaml");
  const load = loadArgv(p);
  const loadStep: PlannedStep[] = load
    ? [
        {
          phase: "load images",
          argv: load,
          note: p.lab
            ? `lab images built from source (${labChanges(p.lab)})`
            : "PRELOAD_IMAGES=1: pulled beforehand into the local Docker (a missing one fails before the cluster is created)",
        },
      ]
    : [];
  const gates: PlannedStep[] = [
    {
      phase: "readiness",
      argv: [
        "kubectl",
        "-n",
        "kube-system",
        "patch",
        "deployment",
        "coredns",
        "--type=json",
        "-p",
        COREDNS_PATCH,
      ],
      note: "CoreDNS's readiness probe every second where kubeadm's asks every 10 s (clusters/coredns.ts): kube-dns gets its backends as soon as CoreDNS answers; a CoreDNS of another layout is left as it is",
    },
    {
      phase: "readiness",
      argv: null,
      note: `at once, each by watching the API: every node Ready (deadline ${min(GATE_DEADLINES.nodesReady)}); Deployment cilium-operator available (deadline ${min(GATE_DEADLINES.operator)}); DaemonSet cilium's Pods of its newest template on every node, each running its cilium-agent container with Cilium ${p.cilium.version} (deadline ${min(GATE_DEADLINES.rollout)})`,
    },
    {
      phase: "readiness",
      argv: null,
      note: `then poll every second, all agents at once, until \`cilium-dbg status --brief\` prints OK in each (deadline ${min(GATE_DEADLINES.agentsOk)}; each agent's time from its Pod's start to that OK is recorded as the agents' own start)`,
    },
    {
      phase: "readiness",
      argv: ["kubectl", "get", "pods", "-A", "-o", "json"],
      note: "then delete at once (--grace-period=0 --force) every Pod still waiting for a network (no Pod IP, not host-network, owned by a controller): its controller creates it again at once, where the kubelet would retry its sandbox only after a back-off (cilium-cli's `--restart-unmanaged-pods`); poll every second until none of them has an address",
    },
    {
      phase: "readiness",
      argv: null,
      note: `then poll every second until every agent's service list has the kube-dns ClusterIP with backends, none of them a restarted Pod's (deadline ${min(GATE_DEADLINES.kubeDns)})`,
    },
  ];
  switch (p.provider) {
    case "kind":
      return [
        {
          phase: "create cluster",
          argv: kindCreateArgv(p, "kind-config.yaml"),
          files: { "kind-config.yaml": stringify(p.kindConfig) },
          note: `kind ${KIND.version}${p.lab ? ` with the lab's node image (Kubernetes built from source)` : ""}; no --wait: nodes stay NotReady until Cilium runs`,
        },
        ...loadStep,
        { phase: "install Cilium", argv: helm, files: { "cilium-values.yaml": values } },
        ...gates,
        {
          phase: "teardown",
          argv: ["kind", "delete", "cluster", "--name", p.cluster],
          note: "skipped with KEEP_CLUSTER=1 (the next run reuses the cluster by name)",
        },
      ];
    case "k3d":
      return [
        {
          phase: "create cluster",
          argv: ["k3d", ...(p.k3dArgs ?? [])],
          note: `k3d ${K3D.version} (≥ 5.6.1 makes / rshared for Cilium); --wait waits for k3s, not for node Ready`,
        },
        ...loadStep,
        { phase: "install Cilium", argv: helm, files: { "cilium-values.yaml": values } },
        ...gates,
        ...p.nodes.map((node) => ({
          phase: "node access",
          argv: nodeToolsArgv(node),
          note: "node probes run here: k3s nodes have busybox only (no bash, curl or ss)",
        })),
        {
          phase: "teardown",
          argv: ["k3d", "cluster", "delete", p.cluster],
          note: "skipped with KEEP_CLUSTER=1",
        },
      ];
    case "existing": {
      const kubectl = ["kubectl", "--context", p.context || "(current)"];
      return [
        {
          phase: "lock",
          argv: [...kubectl, "create", "-f", "-"],
          note: "Lease default/cilium-datapath-conformance for this run: created, or an expired one replaced with the resourceVersion read (fails if another run holds it); never creates or deletes the cluster; needs CONFORMANCE_EXISTING_OK=1",
        },
        {
          phase: "namespace",
          argv: [...kubectl, "create", "-f", "-"],
          files: {
            "namespace.json": JSON.stringify(runNamespace(runNamespaceName("<run id>"), "<run id>"), null, 2),
          },
          note: "the run namespace, privileged for Pod Security Admission (the node shells and the capture Pod are privileged)",
        },
        {
          phase: "node access",
          argv: [...kubectl, "get", "nodes", "-l", "kubernetes.io/os=linux", "-o", "json"],
          note: "with `-n kube-system get pods -l k8s-app=cilium`: the Linux nodes that run a Cilium agent",
        },
        {
          phase: "node access",
          argv: [...kubectl, "apply", "-f", "-"],
          note: `one privileged hostNetwork/hostPID node-shell Pod (${IMAGES.netshoot}, nsenter into PID 1) per such node; watch until all are Running (deadline 3 min)`,
        },
        {
          phase: "readiness",
          argv: null,
          note: `poll every second, all agents at once, until \`cilium-dbg status --brief\` prints OK in each (deadline ${min(GATE_DEADLINES.agentsOk)})`,
        },
        {
          phase: "teardown",
          argv: [...kubectl, "delete", "namespace", runNamespaceName("<run id>"), "--wait=false"],
          note: "then delete the Lease if this run still holds it; the cluster itself is left as it was",
        },
      ];
    }
    case "replay":
      return [
        { phase: "replay", argv: null, note: "serve BUNDLE back through the replay executor; no cluster" },
      ];
  }
}

/** What the lab changed in a Cilium build: its label once built, else the declared dependency replaces. */
export function labChanges(lp: LabProfile): string {
  if (lp.patch) return lp.patch;
  const deps = lp.deps.map(depLabel);
  if (!lp.declared && deps.length === 0)
    return "no replace declared for it: cilium-deps.tsv's lines of other versions apply where it pins the same module version (lab.sh names them at build; what the module proxy refuses is said in one line); the /proc/modules check runs at build (not built yet: `datapath-conformance lab run` builds it)";
  return `${deps.length ? deps.join("; ") : "no dependency replaced"}; the /proc/modules check runs at build (not built yet)`;
}

export function formatPlan(
  p: Profile,
  /**
   * Where the mode and the Cilium version come from when the run reads them (the existing provider: from the
   * cluster's agents; replay: from the bundle): shown instead of the profile's placeholders.
   */
  read: { mode?: string; cilium?: string } = {},
): string {
  const out = [
    `# ${p.provider} × ${read.mode ?? p.mode} × ${read.cilium ?? `Cilium ${p.cilium.version}`} (cluster ${p.cluster}, context ${p.context || "current"})`,
    ...(p.lab ? [`# lab build of Cilium ${p.cilium.version}: ${labChanges(p.lab)}`] : []),
    // a version the suite has never run: what its verdicts are judged against (the run says it again)
    ...(read.cilium ? [] : neverRunHere(p.cilium.version).map((l) => `# ${l}`)),
    ...(p.datapath
      ? [`# datapath profile ${p.datapath.name}: ${PROFILES[p.datapath.name].description}`]
      : []),
    ...(p.datapath?.refusal ? [`# refused on this machine: ${p.datapath.refusal}`] : []),
    ...(p.datapath && PROFILES[p.datapath.name].neverRun
      ? [`# never run here: ${PROFILES[p.datapath.name].neverRun}`]
      : []),
    ...(p.userValues ? [`# ${formatOverridden(p.userValues.file, p.userValues.overridden)}`] : []),
  ];
  for (const step of plan(p)) {
    out.push("", `## ${step.phase}`);
    for (const [name, content] of Object.entries(step.files ?? {})) out.push(`# ${name}`, content.trimEnd());
    if (step.argv) out.push(`$ ${step.argv.map((a) => (/[\s"'*@]/.test(a) ? `'${a}'` : a)).join(" ")}`);
    if (step.note) out.push(`# ${step.note}`);
  }
  return `${out.join("\n")}\n`;
}
