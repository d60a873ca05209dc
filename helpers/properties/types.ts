import type { EvidenceItem } from "../records/evidence.ts";
import type { LabRecords, RecordName, RecordSet, UpgradeLeg } from "../records/types.ts";
import type { PropertyConfig } from "./config.ts";
import type { Mode, ModeExpectation } from "./expectation.ts";

/** A topic's name: any string here; the union of the listed ones is suites/topics.ts Topic. */
export type Topic = string;

/**
 * Where a claim comes from, as a reader can open it: a step of a field document (docs/glossary.md), an upstream text
 * (a URL, a file at a tag, a PR), or a file of this repository.
 */
export interface Source {
  /**
   * The lab and the notebook (the two field documents), an upstream text: Kubernetes docs or a KEP, Cilium's docs
   * or code at a tag, a PR; or a file of this repository (a doc page, a shipped bundle).
   */
  doc: "lab" | "notebook" | "upstream" | "repository";
  /** e.g. "step 1", "§7", "https://github.com/cilium/cilium/blob/v1.20.2/bpf/bpf_sock.c#L337-L343", "docs/running.md#faults". */
  where: string;
}

export interface Observation {
  /** The value compared with the expectation (what the table's "observed" column shows). */
  value: unknown;
  /** Raw lines quoted at their place, or values derived from named places, that support it. */
  evidence: EvidenceItem[];
  /** Set when the observation could not be made in this environment (the verdict is a skip with this reason). */
  skip?: string;
}

/** Records available to an observer; `get` throws a clear error when a needed record is absent. */
export interface RecordView {
  get<K extends RecordName>(name: K): LabRecords[K];
  evidence<K extends RecordName>(name: K, field: keyof LabRecords[K]): EvidenceItem[];
  set: RecordSet;
}

/**
 * How far a property's observed value may move between two runs before `compare` calls it a behaviour change
 * (even where both verdicts agree). Absent: exact (any change of the observed value is one).
 * - factor: a number, or a list of numbers judged by its largest (the worst probe), may grow or shrink by this
 *   factor; values both under `floor` count as equal (noise below what the claim cares about);
 * - abs: a number may move by this much;
 * - ignore: the value differs run to run by nature (an id, an address): the reason.
 */
export type Tolerance =
  | { exact: true }
  | { factor: number; floor: number; unit: string }
  | { abs: number }
  | { ignore: string };

/**
 * A property's place in its IP-family pair (helpers/properties/family.ts), declared on the IPv6 member: `of`, the
 * IPv4 property it asks again of the IPv6 family, with `differs`, each mode whose expectation departs from the
 * twin's and why; or `alone`, why it has no IPv4 twin.
 */
export type FamilyDeclaration =
  | { ip: "ipv6"; of: string; differs?: Partial<Record<Mode, string>> }
  | { ip: "ipv6"; alone: string };

export interface Property {
  id: string;
  topic: Topic;
  /** The claim in plain words. */
  claim: string;
  source: Source;
  /** Where the expectation per mode comes from, when it is not the document itself. */
  why?: string;
  expect: Record<Mode, ModeExpectation>;
  needs: RecordName[];
  /** Pure: records in, observed value and evidence out. */
  observe(r: RecordView, mode: Mode): Observation;
  /** How far its observed value may move between runs (compare); absent: exact. */
  tolerance?: Tolerance;
  /**
   * What its expectation depends on in the live datapath configuration: "none", or the settings it assumes per
   * mode and the other configurations the suite models (a setting it does not model: not applicable).
   */
  config: PropertyConfig;
  /** Set on a property of an IPv6 topic: its IPv4 twin, or why it has none (helpers/properties/family.ts). */
  family?: FamilyDeclaration;
  /** The leg under load it judges (a leg topic's property: helpers/observe/leg.ts), for the upgrade gate and the report. */
  leg?: UpgradeLeg["kind"];
}
