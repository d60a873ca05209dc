/**
 * Schema at the door (issue 36): one declared schema per file a bundle holds that is read as JSON —
 * `bundle.json`, each line of `calls/<topic>.jsonl`, each line of `verdicts.jsonl`, `records/*.evidence.json` —
 * every field with its type and its cap (FIELD_CAPS: characters of a string, items of a list, keys of an object),
 * checked when the file is read. The types the code uses are the schemas' own (`v.InferOutput`): what passed the
 * door is what the type says, and a field no schema declares never reaches the code (valibot's `object` drops it).
 *
 * Why valibot: a well-kept schema library (its types inferred, small, no dependency) in place of the hand-written
 * `Shape` checks this file replaces, which had grown field by field and checked types but not sizes; valibot's
 * modules load in milliseconds (the CLI starts with every command), where zod's whole package is larger.
 *
 * A file that does not match is one BundleFault naming the bundle, the file and line, and the field:
 * `bundle.json:4: "cilium": a string of 1048576 characters, over its cap of 256 (docs/report-and-cli.md "Limits")`.
 * (records/<name>.json, the records a run derived, are not read by check, compare, report or summary: they
 * derive them again from the raw outputs; the run itself and the README's table read them.)
 */
import * as v from "valibot";
import type { JsonPath } from "../parse/json-scan.ts";
import { jsonScan } from "../parse/json-scan.ts";
import { MODES } from "../properties/expectation.ts";
import { STATUSES } from "../properties/status.ts";
import { BundleFault, shown } from "./files.ts";

/** The caps on one field of a bundle's JSON (docs/report-and-cli.md "Limits" lists them). */
export const FIELD_CAPS = {
  /** A name: a version, a mode, a property's id, a provider, a node, a time stamp, a target. */
  name: 256,
  /** A path inside the bundle (`raw/<topic>/NNN-….txt.gz`): the system's own PATH_MAX. */
  path: 4096,
  /** A sentence: an origin, a claim, a reason, a note, a never-run-here line. */
  text: 4096,
  /** A value shown: expected, observed, a quoted raw line, a derived value, an argv word. */
  value: 64 * 1024,
  /** A call's stderr, its inline stdin and its key; a verdict's message. */
  long: 1024 * 1024,
  /** Items of a list (argv, evidence, places), keys of an object (phases, agentStarts). */
  items: 10_000,
} as const;

const capped = (cap: number) => v.pipe(v.string(), v.maxLength(cap));
const name = capped(FIELD_CAPS.name);
const path = capped(FIELD_CAPS.path);
const text = capped(FIELD_CAPS.text);
const value = capped(FIELD_CAPS.value);
const long = capped(FIELD_CAPS.long);
const num = v.pipe(v.number(), v.finite());
const int = v.pipe(v.number(), v.integer());
const list = <T extends v.GenericSchema>(item: T, cap: number = FIELD_CAPS.items) =>
  v.pipe(v.array(item), v.maxLength(cap));
/** An object used as a map (`phases`, `agentStarts`): keys are names, at most FIELD_CAPS.items of them. */
const dict = <T extends v.GenericSchema>(item: T) =>
  v.pipe(
    v.record(name, item),
    v.check(
      (o) => Object.keys(o).length <= FIELD_CAPS.items,
      (issue) =>
        `an object of ${Object.keys(issue.input as object).length} keys, over its cap of ${FIELD_CAPS.items} (docs/report-and-cli.md "Limits")`,
    ),
  );

/** A Cilium minor as a bundle may name one: `X.Y` (1.20), nothing else. */
export const MINOR_PATTERN = /^\d{1,3}\.\d{1,3}$/;

/**
 * A minor, checked at the door (issue 45): an upgrade's `fromMinor` and `toMinor` name a folder of
 * suites/bundles (the shipped fresh bundle the gate compares with), so `../..` in one would make any folder on
 * the disk the "fresh install"; `ciliumMinor` is held to the same form.
 */
const minor = v.pipe(
  v.string(),
  v.check(
    (s) => MINOR_PATTERN.test(s),
    (issue) => `expected a Cilium minor (X.Y, such as 1.20), found ${found(issue.input)}`,
  ),
);

