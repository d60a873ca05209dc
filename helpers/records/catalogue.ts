/**
 * How a topic declares a record it builds (in its folder's records file, through defineTopic): the file it is
 * written to in a bundle, an example of it, and, for the few that need it, how it is stored or merged. The
 * catalogue of every record is derived from the topic list (suites/topics.ts RECORDS), and every reader of a
 * bundle's records is handed it: helpers/ names no record.
 */

import type { Measurements } from "../measure/records.ts";
import type { Mode } from "../properties/expectation.ts";
import type { DatapathConfig } from "./datapath-config.ts";
import type { Evidenced, LabRecords, LegRun, RecordName, RecordSet } from "./types.ts";

export interface RecordDecl<T> {
  /** The file under records/ in a bundle (the lab's name where it has one); its evidence beside it, `<stem>.evidence.json`. */
  file: string;
  /**
   * A record WRITTEN BY US for each mode, shaped after the documents' values, for testing the judges
   * (suites/example-records.ts): one that satisfies every kpr expectation, one every kube-proxy one. Not observations.
   */
  example(mode: Mode): T;
  /** Stored as text, not JSON (the lab's report.txt): how it is written and read back. */
  text?: { format(record: T): string; parse(text: string): T };
  /**
   * Several topics build a part of it, each the fields it observes: the parts merge field by field (the later
   * topic's field wins), in a run, in a bundle and in `check`.
   */
  merged?: true;
  /**
   * Set on the record that holds the run's datapath configuration (one topic's): every expectation is resolved
   * for it (helpers/properties/config.ts), and the report and `check` show it.
   */
  configuration?: (record: T) => DatapathConfig;
  /** Set on a record of legs under load (a leg topic's): its legs as the upgrade gate and the report read them. */
  legs?: (record: T) => LegRun;
  /**
   * Set on a record of measurements (values that differ run to run by nature: times, counts under load): what
   * `summary` and the report draw of it; `check` says a difference of its properties is a measurement's.
   */
  measurements?: (record: T) => Measurements;
}

/** The records a topic declares, by name. */
export type RecordDecls = { [K in RecordName]?: RecordDecl<LabRecords[K]> };

/** Every record a bundle may hold, by name: the union of the topics' declarations (suites/topics.ts RECORDS). */
export type RecordCatalogue = Readonly<RecordDecls>;

/**
 * The catalogue of the topics' records, in the topics' order: a record two topics build (a merged one, or one a
 * later topic rebuilds) must be the same declaration in both.
 */
export function recordCatalogue(topics: readonly { name: string; records: RecordDecls }[]): RecordCatalogue {
  const out: Record<string, RecordDecl<unknown>> = {};
  const by: Record<string, string> = {};
  for (const t of topics)
    for (const [name, decl] of Object.entries(t.records) as [string, RecordDecl<unknown>][]) {
      const had = out[name];
      if (had && had !== decl)
        throw new Error(`record ${name} is declared twice, by ${by[name]} and by ${t.name}: declare it once`);
      out[name] = decl;
      by[name] ??= t.name;
    }
  return out as RecordCatalogue;
}

/** A catalogue's declarations, each with its name. */
export function declarations(c: RecordCatalogue): [RecordName, RecordDecl<unknown>][] {
  return Object.entries(c) as [RecordName, RecordDecl<unknown>][];
}

/** Merges parts of one merged record (fields and evidence), in order. */
export function mergeParts<T>(parts: (Evidenced<T> | undefined)[]): Evidenced<T> {
  const out = { record: {}, evidence: {} } as Evidenced<T>;
  for (const p of parts) {
    if (!p) continue;
    Object.assign(out.record as object, p.record);
    Object.assign(out.evidence, p.evidence);
  }
  return out;
}

/** Merges topic outputs: later records replace earlier ones; a merged record's parts merge, field by field. */
export function mergeRecordSets(sets: RecordSet[], catalogue: RecordCatalogue): RecordSet {
  const merged = declarations(catalogue)
    .filter(([, d]) => d.merged)
    .map(([n]) => n);
  const out: Record<string, Evidenced<unknown> | undefined> = {};
  for (const s of sets) {
    const parts: Record<string, Evidenced<unknown>> = {};
    for (const n of merged) parts[n] = mergeParts([out[n], (s as Record<string, Evidenced<unknown>>)[n]]);
    Object.assign(out, { ...s, ...parts });
  }
  for (const n of merged) if (Object.keys(out[n]?.record ?? {}).length === 0) delete out[n];
  return out as RecordSet;
}

/** The run's datapath configuration, from the record declared to hold it, or null (a bundle recorded before it). */
export function runConfiguration(set: RecordSet, catalogue: RecordCatalogue): DatapathConfig | null {
  for (const [name, d] of declarations(catalogue)) {
    const e = (set as Record<string, Evidenced<unknown> | undefined>)[name];
    if (d.configuration && e) return d.configuration(e.record);
  }
  return null;
}

/** The names of the records whose values are measurements (RecordDecl.measurements). */
export function measuredRecords(catalogue: RecordCatalogue): Set<string> {
  return new Set(
    declarations(catalogue)
      .filter(([, d]) => d.measurements)
      .map(([n]) => n),
  );
}

/** What a set's records of measurements hold (RecordDecl.measurements), together. */
export function measurementsOf(set: RecordSet, catalogue: RecordCatalogue): Measurements {
  let out: Measurements = {};
  for (const [name, d] of declarations(catalogue)) {
    const e = (set as Record<string, Evidenced<unknown> | undefined>)[name];
    if (d.measurements && e) out = { ...out, ...d.measurements(e.record) };
  }
  return out;
}

/** The legs under load a set's records hold (RecordDecl.legs), record by record in the catalogue's order. */
export function legRunsOf(set: RecordSet, catalogue: RecordCatalogue): LegRun[] {
  const out: LegRun[] = [];
  for (const [name, d] of declarations(catalogue)) {
    const e = (set as Record<string, Evidenced<unknown> | undefined>)[name];
    if (d.legs && e) out.push(d.legs(e.record));
  }
  return out;
}

/** Every record's example for `mode`, without evidence (suites/example-records.ts). */
export function exampleRecords(catalogue: RecordCatalogue, mode: Mode): RecordSet {
  return Object.fromEntries(
    declarations(catalogue).map(([n, d]) => [n, { record: d.example(mode), evidence: {} }]),
  ) as RecordSet;
}
