/**
 * Charts that read on their own: axes with ticks and units, a legend whose swatch shows each series' colour,
 * dash and marker, series that coincide drawn side by side (a small horizontal offset per bundle) so none
 * hides another, and latency distributions as dot/box plots with p50 and p90 marked. Pure: data in, SVG out.
 */
import { attr, type Html, html } from "../html.ts";
import { percentile } from "./stats.ts";

/** Pure: data in, SVG out, every name and label escaped by construction (helpers/html.ts). */
export const SERIES_COLORS = [
  "#c0392b",
  "#1f6fb4",
  "#2e8b57",
  "#8e44ad",
  "#b06000",
  "#00838f",
  "#6d4c41",
  "#c2185b",
  "#5f6368",
  "#827717",
];
const f1 = (n: number) => n.toFixed(1);

/** Round tick values covering [0, max]: 1, 2 or 5 × 10^k apart, about `count` of them. */
export function niceTicks(max: number, count = 5): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
  const ticks: number[] = [];
  for (let v = 0; v <= max + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  if ((ticks.at(-1) as number) < max) ticks.push(Number(((ticks.at(-1) as number) + step).toPrecision(12)));
  return ticks;
}

const fmt = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(v < 1 ? 2 : 1));

export interface LineSeries {
  name: string;
  color: string;
  dash?: string;
  marker: "circle" | "square";
  points: [number, number][];
  /** Pixels to the right where this series would coincide with another (0 for the first bundle). */
  offset?: number;
}

function marker(kind: LineSeries["marker"], x: number, y: number, color: string, title: string): Html {
  const t = html`<title>${title}</title>`;
  return kind === "circle"
    ? html`<circle cx="${f1(x)}" cy="${f1(y)}" r="3.5" fill="white" stroke="${color}" stroke-width="2">${t}</circle>`
    : html`<rect x="${f1(x - 3.5)}" y="${f1(y - 3.5)}" width="7" height="7" fill="${color}">${t}</rect>`;
}

/**
 * The width a text of `n` characters takes at `px` (system-ui, sans-serif): generous (wide letters, digits), so a
 * label laid out by it fits (issue 37: legend entries cut at the right edge, latency labels at the left).
 */
export const textWidth = (n: number, px = 12) => n * px * 0.62;

/** `text` in lines of at most `max` characters, broken at spaces (a word longer than a line is broken in it). */
export function wrapWords(text: string, max: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (let word of text.split(/\s+/).filter(Boolean)) {
    while (word.length > max) {
      if (line) lines.push(line);
      line = "";
      lines.push(word.slice(0, max));
      word = word.slice(max);
    }
    if (line === "") line = word;
    else if (line.length + 1 + word.length <= max) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line) lines.push(line);
  return lines.length > 0 ? lines : [""];
}

/**
 * A legend by bundle (a small multiple of many bundles, two series each): what each line style means, once, in
 * grey; then each bundle's colour. Each series' name is still its line's tooltip.
 */
export interface LegendKey {
  styles: { name: string; dash?: string; marker: LineSeries["marker"] }[];
  bundles: { name: string; color: string }[];
}

