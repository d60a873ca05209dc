// One file over 450 lines: the report's one page, section by section, each a short template over the same escaping
import { relative, resolve } from "node:path";
import { type BundleMeta, legBundles, readMeta } from "../bundle/read.ts";
import { type CheckResult, checkBundle } from "../check.ts";
import { countLine } from "../check-format.ts";
import {
  type Comparison,
  compareBundles,
  compareWithNearest,
  type NearestComparison,
  SEVERITIES,
  SEVERITY_TITLES,
  verdictLine,
} from "../compare.ts";
import { attr, contentSecurityPolicy, type Html, html, inlineScript, inlineStyle } from "../html.ts";
import { type MeasuredBundle, measurementCharts } from "../measure/summary.ts";
import { MODE_TITLES } from "../properties/expectation.ts";
import { sourceText, type Verdict } from "../properties/judge.ts";
import { isFailure, isKnownIssue } from "../properties/status.ts";
import type { Property } from "../properties/types.ts";
import { assumedText, CHANGED_LABEL } from "../properties/versions.ts";
import { formatDatapathConfig } from "../records/datapath-config.ts";
import { type Place, showPlace } from "../records/evidence.ts";
import { isUpgradeVerdict, upgradeRun } from "../records/upgrade.ts";
import type { TopicDeclaration } from "../topic.ts";
import { CSS, MARK, SCRIPT } from "./assets.ts";
import { groupedHead, groupStarts, leafLines } from "./column-head.ts";
import { encodeData, reportData } from "./data.ts";
import { glossarySection } from "./glossary.ts";
import { HEADLINE, type HeadlineCell, headlineCell, modeWords } from "./headline.ts";
import { columnNames, groupedOrder } from "./labels.ts";
import { renderMatrix } from "./matrix.ts";
import { describePath, translationPaths, translationSvg } from "./picture.ts";
import { placeAnchor, type RawOutput, rawOutputs } from "./provenance.ts";
import { phaseRows } from "./runs-table.ts";
import { renderUpgrade, upgradeView } from "./upgrade.ts";
import { type ColumnGate, gatePart, gateWord, renderBanner, upgradeGate } from "./verdict.ts";

/** One bundle as a column of the report. */
export interface ReportColumn {
  label: string;
  /** The matrix header's lines: version (from → to for an upgrade), mode, what tells it apart (profile, provider). */
  head: string[];
  /** The group of columns it is shown in: its version, or its upgrade's (helpers/report/labels.ts). */
  group: string;
  dir: string;
  meta: BundleMeta;
  check: CheckResult;
  /** The raw outputs the evidence points into, embedded with per-line anchors, by their key. */
  raw: Map<string, RawOutput>;
}

export interface ReportInput {
  columns: ReportColumn[];
  properties: Property[];
  comparison?: Comparison;
  /**
   * Each bundle of a version the suite ships no bundle of, compared with the shipped bundle of the nearest
   * declared version of its mode and profile: the page opens on these, right after the verdict.
   */
  nearest?: NearestComparison[];
  /** The upgrade gate of each upgrade bundle among the columns (absent: none judged). */
  gates?: ColumnGate[];
  generatedAt: string;
}

