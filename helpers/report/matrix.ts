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
import { MARK } from "./assets.ts";
import { shownValues } from "./values.ts";

export interface MatrixColumn {
  label: string;
  /** The header's lines: version (from → to for an upgrade), mode, and what tells it apart (profile, provider). */
  head: string[];
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

function row(cols: MatrixColumn[], p: Property, index: number, kinds: CellKind[], judged: boolean): Html {
  const id = `ev-${slug(p.id)}`;
  const cells = cols.map((c, i) => {
    const v = c.verdicts.get(p.id);
    const k = kinds[i] as CellKind;
    const value =
      v && (k === "pass" || k === "fail" || k === "known-issue" || k === "changed")
        ? shownValues(v).observed
        : "";
    // no title per cell (the column's header names the bundle, the opened verdict says the rest): 15 bundles
    // × 77 properties of it were a third of the matrix
    return html`<td class="cell k-${k}"><button type="button" class="expander m" data-c="${i}" data-mode="${c.mode}" data-status="${k}" aria-expanded="false" aria-controls="${id}"><span class="mk" aria-label="${k === "na" ? "n/a" : MARK[k as Verdict["status"]]}">${CELL_MARK[k]}</span>${value ? html`<span class="ov">${value}</span>` : ""}</button></td>`;
  });
  const why = judged
    ? ""
    : html`<ul class="reasons">${reasons(cols, p).map(
        (r) =>
          html`<li><span class="muted">${r.where.length === cols.length ? (cols.length > 1 ? "every bundle" : "") : r.where.join(", ")}${r.where.length === cols.length && cols.length === 1 ? "" : ": "}</span>${r.reason}</li>`,
      )}</ul>`;
  // a change in a new minor shows under "Failed" too: the expectation assumed for it did not hold
  const failing = kinds.includes("fail") || kinds.includes("changed");
  return html`<tbody class="prop" data-id="${p.id}" data-p="${index}"${attr("data-fail", failing)}${attr(
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

/** The matrix, with its filters; `counts` per status are of properties (a row counts once). */
export function renderMatrix(cols: MatrixColumn[], properties: Property[]): Html {
  const rows = properties.map((p, i) => {
    const kinds = cols.map((c) => cellKind(c.verdicts.get(p.id)));
    return { p, i, kinds, rank: rowRank(kinds) };
  });
  rows.sort((a, b) => a.rank - b.rank || a.i - b.i);
  const count = (k: CellKind[]) => rows.filter((r) => r.kinds.some((x) => k.includes(x))).length;
  const counts = {
    fail: count(["fail", "changed"]),
    "known-issue": count(["known-issue"]),
    skip: count(["skip", "na"]),
  };
  const judged = rows.filter((r) => r.rank < 3);
  const nowhere = rows.filter((r) => r.rank === 3);
  const none = (k: keyof typeof counts, words: string) =>
    counts[k] === 0
      ? html`<tbody class="none" data-none="${k}"><tr><td colspan="${cols.length + 1}">${words}</td></tr></tbody>`
      : "";
  return html`<div class="filters" role="group" aria-label="Show properties">
<button type="button" data-filter="fail" aria-pressed="false">Failed (${counts.fail})</button>
<button type="button" data-filter="known-issue" aria-pressed="false">Known issues (${counts["known-issue"]})</button>
<button type="button" data-filter="skip" aria-pressed="false">Skipped (${counts.skip})</button>
<button type="button" data-filter="all" aria-pressed="true">All (${properties.length})</button>
</div>
<p class="muted legend">${cols.length > 1 ? "One column per bundle. " : ""}✔ held · ✘ failed · ⚠ known issue of that version${cols.some((c) => [...c.verdicts.values()].some((v) => v.assumedFrom)) ? " · Δ changed in the new minor (the expectation assumed from the newest declared minor did not hold: a regression or a new behaviour, to be declared)" : ""} · – skipped · n/a not applicable there. Open a cell for that bundle's verdict: expected vs observed, the message and the raw lines.</p>
<div class="matrix-wrap" tabindex="0" role="region" aria-label="properties by bundle">
<table class="props matrix${cols.length === 1 ? " one" : ""}" data-filter="all">
<thead><tr><th scope="col" class="corner">property</th>${cols.map((c) => html`<th scope="col" class="bh" data-mode="${c.mode}" title="${c.label}">${c.head.map((h, i) => html`<span class="h${i}">${h}</span>`)}</th>`)}</tr></thead>
${none("fail", "No property failed in these bundles.")}${none("known-issue", "No known issue showed in these bundles.")}${none("skip", "Nothing was skipped in these bundles.")}
${judged.map((r) => row(cols, r.p, r.i, r.kinds, true))}${
  nowhere.length > 0
    ? html`<tbody class="group-head"><tr><th colspan="${cols.length + 1}" scope="rowgroup" id="skipped-nowhere">Judged in no bundle (${nowhere.length}), each with its reason</th></tr></tbody>
${nowhere.map((r) => row(cols, r.p, r.i, r.kinds, false))}`
    : ""
}</table></div>`;
}
