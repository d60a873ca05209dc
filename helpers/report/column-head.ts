/**
 * The header of a table with a column per bundle, grouped (issue 44: at every shipped bundle each column repeated
 * "1.20.2 / kpr / …"): a row of groups (a version, or an upgrade with its legs), a row of modes under each, and a
 * row of what tells each column apart (its profile and variant, `default` when nothing does; its version when it
 * is not its group's, as an upgrade's legs). Each column's three cells read top to bottom as its label. A table
 * shown in several views (the matrix's "what differs" and "All") gets the two upper rows once per view, each
 * spanning the columns that view shows, with the view's class (the page's style shows one).
 */
import { type Html, html } from "../html.ts";

export interface HeadColumn {
  label: string;
  /** version, mode, variant (helpers/report/labels.ts). */
  head: string[];
  group?: string;
}

export interface HeadView {
  /** The class its cells carry (`g-all`, `g-diff`). */
  cls: string;
  /** The columns it shows, by index. */
  shown: (i: number) => boolean;
}

/** Consecutive runs of columns with the same key. */
function runs(idx: number[], key: (i: number) => string): { name: string; cols: number[] }[] {
  const out: { name: string; cols: number[] }[] = [];
  for (const i of idx) {
    const k = key(i);
    const last = out.at(-1);
    if (last && last.name === k) last.cols.push(i);
    else out.push({ name: k, cols: [i] });
  }
  return out;
}

const isUpgrade = (v: string) => v.includes("→");

/** What tells a column apart in its group and mode: its version when not the group's, its variant or `default`. */
export function leafLines(c: HeadColumn): string[] {
  const [version = "", , variant = ""] = c.head;
  const group = c.group ?? version;
  return [
    ...(version !== group ? [version] : []),
    variant !== "" ? variant : isUpgrade(version) ? "upgrade" : "default",
  ];
}

/**
 * The indexes of the columns that start a group (a thicker line on their left) among those `shown` (all by
 * default; the matrix's what differs shows fewer, and a group's first shown column starts it there).
 */
export function groupStarts(cols: HeadColumn[], shown: (i: number) => boolean = () => true): Set<number> {
  const groups = runs(
    cols.flatMap((_, i) => (shown(i) ? [i] : [])),
    (i) => cols[i]?.group ?? "",
  );
  return new Set(groups.slice(1).map((g) => g.cols[0] as number));
}

/**
 * The header's rows: groups and modes (once per view), then a cell per column (`leaf`: its markup, given the
 * column and its index). `corner` spans the three rows.
 */
export function groupedHead<C extends HeadColumn>(
  cols: C[],
  opts: { corner: Html; views: HeadView[]; leaf: (c: C, i: number) => Html },
): Html {
  const all = cols.map((_, i) => i);
  const group = (i: number) => cols[i]?.group ?? "";
  const mode = (i: number) => `${group(i)}\u0000${cols[i]?.head[1] ?? ""}`;
  const one = opts.views.length === 1;
  const viewCls = (v: HeadView) => (one ? "" : ` ${v.cls}`);
  // a group's line on its left, in each view at the first column that view shows of it
  const startsIn = (v: HeadView) => {
    const shown = all.filter(v.shown);
    return new Set(shown.filter((i, k) => k > 0 && group(i) !== group(shown[k - 1] as number)));
  };
  const groupRow = opts.views.flatMap((v) => {
    const starts = startsIn(v);
    return runs(all.filter(v.shown), group).map(
      (g) =>
        html`<th scope="colgroup" class="g${viewCls(v)}${starts.has(g.cols[0] as number) ? " gs" : ""}" colspan="${g.cols.length}">${g.name}</th>`,
    );
  });
  const modeRow = opts.views.flatMap((v) => {
    const starts = startsIn(v);
    return runs(all.filter(v.shown), mode).map(
      (m) =>
        html`<th scope="colgroup" class="gm${viewCls(v)}${starts.has(m.cols[0] as number) ? " gs" : ""}" colspan="${m.cols.length}">${cols[m.cols[0] as number]?.head[1] ?? ""}</th>`,
    );
  });
  return html`<tr class="groups">${opts.corner}${groupRow}</tr><tr class="modes">${modeRow}</tr><tr class="leaves">${cols.map((c, i) => opts.leaf(c, i))}</tr>`;
}