/** Re-judges each bundle (as `check` does) and finds the raw outputs behind every verdict's evidence. */
export async function buildReport(
  dirs: string[],
  topics: TopicDeclaration[],
  opts: {
    compare?: [string, string];
    now?: () => Date;
    /** Bundles already judged, by their folder (tests that build several pages of the same bundles). */
    judged?: Map<string, CheckResult>;
    /** false: no comparison with the nearest shipped bundle (helpers/shipped.ts); on by default. */
    nearest?: boolean;
  } = {},
): Promise<ReportInput> {
  // every column's name from its bundle.json and folder, unique; the columns grouped by version (and upgrade)
  const metas = dirs.map((dir) => ({ dir, meta: readMeta(dir) }));
  const names = columnNames(metas);
  const columns: ReportColumn[] = [];
  const judged = opts.judged ?? new Map<string, CheckResult>();
  const judge = async (dir: string) => {
    const r = judged.get(dir) ?? (await checkBundle(dir, topics));
    judged.set(dir, r);
    return r;
  };
  for (const i of groupedOrder(names)) {
    const { dir, meta } = metas[i] as { dir: string; meta: BundleMeta };
    const check = await judge(dir);
    const raw = new Map(
      rawOutputs(
        dir,
        columns.length,
        check.verdicts.flatMap((v) => v.evidence),
      ).map((o) => [o.key, o]),
    );
    const n = names[i] as { label: string; head: string[]; group: string };
    columns.push({ label: n.label, head: n.head, group: n.group, dir, meta, check, raw });
  }
  const nearest: NearestComparison[] = [];
  if (opts.nearest !== false)
    for (const c of columns) {
      const n = await compareWithNearest(c.check, topics);
      if (n) nearest.push(n);
    }
  // each upgrade bundle's answer, as the upgrade command gives it (its legs' bundles judged once with the columns)
  const gates: ColumnGate[] = [];
  for (const [i, c] of columns.entries())
    if (c.meta.upgrade) gates.push({ column: i, gate: await upgradeGate(c.check, topics, judge) });
  return {
    columns,
    properties: topics.flatMap((t) => t.properties),
    ...(opts.compare ? { comparison: await compareBundles(opts.compare[0], opts.compare[1], topics) } : {}),
    ...(nearest.length > 0 ? { nearest } : {}),
    gates,
    generatedAt: (opts.now ?? (() => new Date()))().toISOString(),
  };
}

/** A path under the working directory relative to it (as a user typed it), any other as given. */
function shownPath(dir: string): string {
  const rel = relative(process.cwd(), dir);
  return rel.startsWith("..") ? dir : rel;
}

/** A phase's seconds as the run card shows them (a bundle's number checked on reading; anything else as it is). */
const seconds = (v: unknown) => (typeof v === "number" ? `${v.toFixed(1)} s` : String(v));

function phaseTable(phases: Record<string, unknown>): Html | "" {
  const { rows, total } = phaseRows(phases);
  if (rows.length === 0) return "";
  const odd = Object.entries(phases).filter(([, v]) => typeof v !== "number");
  return html`<details class="phase-timings"><summary>phase timings: ${total.toFixed(0)} s end to end (wall time; overlapping phases nested, not added)</summary><table class="phases">${rows.map(
    (r) =>
      html`<tr><td>${r.name}</td><td>${seconds(r.seconds)}</td></tr>${r.within.map((w) => html`<tr class="within"><td>${w.name}</td><td>${seconds(w.seconds)}</td></tr>`)}`,
  )}${odd.map(([k, v]) => html`<tr><td>${k}</td><td>${seconds(v)}</td></tr>`)}<tr class="total"><td>end to end</td><td>${seconds(total)}</td></tr></table></details>`;
}

function runCard(c: ReportColumn, counts: string, compact: boolean): Html {
  const m = c.meta;
  const rows: [string, string][] = [
    ["mode", MODE_TITLES[m.mode] ?? String(m.mode)],
    ["provider", m.provider],
    [
      "Cilium",
      c.check.assumedFrom
        ? `${m.cilium}: a minor the suite has not declared; every verdict ${assumedText(c.check.assumedFrom)} (Δ: ${CHANGED_LABEL})`
        : m.cilium,
    ],
    ["Kubernetes", m.kubernetes ?? "unknown"],
    ["kernel", m.kernel ?? "unknown"],
    ["attach mode", m.attachMode ?? "unknown"],
    [
      "datapath",
      c.check.config
        ? formatDatapathConfig(c.check.config)
        : "not recorded (a bundle older than the config topic)",
    ],
    ["run", `${m.runId} (${m.createdAt})`],
    ["bundle", shownPath(c.dir)],
  ];
  const lab = m.lab
    ? html`<p class="muted">${m.lab.note}; Cilium from ${m.lab.ciliumSource}; patch: ${m.lab.patch}</p>`
    : "";
  const body = html`<dl>${rows.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
${lab}
${phaseTable((m.phases ?? {}) as Record<string, unknown>)}`;
  // a run with a failure is marked as one (red), with known issues amber
  const st = c.check.verdicts.some((v) => isFailure(v.status))
    ? "fail"
    : c.check.verdicts.some((v) => isKnownIssue(v.status))
      ? "known"
      : "pass";
  // many bundles: one line each (label and counts), opened for the rest
  if (compact)
    return html`<details class="run run-${st}" aria-label="${c.label}"><summary><b>${c.label}</b> <span class="origin-${m.origin}">${m.origin}</span><span class="run-counts c-${st}">${counts}</span></summary>
${body}</details>`;
  return html`<section class="run run-${st}" aria-label="${c.label}">
<h3>${c.label} <span class="origin-${m.origin}">${m.origin}</span></h3>
<p class="run-counts c-${st}">${counts}</p>
${body}
</section>`;
}