/** The upgrade leg a run was asked for (UPGRADE_TO), kept in bundle.json so a replay runs it again. */
export const UPGRADE_PLAN = v.object({
  /** The installed version (full patch) and its minor. */
  from: name,
  fromMinor: minor,
  to: name,
  toMinor: minor,
  /** The run's helm values file (reused in full: no --reuse-values across minors). */
  valuesFile: path,
  /** For the preflight chart in KPR mode (the upgrade guide passes the API server to it too). */
  k8sServiceHost: v.optional(name),
  k8sServicePort: v.optional(int),
  /**
   * LAB_IMAGES=1: no registry, so the target version's chart is the lab's copy from its module, its images are
   * `kind load`ed onto the cluster first, and `set` points the agent, operator and preflight at them.
   */
  lab: v.optional(
    v.object({
      chart: path,
      cluster: name,
      load: list(path),
      set: list(text),
      /** What the lab changed in the target version's build (its images' label), when it has been built. */
      patch: v.optional(text),
    }),
  ),
  /** ROLLBACK=1: after the upgrade, `helm rollback` to the revision before (the upgrade guide's way back). */
  rollback: v.optional(v.boolean()),
});

/** bundle.json: what ran — mode, versions, provider, origin, phase times. */
export const BUNDLE_JSON = v.object({
  format: v.optional(v.literal(1), 1),
  mode: v.picklist(MODES),
  cilium: name,
  ciliumMinor: minor,
  kubernetes: v.nullish(name, null),
  kernel: v.nullish(name, null),
  attachMode: v.nullish(name, null),
  provider: name,
  /** `recorded` from a real cluster, or `hand-made` (with how it was made). */
  origin: text,
  runId: name,
  createdAt: name,
  phases: dict(num),
  /**
   * Per node, its agent's own start: from the Pod's start (status.startTime) to its first `cilium-dbg status
   * --brief` OK (clusters/readiness.ts); phases["agents' own start (max)"] is the slowest.
   */
  agentStarts: v.optional(
    dict(v.object({ pod: name, podStart: v.nullable(name), firstOk: name, seconds: v.nullable(num) })),
  ),
  /** The cluster's kubectl context (helm runs against it in the upgrade leg). */
  kubeContext: v.optional(name),
  /** What the suite had never run among this run's versions, one line each (clusters/versions.ts neverRunHere). */
  neverRunHere: v.optional(list(text, 100)),
  /** The datapath profile the run asked for (DATAPATH_PROFILE / --profile); absent: the suite's default. */
  datapathProfile: v.optional(name),
  /** The user's Helm values (CILIUM_VALUES / --values): the file's name and the keys the suite overrode. */
  userValues: v.optional(v.object({ file: path, overridden: list(text) })),
  /**
   * The run namespace the topics used, when it is not `cca-dp` (the existing provider's `cca-dp-<run-id>`): a
   * replay asks for the same namespace the recorded calls name.
   */
  namespace: v.optional(name),
  /** The upgrade leg this run was asked for (UPGRADE_TO), so a replay can run it again. */
  upgrade: v.optional(UPGRADE_PLAN),
  /** Recorded with the offline lab's images (LAB_IMAGES=1): where they came from and the Cilium patch label. */
  lab: v.optional(
    v.object({
      note: v.optional(text),
      ciliumImage: v.optional(text),
      ciliumSource: v.optional(text),
      /** clusters/lab/patch-cilium.sh's label: `none: …` when Cilium's code was built unchanged. */
      patch: v.optional(text),
      kubernetesSource: v.optional(text),
      nodeImage: v.optional(text),
    }),
  ),
});

/** One line of calls/<topic>.jsonl: a command the run made, its exit, its time, where its output is. */
export const CALL_RECORD = v.object({
  seq: int,
  key: long,
  target: name,
  argv: list(value),
  stdin: v.optional(long),
  /** A large stdin (a bulk apply) is kept beside the stdout instead, compressed, relative to the bundle. */
  stdinFile: v.optional(path),
  exitCode: v.nullable(int),
  durationMs: num,
  at: name,
  /** Output files, relative to the bundle directory (`.txt.gz` when large: helpers/exec/raw-file.ts). */
  stdoutFile: path,
  stderr: long,
});

