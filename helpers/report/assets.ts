/** The report's inline style and script: no fonts, images or scripts from anywhere else. */

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
.run dd { margin: 0; overflow-wrap: anywhere; }
.origin-recorded { color: var(--pass); font-weight: 600; }
.origin-hand-made { color: var(--skip); font-weight: 600; }
.phases { border-collapse: collapse; margin-top: 6px; width: 100%; }
.phases td { padding: 1px 6px 1px 0; border-bottom: 1px dotted var(--line); }
.phases td:last-child { text-align: right; font-variant-numeric: tabular-nums; }
.filters { display: flex; gap: 8px; flex-wrap: wrap; margin: 8px 0 12px; }
.filters button, .expander { font: inherit; cursor: pointer; }
.filters button { border: 1px solid var(--line); background: #fff; border-radius: 16px; padding: 4px 12px; }
.filters button[aria-pressed="true"] { background: #1b1c1e; color: #fff; border-color: #1b1c1e; }
button:focus-visible { outline: 3px solid #1f6fb4; outline-offset: 2px; }
table.props { width: 100%; border-collapse: collapse; table-layout: fixed; }
table.props th, table.props td { text-align: left; vertical-align: top; padding: 6px 8px; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
table.props thead th { background: var(--bg-soft); }
table.props thead th.mode-head { text-align: center; border-left: 2px solid #fff; }
table.props[data-filter="fail"] tbody.prop:not([data-fail]) { display: none; }
table.props[data-filter="skip"] tbody.prop:not([data-skip]) { display: none; }
table.props[data-filter="known-issue"] tbody.prop:not([data-known-issue]) { display: none; }
.expander { border: 0; background: none; padding: 0; text-align: left; color: #1f4f8a; font-family: ui-monospace, monospace; font-size: 12px; }
.expander::before { content: "▸ "; display: inline-block; width: 1em; }
.expander[aria-expanded="true"]::before { content: "▾ "; }
.verdict { font-weight: 600; white-space: nowrap; }
.verdict.fail { color: var(--fail); } .verdict.skip { color: var(--skip); } .verdict.pass { color: var(--pass); } .verdict.known-issue { color: var(--known); font-weight: 600; }
.val { font-family: ui-monospace, monospace; font-size: 12px; }
tr.evidence > td { background: var(--bg-soft); }
.ev-mode { margin: 4px 0 12px; min-width: 0; }
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
#headline h2 { margin-top: 16px; }
table.headline { width: 100%; border-collapse: collapse; table-layout: fixed; }
table.headline col.hl-claim-col { width: 30%; }
table.headline th, table.headline td { text-align: left; vertical-align: top; padding: 6px 8px; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
table.headline thead th { background: var(--bg-soft); }
table.headline th[scope="row"] { font-weight: normal; }
.hl-title { display: block; font-weight: 600; }
.hl-says { display: block; font-size: 12px; color: #3c4043; }
.hl-cell .verdict { margin-right: 4px; }
.hl-facts { font-size: 12px; }
.hl-line { display: block; margin-top: 4px; padding: 3px 6px; background: var(--bg-soft); border-left: 3px solid var(--line); white-space: pre-wrap; overflow-wrap: anywhere; }
.hl-cell[data-status="pass"] .hl-line { border-left-color: var(--pass); }
.hl-cell[data-status="fail"] .hl-line { border-left-color: var(--fail); }
.hl-cell[data-status="known-issue"] .hl-line { border-left-color: var(--known); }
.hl-line.none { font-style: italic; font-size: 12px; }
.hl-from, .hl-note { display: block; font-size: 11px; overflow-wrap: anywhere; }
.pictures { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 420px), 1fr)); gap: 12px; margin-top: 12px; }
.picture { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 6px 8px; min-width: 0; }
.picture figcaption { font-weight: 600; margin-bottom: 4px; }
.picture svg { max-width: 100%; height: auto; display: block; }
.picture ul { margin: 4px 0 0; padding-left: 18px; font-size: 12px; }
.legend { font-size: 12px; }
.upgrade { border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; margin-top: 12px; }
.upgrade dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 0 0 8px; }
.upgrade dt { color: var(--muted); }
.upgrade dd { margin: 0; overflow-wrap: anywhere; }
table.upgrade-conns { border-collapse: collapse; width: 100%; table-layout: fixed; }
table.upgrade-conns th, table.upgrade-conns td { text-align: left; padding: 3px 8px 3px 0; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
.upgrade-verdicts { list-style: none; padding: 0; margin: 8px 0 0; }
table.compare { border-collapse: collapse; width: 100%; table-layout: fixed; }
table.compare td, table.compare th { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: left; overflow-wrap: anywhere; }
.changed { color: var(--fail); font-weight: 600; }
@media (max-width: 760px) {
  main { padding: 10px; }
  table.props, table.props thead, table.props tbody, table.props tr, table.props th, table.props td { display: block; width: auto; }
  table.props thead { display: none; }
  table.props tbody.prop { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 10px; }
  table.props[data-filter="fail"] tbody.prop:not([data-fail]), table.props[data-filter="skip"] tbody.prop:not([data-skip]), table.props[data-filter="known-issue"] tbody.prop:not([data-known-issue]) { display: none; }
  table.props td { border: 0; padding: 3px 10px; }
  table.props td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
  table.props tr.evidence[hidden] { display: none; }
  table.headline, table.headline thead, table.headline tbody, table.headline tr, table.headline th, table.headline td { display: block; width: auto; }
  table.headline thead { display: none; }
  table.headline tr { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 8px; }
  table.headline th, table.headline td { border: 0; padding: 4px 10px; }
  table.headline td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); display: block; font-size: 12px; }
}
`;

/** Filters (failed / skipped / all) and the expanders; both are buttons, so Tab reaches them and Enter/Space toggle. */
export const SCRIPT = `
(() => {
  const table = document.querySelector("table.props");
  for (const b of document.querySelectorAll(".filters button")) {
    b.addEventListener("click", () => {
      for (const o of document.querySelectorAll(".filters button")) o.setAttribute("aria-pressed", String(o === b));
      table.dataset.filter = b.dataset.filter;
    });
  }
  // a link to a raw line opens the output it is in, then scrolls to the line (highlighted by :target)
  const reveal = () => {
    const id = decodeURIComponent(location.hash.slice(1));
    const el = id && document.getElementById(id);
    if (!el) return;
    for (let d = el.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) d.open = true;
    el.scrollIntoView({ block: "center" });
  };
  window.addEventListener("hashchange", reveal);
  reveal();
  for (const b of document.querySelectorAll("button.expander")) {
    b.addEventListener("click", () => {
      const open = b.getAttribute("aria-expanded") !== "true";
      b.setAttribute("aria-expanded", String(open));
      document.getElementById(b.getAttribute("aria-controls")).hidden = !open;
    });
  }
})();
`;

/** A verdict as the page marks it (a known issue is never shown as a pass). */
export const MARK = {
  pass: "✔ pass",
  fail: "✘ fail",
  skip: "– skip",
  "known-issue": "⚠ known issue",
} as const;