function verdictOf(c: ReportColumn, id: string): Verdict | undefined {
  return c.check.verdicts.find((v) => v.id === id);
}

/** A list value (`[0.1,0.2]`) with a space after each comma, so it wraps between its items, never inside one. */
const spaced = (v: string) => (/^\[.*\]$/.test(v) ? v.replace(/,(?=\S)/g, ", ") : v);

function headlineCellHtml(
  c: ReportColumn,
  claim: (typeof HEADLINE)[number],
  cell: HeadlineCell,
  compact: boolean,
): Html {
  const facts = cell.facts
    .filter((f) => f.status !== "absent")
    .map((f, i) =>
      f.status === "skip"
        ? html`${i > 0 ? " · " : ""}${f.label}: skipped`
        : html`${i > 0 ? " · " : ""}${f.label} <b>${spaced(String(f.observed))}</b>${isFailure(f.status) || isKnownIssue(f.status) ? html` <span class="verdict ${f.status}">(expected ${f.expected}${isKnownIssue(f.status) ? html`; known issue of Cilium ${f.knownIssue ?? ""}` : ""})</span>` : html` <span class="muted">(expected ${f.expected})</span>`}`,
    );
  const from = cell.lineFrom ? `${cell.lineFrom}${cell.at ? `: ${showPlace(cell.at)}` : ""}` : "";
  const line =
    cell.line === null
      ? cell.status === "skip"
        ? html`<span class="hl-note muted">${(cell.note ?? "").replace(/^.*?: (skipped|not applicable): /, "")}</span>`
        : html`<span class="hl-note muted">no evidence line</span>`
      : cell.absence
        ? html`<span class="hl-line none" title="${from}">${cell.line}</span>`
        : html`<code class="hl-line" title="${from}">${cell.line}</code>${cell.at ? html`<span class="hl-from muted">${placeLink(c, cell.at)}</span>` : ""}`;
  // many bundles side by side: the raw line behind a summary, so a column stays narrow
  const shown =
    compact && cell.line !== null
      ? html`<details class="hl-more"><summary>the line</summary>${line}</details>`
      : line;
  // the claim as this column's mode states it (kube-proxy keeps its rules), and what its version claims instead
  const words = modeWords(claim, String(c.meta.mode));
  const said =
    words !== claim.title
      ? html`<span class="hl-mode">${compact ? "" : html`<span class="muted">${c.meta.mode}:</span> `}${words}</span>`
      : "";
  const own = cell.own ? html`<span class="hl-own">${c.meta.cilium}: ${cell.own}</span>` : "";
  return html`<td class="hl-cell" data-label="${c.label}" data-mode="${c.meta.mode}" data-status="${cell.status}"><span class="verdict ${cell.status}">${MARK[cell.status]}</span>${said}${own} <span class="hl-facts">${facts}</span>${shown}</td>`;
}

/** Columns that have none of the five claims' topics (an upgrade bundle, a partial one) are named, not shown as five skips. */
function headlineColumns(cols: ReportColumn[]): { shown: ReportColumn[]; none: ReportColumn[] } {
  const judged = (c: ReportColumn) =>
    HEADLINE.some((claim) => headlineCell(claim, (id) => verdictOf(c, id)).status !== "skip");
  return { shown: cols.filter(judged), none: cols.filter((c) => !judged(c)) };
}

