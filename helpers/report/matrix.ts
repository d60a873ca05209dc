/**
 * The property matrix (issue 27): one row per property, one column per bundle (labelled by its version, mode
 * and profile), each cell a compact verdict mark with the observed value that opens, below its row, to that
 * bundle's verdict (expected vs observed, the message, the evidence lines with links to the raw outputs),
 * rendered by the page's script from the embedded data (helpers/report/data.ts). Properties that failed come
 * first, then known issues, then those that held; the ones no bundle judged are grouped last, each with its
 * reason.
 */
import { attr, type Html, html } from "../html.ts";
import { skipReason, type Verdict } from "../properties/judge.ts";
import type { Property } from "../properties/types.ts";
import { shownValue } from "../records/evidence.ts";
import { MARK } from "./assets.ts";
import { groupedHead, groupStarts, leafLines } from "./column-head.ts";
import { shownValues } from "./values.ts";
import { rowId } from "./verdict.ts";

export interface MatrixColumn {
  label: string;
  /** The header's lines: version (from → to for an upgrade), mode, and what tells it apart (profile, provider). */
  head: string[];
  /** The column's group (its version, or its upgrade's): a header spans each group's columns. */
  group?: string;
  mode: string;
  verdicts: Map<string, Verdict>;
}

/** A cell's kind: a verdict's status, or n/a (not applicable in this bundle's mode, or not judged there). */
export type CellKind = Verdict["status"] | "na";

export const CELL_MARK: Record<CellKind, string> = {
  pass: "✔",
  fail: "✘",
  "known-issue": "⚠",
  changed: "Δ",
  skip: "–",
  na: "n/a",
};

export function cellKind(v: Verdict | undefined): CellKind {
  if (!v) return "na";
  if (v.status === "skip" && skipReason(v).startsWith("not applicable")) return "na";
  return v.status;
}

/**
 * A cell that is neither held, skipped nor n/a: a failure, a change in a new minor (a failure too: the expectation
 * assumed for it did not hold), a known issue (or any other status a verdict may have).
 */
const notHeld = (k: CellKind) => k !== "pass" && k !== "skip" && k !== "na";

/**
 * A row of "what differs" (issue 37: at 35 bundles the one failed cell was column 30 of 141 rows): some bundle
 * failed the property (or it changed in a new minor) or showed a known issue, or the bundles that judged it
 * disagree. A skip or an n/a does not make a row differ (a partial bundle skips most): the Skipped filter lists
 * those.
 */
export function rowDiffers(kinds: CellKind[]): boolean {
  return kinds.some(notHeld) || new Set(kinds.filter((k) => k !== "skip" && k !== "na")).size > 1;
}

/**
 * A row's rank: failed (or changed in a new minor) first, then known issues, then held, then judged nowhere
 * (skipped or n/a everywhere).
 */
export function rowRank(kinds: CellKind[]): number {
  if (kinds.includes("fail") || kinds.includes("changed")) return 0;
  if (kinds.includes("known-issue")) return 1;
  if (kinds.includes("pass")) return 2;
  return 3;
}

const slug = (s: string) => s.replace(/[^A-Za-z0-9_-]+/g, "-");

/** The reasons of a row's skips, each with the bundles it holds for (one line when every bundle has the same). */
function reasons(cols: MatrixColumn[], p: Property): { reason: string; where: string[] }[] {
  const by = new Map<string, string[]>();
  for (const c of cols) {
    const v = c.verdicts.get(p.id);
    const r = v
      ? v.status === "skip"
        ? skipReason(v)
        : null
      : "not judged in this bundle (not declared there)";
    if (r === null) continue;
    by.set(r, [...(by.get(r) ?? []), c.label]);
  }
  return [...by].map(([reason, where]) => ({ reason, where }));
}

