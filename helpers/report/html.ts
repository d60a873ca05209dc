import { basename, relative } from "node:path";
import { type BundleMeta, readMeta } from "../bundle.ts";
import { type CheckResult, checkBundle } from "../check.ts";
import { type Comparison, compareBundles, SEVERITIES, SEVERITY_TITLES, verdictLine } from "../compare.ts";
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

const esc = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const slug = (s: string) => s.replace(/[^A-Za-z0-9_-]+/g, "-");

/** A path under the working directory relative to it (as a user typed it), any other as given. */
function shownPath(dir: string): string {
  const rel = relative(process.cwd(), dir);
  return rel.startsWith("..") ? dir : rel;
}

function runCard(c: ReportColumn): string {
  const m = c.meta;
  const rows: [string, string][] = [
    ["mode", MODE_TITLES[m.mode]],
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
    ? `<p class="muted">${esc(m.lab.note)}; Cilium from ${esc(m.lab.ciliumSource)}; patch: ${esc(m.lab.patch)}</p>`
    : "";
  const phases = Object.entries(m.phases);
  return `<section class="run" aria-label="${esc(c.label)}">
<h3>${esc(c.label)} <span class="origin-${esc(m.origin)}">${esc(m.origin)}</span></h3>
<dl>${rows.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join("")}</dl>
${lab}
${phases.length > 0 ? `<details class="phase-timings"><summary>phase timings: ${phases.reduce((t, [, v]) => t + v, 0).toFixed(0)} s in all</summary><table class="phases">${phases.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${v.toFixed(1)} s</td></tr>`).join("")}</table></details>` : ""}
</section>`;
}

function verdictOf(c: ReportColumn, id: string): Verdict | undefined {
  return c.check.verdicts.find((v) => v.id === id);
}

function headlineCellHtml(c: ReportColumn, cell: HeadlineCell): string {
  const facts = cell.facts
    .filter((f) => f.status !== "absent")
    .map((f) =>
      f.status === "skip"
        ? `${esc(f.label)}: skipped`
        : `${esc(f.label)} <b>${esc(f.observed)}</b>${f.status === "fail" || f.status === "known-issue" ? ` <span class="verdict ${f.status}">(expected ${esc(f.expected)}${f.status === "known-issue" ? `; known issue of Cilium ${esc(f.knownIssue ?? "")}` : ""})</span>` : ` <span class="muted">(expected ${esc(f.expected)})</span>`}`,
    )
    .join(" · ");
  const from = cell.lineFrom ? `${cell.lineFrom}${cell.at ? `: ${showPlace(cell.at)}` : ""}` : "";
  const line =
    cell.line === null
      ? cell.status === "skip"
        ? `<span class="hl-note muted">${esc((cell.note ?? "").replace(/^.*?: (skipped|not applicable): /, ""))}</span>`
        : '<span class="hl-note muted">no evidence line</span>'
      : cell.absence
        ? `<span class="hl-line none" title="${esc(from)}">${esc(cell.line)}</span>`
        : `<code class="hl-line" title="${esc(from)}">${esc(cell.line)}</code>${cell.at ? `<span class="hl-from muted">${placeLink(c, cell.at)}</span>` : ""}`;
  return `<td class="hl-cell" data-label="${esc(c.label)}" data-mode="${esc(c.meta.mode)}" data-status="${cell.status}"><span class="verdict ${cell.status}">${MARK[cell.status]}</span> <span class="hl-facts">${facts}</span>${line}</td>`;
}

/**
 * The page's opening: the field documents' five claims, one row each, per bundle (verdict, values and the one
 * raw line that shows it), and a picture per bundle of where its run translated the Service.
 */
function headlineSection(input: ReportInput): string {
  const cols = input.columns;
  const rows = HEADLINE.map((claim) => {
    const cells = cols.map((c) =>
      headlineCellHtml(
        c,
        headlineCell(claim, (id) => verdictOf(c, id)),
      ),
    );
    return `<tr data-claim="${esc(claim.key)}"><th scope="row"><span class="hl-title">${esc(claim.title)}</span><span class="hl-says">${esc(claim.says)} <span class="muted">(${esc(claim.source)})</span></span></th>${cells.join("")}</tr>`;
  });
  const pictures = cols.map((c) => {
    const paths = translationPaths((id) => verdictOf(c, id));
    return `<figure class="picture" data-mode="${esc(c.meta.mode)}"><figcaption>${esc(c.label)}: where the Service was translated</figcaption>${translationSvg(c.label, paths)}<ul class="muted">${paths.map((p) => `<li>${esc(describePath(p))}</li>`).join("")}</ul></figure>`;
  });
  return `<section id="headline" aria-labelledby="headline-title">
<h2 id="headline-title">The field documents' five claims</h2>
<table class="headline"><colgroup><col class="hl-claim-col">${cols.map(() => "<col>").join("")}</colgroup>
<thead><tr><th scope="col">claim</th>${cols.map((c) => `<th scope="col">${esc(c.label)}</th>`).join("")}</tr></thead>
<tbody>
${rows.join("\n")}
</tbody></table>
<div class="pictures">${pictures.join("\n")}</div>
<p class="muted legend">In each picture a dashed line goes to the Service's address and a solid one to a Pod IP; the dot is where the Service became a Pod IP, as this run's verdicts place it (hover a line for the verdicts). Every verdict is in "Properties" below, with its evidence.</p>
</section>`;
}

/** A place as a link to its line (or output) among the bundle's embedded raw outputs. */
function placeLink(c: ReportColumn, p: Place): string {
  const anchor = placeAnchor(c.raw, p);
  return anchor ? `<a class="at" href="#${anchor}">${esc(showPlace(p))}</a>` : esc(showPlace(p));
}

/** One evidence item: a quoted line with the link to its place, or a derived value with links to its sources. */
function evidenceItem(c: ReportColumn, e: EvidenceItem): string {
  if ("quote" in e) return `<li class="q">${placeLink(c, e.at)} <code>${esc(e.quote)}</code></li>`;
  const from = e.from.filter((p) => p.call === undefined || p.stream === "stderr");
  const calls = e.from.length - from.length;
  return `<li class="d"><span class="derived">${esc(e.derived)}</span> <span class="muted">from ${[
    ...from.map((p) => placeLink(c, p)),
    ...(calls > 0 ? [`${calls} call record${calls > 1 ? "s" : ""} (exit code, time)`] : []),
  ].join(", ")}</span></li>`;
}

function evidenceBlock(c: ReportColumn, v: Verdict): string {
  const items =
    v.evidence.length > 0
      ? `<ul class="ev-lines" aria-label="evidence">${v.evidence.map((e) => evidenceItem(c, e)).join("")}</ul>`
      : '<p class="muted">(no evidence)</p>';
  // the outputs cited, each with the command that printed it, where and its exit code
  const cited = new Set(v.evidence.flatMap((e) => ("quote" in e ? [e.at] : e.from)).map((p) => outputKey(p)));
  const sources = [...c.raw.values()]
    .filter((o) => cited.has(o.key))
    .map(
      (o) =>
        `<li><a href="#${o.id}"><code>${esc(o.key)}</code></a>${o.call ? ` <span class="meta">— <code>${esc(o.call.argv.join(" ").slice(0, 160))}</code> on ${esc(o.call.target)}, exit ${o.call.exitCode ?? "none"}</span>` : ""}</li>`,
    )
    .join("");
  return `<div class="ev-mode"><h4>${esc(c.label)}: <span class="verdict ${v.status}">${MARK[v.status]}</span></h4>
<p class="message">${esc(v.message.split("\n  evidence")[0] ?? v.message)}</p>
${items}
${sources ? `<ul class="sources" aria-label="raw outputs">${sources}</ul>` : ""}</div>`;
}

/** A bundle's raw outputs that evidence points into: every line anchored, the cited ones marked. */
function rawSection(c: ReportColumn): string {
  if (c.raw.size === 0) return "";
  return `<section class="raw-outputs" aria-label="raw outputs of ${esc(c.label)}"><h3>${esc(c.label)}</h3>
${[...c.raw.values()]
  .map((o) => {
    let prev = 0;
    const body = o.lines
      .map((l) => {
        const gap = l.n > prev + 1 ? `<span class="gap">… ${l.n - prev - 1} lines …</span>` : "";
        prev = l.n;
        return `${gap}<span class="ln${l.cited ? " cited" : ""}" id="${o.id}L${l.n}" data-n="${l.n}">${esc(l.text)}</span>`;
      })
      .join("");
    const tail = o.total > prev ? `<span class="gap">… ${o.total - prev} lines …</span>` : "";
    return `<details class="raw" id="${o.id}"><summary><code>${esc(o.key)}</code>${o.call ? ` <span class="meta">— <code>${esc(o.call.argv.join(" ").slice(0, 160))}</code> on ${esc(o.call.target)}, exit ${o.call.exitCode ?? "none"}</span>` : ""}</summary>
<pre>${body}${tail}</pre></details>`;
  })
  .join("\n")}</section>`;
}

function propertyRows(input: ReportInput): string {
  const cols = input.columns;
  const rank = (p: Property) => {
    const st = cols.map((c) => verdictOf(c, p.id)?.status);
    return st.includes("fail") ? 0 : st.includes("known-issue") ? 1 : st.includes("skip") ? 3 : 2;
  };
  const ordered = input.properties
    .map((p, i) => ({ p, i }))
    .sort((a, b) => rank(a.p) - rank(b.p) || a.i - b.i);
  return ordered
    .map(({ p }) => {
      const vs = cols.map((c) => verdictOf(c, p.id));
      const id = `ev-${slug(p.id)}`;
      const flags = `${vs.some((v) => v?.status === "fail") ? " data-fail" : ""}${vs.some((v) => v?.status === "known-issue") ? " data-known-issue" : ""}${vs.some((v) => v?.status === "skip") ? " data-skip" : ""}`;
      const cells = cols
        .map((c, i) => {
          const v = vs[i];
          if (!v) return '<td colspan="3" class="muted">(not declared in this bundle)</td>';
          // a topic the bundle did not record has no resolved expectation: show the declared one
          const expected = v.expected || describeModeExpectation(p.expect[c.meta.mode]);
          return `<td data-label="${esc(c.label)} expected" class="val">${esc(expected)}</td><td data-label="observed" class="val">${esc(v.observed)}</td><td data-label="verdict" class="verdict ${v.status}" data-mode="${esc(c.meta.mode)}">${MARK[v.status]}</td>`;
        })
        .join("");
      return `<tbody class="prop" data-id="${esc(p.id)}"${flags}>
<tr class="row"><td><button type="button" class="expander" aria-expanded="false" aria-controls="${id}">${esc(p.id)}</button></td><td data-label="claim">${esc(p.claim)}</td><td data-label="source">${esc(sourceText(p))}${p.why ? `<br><span class="muted">${esc(p.why)}</span>` : ""}</td>${cells}</tr>
<tr class="evidence" id="${id}" hidden><td colspan="${3 + 3 * cols.length}">${cols
        .map((c, i) => {
          const v = vs[i];
          return v ? evidenceBlock(c, v) : "";
        })
        .join("")}</td></tr>
</tbody>`;
    })
    .join("\n");
}

function comparisonSection(c: Comparison): string {
  const head = (r: CheckResult) => `${r.mode}, Cilium ${r.cilium}`;
  const groups = SEVERITIES.map((s) => ({ s, rows: c.changes.filter((x) => x.severity === s) })).filter(
    (g) => g.rows.length > 0,
  );
  return `<section id="compare"><h2>What changed: ${esc(head(c.a))} → ${esc(head(c.b))}</h2>
<p class="muted">A: <code>${esc(c.a.bundle)}</code> · B: <code>${esc(c.b.bundle)}</code>.</p>
<p>${c.regressed ? `<strong class="changed">${esc(verdictLine(c))}</strong>` : esc(verdictLine(c))}</p>
<table class="compare"><thead><tr><th>property</th><th>A</th><th>B</th><th>change</th></tr></thead>
${groups
  .map(
    (
      g,
    ) => `<tbody data-severity="${g.s}"><tr><th colspan="4" scope="rowgroup">${esc(SEVERITY_TITLES[g.s])} (${g.rows.length})</th></tr>
${g.rows.map((v) => `<tr><td><code>${esc(v.id)}</code></td><td>${esc(v.a)}</td><td>${esc(v.b)}</td><td${g.s === "other" ? "" : ' class="changed"'}><b>${esc(v.kind)}</b>: ${esc(v.detail)}</td></tr>`).join("\n")}</tbody>`,
  )
  .join("\n")}
<tbody><tr><td colspan="4" class="muted">${c.unchanged} properties unchanged (same verdict, value within its tolerance)</td></tr></tbody></table></section>`;
}

/** The whole page: self-contained (style, script and SVG inline), so it opens from disk or a CI artifact. */
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
      return `${esc(c.label)}: ${n("pass")} passed, ${n("fail")} failed${known > 0 ? `, ${known} known issue${known === 1 ? "" : "s"}` : ""}, ${n("skip")} skipped`;
    })
    .join(" · ");
  const colgroup = `<colgroup><col style="width:15%"><col style="width:${cols.length > 1 ? 22 : 34}%"><col style="width:${cols.length > 1 ? 13 : 18}%">${cols.map(() => `<col style="width:${(50 - (cols.length > 1 ? 0 : 2)) / (3 * cols.length)}%"><col style="width:${(50 - (cols.length > 1 ? 0 : 2)) / (3 * cols.length)}%"><col style="width:${(50 - (cols.length > 1 ? 0 : 2)) / (3 * cols.length)}%">`).join("")}</colgroup>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Datapath conformance: ${esc(cols.map((c) => c.label).join(" | "))}</title>
<style>${CSS}</style></head>
<body><main>
<header><h1>Where Service load balancing happens: ${esc(cols.map((c) => c.label).join(" | "))}</h1>
<p class="muted">cilium-datapath-conformance report, generated ${esc(input.generatedAt)} by re-judging the bundles below (as <code>check</code> does). ${totals}</p></header>
${headlineSection(input)}
<h2 id="runs">The run${cols.length > 1 ? "s" : ""}</h2>
<div class="runs">${cols.map(runCard).join("\n")}</div>
${cols
  .map((c) => {
    const u = upgradeView(c.meta, c.check.records.upgrade?.record, c.check.verdicts);
    return u ? renderUpgrade(c.label, u) : "";
  })
  .join("\n")}
<h2 id="properties">Properties</h2>
<div class="filters" role="group" aria-label="Show properties">
<button type="button" data-filter="fail" aria-pressed="false">Failed (${counts("fail")})</button>
<button type="button" data-filter="known-issue" aria-pressed="false">Known issues (${counts("known-issue")})</button>
<button type="button" data-filter="skip" aria-pressed="false">Skipped (${counts("skip")})</button>
<button type="button" data-filter="all" aria-pressed="true">All (${input.properties.length})</button>
</div>
<table class="props" data-filter="all">${colgroup}
<thead><tr><th scope="col" rowspan="2">property</th><th scope="col" rowspan="2">claim</th><th scope="col" rowspan="2">source</th>${cols.map((c) => `<th scope="colgroup" colspan="3" class="mode-head">${esc(c.label)}</th>`).join("")}</tr>
<tr>${cols.map(() => '<th scope="col">expected</th><th scope="col">observed</th><th scope="col">verdict</th>').join("")}</tr></thead>
${propertyRows(input)}
</table>
<h2 id="measurements">Measurements</h2>
${charts.length > 0 ? `<div class="charts">${charts.map((c) => `<figure id="chart-${c.id}">${c.svg}</figure>`).join("\n")}</div>` : '<p class="muted">No measurements in these bundles.</p>'}
${input.comparison ? comparisonSection(input.comparison) : ""}
<h2 id="raw">Raw outputs</h2>
<p class="muted">Every output the evidence above points into, from the bundles' raw/ files and the calls' stderr: a link on an evidence line opens its output here, scrolled to the line and highlighted. Long outputs are shown around the cited lines.</p>
${cols.map(rawSection).join("\n")}
</main>
<script>${SCRIPT}</script>
</body></html>
`;
}