/**
 * The five claims, one row each, per bundle (verdict, values, the one raw line that shows it, in each mode's own
 * words), and a picture of where each bundle translated the Service — one per distinct picture, with the bundles
 * it stands for (35 bundles drew a handful of different pictures).
 */
function headlineSection(input: ReportInput): Html {
  const { shown: cols, none } = headlineColumns(input.columns);
  const compact = cols.length > 2;
  const starts = groupStarts(cols);
  const rows = HEADLINE.map((claim) => {
    const cells = cols.map((c) =>
      headlineCellHtml(
        c,
        claim,
        headlineCell(claim, (id) => verdictOf(c, id)),
        compact,
      ),
    );
    return html`<tr data-claim="${claim.key}"><th scope="row"><span class="hl-title">${claim.title}</span><span class="hl-says">${claim.says} <span class="muted">(${claim.source})</span></span></th>${cells}</tr>\n`;
  });
  const drawn = new Map<string, { paths: ReturnType<typeof translationPaths>; cols: ReportColumn[] }>();
  for (const c of cols) {
    const paths = translationPaths((id) => verdictOf(c, id));
    const key = `${c.meta.mode}\u0000${paths.map(describePath).join("\u0000")}`;
    const d = drawn.get(key) ?? { paths, cols: [] };
    d.cols.push(c);
    drawn.set(key, d);
  }
  // a picture's caption is short (issue 44: one listed 15 bundles in its heading): one bundle's label, or the mode
  // and how many bundles drew it, the bundles a click away; a caption two pictures would share is numbered
  const drawings = [...drawn.values()];
  const captionOf = (cs: ReportColumn[]) =>
    cs.length === 1
      ? (cs[0] as ReportColumn).label
      : `${(cs[0] as ReportColumn).meta.mode}: ${cs.length} bundles`;
  const captions = drawings.map(({ cols: cs }) => captionOf(cs));
  const pictures = drawings.map(({ paths, cols: cs }, i) => {
    const first = cs[0] as ReportColumn;
    const caption = captions[i] as string;
    const same = captions.filter((c) => c === caption).length;
    const nth = captions.slice(0, i).filter((c) => c === caption).length + 1;
    const numbered = same > 1 ? `${caption} (picture ${nth} of ${same})` : caption;
    const which =
      cs.length > 1
        ? html`<details class="picture-bundles"><summary>which ${cs.length} bundles</summary><ul>${cs.map((x) => html`<li>${x.label}</li>`)}</ul></details>`
        : "";
    return html`<figure class="picture" data-mode="${first.meta.mode}" data-bundles="${cs.length}"><figcaption>${numbered}: where the Service was translated</figcaption>${which}${translationSvg(first.label, paths)}<ul class="muted">${paths.map((p) => html`<li>${describePath(p)}</li>`)}</ul></figure>\n`;
  });
  const skipped =
    none.length > 0
      ? html`<p class="muted hl-none">Not shown here: ${none.map((c) => c.label).join(", ")} — ${none.length === 1 ? "it has" : "they have"} none of the five claims' topics (an upgrade bundle's are in its legs' columns).</p>`
      : "";
  if (cols.length === 0)
    return html`<section id="headline" aria-labelledby="headline-title">
<h2 id="headline-title">The field documents' five claims</h2>${skipped}</section>`;
  return html`<section id="headline" aria-labelledby="headline-title">
<h2 id="headline-title">The field documents' five claims</h2>
<div class="hl-wrap${compact ? " many" : ""}" tabindex="0" role="region" aria-label="the five claims by bundle"><table class="headline${compact ? " many" : ""}"><colgroup><col class="hl-claim-col">${cols.map(() => html`<col>`)}</colgroup>
<thead>${
    compact
      ? groupedHead(cols, {
          corner: html`<th scope="col" class="corner" rowspan="3">claim</th>`,
          views: [{ cls: "", shown: () => true }],
          leaf: (c, i) =>
            html`<th scope="col" class="bh${i !== 0 && starts.has(i) ? " gs" : ""}" title="${c.label}">${leafLines(c).map((h, j) => html`<span class="h${j === 0 ? 2 : 1}">${h}</span>`)}</th>`,
        })
      : html`<tr><th scope="col">claim</th>${cols.map((c) => html`<th scope="col">${c.label}</th>`)}</tr>`
  }</thead>
<tbody>
${rows}</tbody></table></div>
${skipped}
<div class="pictures${compact ? " many" : ""}">${pictures}</div>
<p class="muted legend">In each picture a dashed line goes to the Service's address and a solid one to a Pod IP; the dot is where the Service became a Pod IP, as this run's verdicts place it (hover a line for the verdicts). Every verdict is in "Properties" below, with its evidence.</p>
</section>`;
}

