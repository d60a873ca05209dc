/** Pure statistics for the measurements: percentiles and a least-squares line. */

/** Nearest-rank percentile (p in 0..100) of a non-empty list; null for an empty one. */
export function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export interface LineFit {
  slope: number;
  intercept: number;
  /** Coefficient of determination; 1 for a perfect line (and for a constant series fitted exactly). */
  r2: number;
}

/** Least squares y = slope·x + intercept. */
export function fitLine(xs: number[], ys: number[]): LineFit {
  const n = xs.length;
  if (n === 0 || n !== ys.length) throw new Error("fitLine needs as many x as y values, at least one");
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = (xs[i] as number) - mx;
    const dy = (ys[i] as number) - my;
    sxx += dx * dx;
    sxy += dx * dy;
    syy += dy * dy;
  }
  const slope = sxx === 0 ? 0 : sxy / sxx;
  const intercept = my - slope * mx;
  let ssr = 0;
  for (let i = 0; i < n; i++) ssr += ((ys[i] as number) - (slope * (xs[i] as number) + intercept)) ** 2;
  const r2 = syy === 0 ? (ssr === 0 ? 1 : 0) : 1 - ssr / syy;
  return { slope, intercept, r2 };
}
