/**
 * Pod and Event JSON WRITTEN BY US for the tests of pod-status.ts — not captured from a cluster. Each object has
 * the shape `kubectl get pod -o json` prints for core/v1 (metadata, spec, status with conditions and
 * containerStatuses / initContainerStatuses), trimmed to the fields that matter; the reasons and messages are
 * the kubelet's and the scheduler's wording (ImagePullBackOff's `Back-off pulling image "…"`, ErrImageNeverPull's
 * `Container image "…" is not present with pull policy of Never`, the scheduler's `0/3 nodes are available: …`).
 */

const meta = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  namespace: "cca-dp-run1",
  uid: `uid-${name}`,
  creationTimestamp: "2026-12-02T10:00:00Z",
  ...extra,
});
const shellSpec = (node: string) => ({
  nodeName: node,
  hostNetwork: true,
  containers: [{ name: "shell", image: "docker.io/nicolaka/netshoot:v0.13" }],
});
const cond = (type: string, status: string, reason?: string, message?: string) => ({
  type,
  status,
  lastTransitionTime: "2026-12-02T10:00:01Z",
  ...(reason ? { reason } : {}),
  ...(message ? { message } : {}),
});

/** The case: a node-shell Pod whose image cannot be pulled (no registry). */
export const imagePullBackOff = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: meta("node-shell-worker"),
  spec: shellSpec("worker"),
  status: {
    phase: "Pending",
    conditions: [
      cond("PodReadyToStartContainers", "True"),
      cond("Initialized", "True"),
      cond("Ready", "False", "ContainersNotReady", "containers with unready status: [shell]"),
      cond("ContainersReady", "False", "ContainersNotReady", "containers with unready status: [shell]"),
      cond("PodScheduled", "True"),
    ],
    hostIP: "172.31.100.3",
    podIP: "172.31.100.3",
    containerStatuses: [
      {
        name: "shell",
        image: "docker.io/nicolaka/netshoot:v0.13",
        imageID: "",
        ready: false,
        restartCount: 0,
        started: false,
        state: {
          waiting: {
            reason: "ImagePullBackOff",
            message:
              'Back-off pulling image "docker.io/nicolaka/netshoot:v0.13": ErrImagePull: failed to pull and unpack image "docker.io/nicolaka/netshoot:v0.13": failed to resolve reference "docker.io/nicolaka/netshoot:v0.13": dial tcp: lookup registry-1.docker.io: no such host',
          },
        },
        lastState: {},
      },
    ],
  },
};

export const errImagePull = {
  ...imagePullBackOff,
  metadata: meta("node-shell-worker2"),
  spec: shellSpec("worker2"),
  status: {
    ...imagePullBackOff.status,
    containerStatuses: [
      {
        ...imagePullBackOff.status.containerStatuses[0],
        state: {
          waiting: {
            reason: "ErrImagePull",
            message:
              'failed to pull and unpack image "docker.io/nicolaka/netshoot:v0.13": failed to resolve reference "docker.io/nicolaka/netshoot:v0.13": dial tcp: lookup registry-1.docker.io: no such host',
          },
        },
      },
    ],
  },
};

/** The lab's pullPolicy Never with an image the node does not have. */
export const errImageNeverPull = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: meta("web-5d9c7b9f8-abcde", { labels: { app: "web" } }),
  spec: {
    nodeName: "cdc-kpr-worker",
    containers: [{ name: "web", image: "localhost/lab/agnhost:2.52", imagePullPolicy: "Never" }],
  },
  status: {
    phase: "Pending",
    conditions: [cond("Ready", "False", "ContainersNotReady", "containers with unready status: [web]")],
    containerStatuses: [
      {
        name: "web",
        image: "localhost/lab/agnhost:2.52",
        ready: false,
        restartCount: 0,
        state: {
          waiting: {
            reason: "ErrImageNeverPull",
            message: 'Container image "localhost/lab/agnhost:2.52" is not present with pull policy of Never',
          },
        },
      },
    ],
  },
};

/** Not scheduled: every node tainted (the scheduler's FailedScheduling wording). */
export const unschedulable = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: meta("holder"),
  spec: { containers: [{ name: "holder", image: "docker.io/library/node:20.18.0-alpine3.20" }] },
  status: {
    phase: "Pending",
    conditions: [
      cond(
        "PodScheduled",
        "False",
        "Unschedulable",
        "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 node(s) had untolerated taint {node.kubernetes.io/unreachable: }. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
      ),
    ],
    qosClass: "BestEffort",
  },
};

