import type { BundleMeta } from "../bundle.ts";
import type { MeasureLatencyRecord, MeasureScaleRecord } from "../records/types.ts";

export interface MeasuredBundle {
  label: string;
  meta: BundleMeta;
  scaling?: MeasureScaleRecord;
  latency?: MeasureLatencyRecord;
}

const num = (v: number | null | undefined, unit = "") =>
  v === null || v === undefined || !Number.isFinite(v) ? "–" : `${v}${unit}`;

/** The measurements of one or more bundles as markdown (for a step summary). */
export function summaryMarkdown(bundles: MeasuredBundle[]): string {
  const out: string[] = ["### Measurements", ""];
  out.push(
    "| bundle | mode | Cilium | kube-proxy lines / Service | LB entries / Service | map p50 / p90 | KUBE-SEP p50 / p90 | ghost p50 / p90 |",
  );
  out.push("|---|---|---|---|---|---|---|---|");
  for (const b of bundles) {
    const s = b.scaling;
    const l = b.latency;
    out.push(
      `| ${b.label} | ${b.meta.mode} | ${b.meta.cilium} | ${s ? `${s.kube_proxy_per_service} (r² ${s.kube_proxy_r2})` : "–"} | ${s ? `${s.lb_per_service} (r² ${s.lb_r2})` : "–"} | ${l ? `${num(l.map_p50_ms, " ms")} / ${num(l.map_p90_ms, " ms")}` : "–"} | ${l ? `${num(l.kube_proxy_p50_ms, " ms")} / ${num(l.kube_proxy_p90_ms, " ms")}` : "–"} | ${l ? `${num(l.ghost_p50_s, " s")} / ${num(l.ghost_p90_s, " s")}` : "–"} |`,
    );
  }
  const scaled = bundles.filter((b) => b.scaling);
  if (scaled.length > 0) {
    out.push(
      "",
      "| Services | endpoints | " +
        scaled.map((b) => `${b.meta.mode} kube-proxy lines | ${b.meta.mode} LB entries`).join(" | ") +
        " |",
    );
    out.push(`|---|---|${scaled.map(() => "---|---|").join("")}`);
    const first = scaled[0]?.scaling as MeasureScaleRecord;
    first.points.forEach((p, i) => {
      const cols = scaled.map((b) => {
        const q = b.scaling?.points[i];
        const lb = q ? Object.values(q.lb_entries)[0] : undefined;
        return `${q?.kube_proxy_lines ?? "–"} | ${lb ?? "–"}`;
      });
      out.push(`| ${p.services} | ${p.endpoints} | ${cols.join(" | ")} |`);
    });
  }
  const phases = bundles.filter((b) => Object.keys(b.meta.phases).length > 0);
  if (phases.length > 0) {
    const names = [...new Set(phases.flatMap((b) => Object.keys(b.meta.phases)))];
    out.push(
      "",
      `| phase | ${phases.map((b) => b.label).join(" | ")} |`,
      `|---|${phases.map(() => "---|").join("")}`,
    );
    for (const n of names)
      out.push(`| ${n} | ${phases.map((b) => num(b.meta.phases[n], " s")).join(" | ")} |`);
  }
  return `${out.join("\n")}\n`;
}

const COLORS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd"];
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");

/**
 * An SVG with two panels: kube-proxy lines and BPF LB entries against the number of Services (one line per
 * bundle and series), and the map-convergence latencies of each bundle as dots on a shared axis.
 */
export function summarySvg(bundles: MeasuredBundle[]): string {
  const W = 760;
  const H = 300;
  const pad = 48;
  const pw = (W - 3 * pad) / 2;
  const ph = H - 2 * pad;
  const parts: string[] = [];
  const series: { name: string; color: string; dash: boolean; pts: [number, number][] }[] = [];
  bundles.forEach((b, i) => {
    if (!b.scaling) return;
    const c = COLORS[i % COLORS.length] as string;
    series.push({
      name: `${b.label} kube-proxy lines`,
      color: c,
      dash: false,
      pts: b.scaling.points.map((p) => [p.services, p.kube_proxy_lines]),
    });
    series.push({
      name: `${b.label} LB entries`,
      color: c,
      dash: true,
      pts: b.scaling.points.map((p) => [p.services, Object.values(p.lb_entries)[0] ?? 0]),
    });
  });
  const maxX = Math.max(1, ...series.flatMap((s) => s.pts.map((p) => p[0])));
  const maxY = Math.max(1, ...series.flatMap((s) => s.pts.map((p) => p[1])));
  const x0 = pad;
  const y0 = pad + ph;
  const sx = (x: number) => x0 + (x / maxX) * pw;
  const sy = (y: number) => y0 - (y / maxY) * ph;
  parts.push(`<text x="${x0}" y="${pad - 16}" font-size="13">Rules and map entries vs Services</text>`);
  parts.push(
    `<line x1="${x0}" y1="${y0}" x2="${x0 + pw}" y2="${y0}" stroke="#333"/><line x1="${x0}" y1="${y0}" x2="${x0}" y2="${pad}" stroke="#333"/>`,
  );
  parts.push(
    `<text x="${x0 + pw}" y="${y0 + 28}" font-size="11" text-anchor="end">Services (${maxX} max)</text><text x="${x0 - 6}" y="${pad + 4}" font-size="11" text-anchor="end">${maxY}</text><text x="${x0 - 6}" y="${y0}" font-size="11" text-anchor="end">0</text>`,
  );
  series.forEach((s, i) => {
    const pts = s.pts.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(" ");
    parts.push(
      `<polyline fill="none" stroke="${s.color}" stroke-width="2"${s.dash ? ' stroke-dasharray="5,4"' : ""} points="${pts}"><title>${esc(s.name)}</title></polyline>`,
    );
    parts.push(
      `<text x="${x0 + 8}" y="${pad + 14 + i * 14}" font-size="11" fill="${s.color}">${esc(s.name)}</text>`,
    );
  });
  const lat = bundles.filter((b) => b.latency);
  const all = lat.flatMap((b) =>
    (b.latency as MeasureLatencyRecord).events.flatMap((e) =>
      Object.values(e.map_ms).filter((v): v is number => v !== null),
    ),
  );
  const maxL = Math.max(1, ...all);
  const lx0 = 2 * pad + pw;
  parts.push(`<text x="${lx0}" y="${pad - 16}" font-size="13">EndpointSlice → every agent's map (ms)</text>`);
  parts.push(
    `<line x1="${lx0}" y1="${y0}" x2="${lx0 + pw}" y2="${y0}" stroke="#333"/><text x="${lx0 + pw}" y="${y0 + 28}" font-size="11" text-anchor="end">${maxL} ms</text><text x="${lx0}" y="${y0 + 28}" font-size="11">0</text>`,
  );
  lat.forEach((b, i) => {
    const c = COLORS[bundles.indexOf(b) % COLORS.length] as string;
    const row = pad + 20 + i * 30;
    parts.push(
      `<text x="${lx0}" y="${row - 8}" font-size="11" fill="${c}">${esc(b.label)} (p90 ${num(b.latency?.map_p90_ms, " ms")})</text>`,
    );
    for (const e of (b.latency as MeasureLatencyRecord).events) {
      for (const v of Object.values(e.map_ms)) {
        if (v === null) continue;
        parts.push(
          `<circle cx="${(lx0 + (v / maxL) * pw).toFixed(1)}" cy="${row}" r="3" fill="${c}" fill-opacity="0.6"/>`,
        );
      }
    }
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n${parts.join("\n")}\n</svg>\n`;
}
