/** The report's inline style and script: no fonts, images or scripts from anywhere else. */

import { STATUS_MARK } from "../properties/status.ts";

export const CSS = `
:root { --fail: #b3261e; --skip: #8a6d00; --pass: #1e7b34; --known: #b06000; --line: #d9dce1; --muted: #5f6368; --bg-soft: #f5f6f8; }
* { box-sizing: border-box; }
html { scrollbar-gutter: stable; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1b1c1e; background: #fff; }
main { max-width: 1400px; margin: 0 auto; padding: 16px 20px 48px; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 16px 0 6px; }
.muted { color: var(--muted); }
code, pre { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.runs { display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); gap: 12px; }
.run { border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; background: var(--bg-soft); }
.run dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 0; }
.run dt { color: var(--muted); }
.run dd { margin: 0; overflow-wrap: break-word; }
.origin-recorded { color: var(--pass); font-weight: 600; }
.origin-hand-made { color: var(--skip); font-weight: 600; }
.phases { border-collapse: collapse; margin-top: 6px; width: 100%; }
.phases td { padding: 1px 6px 1px 0; border-bottom: 1px dotted var(--line); }
.phases td:last-child { text-align: right; font-variant-numeric: tabular-nums; }
.filters { display: flex; gap: 8px; flex-wrap: wrap; margin: 8px 0 12px; }
.filters button { border: 1px solid var(--line); background: #fff; border-radius: 16px; padding: 4px 12px; }
.filters button[aria-pressed="true"] { background: #1b1c1e; color: #fff; border-color: #1b1c1e; }
button:focus-visible { outline: 3px solid #1f6fb4; outline-offset: 2px; }
.legend { font-size: 12px; }
.matrix-wrap, .hl-wrap { overflow-x: auto; max-width: 100%; border: 1px solid var(--line); border-radius: 6px; }
.hl-wrap { border: 0; }
.matrix-wrap { container-type: inline-size; }
table.props { border-collapse: separate; border-spacing: 0; min-width: 100%; }
table.props th, table.props td { text-align: left; vertical-align: top; padding: 4px 6px; border-bottom: 1px solid var(--line); }
table.props thead th { background: var(--bg-soft); position: sticky; top: 0; z-index: 1; }
table.props th.bh { font-weight: 600; font-size: 12px; line-height: 1.3; min-width: 6.5em; }
th.bh span { display: block; white-space: nowrap; }
th.bh .h1 { color: #1b1c1e; font-weight: 400; }
th.bh .h2 { color: var(--muted); font-weight: 400; }
table.props th[scope="row"], table.props th.corner { position: sticky; left: 0; background: #fff; z-index: 2; width: 19em; min-width: 19em; max-width: 19em; font-weight: normal; border-right: 1px solid var(--line); }
table.props th.corner { background: var(--bg-soft); z-index: 3; }
table.props.one th[scope="row"] { width: 32em; min-width: 0; max-width: none; position: static; }
.pid { display: block; font-size: 12px; color: #1f4f8a; overflow-wrap: break-word; }
/* two lines of the claim in the row; the whole claim is in the opened verdict */
.claim { display: -webkit-box; -webkit-line-clamp: 2; -webkit-box-orient: vertical; overflow: hidden; font-size: 12px; color: #3c4043; }
.vd-claim { margin: 0 0 6px; }
.reasons { margin: 2px 0 0; padding-left: 16px; font-size: 12px; color: var(--skip); overflow-wrap: break-word; }
table.props td.cell { white-space: nowrap; padding: 2px 4px; }
button.m { font: 12px/1.3 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; border: 1px solid transparent; border-radius: 4px; background: none; padding: 2px 4px; cursor: pointer; display: inline-flex; gap: 4px; align-items: baseline; max-width: 17em; color: inherit; text-align: left; }
table.props.one button.m { max-width: 40em; }
button.m:hover, button.m[aria-expanded="true"] { border-color: #1f4f8a; background: #eef3fb; }
button.m .mk { font-weight: 700; font-family: system-ui, sans-serif; }
button.m .ov { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 0; }
td.k-pass .mk { color: var(--pass); } td.k-fail .mk, td.k-changed .mk { color: var(--fail); } td.k-known-issue .mk { color: var(--known); }
td.k-skip .mk, td.k-na .mk { color: var(--muted); font-weight: 400; }
td.k-fail, td.k-changed { background: #fdecea; } td.k-known-issue { background: #fff4e0; }
td.k-skip button.m, td.k-na button.m { color: var(--muted); }
tbody.group-head th { background: var(--bg-soft); font-size: 13px; text-align: left; position: sticky; left: 0; }
tbody.none { display: none; }
tbody.none td { font-style: italic; color: var(--muted); padding: 10px; }
table.props[data-filter="fail"] tbody.none[data-none="fail"], table.props[data-filter="known-issue"] tbody.none[data-none="known-issue"], table.props[data-filter="skip"] tbody.none[data-none="skip"] { display: table-row-group; }
table.props[data-filter="fail"] tbody.prop:not([data-fail]) { display: none; }
table.props[data-filter="skip"] tbody.prop:not([data-skip]) { display: none; }
table.props[data-filter="known-issue"] tbody.prop:not([data-known-issue]) { display: none; }
table.props[data-filter="fail"] tbody.group-head, table.props[data-filter="known-issue"] tbody.group-head { display: none; }
tr.evidence > td { background: var(--bg-soft); padding: 0; }
/* width 0 and a percentage min-width: the opened verdict never widens the columns; as wide as the scroll box (cqw) and sticky: it stays in its view */
.vd { position: sticky; left: 0; width: 0; min-width: min(100%, 100cqw); padding: 8px 12px; white-space: normal; }
.vd .message { overflow-wrap: anywhere; }
.vd h4 { margin: 2px 0 6px; }
.vd dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 10px; margin: 0 0 6px; }
.vd dt { color: var(--muted); }
.vd dd { margin: 0; overflow-wrap: break-word; }
.vd .pattern { color: var(--muted); font-size: 12px; }
.filters button, .expander { font: inherit; cursor: pointer; }
.val { font-family: ui-monospace, monospace; font-size: 12px; }
tr.evidence > td { background: var(--bg-soft); }
.ev-lines, .raw pre { margin: 4px 0; padding: 6px 8px; background: #fff; border: 1px solid var(--line); overflow-x: auto; max-width: 100%; }
.ev-lines { list-style: none; font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.ev-lines li { white-space: pre-wrap; overflow-wrap: anywhere; }
.ev-lines .derived { font-style: italic; }
.ev-lines a.at, .sources a { color: #1f4f8a; }
.sources { margin: 4px 0; padding-left: 18px; font-size: 12px; }
.sources .meta, .raw .meta { color: var(--muted); }
.raw { margin: 6px 0; }
.raw summary { cursor: pointer; overflow-wrap: anywhere; }
.raw summary code, .sources code { word-break: break-all; }
.sources li { overflow-wrap: anywhere; }
.raw pre { white-space: pre; }
.raw .ln { display: block; }
.raw .ln::before { content: attr(data-n); display: inline-block; width: 5ch; margin-right: 2ch; text-align: right; color: var(--muted); user-select: none; }
.raw .ln.cited { background: #fff8d6; }
.raw .ln:target { background: #ffd54a; outline: 2px solid #b7791f; }
.raw .gap { display: block; color: var(--muted); font-style: italic; }
.message { white-space: pre-wrap; }
.charts { display: grid; align-items: start; grid-template-columns: repeat(auto-fit, minmax(min(100%, 560px), 1fr)); gap: 16px; }
.charts figure { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 6px; }
.charts svg { max-width: 100%; height: auto; display: block; }
.charts.small { grid-template-columns: repeat(auto-fill, minmax(min(100%, 380px), 1fr)); gap: 12px; }
.chart-kind h3 { margin-top: 12px; }
#headline h2 { margin-top: 16px; }
table.headline { width: 100%; border-collapse: collapse; table-layout: fixed; }
table.headline col.hl-claim-col { width: 30%; }
table.headline th, table.headline td { text-align: left; vertical-align: top; padding: 6px 8px; border-bottom: 1px solid var(--line); overflow-wrap: break-word; }
table.headline thead th { background: var(--bg-soft); }
table.headline th[scope="row"] { font-weight: normal; }
.hl-title { display: block; font-weight: 600; }
.hl-says { display: block; font-size: 12px; color: #3c4043; }
.hl-cell .verdict { margin-right: 4px; }
.hl-facts { font-size: 12px; }
.hl-line { display: block; margin-top: 4px; padding: 3px 6px; background: var(--bg-soft); border-left: 3px solid var(--line); white-space: pre-wrap; overflow-wrap: anywhere; }
.hl-cell[data-status="pass"] .hl-line { border-left-color: var(--pass); }
.hl-cell[data-status="fail"] .hl-line, .hl-cell[data-status="changed"] .hl-line { border-left-color: var(--fail); }
.hl-cell[data-status="known-issue"] .hl-line { border-left-color: var(--known); }
.hl-line.none { font-style: italic; font-size: 12px; }
.hl-from, .hl-note { display: block; font-size: 11px; overflow-wrap: anywhere; }
table.headline.many { table-layout: auto; width: auto; min-width: 100%; }
table.headline.many col.hl-claim-col { width: auto; }
table.headline.many th[scope="row"] { min-width: 16em; max-width: 22em; position: sticky; left: 0; background: #fff; }
table.headline.many td { min-width: 11em; max-width: 16em; font-size: 12px; }
table.headline.many th.bh { font-size: 12px; }
table.headline.many th.g, table.headline.many th.gm { font-size: 12px; white-space: nowrap; }
table.headline.many th.g { background: #e8eaed; font-weight: 700; }
table.headline.many th.corner { position: sticky; left: 0; z-index: 2; }
table.headline.many .gs { border-left: 2px solid #9aa0a6; }
.hl-more summary { cursor: pointer; font-size: 11px; color: #1f4f8a; }
.pictures.many { grid-template-columns: repeat(auto-fill, minmax(min(100%, 300px), 1fr)); }
.runs.many { grid-template-columns: repeat(auto-fill, minmax(min(100%, 300px), 1fr)); align-items: start; }
details.run summary { cursor: pointer; }
details.run[open] dl { margin-top: 6px; }
.raw-bundle { margin: 6px 0; border: 1px solid var(--line); border-radius: 6px; padding: 4px 10px; }
.raw-bundle > summary { cursor: pointer; }
.pictures { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 420px), 1fr)); gap: 12px; margin-top: 12px; }
.picture { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 6px 8px; min-width: 0; }
.picture figcaption { font-weight: 600; margin-bottom: 4px; overflow-wrap: anywhere; }
.picture-bundles { font-size: 12px; margin: 0 0 4px; } .picture-bundles summary { cursor: pointer; color: #1f4f8a; }
.picture-bundles ul { margin: 2px 0; padding-left: 18px; }
.picture svg { max-width: 100%; height: auto; display: block; }
.picture ul { margin: 4px 0 0; padding-left: 18px; font-size: 12px; }
.upgrade { border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; margin-top: 12px; }
.upgrade dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 0 0 8px; }
.upgrade dt { color: var(--muted); }
.upgrade dd { margin: 0; overflow-wrap: break-word; }
table.upgrade-conns { border-collapse: collapse; width: 100%; table-layout: fixed; }
table.upgrade-conns th, table.upgrade-conns td { text-align: left; padding: 3px 8px 3px 0; border-bottom: 1px solid var(--line); overflow-wrap: break-word; }
.upgrade-verdicts { list-style: none; padding: 0; margin: 8px 0 0; }
table.compare { border-collapse: collapse; width: 100%; table-layout: fixed; }
table.compare td, table.compare th { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: left; overflow-wrap: break-word; }
.changed { color: var(--fail); font-weight: 600; }
/* the verdict, first: each upgrade's gate and the report's counts, failures in red */
.banner { margin: 10px 0 14px; }
.gate, .counts { border: 1px solid var(--line); border-left: 8px solid var(--line); border-radius: 6px; padding: 6px 12px; margin: 6px 0; }
.gate.v-fail, .counts.v-fail { border-color: var(--fail); background: #fdecea; }
.gate.v-known, .counts.v-known { border-color: var(--known); background: #fff4e0; }
.gate.v-pass, .counts.v-pass { border-color: var(--pass); background: #e9f5ec; }
.gate.v-skip, .counts.v-skip { border-color: var(--skip); background: #fbf6e0; }
.gate-title { margin: 2px 0; }
.gate > summary { cursor: pointer; }
.word { font-weight: 800; font-size: 19px; letter-spacing: 0.02em; margin-right: 6px; }
.word.v-fail { color: var(--fail); } .word.v-known { color: var(--known); } .word.v-pass { color: var(--pass); } .word.v-skip { color: var(--skip); }
.gate-head { font-weight: 600; overflow-wrap: anywhere; }
.gate-list { margin: 4px 0 2px; padding-left: 20px; font-size: 13px; }
.gate-list li { overflow-wrap: anywhere; }
.gate-list.fails li, .gate.v-fail .gate-list:not(.left) li { color: var(--fail); }
.left-head { margin: 6px 0 0; font-size: 13px; }
.gate-list.left li { color: #3c4043; }
.gate-line { display: block; font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; color: #3c4043; }
.known-line { margin: 4px 0 2px; font-size: 13px; color: var(--known); overflow-wrap: anywhere; }
.run.run-fail { border-color: var(--fail); border-left: 6px solid var(--fail); background: #fdecea; }
.run.run-known { border-left: 6px solid var(--known); }
/* a run card's counts: a line of its summary that wraps inside the card (not the banner's block) */
.run-counts { display: block; max-width: 100%; overflow-wrap: anywhere; font-size: 13px; margin-top: 2px; }
.run-counts.c-fail { color: var(--fail); font-weight: 600; } .run-counts.c-known { color: var(--known); } .run-counts.c-pass { color: var(--muted); }
details.upgrade > summary { cursor: pointer; } details.upgrade > summary h3 { display: inline; }
.phases tr.within td:first-child { padding-left: 18px; color: var(--muted); }
.phases tr.within td { font-size: 12px; color: var(--muted); }
.phases tr.total td { font-weight: 600; border-top: 1px solid #9aa0a6; }
.hl-mode { display: block; font-size: 12px; font-style: italic; margin: 2px 0; color: #3c4043; }
.hl-own { display: block; font-size: 12px; color: var(--known); margin: 2px 0; }
.hl-none { font-size: 12px; }
/* columns grouped by version (an upgrade with its legs), "what differs" first */
table.props th.g { text-align: left; font-size: 12px; font-weight: 700; background: #e8eaed; border-bottom: 1px solid var(--line); white-space: nowrap; }
table.props .gs, table.props[data-filter="differs"] .gsd { border-left: 2px solid #9aa0a6; }
table.props th.gm { text-align: left; font-size: 12px; font-weight: 600; white-space: nowrap; border-bottom: 1px solid var(--line); }
.differs-note { margin: 4px 0 8px; font-size: 13px; }
.differs-note a.show-all { font-weight: 600; color: #1f4f8a; white-space: nowrap; }
table.props .g-diff { display: none; }
table.props[data-filter="differs"] .g-all { display: none; }
table.props[data-filter="differs"] .g-diff { display: table-cell; }
table.props[data-filter="differs"] tbody.prop:not([data-differs]) { display: none; }
table.props[data-filter="differs"] tbody.none[data-none="differs"] { display: table-row-group; }
table.props[data-filter="differs"] tbody.group-head { display: none; }
@media (max-width: 760px) {
  main { padding: 10px; }
  table.props th[scope="row"], table.props th.corner { width: 11em; min-width: 11em; max-width: 11em; }
  table.props.one th[scope="row"] { width: auto; }
  .claim { display: none; }
  table.headline:not(.many), table.headline:not(.many) thead, table.headline:not(.many) tbody, table.headline:not(.many) tr, table.headline:not(.many) th, table.headline:not(.many) td { display: block; width: auto; }
  table.headline:not(.many) thead { display: none; }
  table.headline:not(.many) tr { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 8px; }
  table.headline:not(.many) th, table.headline:not(.many) td { border: 0; padding: 4px 10px; }
  table.headline.many th[scope="row"] { min-width: 9em; max-width: 11em; }
  table.headline.many .hl-says { display: none; }
  table.headline:not(.many) td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); display: block; font-size: 12px; }
}
`;