/** A place in the bundle an evidence item names (helpers/records/evidence.ts `Place`). */
const PLACE = v.object({
  file: path,
  call: v.optional(int),
  stream: v.optional(v.literal("stderr")),
  line: v.optional(int),
});
const QUOTE = v.object({ quote: value, at: v.object({ ...PLACE.entries, line: int }) });
const DERIVED = v.object({ derived: value, from: list(PLACE) });
/** An evidence item: a quote at its place, a value derived from named places, or (before issue 19) a plain line. */
const EVIDENCE_ITEM = v.union([value, QUOTE, DERIVED], "is neither a line nor an evidence item");

/** One line of verdicts.jsonl: a property as the run judged it (helpers/properties/judge.ts `Verdict`). */
export const STORED_VERDICT = v.object({
  id: name,
  topic: name,
  claim: text,
  source: v.optional(text),
  mode: v.optional(name),
  cilium: v.nullish(name),
  status: v.picklist(STATUSES),
  /** The declared minor whose expectations were assumed (a minor the suite had not declared: issue 38). */
  assumedFrom: v.optional(name),
  expected: value,
  observed: value,
  evidence: list(EVIDENCE_ITEM),
  message: long,
  reason: v.optional(text),
  checked: v.optional(text),
  deviation: v.optional(
    v.object({
      kind: name,
      versions: name,
      claim: text,
      why: text,
      upstream: v.optional(text),
      expected: v.optional(value),
    }),
  ),
  configuration: v.optional(text),
  note: v.optional(text),
});

/** records/<name>.evidence.json: per field of the record, its evidence items (plain lines in older bundles). */
export const RECORD_EVIDENCE = dict(list(EVIDENCE_ITEM));

export type BundleJson = v.InferOutput<typeof BUNDLE_JSON>;
export type UpgradePlanJson = v.InferOutput<typeof UPGRADE_PLAN>;
export type CallRecordJson = v.InferOutput<typeof CALL_RECORD>;
export type StoredVerdict = v.InferOutput<typeof STORED_VERDICT>;

/** What a schema expects, in words: `a string`, `a number or null`, `one of "kpr", "kube-proxy"`. */
function expects(schema: v.GenericSchema): string {
  const s = schema as v.GenericSchema & {
    wrapped?: v.GenericSchema;
    options?: readonly (v.GenericSchema | string)[];
    literal?: unknown;
    message?: unknown;
  };
  switch (s.type) {
    case "string":
      return "a string";
    case "number":
      return "a number";
    case "boolean":
      return "true or false";
    case "object":
    case "record":
      return "an object";
    case "array":
      return "a list";
    case "literal":
      return JSON.stringify(s.literal);
    case "picklist":
      return `one of ${(s.options ?? []).map((o) => JSON.stringify(o)).join(", ")}`;
    case "nullable":
    case "nullish":
      return `${expects(s.wrapped as v.GenericSchema)} or null`;
    case "optional":
      return expects(s.wrapped as v.GenericSchema);
    case "union":
      return (s.options as v.GenericSchema[]).map(expects).join(" or ");
    default:
      return s.expects;
  }
}

/** The schema of the field at `keys` below `schema` (through optional, nullable, objects, lists and maps). */
function schemaAt(schema: v.GenericSchema, keys: readonly unknown[]): v.GenericSchema | null {
  let s = schema as v.GenericSchema & {
    wrapped?: v.GenericSchema;
    entries?: Record<string, v.GenericSchema>;
    item?: v.GenericSchema;
    value?: v.GenericSchema;
  };
  for (const k of keys) {
    while (s.type === "optional" || s.type === "nullable" || s.type === "nullish") s = s.wrapped as typeof s;
    const next =
      s.type === "object"
        ? s.entries?.[String(k)]
        : s.type === "array"
          ? s.item
          : s.type === "record"
            ? s.value
            : undefined;
    if (!next) return null;
    s = next as typeof s;
  }
  return s;
}

