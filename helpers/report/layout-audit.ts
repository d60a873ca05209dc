/**
 * What a page's layout is held to, read in a real browser (the report's screenshot tests run it at 1, 6 and every
 * shipped bundle; layout-audit.browser.test.ts proves each check rejects a hand-made bad page):
 *
 * - overlap: two pieces of text drawn over each other (each text node's line boxes, cut to what its scrolling or
 *   clipping ancestors show; an SVG's texts by their boxes): labels, pills, headings, legend entries;
 * - clipped: a box whose content is wider than it, neither scrolling nor cut on purpose with an ellipsis (a pill
 *   spilling out of its card, a cell's text cut), and an SVG text drawn outside its picture;
 * - wide-page: the page itself scrolls sideways;
 * - wide-table: a table wider than its box without a scroll box of its own and a sticky first column;
 * - duplicate: a label that names one thing said twice: headings (h1–h4), figure captions, landmarks' and cards'
 *   aria-labels, a chart's title and legend entries, a table's column (its header cells stacked, top to bottom).
 *
 * `auditLayout` runs in the page (page.evaluate): it is self-contained, no import, no closure.
 */

export type AuditCheck = "overlap" | "clipped" | "wide-page" | "wide-table" | "duplicate";

export interface AuditFinding {
  check: AuditCheck;
  what: string;
}

