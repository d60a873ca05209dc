/**
 * The faults a fault run injects into a lab kind cluster while the normal conformance specs run (issue 18):
 * what each does, where it strikes by default, and what a report of it must name. Each is a few commands on
 * this machine (docker, kubectl) or a signal to the run; nothing here runs unless the fault driver is started.
 */

import { OUTSIDE_LABEL } from "../../clusters/leftovers.ts";
import { UserError } from "../../helpers/errors.ts";
import type { ExecResult, Executor } from "../../helpers/exec/types.ts";
import type { Mode } from "../../helpers/properties/expectation.ts";

export const FAULT_NAMES = [
  "agent-delete",
  "node-pause",
  "node-stop",
  "apiserver-kill",
  "sigint",
  "sigterm",
  "outside-net",
] as const;
export type FaultName = (typeof FAULT_NAMES)[number];

/** The lab's kind cluster of a mode (clusters/profile.ts names them cdc-kpr and cdc-kp). */
export const clusterOf = (mode: Mode): string => (mode === "kpr" ? "cdc-kpr" : "cdc-kp");

export interface FaultContext {
  mode: Mode;
  cluster: string;
  /** kubectl context of the cluster (kind-<cluster>). */
  context: string;
  /** The worker node to pause or stop (default <cluster>-worker, or -worker2 for node-stop). */
  node?: string;
  /** node-pause: how long the node stays paused (s). */
  pauseS: number;
  exec: Executor;
  sleep(ms: number): Promise<void>;
  log(line: string): void;
  /** Sends a signal to the run: its main process, or its whole process group (as a terminal's Ctrl-C does). */
  signal(sig: "SIGINT" | "SIGTERM", to: "main" | "group"): void;
  signalTo?: "main" | "group";
}

export interface Injected {
  /** What was done, in words (the record's and the table's `fault` detail). */
  what: string;
  commands: { argv: string[]; exitCode: number | null; stderr: string }[];
  /** Runs after the run ended (node-pause: unpause if the pause is still on). */
  cleanup?: () => Promise<void>;
}

export interface Fault {
  name: FaultName;
  summary: string;
  /** Where it strikes by default: when this topic starts observing, after `delayS`. */
  atTopic: string;
  delayS: number;
  /**
   * What a failed or skipped test's message must name for the report to count as this fault's (never a
   * false pass). Signals are judged by their exit code and the teardown instead (null).
   */
  symptom: RegExp | null;
  inject(c: FaultContext): Promise<Injected>;
}

async function run(
  c: FaultContext,
  argv: string[],
  timeoutMs = 60_000,
): Promise<Injected["commands"][number]> {
  const r: ExecResult = await c.exec.run({ target: { kind: "local" }, argv, timeoutMs });
  const line = { argv, exitCode: r.exitCode, stderr: r.stderr.trim().split("\n").slice(-2).join(" | ") };
  c.log(
    `fault: \`${argv.join(" ")}\` exited ${r.exitCode ?? "(no status)"}${line.stderr ? `: ${line.stderr}` : ""}`,
  );
  return line;
}

/** The node the holder Pod runs on (cca-dp/holder), waited for up to 120 s (the holder topic creates it). */
async function holderNode(c: FaultContext): Promise<string> {
  for (let i = 0; i < 60; i++) {
    const r = await c.exec.run({
      target: { kind: "local" },
      argv: [
        "kubectl",
        "--context",
        c.context,
        "-n",
        "cca-dp",
        "get",
        "pod",
        "holder",
        "-o",
        "jsonpath={.spec.nodeName}",
      ],
      timeoutMs: 30_000,
    });
    if (r.exitCode === 0 && r.stdout.trim() !== "") return r.stdout.trim();
    await c.sleep(2000);
  }
  throw new Error(
    "the holder Pod (cca-dp/holder) did not appear within 120 s: no node to delete the agent on",
  );
}

