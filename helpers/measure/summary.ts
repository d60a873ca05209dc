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

/** The measurement charts of some bundles, each a standalone SVG (the HTML report shows them one by one). */
export function measurementCharts(bundles: MeasuredBundle[]): { id: string; svg: Html }[] {
  const color = (b: MeasuredBundle) => SERIES_COLORS[bundles.indexOf(b) % SERIES_COLORS.length] as string;
  const charts: { id: string; svg: Html }[] = [];
  const scaled = bundles.filter((b) => b.scaling);
  if (scaled.length > 0) {
    const series: LineSeries[] = scaled.flatMap((b, i) => {
      const s = b.scaling as MeasureScaleRecord;
      // bundles whose lines coincide (kpr's and kube-proxy's LB entries) are drawn 5 px apart
      const offset = i * 5;
      return [
        {
          name: `${b.label}: kube-proxy rules`,
          color: color(b),
          marker: "circle" as const,
          offset,
          points: s.points.map((p): [number, number] => [p.services, p.kube_proxy_lines]),
        },
        {
          name: `${b.label}: BPF LB entries (first node)`,
          color: color(b),
          dash: "6,4",
          marker: "square" as const,
          offset,
          points: s.points.map((p): [number, number] => [p.services, Object.values(p.lb_entries)[0] ?? 0]),
        },
      ];
    });
    charts.push({
      id: "scaling",
      svg: lineChart({
        title: "Rules and map entries as Services grow",
        xLabel: `ClusterIP Services (${scaled[0]?.scaling?.endpoints_per_service ?? "?"} endpoints each)`,
        yLabel: "iptables rules / BPF LB entries",
        series,
      }),
    });
  }
  const lat = bundles.filter((b) => b.latency);
  if (lat.length > 0) {
    const rows = (pick: (l: MeasureLatencyRecord) => number[]) =>
      lat.map((b) => ({ name: b.label, color: color(b), values: pick(b.latency as MeasureLatencyRecord) }));
    charts.push({
      id: "map-latency",
      svg: dotBoxChart({
        title: "EndpointSlice change → every agent's BPF map",
        xLabel: "milliseconds (one dot per event and node)",
        rows: rows((l) =>
          l.events.flatMap((e) => Object.values(e.map_ms).filter((v): v is number => v !== null)),
        ),
      }),
    });
    const kp = rows((l) => l.events.map((e) => e.kube_proxy_ms).filter((v): v is number => v !== null));
    if (kp.some((r) => r.values.length > 0))
      charts.push({
        id: "kube-proxy-latency",
        svg: dotBoxChart({
          title: "EndpointSlice change → kube-proxy's DNAT rule",
          xLabel: "milliseconds (one dot per event)",
          rows: kp,
        }),
      });
    charts.push({
      id: "ghost-latency",
      svg: dotBoxChart({
        title: "Service without backends: connect() fails after",
        xLabel: "seconds (one dot per probe)",
        rows: rows((l) => l.ghost_seconds),
      }),
    });
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