export function auditLayout(): AuditFinding[] {
  const out: { check: AuditCheck; what: string }[] = [];
  const MAX_EACH = 12;
  const push = (check: AuditCheck, what: string) => {
    if (out.filter((f) => f.check === check).length < MAX_EACH) out.push({ check, what });
  };
  const root = document.documentElement;
  const text = (e: Element | Node) => (e.textContent ?? "").replace(/\s+/g, " ").trim();
  const short = (s: string) => (s.length > 70 ? `${s.slice(0, 67)}…` : s);
  const name = (e: Element) => {
    const cls = typeof e.className === "string" && e.className ? `.${e.className.split(/\s+/)[0]}` : "";
    return `${e.tagName.toLowerCase()}${cls} "${short(text(e))}"`;
  };
  const style = (e: Element) => getComputedStyle(e);
  const scrolls = (s: CSSStyleDeclaration) => s.overflowX === "auto" || s.overflowX === "scroll";
  // inside a closed <details> only its summary is drawn (Chromium still lays the rest out and gives it boxes)
  const folded = (e: Element) => {
    for (
      let d = e.closest("details:not([open])");
      d;
      d = d.parentElement?.closest("details:not([open])") ?? null
    ) {
      const summary = [...d.children].find((c) => c.tagName === "SUMMARY");
      if (!summary?.contains(e)) return true;
    }
    return false;
  };
  const shown = (e: Element) =>
    e.getClientRects().length > 0 && style(e).visibility !== "hidden" && !folded(e);

  // wide-page: the page scrolls sideways
  if (root.scrollWidth > root.clientWidth + 1)
    push("wide-page", `the page is ${root.scrollWidth} px wide in a ${root.clientWidth} px window`);

  // clipped: a box's content wider than the box, neither a scroll box nor an ellipsis
  for (const e of document.body.querySelectorAll("*")) {
    if (e instanceof SVGElement) continue;
    const h = e as HTMLElement;
    if (h.clientWidth === 0 || !shown(e)) continue;
    if (h.scrollWidth <= h.clientWidth + 1) continue;
    const s = style(e);
    if (scrolls(s)) continue;
    if (s.textOverflow === "ellipsis") continue;
    push(
      "clipped",
      `${name(e)}: content ${h.scrollWidth} px in ${h.clientWidth} px (${s.overflowX === "visible" ? "spills out" : "cut"})`,
    );
  }
  // an SVG's text drawn outside its picture (an SVG clips what it draws outside its box)
  for (const svg of document.querySelectorAll("svg")) {
    if (!shown(svg)) continue;
    const b = svg.getBoundingClientRect();
    for (const t of svg.querySelectorAll("text")) {
      const r = t.getBoundingClientRect();
      if (r.width === 0) continue;
      if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1)
        push("clipped", `svg text "${short(text(t))}" outside its picture`);
    }
  }

  // wide-table: wider than its box, it needs a scroll box of its own and a sticky first column
  for (const t of document.querySelectorAll("table")) {
    if (!shown(t)) continue;
    const parent = t.parentElement as HTMLElement;
    if (t.getBoundingClientRect().width <= parent.clientWidth + 1) continue;
    let box: HTMLElement | null = parent;
    while (box && !scrolls(style(box))) box = box.parentElement;
    const first = [...t.querySelectorAll("tbody tr")]
      .filter(shown)
      .map((r) => r.firstElementChild)
      .find((c): c is Element => c !== null);
    const sticky = first ? style(first).position === "sticky" : false;
    if (!box || box === root || box === document.body || !sticky)
      push(
        "wide-table",
        `table${t.className ? `.${t.className.split(/\s+/)[0]}` : ""}: ${Math.round(t.getBoundingClientRect().width)} px in ${parent.clientWidth} px, ${box && box !== root && box !== document.body ? "a scroll box" : "no scroll box of its own"}, ${sticky ? "a sticky" : "no sticky"} first column`,
      );
  }

  // overlap: text over text. Each piece of text with its line boxes, cut to what its clipping ancestors show.
  const clipCache = new Map<Element, DOMRect | null>();
  const clipOf = (e: Element | null): DOMRect | null => {
    if (!e || e === document.body || e === root) return null;
    if (clipCache.has(e)) return clipCache.get(e) as DOMRect | null;
    const up = clipOf(e.parentElement);
    const s = style(e);
    let r = up;
    if (s.overflowX !== "visible" || s.overflowY !== "visible") {
      const b = e.getBoundingClientRect();
      r = up
        ? new DOMRect(
            Math.max(b.left, up.left),
            Math.max(b.top, up.top),
            Math.max(0, Math.min(b.right, up.right) - Math.max(b.left, up.left)),
            Math.max(0, Math.min(b.bottom, up.bottom) - Math.max(b.top, up.top)),
          )
        : b;
    }
    clipCache.set(e, r);
    return r;
  };
  type Piece = { x: number; y: number; r: number; b: number; id: number; label: string };
  const pieces: Piece[] = [];
  const add = (rect: DOMRect, clip: DOMRect | null, id: number, label: string) => {
    let { left: x, top: y, right: r, bottom: b } = rect;
    if (clip) {
      x = Math.max(x, clip.left);
      y = Math.max(y, clip.top);
      r = Math.min(r, clip.right);
      b = Math.min(b, clip.bottom);
    }
    if (r - x > 1 && b - y > 1) pieces.push({ x, y, r, b, id, label });
  };
  let id = 0;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const p = n.parentElement;
    if (!p || !(n.textContent ?? "").trim()) continue;
    if (p.closest("svg, script, style, [hidden]") || folded(p)) continue;
    range.selectNodeContents(n);
    const clip = clipOf(p);
    const label = `${p.tagName.toLowerCase()} "${short(text(n))}"`;
    id++;
    for (const rect of range.getClientRects()) add(rect, clip, id, label);
  }
  for (const t of document.querySelectorAll("svg text")) {
    if (!(t.textContent ?? "").trim() || folded(t)) continue;
    id++;
    add(
      t.getBoundingClientRect(),
      clipOf(t.closest("svg")?.parentElement ?? null),
      id,
      `svg text "${short(text(t))}"`,
    );
  }
  pieces.sort((a, b) => a.y - b.y);
  // line boxes of neighbouring lines touch: two pieces overlap when they share more than 2 px each way
  const seen = new Set<string>();
  for (let i = 0; i < pieces.length; i++) {
    const a = pieces[i] as Piece;
    for (let j = i + 1; j < pieces.length; j++) {
      const c = pieces[j] as Piece;
      if (c.y >= a.b - 2) break;
      if (c.id === a.id) continue;
      if (Math.min(a.r, c.r) - Math.max(a.x, c.x) > 2 && Math.min(a.b, c.b) - Math.max(a.y, c.y) > 2) {
        const key = `${a.label} × ${c.label}`;
        if (!seen.has(key)) {
          seen.add(key);
          push("overlap", key);
        }
      }
    }
  }

  // duplicate: a label said twice where it names one thing
  const twice = (scope: string, labels: string[]) => {
    const count = new Map<string, number>();
    for (const l of labels.filter(Boolean)) count.set(l, (count.get(l) ?? 0) + 1);
    for (const [l, k] of count) if (k > 1) push("duplicate", `${scope}: "${short(l)}" ${k} times`);
  };
  const visible = (sel: string, within: ParentNode = document) =>
    [...within.querySelectorAll(sel)].filter(shown);
  // the page's headings; a card's own (h4 and below) among those of its card
  twice("headings", visible("h1, h2, h3").map(text));
  const cards = new Map<Element, string[]>();
  for (const h of visible("h4, h5, h6")) {
    const card = h.parentElement?.closest("section, details, article, figure, li, td") ?? document.body;
    cards.set(card, [...(cards.get(card) ?? []), text(h)]);
  }
  for (const hs of cards.values()) twice("a card's headings", hs);
  twice("figure captions", visible("figcaption").map(text));
  twice(
    "landmarks and cards",
    visible("section[aria-label], [role=region][aria-label], details[aria-label], figure[aria-label]").map(
      (e) => e.getAttribute("aria-label") ?? "",
    ),
  );
  for (const svg of visible("svg")) {
    twice(
      `legend of "${short(text(svg.querySelector("text") ?? svg))}"`,
      visible(".legend-item, text.row-name", svg).map(text),
    );
  }
  // the charts side by side in one grid: each its own title (its first text)
  const grids = new Map<Element, string[]>();
  for (const svg of visible("figure svg")) {
    const grid = svg.closest("figure")?.parentElement as Element;
    grids.set(grid, [
      ...(grids.get(grid) ?? []),
      svg.getAttribute("aria-label") ?? text(svg.querySelector("text") ?? svg),
    ]);
  }
  for (const titles of grids.values()) twice("chart titles side by side", titles);
  // a table's columns: the header cells over each column, top to bottom, colspans and rowspans counted
  for (const t of visible("table")) {
    const rows = [...t.querySelectorAll("thead tr")].filter(shown);
    if (rows.length === 0) continue;
    const grid: string[][] = [];
    rows.forEach((tr, ri) => {
      let c = 0;
      for (const cell of [...tr.children].filter(shown) as HTMLTableCellElement[]) {
        while (grid[ri]?.[c] !== undefined) c++;
        for (let dr = 0; dr < cell.rowSpan; dr++)
          for (let dc = 0; dc < cell.colSpan; dc++) {
            grid[ri + dr] ??= [];
            (grid[ri + dr] as string[])[c + dc] = text(cell);
          }
        c += cell.colSpan;
      }
    });
    const width = Math.max(...grid.map((r) => r.length));
    const cols: string[] = [];
    for (let c = 0; c < width; c++) {
      const parts: string[] = [];
      for (const r of grid) {
        const v = r[c];
        if (v !== undefined && parts.at(-1) !== v) parts.push(v);
      }
      cols.push(parts.join(" / "));
    }
    twice(`columns of table.${t.className.split(/\s+/)[0] ?? ""}`, cols);
  }
  return out;
}

/**
 * The audit run in a page: its source in a string (a transpiler that keeps functions' names wraps them in a
 * `__name` call the page does not have; it is given one).
 */
export function auditScript(): string {
  return `(() => { const __name = (f) => f; return (${auditLayout.toString()})(); })()`;
}

/** The findings of the audit on a page opened in playwright (or anything with its `evaluate`). */
export function audit(page: { evaluate: (script: string) => Promise<unknown> }): Promise<AuditFinding[]> {
  return page.evaluate(auditScript()) as Promise<AuditFinding[]>;
}
