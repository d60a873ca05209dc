/**
 * The "what we have run for real" table of docs/status.md, rendered from the shipped recorded bundles themselves:
 * per Cilium version × mode × provider, what ran (topics), what `check` makes of it today (one count per bundle:
 * today's judgement, with how many of the verdicts the run stored differ from it) and how long each phase took;
 * per upgrade leg, its duration and its traffic record. Each cell links to its bundle.
 */
import { relative } from "node:path";
import { type BundleMeta, bundleTopics, readMeta, readStoredVerdicts } from "../bundle/read.ts";
import type { DatapathConfig } from "../records/datapath-config.ts";
import type { UpgradeLeg } from "../records/types.ts";
import { connectionSurvived, legOutageMs } from "../records/upgrade.ts";

export interface RunRow {
  dir: string;
  meta: BundleMeta;
  topics: string[];
  legs: UpgradeLeg[];
  config: DatapathConfig | null;
}

/**
 * What a run's records give the table: its upgrade legs, and the datapath configuration it observed (null: a
 * bundle recorded before the config was read). The caller reads them (the records are its topics': scripts/).
 */
export interface RunRecords {
  legs: UpgradeLeg[];
  config: DatapathConfig | null;
}

export function readRun(dir: string, records: (dir: string) => RunRecords): RunRow {
  const meta = readMeta(dir);
  const stored = readStoredVerdicts(dir) ?? [];
  // the topics that made calls, and those that ran without one (ipv6 on an IPv4-only cluster: judged n/a)
  const topics = [...new Set([...bundleTopics(dir), ...stored.map((v) => v.topic)])];
  return { dir, meta, topics, ...records(dir) };
}

/**
 * What `check` says of a bundle today (the caller judges it: helpers/check.ts checkBundle): its verdicts by status,
 * and how many of the verdicts the run stored differ from them (null: the bundle stores none).
 */
export interface Judged {
  pass: number;
  fail: number;
  knownIssue: number;
  skip: number;
  changed: number;
  differences: number | null;
  /** The properties that fail today (a change in a new minor among them), by id: what the status page names. */
  failing?: string[];
}

const s = (x: number | undefined) => (x === undefined ? "–" : `${Math.round(x)} s`);

/** A phase of the specs: a topic's own time (`spec <topic>`) or theirs together (`specs (wall)`). */
export const isSpecPhase = (name: string) => name.startsWith("spec ") || name === SPECS_WALL;
export const SPECS_WALL = "specs (wall)";

/**
 * The specs' seconds: their wall time where the run recorded it (topics observed at once since issue 27, so less
 * than the sum of their own times), else the sum of each topic's own (one at a time, as every earlier run).
 */
export function specsSeconds(phases: Record<string, number>): number {
  const wall = phases[SPECS_WALL];
  if (wall !== undefined) return wall;
  return Object.entries(phases)
    .filter(([k]) => k.startsWith("spec "))
    .reduce((a, [, v]) => a + v, 0);
}

/** Phases measured inside another (not a phase of their own): the slowest agent's start happens while Cilium gets ready. */
const WITHIN: Record<string, string> = { "agents' own start (max)": "Cilium ready" };

export interface PhaseRow {
  name: string;
  seconds: number;
  /** Nested rows: inside this phase's time, not added to the total. */
  within: { name: string; seconds: number }[];
}

/**
 * A run's phases as wall time (issue 37: the run card added up overlapping phases, 304 s for a 198 s run): the
 * phases one after another, the topics' own times nested under their wall time (`specs (wall)`: topics observed
 * at once since issue 27; without it, the topics ran one after another and their sum is the specs' time), and a
 * measurement taken inside a phase (the agents' own start, inside Cilium ready) nested under it. The total is
 * the sum of the rows, so it adds up.
 */
export function phaseRows(phases: Record<string, unknown>): { rows: PhaseRow[]; total: number } {
  const num = Object.entries(phases).filter((e): e is [string, number] => typeof e[1] === "number");
  const specs = num.filter(([k]) => isSpecPhase(k) && k !== SPECS_WALL);
  const wall = phases[SPECS_WALL];
  const rows: PhaseRow[] = [];
  for (const [name, sec] of num) {
    if (isSpecPhase(name) || WITHIN[name] !== undefined) continue;
    rows.push({
      name,
      seconds: sec,
      within: num.filter(([k]) => WITHIN[k] === name).map(([k, v]) => ({ name: k, seconds: v })),
    });
  }
  // a measurement whose phase the run did not record stands on its own
  for (const [name, sec] of num)
    if (WITHIN[name] !== undefined && !rows.some((r) => r.name === WITHIN[name]))
      rows.push({ name, seconds: sec, within: [] });
  if (specs.length > 0 || typeof wall === "number")
    rows.push({
      name: typeof wall === "number" ? SPECS_WALL : "specs (one after another)",
      seconds: typeof wall === "number" ? wall : specs.reduce((t, [, v]) => t + v, 0),
      within: specs.map(([k, v]) => ({ name: k, seconds: v })),
    });
  return { rows, total: rows.reduce((t, r) => t + r.seconds, 0) };
}

