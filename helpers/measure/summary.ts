import type { BundleMeta } from "../bundle/read.ts";
import { type Html, html } from "../html.ts";
import {
  type MarkdownText,
  markdown,
  markdownLines,
  markdownRow,
  markdownSeparator,
  type TerminalText,
  terminal,
  terminalLines,
} from "../output.ts";
import { dotBoxChart, type LineSeries, lineChart, SERIES_COLORS } from "./charts.ts";
import type { MeasureLatencyRecord, MeasureScaleRecord } from "./records.ts";

export interface MeasuredBundle {
  label: string;
  meta: BundleMeta;
  scaling?: MeasureScaleRecord;
  latency?: MeasureLatencyRecord;
}

const num = (v: number | null | undefined, unit = "") =>
  v === null || v === undefined || !Number.isFinite(v) ? "–" : `${v}${unit}`;

/** One table of the measurements: its header and rows, as plain strings (each renderer escapes for its channel). */
interface Table {
  head: string[];
  rows: string[][];
}

/** The measurements' tables: per bundle, rules and entries per Service point, and the phase timings. */
function summaryTables(bundles: MeasuredBundle[]): Table[] {
  const tables: Table[] = [
    {
      head: [
        "bundle",
        "mode",
        "Cilium",
        "kube-proxy lines / Service",
        "LB entries / Service",
        "map p50 / p90",
        "KUBE-SEP p50 / p90",
        "ghost p50 / p90",
      ],
      rows: bundles.map((b) => {
        const s = b.scaling;
        const l = b.latency;
        return [
          b.label,
          b.meta.mode,
          b.meta.cilium,
          s ? `${s.kube_proxy_per_service} (r² ${s.kube_proxy_r2})` : "–",
          s ? `${s.lb_per_service} (r² ${s.lb_r2})` : "–",
          l ? `${num(l.map_p50_ms, " ms")} / ${num(l.map_p90_ms, " ms")}` : "–",
          l ? `${num(l.kube_proxy_p50_ms, " ms")} / ${num(l.kube_proxy_p90_ms, " ms")}` : "–",
          l ? `${num(l.ghost_p50_s, " s")} / ${num(l.ghost_p90_s, " s")}` : "–",
        ];
      }),
    },
  ];
  const scaled = bundles.filter((b) => b.scaling);
  if (scaled.length > 0) {
    const first = scaled[0]?.scaling as MeasureScaleRecord;
    tables.push({
      head: [
        "Services",
        "endpoints",
        ...scaled.flatMap((b) => [`${b.meta.mode} kube-proxy lines`, `${b.meta.mode} LB entries`]),
      ],
      rows: first.points.map((p, i) => [
        `${p.services}`,
        `${p.endpoints}`,
        ...scaled.flatMap((b) => {
          const q = b.scaling?.points[i];
          const lb = q ? Object.values(q.lb_entries)[0] : undefined;
          return [`${q?.kube_proxy_lines ?? "–"}`, `${lb ?? "–"}`];
        }),
      ]),
    });
  }
  const phases = bundles.filter((b) => Object.keys(b.meta.phases).length > 0);
  if (phases.length > 0) {
    const names = [...new Set(phases.flatMap((b) => Object.keys(b.meta.phases)))];
    tables.push({
      head: ["phase", ...phases.map((b) => b.label)],
      rows: names.map((n) => [n, ...phases.map((b) => num(b.meta.phases[n], " s"))]),
    });
  }
  return tables;
}

/** The measurements of one or more bundles as markdown (for a step summary: `summary --markdown`). */
export function summaryMarkdown(bundles: MeasuredBundle[]): MarkdownText {
  const out: MarkdownText[] = [markdown`### Measurements`, markdown``];
  for (const [i, t] of summaryTables(bundles).entries()) {
    if (i > 0) out.push(markdown``);
    out.push(markdownRow(t.head.map((h) => markdown`${h}`)), markdownSeparator(t.head.length));
    for (const r of t.rows) out.push(markdownRow(r.map((c) => markdown`${c}`)));
  }
  out.push(markdown``);
  return markdownLines(out);
}

/** The same tables as aligned columns, for a terminal (`summary`'s default). */
export function summaryText(bundles: MeasuredBundle[]): TerminalText {
  const out: TerminalText[] = [terminal`Measurements`];
  for (const t of summaryTables(bundles)) {
    const width = t.head.map((h, i) => Math.max(h.length, ...t.rows.map((r) => (r[i] ?? "").length)));
    const line = (r: string[]) =>
      r
        .map((c, i) => c.padEnd(width[i] ?? 0))
        .join("  ")
        .trimEnd();
    out.push(terminal``, terminal`  ${line(t.head)}`, ...t.rows.map((r) => terminal`  ${line(r)}`));
  }
  out.push(terminal``);
  return terminalLines(out);
}

export interface MeasurementChart {
  id: string;
  /** What it shows (the scaling, a latency), and that kind's title. */
  kind: string;
  kindTitle: string;
  /** The bundles' group it shows (small multiples), or null: every bundle. */
  group: string | null;
  svg: Html;
}

const KINDS = {
  scaling: "Rules and map entries as Services grow",
  "map-latency": "EndpointSlice change → every agent's BPF map",
  "kube-proxy-latency": "EndpointSlice change → kube-proxy's DNAT rule",
  "ghost-latency": "Service without backends: connect() fails after",
} as const;

