/**
 * Why a Pod is not ready yet, read from the Pod's own JSON (`kubectl get pod(s) -o json`): one pure parser that
 * every wait on Pods shares, so a wait that is still waiting (and its timeout error) names each Pod's phase and
 * the reason Kubernetes gives — a container's waiting reason and message (ImagePullBackOff with the image,
 * CrashLoopBackOff with the last exit, ContainerCreating…), or for a Pod that is not scheduled the PodScheduled
 * condition's reason and message (Unschedulable: 0/3 nodes are available: …).
 */

type Json = Record<string, unknown>;
const o = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});
const arr = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

export interface ContainerState {
  name: string;
  /** An init container (initContainerStatuses). */
  init: boolean;
  image: string;
  ready: boolean;
  state: "waiting" | "running" | "terminated" | "unknown";
  /** waiting/terminated reason: ImagePullBackOff, ErrImagePull, CrashLoopBackOff, ContainerCreating, Error… */
  reason?: string;
  message?: string;
  exitCode?: number;
  restarts: number;
  /** The previous run's end (lastState.terminated), shown for crash loops. */
  last?: { reason?: string; exitCode?: number };
}

export interface PodState {
  namespace: string;
  name: string;
  node: string;
  /** Pending, Running, Succeeded, Failed, Unknown ("" when the API has not set it yet). */
  phase: string;
  ready: boolean;
  /** metadata.deletionTimestamp is set: the Pod is terminating. */
  deleting: boolean;
  /** status.reason / status.message of the Pod itself (Evicted, NodeLost, UnexpectedAdmissionError…). */
  reason?: string;
  message?: string;
  /** The PodScheduled condition when it is not True (Unschedulable and the scheduler's message). */
  unscheduled?: { reason?: string; message?: string };
  /** The Ready condition when it is not True (ContainersNotReady: containers with unready status: [c]). */
  notReady?: { reason?: string; message?: string };
  containers: ContainerState[];
}

function containerStates(statuses: unknown, specs: unknown, init: boolean): ContainerState[] {
  const specImage = new Map(arr(specs).map((c) => [String(c.name ?? ""), String(c.image ?? "")]));
  const seen = new Set<string>();
  const out = arr(statuses).map((s): ContainerState => {
    const name = String(s.name ?? "");
    seen.add(name);
    const st = o(s.state);
    const last = o(o(s.lastState).terminated);
    const base = {
      name,
      init,
      // status.image is what the kubelet resolved; a container that never started still shows the spec's
      image: str(s.image) ?? specImage.get(name) ?? "",
      ready: s.ready === true,
      restarts: typeof s.restartCount === "number" ? s.restartCount : 0,
      ...(Object.keys(last).length > 0
        ? {
            last: {
              ...(str(last.reason) ? { reason: str(last.reason) } : {}),
              ...(typeof last.exitCode === "number" ? { exitCode: last.exitCode } : {}),
            },
          }
        : {}),
    };
    const withText = (v: Json) => ({
      ...(str(v.reason) ? { reason: str(v.reason) } : {}),
      ...(str(v.message) ? { message: str(v.message) } : {}),
    });
    if (st.waiting) return { ...base, state: "waiting", ...withText(o(st.waiting)) };
    if (st.terminated) {
      const t = o(st.terminated);
      return {
        ...base,
        state: "terminated",
        ...withText(t),
        ...(typeof t.exitCode === "number" ? { exitCode: t.exitCode } : {}),
      };
    }
    if (st.running) return { ...base, state: "running" };
    return { ...base, state: "unknown" };
  });
  // a container with no status yet (the kubelet has not reported it) still counts, waiting without a reason
  for (const [name, image] of specImage)
    if (!seen.has(name) && arr(statuses).length > 0)
      out.push({ name, init, image, ready: false, state: "unknown", restarts: 0 });
  return out;
}

function falseCondition(conds: Json[], type: string): { reason?: string; message?: string } | undefined {
  const c = conds.find((x) => x.type === type);
  if (!c || c.status === "True") return undefined;
  return {
    ...(str(c.reason) ? { reason: str(c.reason) } : {}),
    ...(str(c.message) ? { message: str(c.message) } : {}),
  };
}

/** One Pod's state from its JSON (a core/v1 Pod as `kubectl get pod NAME -o json` prints it). */
export function podState(pod: unknown): PodState {
  const p = o(pod);
  const meta = o(p.metadata);
  const spec = o(p.spec);
  const status = o(p.status);
  const conds = arr(status.conditions);
  const ready = conds.some((c) => c.type === "Ready" && c.status === "True") && !meta.deletionTimestamp;
  const unscheduled = falseCondition(conds, "PodScheduled");
  const notReady = falseCondition(conds, "Ready");
  return {
    namespace: String(meta.namespace ?? ""),
    name: String(meta.name ?? ""),
    node: String(spec.nodeName ?? ""),
    phase: String(status.phase ?? ""),
    ready,
    deleting: Boolean(meta.deletionTimestamp),
    ...(str(status.reason) ? { reason: str(status.reason) } : {}),
    ...(str(status.message) ? { message: str(status.message) } : {}),
    ...(unscheduled ? { unscheduled } : {}),
    ...(notReady ? { notReady } : {}),
    containers: [
      ...containerStates(status.initContainerStatuses, spec.initContainers, true),
      ...containerStates(status.containerStatuses, spec.containers, false),
    ],
  };
}