/** A line chart with both axes ticked and labelled, and a legend below it (each entry wrapped to the width). */
export function lineChart(opts: {
  title: string;
  xLabel: string;
  yLabel: string;
  series: LineSeries[];
  width?: number;
  /** A legend by bundle instead of one entry per series. */
  key?: LegendKey;
}): Html {
  const W = opts.width ?? 560;
  const left = 64;
  const right = 20;
  const top = 34;
  const plotH = 220;
  const legendRow = 18;
  const lineH = 15;
  // a series with the same values as an earlier one says so in the legend (it is drawn beside it, offset)
  const legendName = (s: LineSeries, i: number) => {
    const twin = opts.series.slice(0, i).find((o) => JSON.stringify(o.points) === JSON.stringify(s.points));
    return twin ? `${s.name} (same values as ${twin.name})` : s.name;
  };
  const legendChars = Math.max(10, Math.floor((W - left - 42 - 8) / textWidth(1)));
  const GREY = "#555";
  // the legend's entries: each series, or the line styles then the bundles
  const entries: { name: string; color: string; dash?: string; marker?: LineSeries["marker"] }[] = opts.key
    ? [
        ...opts.key.styles.map((st) => ({ ...st, color: GREY })),
        ...opts.key.bundles.map((b) => ({ name: b.name, color: b.color })),
      ]
    : opts.series.map((s, i) => ({
        name: legendName(s, i),
        color: s.color,
        marker: s.marker,
        ...(s.dash ? { dash: s.dash } : {}),
      }));
  const legendLines = entries.map((e) => wrapWords(e.name, legendChars));
  const H = top + plotH + 48 + legendLines.reduce((t, l) => t + legendRow + (l.length - 1) * lineH, 0) + 8;
  const pw = W - left - right;
  const xs = opts.series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = opts.series.flatMap((s) => s.points.map((p) => p[1]));
  const xt = niceTicks(Math.max(1, ...xs));
  const yt = niceTicks(Math.max(1, ...ys));
  const maxX = xt.at(-1) as number;
  const maxY = yt.at(-1) as number;
  const y0 = top + plotH;
  const sx = (x: number) => left + (x / maxX) * pw;
  const sy = (y: number) => y0 - (y / maxY) * plotH;
  const p: Html[] = [];
  p.push(html`<text x="${left}" y="18" font-size="14" font-weight="600">${opts.title}</text>`);
  for (const v of yt) {
    p.push(
      html`<line x1="${left}" x2="${left + pw}" y1="${f1(sy(v))}" y2="${f1(sy(v))}" stroke="#e3e3e3"/>`,
      html`<text x="${left - 6}" y="${f1(sy(v) + 4)}" font-size="11" text-anchor="end">${fmt(v)}</text>`,
    );
  }
  for (const v of xt) {
    p.push(
      html`<line x1="${f1(sx(v))}" x2="${f1(sx(v))}" y1="${y0}" y2="${y0 + 5}" stroke="#333"/>`,
      html`<text x="${f1(sx(v))}" y="${y0 + 18}" font-size="11" text-anchor="middle">${fmt(v)}</text>`,
    );
  }
  p.push(
    html`<line x1="${left}" x2="${left + pw}" y1="${y0}" y2="${y0}" stroke="#333"/>`,
    html`<line x1="${left}" x2="${left}" y1="${top}" y2="${y0}" stroke="#333"/>`,
    html`<text x="${left + pw / 2}" y="${y0 + 36}" font-size="12" text-anchor="middle">${opts.xLabel}</text>`,
    html`<text transform="translate(16 ${top + plotH / 2}) rotate(-90)" font-size="12" text-anchor="middle">${opts.yLabel}</text>`,
  );
  for (const s of opts.series) {
    const dx = s.offset ?? 0;
    const pts = s.points.map(([x, y]) => `${f1(sx(x) + dx)},${f1(sy(y))}`).join(" ");
    p.push(
      html`<polyline class="series" data-series="${s.name}" fill="none" stroke="${s.color}" stroke-width="2"${attr("stroke-dasharray", s.dash)} points="${pts}"/>`,
    );
    for (const [x, y] of s.points)
      p.push(marker(s.marker, sx(x) + dx, sy(y), s.color, `${s.name}: ${x} → ${y}`));
  }
  let ly = y0 + 56;
  entries.forEach((s, i) => {
    const [first, ...more] = legendLines[i] as string[];
    // a bundle's entry (a key's): a swatch of its colour; a series' (a style's): its line, dash and marker
    const swatch = s.marker
      ? html`<line x1="${left}" x2="${left + 34}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2"${attr("stroke-dasharray", s.dash)}/>${marker(s.marker, left + 17, ly, s.color, s.name)}`
      : html`<rect x="${left}" y="${ly - 5}" width="34" height="10" rx="2" fill="${s.color}"/>`;
    p.push(
      html`<g class="legend-item">${swatch}<text x="${left + 42}" y="${ly + 4}" font-size="12">${first as string}${more.map((m) => html`<tspan x="${left + 42}" dy="${lineH}">${m}</tspan>`)}</text></g>`,
    );
    ly += legendRow + more.length * lineH;
  });
  return svg(W, H, p);
}

export interface Distribution {
  name: string;
  color: string;
  values: number[];
}

