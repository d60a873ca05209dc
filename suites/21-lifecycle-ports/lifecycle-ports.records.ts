/** The lifecycle-ports topic's record: what it read after endpoints were removed and ports reused. */
import type { Mode } from "../../helpers/properties/expectation.ts";
import type { RecordDecls } from "../../helpers/records/catalogue.ts";
import type { EdgeSite, NodeDrop, Probe } from "../../helpers/records/types.ts";
import { EXAMPLE_SITE, exampleProbe } from "../surface.ts";

/** One round of a client coming back to a NodePort from the same source port after its backend was deleted. */
export interface ReuseRound {
  source_port: number;
  first_backend: string | null;
  /** The backend deleted between the two connections (the one that answered the first). */
  deleted: string | null;
  second_backend: string | null;
  second_exit: number;
}

export interface LifecyclePortsRecord extends EdgeSite {
  /** Requests to each of two Services over the same Pods after the other one lost its endpoints. */
  pair_after_longer_removed: Probe[];
  pair_after_shorter_removed: Probe[];
  reuse_rounds: ReuseRound[];
  /** The outside client's address (inside lc-lsr-in's range, outside lc-lsr-out's); null without one. */
  outside_ip: string | null;
  lsr_in_lb: Probe | null;
  lsr_in_external: Probe | null;
  lsr_out_lb: Probe | null;
  lsr_out_external: Probe | null;
  /**
   * What the edge and far nodes' datapath dropped during the source-port rounds and during the source-range requests
   * (BPF drop counters before and after each). Absent in bundles recorded before they were read.
   */
  reuse_drops?: NodeDrop[];
  lsr_drops?: NodeDrop[];
}

declare module "../../helpers/records/types.ts" {
  interface LabRecords {
    lifecyclePorts: LifecyclePortsRecord;
  }
}

/** The record as the declarations expect it (written by us, not an observation): every change healed, per mode. */
function lifecyclePortsExample(mode: Mode): LifecyclePortsRecord {
  const kpr = mode === "kpr";
  const probe = (url: string, verdict: string, body: string | null) =>
    exampleProbe("pod far", url, verdict, body);
  const pair = Array.from({ length: 6 }, () => probe("http://10.96.20.21/hostname", "HTTP 200", "lc-pair-a"));
  const out = (url: string, verdict: string) => ({
    ...probe(url, verdict, verdict === "HTTP 200" ? "lc-pair-a" : null),
    from: "outside",
  });
  return {
    ...EXAMPLE_SITE,
    pair_after_longer_removed: pair,
    pair_after_shorter_removed: pair,
    reuse_rounds: [
      {
        source_port: 40791,
        first_backend: "lc-reuse-a",
        deleted: "lc-reuse-a",
        second_backend: "lc-reuse-b",
        second_exit: 0,
      },
    ],
    outside_ip: "172.31.100.5",
    lsr_in_lb: out("http://172.31.100.243:81/hostname", "HTTP 200"),
    lsr_in_external: out("http://172.31.100.248:81/hostname", "HTTP 200"),
    lsr_out_lb: out("http://172.31.100.244:82/hostname", "TIMEOUT"),
    lsr_out_external: out("http://172.31.100.248:82/hostname", kpr ? "TIMEOUT" : "HTTP 200"),
  };
}

/** The record this topic builds: its file in a bundle and its example. */
export const records = {
  lifecyclePorts: { file: "lifecycle-ports.json", example: (mode) => lifecyclePortsExample(mode) },
} satisfies RecordDecls;