/** Every Pod of a list (`kubectl get pods -o json`), or the one Pod when given a single object. */
export function podStates(json: unknown): PodState[] {
  const j = o(json);
  if (Array.isArray(j.items)) return (j.items as unknown[]).map(podState);
  return Object.keys(j).length > 0 ? [podState(j)] : [];
}

const clip = (s: string, max = 160) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);
const oneLine = (s: string) => clip(s.replace(/\s+/g, " ").trim());

/** One container that is not ready: "container web ImagePullBackOff (image x:1): Back-off pulling image …". */
function containerWhy(c: ContainerState): string {
  const who = `${c.init ? "init container" : "container"} ${c.name}`;
  const pull = /Image|Pull/i.test(c.reason ?? "");
  const parts: string[] = [];
  if (c.state === "waiting") parts.push(c.reason ?? "waiting");
  else if (c.state === "terminated")
    parts.push(
      `terminated${c.reason ? ` ${c.reason}` : ""}${c.exitCode !== undefined ? ` (exit ${c.exitCode})` : ""}`,
    );
  else if (c.state === "running") parts.push("running, not ready");
  else parts.push("no status yet");
  if (pull && c.image) parts.push(`(image ${c.image})`);
  if (c.restarts > 0 || c.last)
    parts.push(
      `(restarts ${c.restarts}${c.last ? `, last exit ${c.last.exitCode ?? "?"}${c.last.reason ? ` ${c.last.reason}` : ""}` : ""})`,
    );
  const msg = c.message ? `: ${oneLine(c.message)}` : "";
  return `${who} ${parts.join(" ")}${msg}`;
}

/**
 * Why one Pod is not ready, in one line: its phase, then what holds it — the Pod's own reason (Evicted…), the
 * scheduler's (Unschedulable: …), each container that is not ready with its waiting reason and message, or the
 * Ready condition's reason when the containers say nothing.
 */
export function whyNotReady(p: PodState): string {
  const head = `${p.name}: ${p.deleting ? "Terminating" : p.phase || "(no phase yet)"}`;
  if (p.ready) return `${head}, Ready`;
  const why: string[] = [];
  if (p.reason) why.push(`${p.reason}${p.message ? `: ${oneLine(p.message)}` : ""}`);
  if (p.unscheduled)
    why.push(
      `not scheduled${p.unscheduled.reason ? `: ${p.unscheduled.reason}` : ""}${p.unscheduled.message ? `: ${oneLine(p.unscheduled.message)}` : ""}`,
    );
  // init containers run first: while one has not finished, the app containers only say PodInitializing
  const initPending = p.containers.filter((c) => c.init && !(c.state === "terminated" && c.exitCode === 0));
  const pending = initPending.length > 0 ? initPending : p.containers.filter((c) => !c.init && !c.ready);
  why.push(...pending.map(containerWhy));
  if (why.length === 0 && p.notReady)
    why.push(
      `${p.notReady.reason ?? "not ready"}${p.notReady.message ? `: ${oneLine(p.notReady.message)}` : ""}`,
    );
  if (why.length === 0 && !p.node) why.push("not scheduled yet");
  return why.length > 0 ? `${head}, ${why.join("; ")}` : head;
}

/**
 * A wait's observation of several Pods: how many are ready, then each Pod that is not with why (at most
 * `max`, the rest counted), e.g. `1/3 ready; node-shell-b: Pending, container shell ImagePullBackOff (image …)`.
 */
export function describePods(
  ps: PodState[],
  opts: { want?: number; max?: number; none?: string } = {},
): string {
  const max = opts.max ?? 4;
  if (ps.length === 0) return opts.none ?? "no Pods yet";
  const ready = ps.filter((p) => p.ready).length;
  const head = `${ready}/${opts.want ?? ps.length} ready${opts.want !== undefined && ps.length !== opts.want ? ` (${ps.length} Pods)` : ""}`;
  const waiting = ps.filter((p) => !p.ready);
  if (waiting.length === 0) return head;
  const shown = waiting.slice(0, max).map(whyNotReady);
  const more = waiting.length > max ? `; and ${waiting.length - max} more not ready` : "";
  return `${head}; ${shown.join("; ")}${more}`;
}

export interface WarningEvent {
  object: string;
  reason: string;
  message: string;
  count: number;
  at: string;
}

/**
 * The last Warning event per object from `kubectl get events -o json` (core/v1 EventList): FailedScheduling,
 * Failed (image pull), BackOff, FailedMount… Read once, when a wait on Pods times out.
 */
export function lastWarnings(json: unknown): Map<string, WarningEvent> {
  const out = new Map<string, WarningEvent>();
  for (const e of arr(o(json).items)) {
    if (e.type !== "Warning") continue;
    const obj = o(e.involvedObject);
    const name = String(obj.name ?? "");
    const at = String(e.lastTimestamp ?? e.eventTime ?? o(e.metadata).creationTimestamp ?? "");
    const prev = out.get(name);
    if (prev && prev.at > at) continue;
    out.set(name, {
      object: `${String(obj.kind ?? "")}/${name}`,
      reason: String(e.reason ?? ""),
      message: oneLine(String(e.message ?? "")),
      count: typeof e.count === "number" ? e.count : 1,
      at,
    });
  }
  return out;
}