/** Scheduled, the sandbox is being created: ContainerCreating carries no message. */
export const containerCreating = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: meta("probe"),
  spec: { nodeName: "cdc-kpr-worker", containers: [{ name: "probe", image: "curlimages/curl:8.10.1" }] },
  status: {
    phase: "Pending",
    conditions: [
      cond("PodReadyToStartContainers", "False"),
      cond("Initialized", "True"),
      cond("Ready", "False", "ContainersNotReady", "containers with unready status: [probe]"),
      cond("PodScheduled", "True"),
    ],
    containerStatuses: [
      {
        name: "probe",
        image: "curlimages/curl:8.10.1",
        ready: false,
        restartCount: 0,
        state: { waiting: { reason: "ContainerCreating" } },
        lastState: {},
      },
    ],
  },
};

export const crashLoop = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: meta("holder-crash"),
  spec: {
    nodeName: "cdc-kpr-worker2",
    containers: [{ name: "holder", image: "localhost/lab/tools:bookworm" }],
  },
  status: {
    phase: "Running",
    conditions: [cond("Ready", "False", "ContainersNotReady", "containers with unready status: [holder]")],
    containerStatuses: [
      {
        name: "holder",
        image: "localhost/lab/tools:bookworm",
        ready: false,
        restartCount: 4,
        started: false,
        state: {
          waiting: {
            reason: "CrashLoopBackOff",
            message:
              "back-off 1m20s restarting failed container=holder pod=holder-crash_cca-dp-run1(uid-holder-crash)",
          },
        },
        lastState: {
          terminated: {
            exitCode: 1,
            reason: "Error",
            startedAt: "2026-12-02T10:03:00Z",
            finishedAt: "2026-12-02T10:03:01Z",
          },
        },
      },
    ],
  },
};

/** An init container in a crash loop: the app container only says PodInitializing. */
export const initCrashLoop = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: meta("cilium-x7k2p", { namespace: "kube-system" }),
  spec: {
    nodeName: "cdc-kpr-worker",
    initContainers: [
      { name: "config", image: "localhost/lab/cilium:v1.19.7-src" },
      { name: "mount-cgroup", image: "localhost/lab/cilium:v1.19.7-src" },
    ],
    containers: [{ name: "cilium-agent", image: "localhost/lab/cilium:v1.19.7-src" }],
  },
  status: {
    phase: "Pending",
    conditions: [
      cond(
        "Initialized",
        "False",
        "ContainersNotInitialized",
        "containers with incomplete status: [mount-cgroup]",
      ),
      cond("Ready", "False", "ContainersNotReady", "containers with unready status: [cilium-agent]"),
      cond("PodScheduled", "True"),
    ],
    initContainerStatuses: [
      {
        name: "config",
        image: "localhost/lab/cilium:v1.19.7-src",
        ready: true,
        restartCount: 0,
        state: { terminated: { exitCode: 0, reason: "Completed" } },
      },
      {
        name: "mount-cgroup",
        image: "localhost/lab/cilium:v1.19.7-src",
        ready: false,
        restartCount: 2,
        state: {
          waiting: {
            reason: "CrashLoopBackOff",
            message:
              "back-off 20s restarting failed container=mount-cgroup pod=cilium-x7k2p_kube-system(uid-cilium-x7k2p)",
          },
        },
        lastState: { terminated: { exitCode: 1, reason: "Error" } },
      },
    ],
    containerStatuses: [
      {
        name: "cilium-agent",
        image: "localhost/lab/cilium:v1.19.7-src",
        ready: false,
        restartCount: 0,
        state: { waiting: { reason: "PodInitializing" } },
      },
    ],
  },
};

/** Running, readiness probe failing. */
export const runningNotReady = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: meta("web-5d9c7b9f8-fghij", { labels: { app: "web" } }),
  spec: {
    nodeName: "cdc-kpr-worker",
    containers: [{ name: "web", image: "registry.k8s.io/e2e-test-images/agnhost:2.52" }],
  },
  status: {
    phase: "Running",
    podIP: "10.244.1.17",
    conditions: [
      cond("Ready", "False", "ContainersNotReady", "containers with unready status: [web]"),
      cond("PodScheduled", "True"),
    ],
    containerStatuses: [
      {
        name: "web",
        image: "registry.k8s.io/e2e-test-images/agnhost:2.52",
        ready: false,
        restartCount: 0,
        started: true,
        state: { running: { startedAt: "2026-12-02T10:00:05Z" } },
      },
    ],
  },
};