/** A place as a link to its line (or output) among the bundle's embedded raw outputs. */
function placeLink(c: ReportColumn, p: Place): Html {
  const anchor = placeAnchor(c.raw, p);
  return anchor ? html`<a class="at" href="#${anchor}">${showPlace(p)}</a>` : html`${showPlace(p)}`;
}

/**
 * A bundle's raw outputs that evidence points into, as a closed section the page's script fills from the
 * embedded data when it is opened (or when a link points into it): every line anchored, the cited ones marked.
 */
function rawSection(c: ReportColumn, i: number): Html | "" {
  if (c.raw.size === 0) return "";
  const lines = [...c.raw.values()].reduce((n, o) => n + o.lines.length, 0);
  return html`<details class="raw-bundle" id="raw-c${i}" data-c="${i}"><summary><b>${c.label}</b> <span class="muted">${c.raw.size} outputs, ${lines} lines shown</span></summary><div class="raw-list"></div></details>\n`;
}

function comparisonSection(c: Comparison, why?: string, id = "compare"): Html {
  const head = (r: CheckResult) => `${r.mode}, Cilium ${r.cilium}`;
  const groups = SEVERITIES.map((s) => ({ s, rows: c.changes.filter((x) => x.severity === s) })).filter(
    (g) => g.rows.length > 0,
  );
  return html`<section id="${id}" class="compare-section"><h2>What changed: ${head(c.a)} → ${head(c.b)}</h2>
${why ? html`<p class="nearest-why">${why}.</p>` : ""}
<p class="muted">A: <code>${c.a.bundle}</code> · B: <code>${c.b.bundle}</code>.</p>
<p>${c.regressed ? html`<strong class="changed">${verdictLine(c)}</strong>` : verdictLine(c)}</p>
<table class="compare"><thead><tr><th>property</th><th>A</th><th>B</th><th>change</th></tr></thead>
${groups.map(
  (
    g,
  ) => html`<tbody data-severity="${g.s}"><tr><th colspan="4" scope="rowgroup">${SEVERITY_TITLES[g.s]} (${g.rows.length})</th></tr>
${g.rows.map(
  (
    v,
  ) => html`<tr><td><code>${v.id}</code></td><td>${v.a}</td><td>${v.b}</td><td${attr("class", g.s === "other" ? false : "changed")}><b>${v.kind}</b>: ${v.detail}</td></tr>
`,
)}</tbody>
`,
)}<tbody><tr><td colspan="4" class="muted">${c.unchanged} properties unchanged (same verdict, value within its tolerance)</td></tr></tbody></table></section>`;
}

/** Past this many measured bundles the charts are small multiples (a chart per version and mode). */
const SMALL_MULTIPLES = 4;

/** At most this many bundles (two lines each) in one small multiple. */
const CHART_BUNDLES = 10;

/** Past this many columns the matrix (what differs) comes before the five claims. */
const MANY = 6;

/** The page's title: the bundles' labels, or for many what they span. */
function pageTitle(cols: ReportColumn[]): string {
  if (cols.length <= 2) return cols.map((c) => c.label).join(" | ");
  const uniq = (xs: string[]) => [...new Set(xs)];
  return `${cols.length} bundles: Cilium ${uniq(cols.map((c) => c.head[0] ?? "")).join(", ")}; ${uniq(cols.map((c) => String(c.meta.mode))).join(", ")}`;
}