function row(
  cols: MatrixColumn[],
  p: Property,
  index: number,
  kinds: CellKind[],
  judged: boolean,
  starts: Set<number>,
  gsd: Set<number>,
): Html {
  const id = `ev-${slug(p.id)}`;
  const cells = cols.map((c, i) => {
    const v = c.verdicts.get(p.id);
    const k = kinds[i] as CellKind;
    const value =
      v && (k === "pass" || k === "fail" || k === "known-issue" || k === "changed")
        ? shownValue(shownValues(v).observed)
        : "";
    // no title per cell (the column's header names the bundle, the opened verdict says the rest): 15 bundles
    // × 77 properties of it were a third of the matrix
    return html`<td class="cell k-${k} c${i}${starts.has(i) ? " gs" : ""}${gsd.has(i) ? " gsd" : ""}"><button type="button" class="expander m" data-c="${i}" data-mode="${c.mode}" data-status="${k}" aria-expanded="false" aria-controls="${id}"><span class="mk" aria-label="${k === "na" ? "n/a" : MARK[k as Verdict["status"]]}">${CELL_MARK[k]}</span>${value ? html`<span class="ov">${value}</span>` : ""}</button></td>`;
  });
  const why = judged
    ? ""
    : html`<ul class="reasons">${reasons(cols, p).map(
        (r) =>
          html`<li><span class="muted">${r.where.length === cols.length ? (cols.length > 1 ? "every bundle" : "") : r.where.join(", ")}${r.where.length === cols.length && cols.length === 1 ? "" : ": "}</span>${r.reason}</li>`,
      )}</ul>`;
  // a change in a new minor shows under "Failed" too: the expectation assumed for it did not hold
  const failing = kinds.includes("fail") || kinds.includes("changed");
  return html`<tbody class="prop" id="${rowId(p.id)}" data-id="${p.id}" data-p="${index}"${attr("data-differs", rowDiffers(kinds))}${attr("data-fail", failing)}${attr(
    "data-known-issue",
    kinds.includes("known-issue"),
  )}${attr(
    "data-skip",
    kinds.some((k) => k === "skip" || k === "na"),
  )}>
<tr class="row"><th scope="row"><code class="pid">${p.id}</code><span class="claim">${p.claim}</span>${why}</th>${cells}</tr>
<tr class="evidence" id="${id}" hidden><td colspan="${cols.length + 1}"></td></tr>
</tbody>\n`;
}

/**
 * The matrix, with its filters; `counts` per status are of properties (a row counts once). Several bundles open on
 * "what differs": its rows, in the columns that have something there (the others are named above it); "All" is a
 * click away. Returns the markup and the style that hides those columns in that view (the page's hashed style).
 */
