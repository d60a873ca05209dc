import { ParseError } from "../errors.ts";
import { parseJsonText } from "./lines.ts";

export interface Metric {
  name: string;
  labels: Record<string, string>;
  value: number;
  /** Position in the output's array (its JSON path is `[index]`). */
  index: number;
}

/** `cilium-dbg metrics list -o json`: `[{"name", "labels": {…}, "value"}]`. */
export function parseMetricsJson(input: string): Metric[] {
  const doc = parseJsonText("metrics-json", input);
  if (!Array.isArray(doc))
    throw new ParseError("metrics-json", 1, input.split("\n")[0] ?? "", "expected a JSON array of metrics");
  return doc.map((m, index) => {
    const x = m as { name?: unknown; labels?: Record<string, unknown>; value?: unknown };
    return {
      name: String(x.name ?? ""),
      labels: Object.fromEntries(Object.entries(x.labels ?? {}).map(([k, v]) => [k, String(v)])),
      value: Number(x.value ?? 0),
      index,
    };
  });
}

/** Drop counts by reason, summed over directions. */
export function dropReasons(metrics: Metric[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of metrics) {
    if (m.name !== "cilium_drop_count_total") continue;
    const reason = m.labels.reason ?? "(no reason)";
    out[reason] = (out[reason] ?? 0) + m.value;
  }
  return out;
}

/** Agent log lines at error level: logrus `level=error` (≤ 1.17) and slog `level=ERROR` (1.18+). */
export function errorLines(log: string): string[] {
  return log.split("\n").filter((l) => /\blevel=(error|ERROR|fatal|FATAL)\b/.test(l));
}