/** One row per distribution: the values as dots, a box from p25 to p75, p50 and p90 marked and labelled. */
export function dotBoxChart(opts: {
  title: string;
  xLabel: string;
  rows: Distribution[];
  width?: number;
}): Html {
  const W = opts.width ?? 560;
  const right = 20;
  const top = 34;
  const rows = opts.rows.filter((r) => r.values.length > 0);
  // each row's name on lines that fit left of the plot (at most 40% of the width), the margin as wide as they need
  const maxChars = Math.floor((W * 0.4 - 12) / textWidth(1));
  const names = rows.map((r) => wrapWords(r.name.replace(/ · /g, " ·\u00a0"), maxChars));
  const longest = Math.max(8, ...names.flat().map((l) => l.length));
  const left = Math.ceil(Math.min(W * 0.4, textWidth(longest) + 16));
  const rowH = Math.max(68, ...names.map((n) => n.length * 14 + 34));
  const plotH = Math.max(1, rows.length) * rowH;
  const H = top + plotH + 64;
  const pw = W - left - right;
  const xt = niceTicks(Math.max(1e-9, ...rows.flatMap((r) => r.values)));
  const maxX = xt.at(-1) as number;
  const sx = (v: number) => left + (v / maxX) * pw;
  const y0 = top + plotH;
  const p: Html[] = [html`<text x="8" y="18" font-size="14" font-weight="600">${opts.title}</text>`];
  for (const v of xt)
    p.push(
      html`<line x1="${f1(sx(v))}" x2="${f1(sx(v))}" y1="${top}" y2="${y0 + 5}" stroke="#e3e3e3"/>`,
      html`<text x="${f1(sx(v))}" y="${y0 + 18}" font-size="11" text-anchor="middle">${fmt(v)}</text>`,
    );
  p.push(
    html`<line x1="${left}" x2="${left + pw}" y1="${y0}" y2="${y0}" stroke="#333"/>`,
    html`<text x="${left + pw / 2}" y="${y0 + 36}" font-size="12" text-anchor="middle">${opts.xLabel}</text>`,
  );
  // what the marks mean, drawn as they appear in the rows
  const ky = y0 + 54;
  // the key starts under the plot, or further left when the names' margin leaves it too little room (a narrow chart)
  const kx = Math.max(8, Math.min(left, W - right - 200 - textWidth(18, 11)));
  p.push(
    html`<g class="key" font-size="11"><circle cx="${kx}" cy="${ky - 4}" r="2.5" fill="#555"/><text x="${kx + 6}" y="${ky}">one value</text><rect x="${kx + 70}" y="${ky - 10}" width="18" height="12" fill="#555" fill-opacity="0.15" stroke="#555"/><text x="${kx + 92}" y="${ky}">p25–p75</text><line x1="${kx + 150}" x2="${kx + 150}" y1="${ky - 11}" y2="${ky + 2}" stroke="#111" stroke-width="3"/><text x="${kx + 156}" y="${ky}">p50</text><line x1="${kx + 190}" x2="${kx + 190}" y1="${ky - 11}" y2="${ky + 2}" stroke="#111" stroke-width="1.5" stroke-dasharray="3,2"/><text x="${kx + 196}" y="${ky}">p90 (nearest rank)</text></g>`,
  );
  // a percentile's label centred on its mark, kept inside the plot (a value near 0 put half of it over the names)
  const labelX = (x: number, label: string) => {
    const half = textWidth(label.length, 10) / 2;
    return Math.max(left + half, Math.min(x, W - right - half));
  };
  if (rows.length === 0)
    p.push(html`<text x="${left}" y="${top + 20}" font-size="12" fill="#666">no values recorded</text>`);
  rows.forEach((r, i) => {
    const cy = top + i * rowH + rowH / 2;
    const q = (x: number) => percentile(r.values, x) as number;
    const [p25, p50, p75, p90] = [q(25), q(50), q(75), q(90)];
    // the row's name on as many lines as it needs, centred on the row
    const [first, ...more] = names[i] as string[];
    p.push(
      html`<text class="row-name" x="${left - 8}" y="${f1(cy + 4 - (more.length * 14) / 2)}" font-size="12" text-anchor="end">${first as string}${more.map((m) => html`<tspan x="${left - 8}" dy="14">${m}</tspan>`)}</text>`,
    );
    p.push(
      html`<rect class="box" x="${f1(sx(p25))}" y="${f1(cy - 10)}" width="${f1(Math.max(1, sx(p75) - sx(p25)))}" height="20" fill="${r.color}" fill-opacity="0.15" stroke="${r.color}"><title>p25–p75: ${fmt(p25)}–${fmt(p75)}</title></rect>`,
    );
    // the dots, spread vertically by their order so equal values stay visible
    r.values.forEach((v, j) => {
      const jitter = ((j % 5) - 2) * 3;
      p.push(
        html`<circle cx="${f1(sx(v))}" cy="${f1(cy + jitter)}" r="2.5" fill="${r.color}" fill-opacity="0.7"><title>${fmt(v)}</title></circle>`,
      );
    });
    p.push(
      html`<line class="p50" x1="${f1(sx(p50))}" x2="${f1(sx(p50))}" y1="${f1(cy - 14)}" y2="${f1(cy + 14)}" stroke="#111" stroke-width="3"><title>p50 ${fmt(p50)}</title></line>`,
      html`<text x="${f1(labelX(sx(p50), `p50 ${fmt(p50)}`))}" y="${f1(cy - 17)}" font-size="10" text-anchor="middle">p50 ${fmt(p50)}</text>`,
      html`<line class="p90" x1="${f1(sx(p90))}" x2="${f1(sx(p90))}" y1="${f1(cy - 14)}" y2="${f1(cy + 14)}" stroke="#111" stroke-width="1.5" stroke-dasharray="3,2"><title>p90 ${fmt(p90)}</title></line>`,
      html`<text x="${f1(labelX(sx(p90), `p90 ${fmt(p90)}`))}" y="${f1(cy + 24)}" font-size="10" text-anchor="middle">p90 ${fmt(p90)}</text>`,
    );
  });
  return svg(W, H, p);
}

function svg(w: number, h: number, parts: Html[]): Html {
  return html`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="system-ui, sans-serif" role="img">
<rect width="100%" height="100%" fill="white"/>
${parts.map(
  (x) => html`${x}
`,
)}</svg>
`;
}
