import { type EvidenceItem, showItem } from "../records/evidence.ts";
import type { LabRecords, RecordName, RecordSet } from "../records/types.ts";
import { describeExpect, type Mode, resolve, satisfies } from "./expectation.ts";
import type { Observation, Property, RecordView } from "./types.ts";

export interface Verdict {
  id: string;
  topic: string;
  claim: string;
  source: string;
  mode: Mode;
  /** The Cilium version the expectation was resolved for ("1.19.7", or a minor "1.20"), or null for the default. */
  cilium: string | null;
  status: "pass" | "fail" | "skip";
  expected: string;
  observed: string;
  /** Raw lines quoted at their place in the bundle, or values derived from named places. */
  evidence: EvidenceItem[];
  /** One paragraph a person can act on: expected vs observed and the raw lines. */
  message: string;
}

export class MissingRecord extends Error {
  constructor(readonly record: RecordName) {
    super(`record ${record} was not collected`);
  }
}

export function recordView(set: RecordSet): RecordView {
  return {
    set,
    get<K extends RecordName>(name: K): LabRecords[K] {
      const e = set[name];
      if (!e) throw new MissingRecord(name);
      return e.record as LabRecords[K];
    },
    evidence<K extends RecordName>(name: K, field: keyof LabRecords[K]): EvidenceItem[] {
      const e = set[name] as { evidence: Record<string, EvidenceItem[] | undefined> } | undefined;
      return e?.evidence[field as string] ?? [];
    },
  };
}

function show(v: unknown): string {
  if (typeof v === "string") return v;
  return JSON.stringify(v);
}

export function sourceText(p: Property): string {
  const doc = p.source.doc === "lab" ? "lab" : p.source.doc === "notebook" ? "notebook" : "knowledge";
  return `${doc} ${p.source.where}`;
}

/** Pure: one property, one mode, the records → a verdict. */
export function judge(p: Property, mode: Mode, records: RecordSet, cilium?: string): Verdict {
  const exp = resolve(p.expect[mode], cilium);
  const base = {
    id: p.id,
    topic: p.topic,
    claim: p.claim,
    source: sourceText(p),
    mode,
    cilium: cilium ?? null,
    expected: describeExpect(exp),
  };
  const where = `[${mode}${cilium ? `, Cilium ${cilium}` : ""}] ${p.id}`;
  if ("na" in exp) {
    return {
      ...base,
      status: "skip",
      observed: "-",
      evidence: [],
      message: `${where}: not applicable: ${exp.na}`,
    };
  }
  let obs: Observation;
  try {
    obs = p.observe(recordView(records), mode);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return {
      ...base,
      status: "fail",
      observed: `(not observed: ${why})`,
      evidence: [],
      message: `${where}: ${p.claim}\n  expected ${base.expected}, but it could not be observed: ${why}`,
    };
  }
  if (obs.skip) {
    return {
      ...base,
      status: "skip",
      observed: "-",
      evidence: obs.evidence,
      message: `${where}: skipped: ${obs.skip}`,
    };
  }
  const ok = satisfies(exp, obs.value);
  const observed = show(obs.value);
  const lines =
    obs.evidence.length > 0 ? obs.evidence.map((e) => `    ${showItem(e)}`).join("\n") : "    (no evidence)";
  return {
    ...base,
    status: ok ? "pass" : "fail",
    observed,
    evidence: obs.evidence,
    message: `${where}: ${ok ? "holds" : "FAILS"}: ${p.claim}\n  expected: ${base.expected}\n  observed: ${observed}\n  evidence (${sourceText(p)}):\n${lines}`,
  };
}

export function judgeAll(props: Property[], mode: Mode, records: RecordSet, cilium?: string): Verdict[] {
  return props.map((p) => judge(p, mode, records, cilium));
}
