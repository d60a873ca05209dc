/** The lifecycle topic's record: what it read before and after each change to Pods and ports. */
import type { Mode } from "../../helpers/properties/expectation.ts";
import type { RecordDecls } from "../../helpers/records/catalogue.ts";
import type { EdgeSite, NodeDrop, Probe } from "../../helpers/records/types.ts";
import { EXAMPLE_SITE, exampleProbe } from "../surface.ts";

/** One deletion of the hostPort StatefulSet's Pod and what the edge node and a Pod on the far node saw after it. */
export interface HostPortCycle {
  /** `graceful` (kubectl delete) or `force` (--grace-period=0 --force: a lost node, an impatient operator). */
  how: "graceful" | "force";
  old_ip: string;
  new_ip: string;
  /** The TCP HostPort frontend at the edge node's address: its backends once settled (or at the deadline). */
  frontend_backends: string[];
  /** ms from the new Pod's readiness until the frontend named it; null when it never did within the deadline. */
  settled_ms: number | null;
  /** TCP to the hostPort, from a Pod on the far node. */
  hostport: Probe;
  /** TCP to the Service (ClusterIP) in front of the Pod, from the same Pod. */
  service: Probe;
}

/** A UDP request (agnhost netexec answers `hostname` with its name): where from, to what, and what came back. */
export interface UdpProbe {
  from: string;
  to: string;
  /** The answer's text, or null when none came within 2 s. */
  answer: string | null;
  exit: number;
}

export interface LifecycleRecord extends EdgeSite {
  host_port: number;
  hostport_cycles: HostPortCycle[];
  /** Agent log lines on the edge node since the run began that name a frontend owned by another service. */
  conflict_lines: number;
  /** UDP on the same port numbers as TCP: the hostPort and the Service port, after the last recreation. */
  hostport_udp: UdpProbe | null;
  service_udp: UdpProbe | null;
  /**
   * What the edge and far nodes' datapath dropped during the graceful and during the forced recreations (BPF drop
   * counters before and after each). Absent in bundles recorded before they were read.
   */
  graceful_drops?: NodeDrop[];
  forced_drops?: NodeDrop[];
}

declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    lifecycle: LifecycleRecord;
  }
}

/** The record as the declarations expect it (written by us, not an observation): every change healed, per mode. */
function lifecycleExample(mode: Mode): LifecycleRecord {
  const kpr = mode === "kpr";
  const probe = (url: string, verdict: string, body: string | null) =>
    exampleProbe("pod far", url, verdict, body);
  const hp = kpr
    ? probe("http://172.31.100.4:8091/hostname", "HTTP 200", "lc-hp-0")
    : probe("http://172.31.100.4:8091/hostname", "REFUSED", null);
  const cycle = (how: "graceful" | "force", n: number): HostPortCycle => ({
    how,
    old_ip: `10.244.1.${10 + n}`,
    new_ip: `10.244.1.${11 + n}`,
    frontend_backends: kpr ? [`10.244.1.${11 + n}:8080`] : [],
    settled_ms: kpr ? 900 : 0,
    hostport: hp,
    service: probe("http://10.96.20.20/hostname", "HTTP 200", "lc-hp-0"),
  });
  return {
    ...EXAMPLE_SITE,
    host_port: 8091,
    hostport_cycles: [cycle("graceful", 0), cycle("graceful", 1), cycle("force", 2), cycle("force", 3)],
    conflict_lines: 0,
    hostport_udp: {
      from: "pod far",
      to: "udp://172.31.100.4:8091",
      answer: kpr ? "lc-hp-0" : null,
      exit: 0,
    },
    service_udp: { from: "pod far", to: "udp://10.96.20.20:80", answer: "lc-hp-0", exit: 0 },
  };
}

/** The record this topic builds: its file in a bundle and its example. */
export const records = {
  lifecycle: { file: "lifecycle.json", example: (mode) => lifecycleExample(mode) },
} satisfies RecordDecls;