const slug = (s: string) =>
  s
    .replace(/→/g, "to")
    .replace(/[^A-Za-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");

/**
 * The measurement charts of some bundles, each a standalone SVG (the HTML report shows them one by one). With
 * `split` (issue 44: 46 bundles' 92 lines overlaid in one chart 4,155 px tall), small multiples: for each kind, a
 * chart per group of bundles (`split` names a bundle's group; the report's: version and mode), each bundle named by
 * `name` in it (what tells it apart in its group) and the scaling's legend by bundle.
 */
export function measurementCharts(
  bundles: MeasuredBundle[],
  opts: { split?: (b: MeasuredBundle) => string; name?: (b: MeasuredBundle) => string; width?: number } = {},
): MeasurementChart[] {
  const parts: { group: string | null; bundles: MeasuredBundle[] }[] = [];
  if (opts.split) {
    for (const b of bundles) {
      const g = opts.split(b);
      const part = parts.find((x) => x.group === g);
      if (part) part.bundles.push(b);
      else parts.push({ group: g, bundles: [b] });
    }
  } else parts.push({ group: null, bundles });
  const charts: MeasurementChart[] = [];
  const add = (kind: keyof typeof KINDS, group: string | null, svg: Html) =>
    charts.push({
      id: group === null ? kind : `${kind}-${slug(group)}`,
      kind,
      kindTitle: KINDS[kind],
      group,
      svg,
    });
  const width = opts.width !== undefined ? { width: opts.width } : {};
  for (const kind of Object.keys(KINDS) as (keyof typeof KINDS)[])
    for (const part of parts) {
      const title = part.group ?? KINDS[kind];
      const name = (b: MeasuredBundle) => (part.group !== null && opts.name ? opts.name(b) : b.label);
      // a bundle's colour among its chart's bundles
      const color = (b: MeasuredBundle) =>
        SERIES_COLORS[part.bundles.indexOf(b) % SERIES_COLORS.length] as string;
      if (kind === "scaling") {
        const scaled = part.bundles.filter((b) => b.scaling);
        if (scaled.length === 0) continue;
        const RULES = "kube-proxy rules";
        const ENTRIES = "BPF LB entries (first node)";
        const series: LineSeries[] = scaled.flatMap((b, i) => {
          const s = b.scaling as MeasureScaleRecord;
          // bundles whose lines coincide (kpr's and kube-proxy's LB entries) are drawn 5 px apart, all of them within
          // 20 px (a chart of ten bundles drew its last ones 45 px right, out of the plot)
          const offset = i * Math.min(5, 20 / Math.max(1, scaled.length - 1));
          return [
            {
              name: `${name(b)}: ${RULES}`,
              color: color(b),
              marker: "circle" as const,
              offset,
              points: s.points.map((p): [number, number] => [p.services, p.kube_proxy_lines]),
            },
            {
              name: `${name(b)}: ${ENTRIES}`,
              color: color(b),
              dash: "6,4",
              marker: "square" as const,
              offset,
              points: s.points.map((p): [number, number] => [
                p.services,
                Object.values(p.lb_entries)[0] ?? 0,
              ]),
            },
          ];
        });
        add(
          kind,
          part.group,
          lineChart({
            title,
            xLabel: `ClusterIP Services (${scaled[0]?.scaling?.endpoints_per_service ?? "?"} endpoints each)`,
            yLabel: "iptables rules / BPF LB entries",
            series,
            ...width,
            ...(part.group !== null
              ? {
                  key: {
                    styles: [
                      { name: RULES, marker: "circle" as const },
                      { name: ENTRIES, dash: "6,4", marker: "square" as const },
                    ],
                    bundles: scaled.map((b) => ({ name: name(b), color: color(b) })),
                  },
                }
              : {}),
          }),
        );
        continue;
      }
      const lat = part.bundles.filter((b) => b.latency);
      if (lat.length === 0) continue;
      const rows = (pick: (l: MeasureLatencyRecord) => number[]) =>
        lat.map((b) => ({ name: name(b), color: color(b), values: pick(b.latency as MeasureLatencyRecord) }));
      if (kind === "map-latency")
        add(
          kind,
          part.group,
          dotBoxChart({
            title,
            xLabel: "milliseconds (one dot per event and node)",
            rows: rows((l) =>
              l.events.flatMap((e) => Object.values(e.map_ms).filter((v): v is number => v !== null)),
            ),
            ...width,
          }),
        );
      else if (kind === "kube-proxy-latency") {
        const kp = rows((l) => l.events.map((e) => e.kube_proxy_ms).filter((v): v is number => v !== null));
        if (kp.some((r) => r.values.length > 0))
          add(
            kind,
            part.group,
            dotBoxChart({ title, xLabel: "milliseconds (one dot per event)", rows: kp, ...width }),
          );
      } else
        add(
          kind,
          part.group,
          dotBoxChart({
            title,
            xLabel: "seconds (one dot per probe)",
            rows: rows((l) => l.ghost_seconds),
            ...width,
          }),
        );
    }
  return charts;
}

/** The same charts stacked into one SVG file (`summary --svg`). */
export function summarySvg(bundles: MeasuredBundle[]): string {
  const charts = measurementCharts(bundles);
  let y = 0;
  let w = 0;
  const parts: Html[] = [];
  for (const c of charts) {
    const m = /width="(\d+)" height="(\d+)"/.exec(c.svg.text);
    const cw = Number(m?.[1] ?? 560);
    const ch = Number(m?.[2] ?? 300);
    // each chart placed below the one before: an outer <g> moves it (nested <svg> takes x and y too)
    parts.push(html`<g transform="translate(0 ${y})">${c.svg}</g>`);
    y += ch + 12;
    w = Math.max(w, cw);
  }
  return html`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${Math.max(0, y - 12)}" viewBox="0 0 ${w} ${Math.max(0, y - 12)}">
${parts}</svg>
`.text;
}
