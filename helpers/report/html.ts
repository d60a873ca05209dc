import { basename, relative } from "node:path";
import { type BundleMeta, readMeta } from "../bundle.ts";
import { type CheckResult, checkBundle } from "../check.ts";
import { type Comparison, compareBundles, SEVERITIES, SEVERITY_TITLES, verdictLine } from "../compare.ts";
import { attr, contentSecurityPolicy, type Html, html, inlineScript, inlineStyle } from "../html.ts";
import { type MeasuredBundle, measurementCharts } from "../measure/summary.ts";
import { describeModeExpectation, MODE_TITLES } from "../properties/expectation.ts";
import { sourceText, type Verdict } from "../properties/judge.ts";
import type { Property } from "../properties/types.ts";
import { formatDatapathConfig } from "../records/datapath-config.ts";
import { type EvidenceItem, type Place, showPlace } from "../records/evidence.ts";
import type { TopicDeclaration } from "../topic.ts";
import { CSS, MARK, SCRIPT } from "./assets.ts";
import { HEADLINE, type HeadlineCell, headlineCell } from "./headline.ts";
import { describePath, translationPaths, translationSvg } from "./picture.ts";
import { outputKey, placeAnchor, type RawOutput, rawOutputs } from "./provenance.ts";
import { renderUpgrade, upgradeView } from "./upgrade.ts";

/** One bundle as a column of the report. */
export interface ReportColumn {
  label: string;
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
  generatedAt: string;
}

/** Re-judges each bundle (as `check` does) and finds the raw outputs behind every verdict's evidence. */
export async function buildReport(
  dirs: string[],
  topics: TopicDeclaration[],
  opts: { compare?: [string, string]; now?: () => Date } = {},
): Promise<ReportInput> {
  const columns: ReportColumn[] = [];
  for (const dir of dirs) {
    const meta = readMeta(dir);
    const check = await checkBundle(dir, topics);
    const raw = new Map(
      rawOutputs(
        dir,
        columns.length,
        check.verdicts.flatMap((v) => v.evidence),
      ).map((o) => [o.key, o]),
    );
    columns.push({ label: `${meta.mode} · Cilium ${meta.cilium}`, dir, meta, check, raw });
  }
  // two bundles of the same mode and version are told apart by their folder
  for (const c of columns)
    if (columns.filter((o) => o.label === c.label).length > 1) c.label += ` (${basename(c.dir)})`;
  return {
    columns,
    properties: topics.flatMap((t) => t.properties),
    ...(opts.compare ? { comparison: await compareBundles(opts.compare[0], opts.compare[1], topics) } : {}),
    generatedAt: (opts.now ?? (() => new Date()))().toISOString(),
  };
}

const slug = (s: string) => s.replace(/[^A-Za-z0-9_-]+/g, "-");

/** A path under the working directory relative to it (as a user typed it), any other as given. */
function shownPath(dir: string): string {
  const rel = relative(process.cwd(), dir);
  return rel.startsWith("..") ? dir : rel;
}

/** A phase's seconds as the run card shows them (a bundle's number checked on reading; anything else as it is). */
const seconds = (v: unknown) => (typeof v === "number" ? `${v.toFixed(1)} s` : String(v));