/**
 * The whole page: self-contained (style, script, SVG and the evidence's data inline), so it opens from disk or
 * a CI artifact. Every value from a bundle is escaped by construction (helpers/html.ts) or, in the embedded
 * data, set as text by the page's script; a strict Content-Security-Policy lets nothing load or run but the
 * page's own style and script, allowed by their SHA-256 hashes computed here. The order (issue 37: the first
 * screen is the verdict): the verdict (each upgrade's gate, the failures and known issues counted and named), what
 * changed from the nearest shipped bundle (a bundle of a version the suite ships none of), what changed (with
 * --compare), the upgrade views (whenever an upgrade bundle is given), the five claims, the property matrix (what
 * differs by default among several bundles; failures first, what no bundle judged last with its reason), the runs,
 * the measurements, the raw outputs.
 */
export function renderReport(input: ReportInput): string {
  const cols = input.columns;
  const measured: MeasuredBundle[] = cols.map((c) => ({
    label: c.label,
    meta: c.meta,
    ...c.check.measurements,
  }));
  // past a few measured bundles, small multiples: a chart per version (or upgrade) and mode, each bundle named in
  // it by what tells it apart there (issue 44: 46 bundles' lines overlaid in one chart 4,155 px tall)
  const measuredCount = measured.filter((m) => m.scaling || m.latency).length;
  const byLabel = new Map(cols.map((c) => [c.label, c]));
  // a chart holds at most CHART_BUNDLES bundles (two lines each): a version and mode with more gets a chart per
  // CHART_BUNDLES, numbered after the first
  const splitKey = new Map<string, string>();
  const filled = new Map<string, number>();
  for (const m of measured.filter((x) => x.scaling || x.latency)) {
    const c = byLabel.get(m.label) as ReportColumn;
    const key = `${c.group} · ${String(c.meta.mode)}`;
    const n = filled.get(key) ?? 0;
    filled.set(key, n + 1);
    const part = Math.floor(n / CHART_BUNDLES);
    splitKey.set(m.label, part === 0 ? key : `${key} (${part + 1})`);
  }
  const charts = measurementCharts(
    measured,
    measuredCount > SMALL_MULTIPLES
      ? {
          split: (m) => {
            const c = byLabel.get(m.label) as ReportColumn;
            return splitKey.get(m.label) ?? `${c.group} · ${String(c.meta.mode)}`;
          },
          // in an upgrade's chart, a leg by its word (the chart's title says from what to what)
          name: (m) => {
            const c = byLabel.get(m.label) as ReportColumn;
            const leaf = leafLines(c);
            return c.group.includes("→")
              ? (leaf.at(-1) as string).replace(/ from \S+$/, "")
              : leaf.join(" · ");
          },
          width: 400,
        }
      : {},
  );
  const kinds = [...new Set(charts.map((c) => c.kind))].map((k) => charts.filter((c) => c.kind === k));
  const countsOf = (c: ReportColumn) => countLine(c.check.verdicts);
  const matrix = renderMatrix(
    cols.map((c) => ({
      label: c.label,
      head: c.head,
      group: c.group,
      mode: String(c.meta.mode),
      verdicts: new Map(c.check.verdicts.map((v) => [v.id, v])),
    })),
    input.properties,
    { differsFirst: cols.length > 2 },
  );
  const css = `${CSS}\n${matrix.css}`;
  // many bundles: what differs comes before the five claims (35 columns of them are a long table)
  const many = cols.length > MANY;
  const properties = html`<section id="properties-section" aria-labelledby="properties">
<h2 id="properties">Properties${many ? ": what differs" : ""}</h2>
${matrix.html}
</section>`;
  const csp = contentSecurityPolicy({ styles: [css], scripts: [SCRIPT] });
  const title = pageTitle(cols);
  const verdicts = cols.map((c) => new Map(c.check.verdicts.map((v) => [v.id, v])));
  const data = encodeData(
    reportData(
      input.properties,
      (p) => sourceText(p as Property),
      cols.map((c, i) => ({ label: c.label, verdicts: verdicts[i] as Map<string, Verdict>, raw: c.raw })),
    ),
  );
  // every upgrade bundle given: its view comes first, after the verdict (open when it is the only one)
  const gates = input.gates ?? [];
  const upgrades = cols.flatMap((c, i) => {
    if (!c.meta.upgrade) return [];
    const u = upgradeView(c.meta, upgradeRun(c.check.legRuns), c.check.verdicts);
    const g = gates.find((x) => x.column === i)?.gate;
    return [
      html`${renderUpgrade(c.label, u, c.check.verdicts.filter(isUpgradeVerdict), g ? gateWord(g) : null, cols.filter((x) => x.meta.upgrade).length > 1, g ? gatePart(g) : null)}\n`,
    ];
  });
  const upgradeSection =
    upgrades.length > 0 ? html`<section id="upgrades" aria-label="upgrades">${upgrades}</section>` : "";
  // the failures an upgrade's gate names: its own and those of its legs' bundles
  const covered = new Set(
    cols.flatMap((c, i) => {
      const at = resolve(c.dir);
      const up = gates
        .map((g) => cols[g.column]?.dir)
        .find(
          (d) =>
            d !== undefined &&
            (at === resolve(d) ||
              legBundles(d)
                .map((x) => resolve(x))
                .includes(at)),
        );
      return up ? [i] : [];
    }),
  );
  const banner = renderBanner(
    cols.map((c) => ({ label: c.label, verdicts: c.check.verdicts })),
    gates,
    covered,
  );
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Datapath conformance: ${title}</title>
${inlineStyle(css)}</head>
<body><main>
<header><h1>Where Service load balancing happens: ${title}</h1>
<p class="muted">cilium-datapath-conformance report, generated ${input.generatedAt} by re-judging the bundles below (as <code>check</code> does). The words it uses: <a href="#glossary">glossary</a>.</p></header>
${banner}
${(input.nearest ?? []).map((n, i) => comparisonSection(n.comparison, n.why, `nearest-${i}`))}
${input.comparison ? comparisonSection(input.comparison) : ""}
${upgradeSection}
${many ? properties : ""}
${headlineSection(input)}
${many ? "" : properties}
<h2 id="runs">The run${cols.length > 1 ? "s" : ""}</h2>
<div class="runs${cols.length > 3 ? " many" : ""}">${cols.map((c) => html`${runCard(c, countsOf(c), cols.length > 3)}\n`)}</div>
<h2 id="measurements">Measurements</h2>
${
  charts.length === 0
    ? html`<p class="muted">No measurements in these bundles.</p>`
    : measuredCount > SMALL_MULTIPLES
      ? html`<p class="muted">One chart per version (or upgrade) and mode; in each, the bundles by what tells them apart.</p>
${kinds.map(
  (k) =>
    html`<section class="chart-kind" aria-label="${k[0]?.kindTitle ?? ""}"><h3>${k[0]?.kindTitle ?? ""}</h3><div class="charts small">${k.map((c) => html`<figure id="chart-${c.id}">${c.svg}</figure>\n`)}</div></section>\n`,
)}`
      : html`<div class="charts">${charts.map((c) => html`<figure id="chart-${c.id}">${c.svg}</figure>\n`)}</div>`
}
${glossarySection()}
<h2 id="raw">Raw outputs</h2>
<p class="muted">Every output the evidence above points into, from the bundles' raw/ files and the calls' stderr, held once in this page and shown when opened: a link on an evidence line opens its output here, scrolled to the line and highlighted. Long outputs are shown around the cited lines.</p>
${cols.map((c, i) => rawSection(c, i))}
<p class="muted" id="data-status" role="status">Reading the page's evidence…</p>
<div id="dpc-data" hidden data-gz="${data}"></div></main>
${inlineScript(SCRIPT)}
</body></html>
`.text;
}