/**
 * The page's script: the filters; the matrix's cells, each opening its bundle's verdict below the row; the raw
 * outputs, built when opened or when a link points into them; all from the embedded data (helpers/report/data.ts),
 * decoded with DecompressionStream and put into the page with textContent and setAttribute only (never as
 * markup). Buttons, so Tab reaches them and Enter/Space toggle.
 */
export const SCRIPT = `
(() => {
  const root = document.documentElement;
  const table = document.querySelector("table.props");
  const status = document.getElementById("data-status");
  const note = document.querySelector(".differs-note");
  const showFilter = (filter) => {
    for (const o of document.querySelectorAll(".filters button")) o.setAttribute("aria-pressed", String(o.dataset.filter === filter));
    table.dataset.filter = filter;
    if (note) note.hidden = filter !== "differs";
  };
  for (const b of document.querySelectorAll(".filters button")) b.addEventListener("click", () => showFilter(b.dataset.filter));
  // "Show the full matrix": the All view, the page scrolled to it (a link to #properties-all opens on it too)
  for (const a of document.querySelectorAll("a[data-filter-link]")) a.addEventListener("click", () => showFilter(a.dataset.filterLink));
  if (table && location.hash === "#properties-all") showFilter("all");
  const MARK = ${JSON.stringify(STATUS_MARK)};
  let D = null;
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const S = (i) => (typeof i === "number" && D.S[i] !== undefined ? D.S[i] : "");
  const link = (pl) => {
    if (!pl.a) return el("span", "", S(pl.p));
    const a = el("a", "at", S(pl.p));
    a.setAttribute("href", "#" + pl.a);
    return a;
  };
  const outputId = (c, o) => "r" + c + "o" + o;
  function verdictBlock(c, p) {
    const col = D.C[c];
    const v = col && col.v[p];
    const box = el("div", "vd");
    const h = el("h4", "", S(col ? col.label : -1) + ": ");
    box.append(h);
    if (!v) {
      h.append(el("span", "verdict skip", "n/a"));
      box.append(el("p", "muted", "This property is not judged in this bundle (not declared there)."));
      return box;
    }
    h.append(el("span", "verdict " + v.s, MARK[v.s] || v.s));
    const dl = el("dl");
    box.append(dl);
    const row = (k, val, extra) => {
      dl.append(el("dt", "", k));
      const dd = el("dd");
      dd.append(el("code", "", val));
      if (extra) dd.append(" ", el("span", "pattern", extra));
      dl.append(dd);
    };
    if (v.s === "skip") {
      dl.append(el("dt", "", "reason"), el("dd", "", S(v.r)));
    } else {
      row("observed", S(v.o));
      row("expected", S(v.x), v.pt !== undefined ? "(pattern " + S(v.pt) + ")" : "");
    }
    if (v.cf !== undefined) dl.append(el("dt", "", "configuration"), el("dd", "", S(v.cf)));
    if (v.n !== undefined) dl.append(el("dt", "", "note"), el("dd", "", S(v.n)));
    const P = D.P[p];
    if (P) box.insertBefore(el("p", "vd-claim", S(P.claim)), dl);
    if (P) {
      const dd = el("dd", "", S(P.src));
      if (S(P.why)) dd.append(el("br"), el("span", "muted", S(P.why)));
      dl.append(el("dt", "", "source"), dd);
    }
    box.append(el("p", "message", S(v.m)));
    if (v.ev.length > 0) {
      const ul = el("ul", "ev-lines");
      ul.setAttribute("aria-label", "evidence");
      for (const e of v.ev) {
        if (e.q !== undefined) {
          const li = el("li", "q");
          li.append(link(e.at), " ", el("code", "", S(e.q)));
          ul.append(li);
        } else {
          const li = el("li", "d");
          const from = el("span", "muted", "from ");
          e.f.forEach((pl, i) => from.append(i > 0 ? ", " : "", link(pl)));
          if (e.more > 0) from.append(" and " + e.more + " more place" + (e.more > 1 ? "s" : ""));
          if (e.calls > 0) from.append((e.f.length > 0 ? ", " : "") + e.calls + " call record" + (e.calls > 1 ? "s" : "") + " (exit code, time)");
          li.append(el("span", "derived", S(e.d)), " ", from);
          ul.append(li);
        }
      }
      box.append(ul);
    } else box.append(el("p", "muted", "(no evidence)"));
    if (v.src.length > 0) {
      const ul = el("ul", "sources");
      ul.setAttribute("aria-label", "raw outputs");
      for (const o of v.src) {
        const out = col.o[o];
        if (!out) continue;
        const li = el("li");
        const a = el("a");
        a.setAttribute("href", "#" + outputId(c, o));
        a.append(el("code", "", S(out.k)));
        li.append(a);
        if (S(out.c)) li.append(el("span", "meta", " \u2014 " + S(out.c)));
        ul.append(li);
      }
      box.append(ul);
    }
    return box;
  }
  // the raw outputs of bundle c: one closed <details> each, its lines built when it opens
  function fillOutput(d) {
    if (d.dataset.built) return;
    d.dataset.built = "1";
    const c = Number(d.dataset.c), o = Number(d.dataset.o);
    const out = D.C[c].o[o];
    const pre = el("pre");
    let prev = 0;
    for (let i = 0; i < out.l.length; i += 3) {
      const n = out.l[i];
      if (n > prev + 1) pre.append(el("span", "gap", "\u2026 " + (n - prev - 1) + " lines \u2026"));
      prev = n;
      const ln = el("span", out.l[i + 2] ? "ln cited" : "ln", S(out.l[i + 1]));
      ln.id = outputId(c, o) + "L" + n;
      ln.dataset.n = String(n);
      pre.append(ln);
    }
    if (out.t > prev) pre.append(el("span", "gap", "\u2026 " + (out.t - prev) + " lines \u2026"));
    d.append(pre);
  }
  function buildBundle(section) {
    if (!D || section.dataset.built) return;
    section.dataset.built = "1";
    const c = Number(section.dataset.c);
    const list = section.querySelector(".raw-list");
    D.C[c].o.forEach((out, o) => {
      const d = el("details", "raw");
      d.id = outputId(c, o);
      d.dataset.c = String(c);
      d.dataset.o = String(o);
      const sum = el("summary");
      sum.append(el("code", "", S(out.k)));
      if (S(out.c)) sum.append(el("span", "meta", " \u2014 " + S(out.c)));
      d.append(sum);
      d.addEventListener("toggle", () => d.open && fillOutput(d));
      list.append(d);
    });
  }
  for (const s of document.querySelectorAll("details.raw-bundle")) s.addEventListener("toggle", () => s.open && buildBundle(s));
  // an id among the raw outputs (r<c>o<o>, or its line r<c>o<o>L<n>) made to exist and opened
  function ensure(id) {
    const m = /^r(\\d+)o(\\d+)(?:L\\d+)?$/.exec(id);
    if (!D || !m) return;
    const section = document.getElementById("raw-c" + m[1]);
    if (!section) return;
    buildBundle(section);
    section.open = true;
    const d = document.getElementById("r" + m[1] + "o" + m[2]);
    if (!d) return;
    fillOutput(d);
    d.open = true;
  }
  // a link into the raw outputs: the output is built and opened before the browser follows it (so :target holds)
  document.addEventListener("click", (e) => {
    const a = e.target instanceof Element ? e.target.closest("a[href^='#']") : null;
    if (a) ensure(decodeURIComponent(a.getAttribute("href").slice(1)));
  }, true);
  const reveal = () => {
    const id = decodeURIComponent(location.hash.slice(1));
    if (!id) return;
    ensure(id);
    const el2 = document.getElementById(id);
    if (!el2) return;
    for (let d = el2.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) d.open = true;
    el2.scrollIntoView({ block: "center" });
  };
  window.addEventListener("hashchange", reveal);
  // a cell opens its bundle's verdict below the row; the same cell again closes it
  const show = (b) => {
    const row = document.getElementById(b.getAttribute("aria-controls"));
    const td = row.firstElementChild;
    td.replaceChildren();
    if (!D) return td.append(el("p", "muted", "Reading the page's evidence\u2026"));
    td.append(verdictBlock(Number(b.dataset.c), Number(b.closest("tbody").dataset.p)));
  };
  for (const b of document.querySelectorAll("button.expander")) {
    b.addEventListener("click", () => {
      const open = b.getAttribute("aria-expanded") !== "true";
      for (const o of b.closest("tr").querySelectorAll("button.expander")) o.setAttribute("aria-expanded", "false");
      b.setAttribute("aria-expanded", String(open));
      const row = document.getElementById(b.getAttribute("aria-controls"));
      row.hidden = !open;
      if (open) show(b);
    });
  }
  const ready = (data) => {
    D = data;
    root.dataset.ready = "1";
    status.textContent = "";
    for (const b of document.querySelectorAll("button.expander[aria-expanded='true']")) show(b);
    for (const s of document.querySelectorAll("details.raw-bundle[open]")) buildBundle(s);
    reveal();
  };
  try {
    const b64 = document.getElementById("dpc-data").dataset.gz;
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    new Response(stream).text().then((t) => ready(JSON.parse(t)), (err) => {
      status.textContent = "This browser could not read the page's evidence: " + err;
    });
  } catch (err) {
    status.textContent = "This browser could not read the page's evidence (it needs DecompressionStream): " + err;
  }
})();
`;

/** A verdict as the page marks it (a known issue is never shown as a pass). */
export const MARK = STATUS_MARK;