function runCard(c: ReportColumn): Html {
  const m = c.meta;
  const rows: [string, string][] = [
    ["mode", MODE_TITLES[m.mode] ?? String(m.mode)],
    ["provider", m.provider],
    ["Cilium", m.cilium],
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
  const phases = Object.entries(m.phases ?? {});
  const total = phases.reduce((t, [, v]) => t + (typeof v === "number" ? v : 0), 0);
  return html`<section class="run" aria-label="${c.label}">
<h3>${c.label} <span class="origin-${m.origin}">${m.origin}</span></h3>
<dl>${rows.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
${lab}
${phases.length > 0 ? html`<details class="phase-timings"><summary>phase timings: ${total.toFixed(0)} s in all</summary><table class="phases">${phases.map(([k, v]) => html`<tr><td>${k}</td><td>${seconds(v)}</td></tr>`)}</table></details>` : ""}
</section>`;
}

function verdictOf(c: ReportColumn, id: string): Verdict | undefined {
  return c.check.verdicts.find((v) => v.id === id);
}

function headlineCellHtml(c: ReportColumn, cell: HeadlineCell): Html {
  const facts = cell.facts
    .filter((f) => f.status !== "absent")
    .map((f, i) =>
      f.status === "skip"
        ? html`${i > 0 ? " · " : ""}${f.label}: skipped`
        : html`${i > 0 ? " · " : ""}${f.label} <b>${f.observed}</b>${f.status === "fail" || f.status === "known-issue" ? html` <span class="verdict ${f.status}">(expected ${f.expected}${f.status === "known-issue" ? html`; known issue of Cilium ${f.knownIssue ?? ""}` : ""})</span>` : html` <span class="muted">(expected ${f.expected})</span>`}`,
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
  return html`<td class="hl-cell" data-label="${c.label}" data-mode="${c.meta.mode}" data-status="${cell.status}"><span class="verdict ${cell.status}">${MARK[cell.status]}</span> <span class="hl-facts">${facts}</span>${line}</td>`;
}

/**
 * The page's opening: the field documents' five claims, one row each, per bundle (verdict, values and the one
 * raw line that shows it), and a picture per bundle of where its run translated the Service.
 */
function headlineSection(input: ReportInput): Html {
  const cols = input.columns;
  const rows = HEADLINE.map((claim) => {
    const cells = cols.map((c) =>
      headlineCellHtml(
        c,
        headlineCell(claim, (id) => verdictOf(c, id)),
      ),
    );
    return html`<tr data-claim="${claim.key}"><th scope="row"><span class="hl-title">${claim.title}</span><span class="hl-says">${claim.says} <span class="muted">(${claim.source})</span></span></th>${cells}</tr>\n`;
  });
  const pictures = cols.map((c) => {
    const paths = translationPaths((id) => verdictOf(c, id));
    return html`<figure class="picture" data-mode="${c.meta.mode}"><figcaption>${c.label}: where the Service was translated</figcaption>${translationSvg(c.label, paths)}<ul class="muted">${paths.map((p) => html`<li>${describePath(p)}</li>`)}</ul></figure>\n`;
  });
  return html`<section id="headline" aria-labelledby="headline-title">
<h2 id="headline-title">The field documents' five claims</h2>
<table class="headline"><colgroup><col class="hl-claim-col">${cols.map(() => html`<col>`)}</colgroup>
<thead><tr><th scope="col">claim</th>${cols.map((c) => html`<th scope="col">${c.label}</th>`)}</tr></thead>
<tbody>
${rows}</tbody></table>
<div class="pictures">${pictures}</div>
<p class="muted legend">In each picture a dashed line goes to the Service's address and a solid one to a Pod IP; the dot is where the Service became a Pod IP, as this run's verdicts place it (hover a line for the verdicts). Every verdict is in "Properties" below, with its evidence.</p>
</section>`;
}

/** A place as a link to its line (or output) among the bundle's embedded raw outputs. */
function placeLink(c: ReportColumn, p: Place): Html {
  const anchor = placeAnchor(c.raw, p);
  return anchor ? html`<a class="at" href="#${anchor}">${showPlace(p)}</a>` : html`${showPlace(p)}`;
}

/** One evidence item: a quoted line with the link to its place, or a derived value with links to its sources. */
function evidenceItem(c: ReportColumn, e: EvidenceItem): Html {
  if ("quote" in e) return html`<li class="q">${placeLink(c, e.at)} <code>${e.quote}</code></li>`;
  const from = e.from.filter((p) => p.call === undefined || p.stream === "stderr");
  const calls = e.from.length - from.length;
  const sources = [
    ...from.map((p) => placeLink(c, p)),
    ...(calls > 0 ? [html`${calls} call record${calls > 1 ? "s" : ""} (exit code, time)`] : []),
  ];
  return html`<li class="d"><span class="derived">${e.derived}</span> <span class="muted">from ${sources.map((x, i) => html`${i > 0 ? ", " : ""}${x}`)}</span></li>`;
}

/** The command that printed an output, where it ran and its exit code. */
function callMeta(o: RawOutput): Html | "" {
  if (!o.call) return "";
  const argv = Array.isArray(o.call.argv) ? o.call.argv.map(String).join(" ") : String(o.call.argv);
  return html` <span class="meta">— <code>${argv.slice(0, 160)}</code> on ${o.call.target}, exit ${o.call.exitCode ?? "none"}</span>`;
}

function evidenceBlock(c: ReportColumn, v: Verdict): Html {
  const items =
    v.evidence.length > 0
      ? html`<ul class="ev-lines" aria-label="evidence">${v.evidence.map((e) => evidenceItem(c, e))}</ul>`
      : html`<p class="muted">(no evidence)</p>`;
  // the outputs cited, each with the command that printed it, where and its exit code
  const cited = new Set(v.evidence.flatMap((e) => ("quote" in e ? [e.at] : e.from)).map((p) => outputKey(p)));
  const sources = [...c.raw.values()]
    .filter((o) => cited.has(o.key))
    .map((o) => html`<li><a href="#${o.id}"><code>${o.key}</code></a>${callMeta(o)}</li>`);
  return html`<div class="ev-mode"><h4>${c.label}: <span class="verdict ${v.status}">${MARK[v.status]}</span></h4>
<p class="message">${v.message.split("\n  evidence")[0] ?? v.message}</p>
${items}
${sources.length > 0 ? html`<ul class="sources" aria-label="raw outputs">${sources}</ul>` : ""}</div>`;
}

/** A bundle's raw outputs that evidence points into: every line anchored, the cited ones marked. */
function rawSection(c: ReportColumn): Html | "" {
  if (c.raw.size === 0) return "";
  const outputs = [...c.raw.values()].map((o) => {
    let prev = 0;
    const body = o.lines.map((l) => {
      const gap = l.n > prev + 1 ? html`<span class="gap">… ${l.n - prev - 1} lines …</span>` : "";
      prev = l.n;
      return html`${gap}<span class="ln${l.cited ? " cited" : ""}" id="${o.id}L${l.n}" data-n="${l.n}">${l.text}</span>`;
    });
    const tail = o.total > prev ? html`<span class="gap">… ${o.total - prev} lines …</span>` : "";
    return html`<details class="raw" id="${o.id}"><summary><code>${o.key}</code>${callMeta(o)}</summary>
<pre>${body}${tail}</pre></details>\n`;
  });
  return html`<section class="raw-outputs" aria-label="raw outputs of ${c.label}"><h3>${c.label}</h3>
${outputs}</section>`;
}

function propertyRows(input: ReportInput): Html[] {
  const cols = input.columns;
  const rank = (p: Property) => {
    const st = cols.map((c) => verdictOf(c, p.id)?.status);
    return st.includes("fail") ? 0 : st.includes("known-issue") ? 1 : st.includes("skip") ? 3 : 2;
  };
  const ordered = input.properties
    .map((p, i) => ({ p, i }))
    .sort((a, b) => rank(a.p) - rank(b.p) || a.i - b.i);
  return ordered.map(({ p }) => {
    const vs = cols.map((c) => verdictOf(c, p.id));
    const id = `ev-${slug(p.id)}`;
    const cells = cols.map((c, i) => {
      const v = vs[i];
      if (!v) return html`<td colspan="3" class="muted">(not declared in this bundle)</td>`;
      // a topic the bundle did not record has no resolved expectation: show the declared one
      const expected = v.expected || describeModeExpectation(p.expect[c.meta.mode]);
      return html`<td data-label="${c.label} expected" class="val">${expected}</td><td data-label="observed" class="val">${v.observed}</td><td data-label="verdict" class="verdict ${v.status}" data-mode="${c.meta.mode}">${MARK[v.status]}</td>`;
    });
    return html`<tbody class="prop" data-id="${p.id}"${attr(
      "data-fail",
      vs.some((v) => v?.status === "fail"),
    )}${attr(
      "data-known-issue",
      vs.some((v) => v?.status === "known-issue"),
    )}${attr(
      "data-skip",
      vs.some((v) => v?.status === "skip"),
    )}>
<tr class="row"><td><button type="button" class="expander" aria-expanded="false" aria-controls="${id}">${p.id}</button></td><td data-label="claim">${p.claim}</td><td data-label="source">${sourceText(p)}${p.why ? html`<br><span class="muted">${p.why}</span>` : ""}</td>${cells}</tr>
<tr class="evidence" id="${id}" hidden><td colspan="${3 + 3 * cols.length}">${cols.map((c, i) => {
      const v = vs[i];
      return v ? evidenceBlock(c, v) : "";
    })}</td></tr>
</tbody>\n`;
  });
}

function comparisonSection(c: Comparison): Html {
  const head = (r: CheckResult) => `${r.mode}, Cilium ${r.cilium}`;
  const groups = SEVERITIES.map((s) => ({ s, rows: c.changes.filter((x) => x.severity === s) })).filter(
    (g) => g.rows.length > 0,
  );
  return html`<section id="compare"><h2>What changed: ${head(c.a)} → ${head(c.b)}</h2>
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

/**
 * The property table's column widths, as rules of the page's style (the Content-Security-Policy allows no
 * style attribute): the property, claim and source columns, then three per bundle.
 */
function columnWidths(n: number): string {
  const each = (50 - (n > 1 ? 0 : 2)) / (3 * n);
  return [
    `table.props col.c-id { width: 15%; }`,
    `table.props col.c-claim { width: ${n > 1 ? 22 : 34}%; }`,
    `table.props col.c-source { width: ${n > 1 ? 13 : 18}%; }`,
    `table.props col.c-mode { width: ${each}%; }`,
  ].join("\n");
}

/**
 * The whole page: self-contained (style, script and SVG inline), so it opens from disk or a CI artifact. Every
 * value from a bundle is escaped by construction (helpers/html.ts), and a strict Content-Security-Policy lets
 * nothing load or run but the page's own style and script, allowed by their SHA-256 hashes computed here.
 */
export function renderReport(input: ReportInput): string {
  const cols = input.columns;
  const counts = (s: Verdict["status"]) =>
    input.properties.filter((p) => cols.some((c) => verdictOf(c, p.id)?.status === s)).length;
  const measured: MeasuredBundle[] = cols.map((c) => ({
    label: c.label,
    meta: c.meta,
    ...(c.check.records.scaling ? { scaling: c.check.records.scaling.record } : {}),
    ...(c.check.records.latency ? { latency: c.check.records.latency.record } : {}),
  }));
  const charts = measurementCharts(measured);
  const totals = cols
    .map((c) => {
      const n = (s: Verdict["status"]) => c.check.verdicts.filter((v) => v.status === s).length;
      const known = n("known-issue");
      return `${c.label}: ${n("pass")} passed, ${n("fail")} failed${known > 0 ? `, ${known} known issue${known === 1 ? "" : "s"}` : ""}, ${n("skip")} skipped`;
    })
    .join(" · ");
  const css = `${CSS}${columnWidths(cols.length)}\n`;
  const csp = contentSecurityPolicy({ styles: [css], scripts: [SCRIPT] });
  const colgroup = html`<colgroup><col class="c-id"><col class="c-claim"><col class="c-source">${cols.map(() => html`<col class="c-mode"><col class="c-mode"><col class="c-mode">`)}</colgroup>`;
  const title = cols.map((c) => c.label).join(" | ");
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Datapath conformance: ${title}</title>
${inlineStyle(css)}</head>
<body><main>
<header><h1>Where Service load balancing happens: ${title}</h1>
<p class="muted">cilium-datapath-conformance report, generated ${input.generatedAt} by re-judging the bundles below (as <code>check</code> does). ${totals}</p></header>
${headlineSection(input)}
<h2 id="runs">The run${cols.length > 1 ? "s" : ""}</h2>
<div class="runs">${cols.map((c) => html`${runCard(c)}\n`)}</div>
${cols.map((c) => {
  const u = upgradeView(c.meta, c.check.records.upgrade?.record, c.check.verdicts);
  return u ? html`${renderUpgrade(c.label, u)}\n` : "";
})}
<h2 id="properties">Properties</h2>
<div class="filters" role="group" aria-label="Show properties">
<button type="button" data-filter="fail" aria-pressed="false">Failed (${counts("fail")})</button>
<button type="button" data-filter="known-issue" aria-pressed="false">Known issues (${counts("known-issue")})</button>
<button type="button" data-filter="skip" aria-pressed="false">Skipped (${counts("skip")})</button>
<button type="button" data-filter="all" aria-pressed="true">All (${input.properties.length})</button>
</div>
<table class="props" data-filter="all">${colgroup}
<thead><tr><th scope="col" rowspan="2">property</th><th scope="col" rowspan="2">claim</th><th scope="col" rowspan="2">source</th>${cols.map((c) => html`<th scope="colgroup" colspan="3" class="mode-head">${c.label}</th>`)}</tr>
<tr>${cols.map(() => html`<th scope="col">expected</th><th scope="col">observed</th><th scope="col">verdict</th>`)}</tr></thead>
${propertyRows(input)}</table>
<h2 id="measurements">Measurements</h2>
${charts.length > 0 ? html`<div class="charts">${charts.map((c) => html`<figure id="chart-${c.id}">${c.svg}</figure>\n`)}</div>` : html`<p class="muted">No measurements in these bundles.</p>`}
${input.comparison ? comparisonSection(input.comparison) : ""}
<h2 id="raw">Raw outputs</h2>
<p class="muted">Every output the evidence above points into, from the bundles' raw/ files and the calls' stderr: a link on an evidence line opens its output here, scrolled to the line and highlighted. Long outputs are shown around the cited lines.</p>
${cols.map((c) => html`${rawSection(c)}\n`)}</main>
${inlineScript(SCRIPT)}
</body></html>
`.text;
}