export function renderMatrix(
  cols: MatrixColumn[],
  properties: Property[],
  opts: { differsFirst?: boolean } = {},
): { html: Html; css: string } {
  const rows = properties.map((p, i) => {
    const kinds = cols.map((c) => cellKind(c.verdicts.get(p.id)));
    return { p, i, kinds, rank: rowRank(kinds) };
  });
  rows.sort((a, b) => a.rank - b.rank || a.i - b.i);
  const count = (k: CellKind[]) => rows.filter((r) => r.kinds.some((x) => k.includes(x))).length;
  const differing = rows.filter((r) => rowDiffers(r.kinds));
  const counts = {
    fail: count(["fail", "changed"]),
    "known-issue": count(["known-issue"]),
    skip: count(["skip", "na"]),
    differs: differing.length,
  };
  // the columns "what differs" shows: those with a cell that did not hold in one of its rows
  const differsCols = new Set(
    cols.flatMap((_, i) => (differing.some((r) => notHeld(r.kinds[i] as CellKind)) ? [i] : [])),
  );
  const withDiffers = cols.length > 1;
  const start = withDiffers && opts.differsFirst === true ? "differs" : "all";
  const judged = rows.filter((r) => r.rank < 3);
  const nowhere = rows.filter((r) => r.rank === 3);
  // the groups of columns (a version, an upgrade with its legs), then each group's modes, then each column's variant
  const starts = groupStarts(cols);
  // where what differs hides a group's first columns, its first shown column carries the group's line there
  const startsDiffers = [...groupStarts(cols, (i) => differsCols.has(i))].filter((i) => !starts.has(i));
  const gsd = new Set(startsDiffers);
  const grouped = cols.some((c) => (c.group ?? "") !== "") && cols.length > 1;
  const none = (k: keyof typeof counts, words: string) =>
    counts[k] === 0
      ? html`<tbody class="none" data-none="${k}"><tr><td colspan="${cols.length + 1}">${words}</td></tr></tbody>`
      : "";
  const hidden = cols.length - differsCols.size;
  const leaf = (c: MatrixColumn, i: number) =>
    html`<th scope="col" class="bh c${i}${starts.has(i) ? " gs" : ""}${gsd.has(i) ? " gsd" : ""}" data-mode="${c.mode}" title="${c.label}">${leafLines(c).map((h, j) => html`<span class="h${j === 0 ? 2 : 1}">${h}</span>`)}</th>`;
  const head = grouped
    ? groupedHead(cols, {
        corner: html`<th scope="col" class="corner" rowspan="3">property</th>`,
        views: [
          { cls: "g-all", shown: () => true },
          { cls: "g-diff", shown: (i) => differsCols.has(i) },
        ],
        leaf,
      })
    : html`<tr><th scope="col" class="corner">property</th>${cols.map((c, i) => html`<th scope="col" class="bh c${i}${starts.has(i) ? " gs" : ""}" data-mode="${c.mode}" title="${c.label}">${c.head.filter((h) => h !== "").map((h, j) => html`<span class="h${j}">${h}</span>`)}</th>`)}</tr>`;
  const hiddenRows = properties.length - counts.differs;
  const note = withDiffers
    ? html`<p class="differs-note">Showing the ${counts.differs} of ${properties.length} properties that differ, in the ${differsCols.size} of ${cols.length} bundles where they do: ${hiddenRows} ${hiddenRows === 1 ? "row" : "rows"}${hidden > 0 ? ` and ${hidden} ${hidden === 1 ? "column" : "columns"}` : ""} hidden (held, or skipped, alike everywhere). <a href="#properties-all" class="show-all" data-filter-link="all">Show the full matrix: ${properties.length} properties × ${cols.length} bundles</a></p>\n`
    : "";
  const markup = html`<div class="filters" role="group" aria-label="Show properties">
${withDiffers ? html`<button type="button" data-filter="differs" aria-pressed="${start === "differs"}">What differs (${counts.differs})</button>\n` : ""}<button type="button" data-filter="fail" aria-pressed="false">Failed (${counts.fail})</button>
<button type="button" data-filter="known-issue" aria-pressed="false">Known issues (${counts["known-issue"]})</button>
<button type="button" data-filter="skip" aria-pressed="false">Skipped (${counts.skip})</button>
<button type="button" data-filter="all" aria-pressed="${start === "all"}">All (${properties.length})</button>
</div>
${note}<p class="muted legend">${cols.length > 1 ? "One column per bundle, grouped by version (an upgrade with its legs), then mode, then profile. " : ""}✔ held · ✘ failed · ⚠ known issue of that version${cols.some((c) => [...c.verdicts.values()].some((v) => v.assumedFrom)) ? " · Δ changed in the new minor (the expectation assumed from the newest declared minor did not hold: a regression or a new behaviour, to be declared)" : ""} · – skipped · n/a not applicable there. Open a cell for that bundle's verdict: expected vs observed, the message and the raw lines.${withDiffers ? ` What differs: the properties some bundle failed (or that changed in a new minor) or showed a known issue for, or whose verdicts disagree (${counts.differs} of ${properties.length}), in the bundles where they did (${differsCols.size} of ${cols.length}${hidden > 0 ? `; the ${hidden} others held each of them or skipped it` : ""}); All shows every property in every bundle.` : ""}</p>
<div class="matrix-wrap" id="properties-all" tabindex="0" role="region" aria-label="properties by bundle">
<table class="props matrix${cols.length === 1 ? " one" : ""}${grouped ? " grouped" : ""}" data-filter="${start}">
<thead>${head}</thead>
${none("differs", `Nothing differs: every property a bundle judged held there (All shows the ${properties.length}).`)}${none("fail", "No property failed in these bundles.")}${none("known-issue", "No known issue showed in these bundles.")}${none("skip", "Nothing was skipped in these bundles.")}
${judged.map((r) => row(cols, r.p, r.i, r.kinds, true, starts, gsd))}${
  nowhere.length > 0
    ? html`<tbody class="group-head"><tr><th colspan="${cols.length + 1}" scope="rowgroup" id="skipped-nowhere">Judged in no bundle (${nowhere.length}), each with its reason</th></tr></tbody>
${nowhere.map((r) => row(cols, r.p, r.i, r.kinds, false, starts, gsd))}`
    : ""
}</table></div>`;
  const off = cols.flatMap((_, i) =>
    differsCols.has(i) ? [] : [`table.props[data-filter="differs"] .c${i}`],
  );
  const css = off.length > 0 ? `${off.join(", ")} { display: none; }\n` : "";
  return { html: markup, css };
}