export const FAULTS: Record<FaultName, Fault> = {
  "agent-delete": {
    name: "agent-delete",
    summary: "delete the Cilium agent Pod on the holder's node mid-topic (the DaemonSet brings a new one)",
    atTopic: "holder",
    delayS: 5,
    symptom:
      /cilium agent Pod|cilium-agent|ended without an exit status|stream closed|could not start|no running cilium agent|not found|NotFound|terminat|restart|connection (was )?(closed|reset)|holder/i,
    inject: async (c) => {
      const node = await holderNode(c);
      const cmd = await run(c, [
        "kubectl",
        "--context",
        c.context,
        "-n",
        "kube-system",
        "delete",
        "pod",
        "-l",
        "k8s-app=cilium",
        "--field-selector",
        `spec.nodeName=${node}`,
        "--wait=false",
      ]);
      return { what: `deleted the cilium agent Pod on ${node} (the holder's node)`, commands: [cmd] };
    },
  },
  "node-pause": {
    name: "node-pause",
    summary: "docker pause a worker node container for 60 s, then unpause it",
    atTopic: "scale",
    delayS: 3,
    symptom:
      /paused|timed out|no answer|NotReady|deadline|i\/o timeout|Unable to connect|not ready|unreachable/i,
    inject: async (c) => {
      const node = c.node ?? `${c.cluster}-worker`;
      const pause = await run(c, ["docker", "pause", node]);
      let unpaused = false;
      const unpause = async () => {
        if (unpaused) return;
        unpaused = true;
        await run(c, ["docker", "unpause", node]);
      };
      // back after pauseS, whatever the run does meanwhile (and at the latest when the driver cleans up)
      const timer = setTimeout(() => void unpause(), c.pauseS * 1000);
      timer.unref();
      return {
        what: `paused node container ${node} for ${c.pauseS} s`,
        commands: [pause],
        cleanup: async () => {
          clearTimeout(timer);
          // a container the run's teardown already removed has nothing to unpause
          const state = await c.exec.run({
            target: { kind: "local" },
            argv: ["docker", "inspect", "-f", "{{.State.Paused}}", node],
            timeoutMs: 30_000,
          });
          if (state.stdout.trim() === "true") await unpause();
        },
      };
    },
  },
  "node-stop": {
    name: "node-stop",
    summary: "docker stop a worker node container for good",
    atTopic: "holder",
    delayS: 5,
    symptom:
      /is not running|not running|No such container|NotReady|timed out|no answer|unreachable|not ready|connection refused/i,
    inject: async (c) => {
      const node = c.node ?? `${c.cluster}-worker2`;
      const cmd = await run(c, ["docker", "stop", node], 120_000);
      return { what: `stopped node container ${node} for good`, commands: [cmd] };
    },
  },
  "apiserver-kill": {
    name: "apiserver-kill",
    summary: "kill kube-apiserver inside the control-plane container during a poll (the kubelet restarts it)",
    atTopic: "scale",
    delayS: 5,
    symptom:
      /connection refused|was refused|ECONNREFUSED|ServiceUnavailable|the server is currently unable|EOF|timed out|no answer|etcdserver|connect: |503|Unable to connect|kube-apiserver\S*: kube-apiserver ended/i,
    inject: async (c) => {
      const cp = `${c.cluster}-control-plane`;
      const cmd = await run(c, ["docker", "exec", cp, "pkill", "-x", "kube-apiserver"]);
      return { what: `killed kube-apiserver in ${cp}`, commands: [cmd] };
    },
  },
  sigint: {
    name: "sigint",
    summary: "SIGINT to the run mid-topic (to its process group, as Ctrl-C in a terminal)",
    atTopic: "holder",
    delayS: 5,
    symptom: null,
    inject: async (c) => {
      const to = c.signalTo ?? "group";
      c.signal("SIGINT", to);
      c.log(`fault: SIGINT sent to the run's ${to === "group" ? "process group" : "main process"}`);
      return {
        what: `SIGINT to the run's ${to === "group" ? "process group" : "main process"}`,
        commands: [],
      };
    },
  },
  sigterm: {
    name: "sigterm",
    summary: "SIGTERM to the run mid-topic (to its main process, as kill or a CI runner)",
    atTopic: "holder",
    delayS: 5,
    symptom: null,
    inject: async (c) => {
      const to = c.signalTo ?? "main";
      c.signal("SIGTERM", to);
      c.log(`fault: SIGTERM sent to the run's ${to === "group" ? "process group" : "main process"}`);
      return {
        what: `SIGTERM to the run's ${to === "group" ? "process group" : "main process"}`,
        commands: [],
      };
    },
  },
  "outside-net": {
    name: "outside-net",
    summary:
      "take the outside client's network away mid-probe (docker network disconnect kind <client>: the kind network itself cannot be removed while the nodes use it)",
    atTopic: "nodeport",
    delayS: 0,
    symptom:
      /outside|not connected|network|No route|Could not resolve|curl: \(\d+\)|exit (6|7|28)\b|is not running|HTTP 000|observed 000|observed null/i,
    inject: async (c) => {
      // the suite labels its outside client with the cluster's name (clusters/lifecycle.ts outsideClient)
      const ps = await c.exec.run({
        target: { kind: "local" },
        argv: ["docker", "ps", "-q", "--filter", `label=${OUTSIDE_LABEL}=${c.cluster}`],
        timeoutMs: 30_000,
      });
      const id = ps.stdout.trim().split("\n")[0];
      if (!id)
        throw new Error(`no outside client container (label ${OUTSIDE_LABEL}=${c.cluster}) is running`);
      const cmd = await run(c, ["docker", "network", "disconnect", "--force", "kind", id]);
      return {
        what: `disconnected the outside client ${id.slice(0, 12)} from the kind network`,
        commands: [cmd],
      };
    },
  },
};

export function parseFault(v: string | boolean | undefined): FaultName {
  if (typeof v !== "string" || !(FAULT_NAMES as readonly string[]).includes(v))
    throw new UserError(`--fault ${typeof v === "string" ? v : "(none)"}: valid: ${FAULT_NAMES.join(", ")}`);
  return v as FaultName;
}