/** What a field holds, for a message: `a string "fast"`, `a list`, `nothing`. */
function found(x: unknown): string {
  if (x === undefined) return "nothing";
  if (x === null) return "null";
  if (Array.isArray(x)) return "a list";
  if (typeof x === "object") return "an object";
  return `${typeof x === "string" ? "a string" : `a ${typeof x}`} ${shown(x)}`;
}

/** `"phases"."create cluster"`, `"argv"[1]`, `evidence[0]`: a field's path as messages name it. */
function fieldName(keys: JsonPath, quoted = true): string {
  return keys
    .map((p) => (typeof p === "number" ? `[${p}]` : quoted ? JSON.stringify(p) : p))
    .join(".")
    .replace(/\.\[/g, "[");
}

/** The first issue of a failed parse, in one line: what the field is and what it should be. */
function why(schema: v.GenericSchema, issue: v.BaseIssue<unknown>): { keys: JsonPath; why: string } {
  const items = issue.path ?? [];
  const last = items.at(-1) as { origin?: string; input?: unknown } | undefined;
  // a list where an object was expected reads as one with its fields missing: said as what it is
  if (issue.type === "object" && issue.input === undefined && Array.isArray(last?.input)) {
    const parent = items.slice(0, -1);
    const keys = parent.map((p) => p.key as string | number);
    return { keys, why: `${keys.length ? `${fieldName(keys)}: ` : ""}expected an object, found a list` };
  }
  const keys = items.map((p) => p.key as string | number);
  const field = fieldName(keys);
  const at = field ? `${field}: ` : "";
  if (issue.type === "max_length") {
    const n = issue.received;
    const cap = `over its cap of ${(issue as v.MaxLengthIssue<string, number>).requirement} (docs/report-and-cli.md "Limits")`;
    if (last?.origin === "key") return { keys, why: `${at}a key of ${n} characters, ${cap}` };
    return {
      keys,
      why: `${at}${Array.isArray(issue.input) ? `a list of ${n} items` : `a string of ${n} characters`}, ${cap}`,
    };
  }
  if (issue.type === "check") return { keys, why: `${at}${issue.message}` };
  if (issue.type === "union" && issue.message === "is neither a line nor an evidence item")
    return { keys, why: `${fieldName(keys, false)} ${issue.message}` };
  if (issue.type === "finite" || issue.type === "integer")
    return {
      keys,
      why: `${at}expected ${issue.type === "finite" ? "a finite number" : "a whole number"}, found ${found(issue.input)}`,
    };
  const target = schemaAt(schema, keys);
  return {
    keys,
    why: `${at}expected ${target ? expects(target) : issue.expected}, found ${found(issue.input)}`,
  };
}

/**
 * `value` (a parsed JSON document or line of the bundle `dir`) checked against `schema`: its typed output, or a
 * BundleFault naming `where(keys)` (the file and the line of the field at fault) and what is wrong there.
 */
export function checked<S extends v.GenericSchema>(
  dir: string,
  schema: S,
  input: unknown,
  where: (keys: JsonPath) => string,
): v.InferOutput<S> {
  const r = v.safeParse(schema, input, { abortEarly: true });
  if (r.success) return r.output;
  const { keys, why: message } = why(schema, r.issues[0] as v.BaseIssue<unknown>);
  throw new BundleFault(dir, where(keys), message);
}

/** For a JSON Lines file: every field is at the line's own number. */
export const atLine = (rel: string, line: number) => () => `${rel}:${line}`;

/** For a JSON document: each field at its own line (the enclosing value's when the field is missing). */
export function atField(rel: string, text: string): (keys: JsonPath) => string {
  let lineOf: ((p: JsonPath) => number | null) | null = null;
  try {
    lineOf = jsonScan(text).lineOf;
  } catch {
    lineOf = null;
  }
  return (keys) => {
    for (let n = keys.length; n >= 0 && lineOf; n--) {
      const line = lineOf(keys.slice(0, n));
      if (line !== null) return `${rel}:${line}`;
    }
    return rel;
  };
}