/**
 * Seconds of the phases a run has: cluster creation, Cilium ready, the specs together, end to end (wall time: a
 * measurement inside a phase, the agents' own start, is not added; as bench's phasesSum and the report's run card).
 */
export function runTimes(meta: BundleMeta): {
  create?: number;
  ready?: number;
  specs: number;
  total: number;
} {
  const ph = meta.phases;
  return {
    ...(ph["create cluster"] !== undefined ? { create: ph["create cluster"] } : {}),
    ...(ph["Cilium ready"] !== undefined ? { ready: ph["Cilium ready"] } : {}),
    specs: specsSeconds(ph),
    total: phaseRows(ph).total,
  };
}

/**
 * The datapath configuration a run had: its profile (bundle.json), and the routing / socket LB / kube-proxy the
 * config topic read; a bundle older than the config topic ran the suite's default (VXLAN tunnel).
 */
function configurationOf(r: RunRow): string {
  const c = r.config;
  const profile =
    r.meta.datapathProfile ??
    (r.meta.provider === "existing"
      ? "as found"
      : c
        ? "default"
        : r.meta.upgrade
          ? "default (tunnel; read in its legs' bundles)"
          : "default (tunnel; before the config topic)");
  if (!c) return profile;
  const v = (x: { value: unknown; unknown?: string }) =>
    Array.isArray(x.value)
      ? x.value.join("+")
      : x.value === null
        ? x.unknown
          ? "?"
          : "n/a"
        : String(x.value);
  // the families only where they are not IPv4 alone (a dual-stack cluster found by the existing provider)
  const families = v(c.ipFamilies);
  return `${profile}: ${v(c.routing)}${c.routing.value === "tunnel" ? `/${v(c.tunnelProtocol)}` : ""}, socket LB ${v(c.socketLB)}, kube-proxy ${v(c.kubeProxy)}, LB ${v(c.lbMode)}${families === "ipv4" ? "" : `, families ${families}`}`;
}

/**
 * Markdown: one row per bundle, then one row per upgrade leg; each bundle named by its path from `root` (the
 * repository) and linked relative to `base` (the page's folder). The counts are `judged`'s (today's `check`), never
 * the ones the run stored: one count per bundle.
 */
export function runsMarkdown(
  dirs: string[],
  base: string,
  judged: (dir: string) => Judged,
  records: (dir: string) => RunRecords,
  root: string = base,
): string {
  const runs = dirs.map((d) => readRun(d, records));
  const link = (r: RunRow) => `[${relative(root, r.dir)}](${relative(base, r.dir)})`;
  const out = [
    "| Cilium | mode | configuration | provider | topics | `check` today: pass / fail / known / skip | stored verdicts | create | Cilium ready | specs | end to end | bundle |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of runs) {
    const t = runTimes(r.meta);
    const j = judged(r.dir);
    const what = r.topics.length >= 15 ? `${r.topics.length} topics` : r.topics.join(", ");
    const fail = j.changed > 0 ? `${j.fail} (+${j.changed} changed)` : String(j.fail);
    const stored =
      j.differences === null ? "none stored" : j.differences === 0 ? "reproduced" : `${j.differences} differ`;
    out.push(
      `| ${r.meta.cilium.split(" ")[0]} | ${r.meta.mode} | ${configurationOf(r)} | ${r.meta.provider}${r.meta.lab ? " (lab)" : ""} | ${what} | ${j.pass} / ${fail} / ${j.knownIssue} / ${j.skip} | ${stored} | ${s(t.create)} | ${s(t.ready)} | ${s(t.specs)} | ${s(t.total)} | ${link(r)} |`,
    );
  }
  const legs = runs.flatMap((r) => r.legs.map((l) => ({ r, l })));
  if (legs.length > 0) {
    out.push(
      "",
      "| leg | mode | duration | requests (failed) | longest outage | connections survived | agents after | bundle |",
      "|---|---|---|---|---|---|---|---|",
    );
    for (const { r, l } of legs) {
      const survived = l.connections.filter(connectionSurvived).length;
      const agents = Object.values(l.agents_after);
      out.push(
        `| ${l.kind} ${l.from} → ${l.to} | ${r.meta.mode} | ${l.duration_s} s | ${l.requests.total} (${l.requests.failed}) | ${legOutageMs(l) !== null ? `${legOutageMs(l)} ms` : "–"} | ${survived}/${l.connections.length} | ${agents.filter((a) => a.version === l.to && a.ok).length}/${agents.length} on ${l.to} | ${link(r)} |`,
      );
    }
  }
  return `${out.join("\n")}\n`;
}