export const ready = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: meta("web-5d9c7b9f8-klmno", { labels: { app: "web" } }),
  spec: {
    nodeName: "cdc-kpr-worker2",
    containers: [{ name: "web", image: "registry.k8s.io/e2e-test-images/agnhost:2.52" }],
  },
  status: {
    phase: "Running",
    podIP: "10.244.2.9",
    conditions: [cond("Ready", "True"), cond("PodScheduled", "True")],
    containerStatuses: [
      {
        name: "web",
        image: "registry.k8s.io/e2e-test-images/agnhost:2.52",
        ready: true,
        restartCount: 0,
        state: { running: { startedAt: "2026-12-02T10:00:05Z" } },
      },
    ],
  },
};

/** Ready as far as its conditions go, but being deleted. */
export const terminating = {
  ...ready,
  metadata: meta("web-5d9c7b9f8-pqrst", {
    labels: { app: "web" },
    deletionTimestamp: "2026-12-02T10:05:00Z",
    deletionGracePeriodSeconds: 30,
  }),
};

export const evicted = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: meta("dns-client"),
  spec: {
    nodeName: "cdc-kpr-worker",
    containers: [{ name: "dns-client", image: "localhost/lab/tools:bookworm" }],
  },
  status: {
    phase: "Failed",
    reason: "Evicted",
    message: "The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 512Mi. ",
    conditions: [cond("Ready", "False", "PodFailed")],
    containerStatuses: [
      {
        name: "dns-client",
        image: "localhost/lab/tools:bookworm",
        ready: false,
        restartCount: 0,
        state: {
          terminated: {
            exitCode: 137,
            reason: "ContainerStatusUnknown",
            message: "The container could not be located when the pod was terminated",
          },
        },
      },
    ],
  },
};

/** Just created: the API server has set nothing but the phase. */
export const justCreated = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: meta("capture"),
  spec: { containers: [{ name: "capture", image: "docker.io/nicolaka/netshoot:v0.13" }] },
  status: { phase: "Pending", qosClass: "BestEffort" },
};

/** `kubectl get events -n cca-dp-run1 -o json`: two Warnings for one Pod (the later wins), one Normal. */
export const events = {
  apiVersion: "v1",
  kind: "List",
  items: [
    {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "holder.1", namespace: "cca-dp-run1", creationTimestamp: "2026-12-02T10:00:02Z" },
      involvedObject: { kind: "Pod", name: "holder", namespace: "cca-dp-run1" },
      type: "Warning",
      reason: "FailedScheduling",
      message: "0/3 nodes are available: 3 node(s) had untolerated taint {node.kubernetes.io/unreachable: }.",
      count: 1,
      lastTimestamp: null,
      eventTime: "2026-12-02T10:00:02.123456Z",
    },
    {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "node-shell-worker.1", namespace: "cca-dp-run1" },
      involvedObject: { kind: "Pod", name: "node-shell-worker", namespace: "cca-dp-run1" },
      type: "Warning",
      reason: "Failed",
      message: 'Failed to pull image "docker.io/nicolaka/netshoot:v0.13": no such host',
      count: 3,
      lastTimestamp: "2026-12-02T10:00:40Z",
    },
    {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "node-shell-worker.2", namespace: "cca-dp-run1" },
      involvedObject: { kind: "Pod", name: "node-shell-worker", namespace: "cca-dp-run1" },
      type: "Warning",
      reason: "Failed",
      message: "Error: ImagePullBackOff",
      count: 5,
      lastTimestamp: "2026-12-02T10:01:10Z",
    },
    {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "node-shell-worker.3", namespace: "cca-dp-run1" },
      involvedObject: { kind: "Pod", name: "node-shell-worker", namespace: "cca-dp-run1" },
      type: "Normal",
      reason: "BackOff",
      message: 'Back-off pulling image "docker.io/nicolaka/netshoot:v0.13"',
      count: 7,
      lastTimestamp: "2026-12-02T10:01:30Z",
    },
  ],
};
