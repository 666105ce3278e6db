// Small statistics for the benchmark: quantiles over samples, sums, ratios.

/** The q-quantile (0..1) of `values` by the nearest-rank method; NaN for no values. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1];
}

export const median = (values: readonly number[]): number => quantile(values, 0.5);

export const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

export function ratio(numerator: number, denominator: number): number | null {
  return denominator === 0 ? null : numerator / denominator;
}
