import { terminalText } from "../output.ts";
import { type EvidenceItem, showItem, shownValue } from "../records/evidence.ts";
import type { LabRecords, RecordName, RecordSet, UpgradeLeg } from "../records/types.ts";
import { type ConfigValues, resolveConfig } from "./config.ts";
import {
  type Deviation,
  describeExpect,
  deviations,
  type Mode,
  resolveVersion,
  satisfies,
} from "./expectation.ts";
import { isExplained, isNotApplicable, type Status } from "./status.ts";
import type { Observation, Property, RecordView } from "./types.ts";
import { assumedText, CHANGED_LABEL, declaredCilium, expectationBasis } from "./versions.ts";

export interface Verdict {
  id: string;
  topic: string;
  claim: string;
  source: string;
  mode: Mode;
  /** The Cilium version the expectation was resolved for ("1.19.7", or a minor "1.20"), or null for the default. */
  cilium: string | null;
  /**
   * known-issue: the run shows a bug the declaration names for this version (with its upstream reference):
   * neither a pass (the claim does not hold) nor a fail (the version is known to do it).
   * changed: the version is a minor the suite has not declared, and the expectation assumed from the newest
   * declared minor did not hold: changed in the new minor — a regression or a new behaviour, to be declared
   * (never a pass, and no expectation bent to fit).
   */
  status: Status;
  /** The leg under load its property judges (Property.leg); absent for every other property. */
  leg?: UpgradeLeg["kind"];
  /**
   * The declared minor whose expectations were assumed ("1.20"): set on every verdict of a minor the suite has
   * not declared (issue 38). Absent: the version's own declaration applied.
   */
  assumedFrom?: string;
  /** What the version is meant to do (for a known issue: without the bug). */
  expected: string;
  observed: string;
  /** Raw lines quoted at their place in the bundle, or values derived from named places. */
  evidence: EvidenceItem[];
  /** One paragraph a person can act on: expected vs observed and the raw lines. */
  message: string;
  /** Why it was skipped (a skip only; absent in bundles recorded before it: see skipReason). */
  reason?: string;
  /**
   * What was checked for this version, in its own words: the property's claim, or the version's claim where a
   * deviation is declared (a known issue's claim says what goes wrong). Absent in bundles recorded before it.
   */
  checked?: string;
  /** The deviation declared for this mode and version, if any (behaviour or known issue), with its source. */
  deviation?: DeviationNote;
  /**
   * The configuration the expectation was resolved for: a modelled case ("routing native"), or what was assumed
   * where the run's configuration was not read. Absent: the suite's declared expectation, nothing assumed.
   */
  configuration?: string;
  /**
   * News beside the status: a known issue declared for this version not observed any more (the fix landed), or
   * a failure that matches a known issue declared for another version.
   */
  note?: string;
}

