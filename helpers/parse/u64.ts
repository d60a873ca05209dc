/**
 * Values that are 64-bit in Cilium and the kernel (conntrack packet and byte counters, iptables counters):
 * a bug report's output is evidence, so the printed value is kept exactly. JSON numbers are doubles, exact
 * only up to 2^53; above that the value stays the decimal string it was printed as.
 */
export type U64 = number | string;

/** An unsigned decimal as printed: a number when it is exact as one, else its decimal string. */
export function u64(text: string): U64 {
  const n = +text;
  if (n <= Number.MAX_SAFE_INTEGER) return n;
  return text.replace(/^0+(?=\d)/, "");
}

/**
 * A JSON integer as the exact parse keeps it (json-scan.ts: past 2^53 the printed decimal string): a U64, or null
 * when the value is not an integer.
 */
export function u64Of(v: unknown): U64 | null {
  if (typeof v === "number") return Number.isInteger(v) ? v : null;
  if (typeof v === "string" && /^-?\d+$/.test(v)) return v;
  return null;
}

/** The sum of two printed decimals (a connection's Rx and Tx counters), exactly. */
export function u64Sum(a: string, b: string): U64 {
  const x = +a;
  const y = +b;
  if (x + y <= Number.MAX_SAFE_INTEGER) return x + y;
  return (BigInt(a) + BigInt(b)).toString();
}

/** `a - b`, exactly (a number when the difference is exact as one). */
export function u64Diff(a: U64, b: U64): U64 {
  if (typeof a === "number" && typeof b === "number") return a - b;
  const d = BigInt(a) - BigInt(b);
  const n = Number(d);
  return Number.isSafeInteger(n) ? n : d.toString();
}

/** Negative, zero or positive as `a` is below, equal to or above `b`. */
export function u64Compare(a: U64, b: U64): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  const d = BigInt(a) - BigInt(b);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}