export interface DeviationNote {
  kind: Deviation["kind"];
  versions: string;
  claim: string;
  why: string;
  /** A known issue's upstream reference. */
  upstream?: string;
  /** A known issue's value: what the bug makes the run observe. */
  expected: string;
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

/**
 * How many evidence items a verdict's message lists (issue 45): a property over a large output quotes every line
 * it counted, and the message is printed by check and vitest and kept in JUnit; the verdict's evidence keeps
 * them all (the report shows them).
 */
export const MESSAGE_EVIDENCE_ITEMS = 50;

/** A verdict's evidence as its message lists it: one item a line, each value cut, at most MESSAGE_EVIDENCE_ITEMS. */
function evidenceLines(items: readonly EvidenceItem[]): string {
  if (items.length === 0) return "    (no evidence)";
  const shownItems = items.slice(0, MESSAGE_EVIDENCE_ITEMS).map((e) => `    ${terminalText(showItem(e))}`);
  if (items.length > MESSAGE_EVIDENCE_ITEMS)
    shownItems.push(
      `    (${items.length - MESSAGE_EVIDENCE_ITEMS} more items: the report and the verdict's evidence have them all)`,
    );
  return shownItems.join("\n");
}

function show(v: unknown): string {
  if (typeof v === "string") return v;
  return JSON.stringify(v);
}

export function sourceText(p: Property): string {
  const doc =
    p.source.doc === "lab"
      ? "lab"
      : p.source.doc === "notebook"
        ? "notebook"
        : p.source.doc === "upstream"
          ? "upstream"
          : "this repository:";
  return `${doc} ${p.source.where}`;
}

/** A skip's reason: its own field, or (a verdict stored before it) what its message says after "skipped: ". */
export function skipReason(v: Pick<Verdict, "reason" | "message">): string {
  if (v.reason) return v.reason;
  const m = /: (skipped|not applicable): ([\s\S]*)$/.exec(v.message);
  if (!m) return v.message;
  return m[1] === "skipped" ? (m[2] as string) : `not applicable: ${m[2]}`;
}

function deviationNote(d: Deviation & { versions: string }): DeviationNote {
  return {
    kind: d.kind,
    versions: d.versions,
    claim: d.claim,
    why: d.why,
    ...(d.kind === "known-issue" ? { upstream: d.upstream } : {}),
    expected: describeExpect(d.expect),
  };
}

/** A known issue of another version of this mode that the observed value matches (for a failure's note). */
function matchingKnownIssue(p: Property, mode: Mode, value: unknown, own?: string): string | undefined {
  const d = deviations(p.expect[mode]).find(
    (x) => x.kind === "known-issue" && x.versions !== own && satisfies(x.expect, value),
  );
  return d && d.kind === "known-issue"
    ? `the observed value is what the known issue of Cilium ${d.versions} makes it: ${d.claim} (${d.upstream})`
    : undefined;
}

/**
 * Pure: one property, one mode, the records → a verdict. `declared` is the Cilium patches the expectations are
 * declared for (clusters/lab/versions.env): a version of a minor newer than all of them is judged against the
 * newest declared minor's expectations, the verdict marked "assumed from" it, and one that does not hold is
 * `changed`, its own status.
 */
export function judge(
  p: Property,
  mode: Mode,
  records: RecordSet,
  cilium?: string,
  config: ConfigValues | null = null,
  declared: readonly string[] = declaredCilium(),
): Verdict {
  const cfg = resolveConfig(p.config, mode, config);
  const basis = expectationBasis(cilium, declared);
  const assumed = basis.assumedFrom;
  // a message is printed line by line (check, vitest): what came from a bundle is shown in it as terminal text
  // (helpers/output.ts), so that its own newlines are the only ones, and none of the bundle's starts a line
  const where = `[${mode}${cilium ? `, Cilium ${terminalText(cilium)}` : ""}${assumed ? `, ${assumedText(assumed)}` : ""}] ${p.id}`;
  const mark = assumed ? { assumedFrom: assumed } : {};
  if (cfg.kind === "na") {
    const reason = `not applicable: ${cfg.reason}`;
    return {
      id: p.id,
      topic: p.topic,
      ...(p.leg ? { leg: p.leg } : {}),
      claim: p.claim,
      source: sourceText(p),
      mode,
      cilium: cilium ?? null,
      ...mark,
      expected: "-",
      status: "skip",
      observed: "-",
      evidence: [],
      reason,
      message: `${where}: ${reason}`,
    };
  }
  const r = resolveVersion(cfg.kind === "case" ? cfg.expect : p.expect[mode], basis.resolveAs);
  const dev = r.deviation;
  const known = dev?.kind === "known-issue" ? dev : null;
  const checked = dev?.kind === "behaviour" ? dev.claim : cfg.kind === "case" ? cfg.case.claim : p.claim;
  const configuration =
    cfg.kind === "case" ? `${cfg.settings} (a configuration the suite models)` : (cfg.assumed ?? undefined);
  const base = {
    id: p.id,
    topic: p.topic,
    ...(p.leg ? { leg: p.leg } : {}),
    claim: p.claim,
    source: sourceText(p),
    mode,
    cilium: cilium ?? null,
    ...mark,
    expected: describeExpect(r.intended),
    checked,
    ...(dev ? { deviation: deviationNote(dev) } : {}),
    ...(configuration ? { configuration } : {}),
  };
  // the claim as this version and configuration state it: "holds for Cilium 1.20: …", "holds with routing native: …"
  const forVersion =
    dev?.kind === "behaviour"
      ? ` for Cilium ${dev.versions}`
      : cfg.kind === "case"
        ? ` with ${cfg.settings}`
        : "";
  const assumedLine = cfg.kind === "declared" && cfg.assumed ? `\n  (${cfg.assumed})` : "";
  if ("na" in r.expect) {
    return {
      ...base,
      status: "skip",
      observed: "-",
      evidence: [],
      reason: `not applicable: ${r.expect.na}`,
      message: `${where}: not applicable: ${r.expect.na}`,
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
      message: `${where}: ${checked}\n  expected ${base.expected}, but it could not be observed: ${terminalText(why)}`,
    };
  }
  if (obs.skip) {
    return {
      ...base,
      status: "skip",
      observed: "-",
      evidence: obs.evidence,
      reason: obs.skip,
      message: `${where}: skipped: ${terminalText(obs.skip)}`,
    };
  }
  const observed = show(obs.value);
  const lines = evidenceLines(obs.evidence);
  const shown = `  observed: ${terminalText(shownValue(observed))}\n  evidence (${sourceText(p)}):\n${lines}`;
  if (known && satisfies(known.expect, obs.value)) {
    return {
      ...base,
      status: "known-issue",
      observed,
      evidence: obs.evidence,
      message: `${where}: KNOWN ISSUE of Cilium ${known.versions}: ${known.claim}\n  so it does not hold here: ${p.claim}\n  expected (what the version is meant to do): ${base.expected}\n  known issue: ${describeExpect(known.expect)} (${known.upstream})\n${shown}`,
    };
  }
  const ok = satisfies(r.intended, obs.value);
  if (known && ok) {
    const note = `the known issue declared for Cilium ${known.versions} is not observed any more: ${known.claim} (${known.upstream})`;
    return {
      ...base,
      status: "pass",
      observed,
      evidence: obs.evidence,
      note,
      message: `${where}: holds: ${p.claim}\n  ${note}\n  expected: ${base.expected}\n${shown}`,
    };
  }
  const elsewhere = ok ? undefined : matchingKnownIssue(p, mode, obs.value, dev?.versions);
  const knownLine = known
    ? `\n  (the known issue declared for Cilium ${known.versions} would show ${describeExpect(known.expect)}: ${known.claim})`
    : "";
  // under an assumed expectation: one that held says so; one that did not is a change of the new minor
  const said = assumed
    ? ok
      ? `holds under the expectation ${assumedText(assumed)}`
      : `CHANGED in the new minor (${CHANGED_LABEL.replace(/^changed in the new minor — /, "")})`
    : ok
      ? "holds"
      : "FAILS";
  const expectedLabel = assumed ? `expected (${assumedText(assumed)})` : "expected";
  return {
    ...base,
    status: ok ? "pass" : assumed ? "changed" : "fail",
    observed,
    evidence: obs.evidence,
    ...(elsewhere ? { note: elsewhere } : {}),
    message: `${where}: ${said}${forVersion}: ${checked}${assumedLine}\n  ${expectedLabel}: ${base.expected}${knownLine}${elsewhere ? `\n  note: ${elsewhere}` : ""}\n${shown}`,
  };
}

/**
 * A property whose topic the bundle recorded no calls for: not applicable where the configuration makes it so (a
 * topic with nothing to observe, as the ipv6 topic on an IPv4-only cluster), naming the setting; else a skip
 * naming the topic, not a missing observation.
 */
export function judgeUnrecorded(
  p: Property,
  mode: Mode,
  cilium: string,
  config: ConfigValues | null,
  declared: readonly string[] = declaredCilium(),
): Verdict {
  const na = judge(p, mode, {}, cilium, config, declared);
  if (isNotApplicable(na)) return na;
  const assumedFrom = expectationBasis(cilium, declared).assumedFrom;
  return {
    id: p.id,
    topic: p.topic,
    ...(p.leg ? { leg: p.leg } : {}),
    claim: p.claim,
    source: "",
    mode,
    cilium,
    ...(assumedFrom ? { assumedFrom } : {}),
    status: "skip",
    expected: "",
    observed: "-",
    evidence: [],
    reason: `the bundle has no recorded calls for ${p.topic}`,
    message: `${p.id}: skipped: the bundle has no recorded calls for ${p.topic}`,
  };
}

/**
 * A verdict whose topic's replay broke (`why`): no statement about the cluster, nor about a new minor, so a
 * failure as for a declared one — unless it held, a known issue explains it, or the configuration makes it not
 * applicable, which stay so whatever the replay did.
 */
export function afterBrokenReplay(v: Verdict, why: string): Verdict {
  if (isExplained(v.status) || isNotApplicable(v)) return v;
  return { ...v, status: "fail", message: `${v.message}\n  (${v.topic} could not be replayed: ${why})` };
}

export function judgeAll(
  props: Property[],
  mode: Mode,
  records: RecordSet,
  cilium?: string,
  config: ConfigValues | null = null,
): Verdict[] {
  return props.map((p) => judge(p, mode, records, cilium, config));
}
