/** Nearest-rank quantile (0 < q ≤ 1) of samples already sorted ascending. */
export function nearestRank(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** Percentile (0–100) by nearest rank over a copy of the samples (ms), rounded to µs. */
export function percentile(samples: number[], p: number): number {
  return (
    Math.round(
      nearestRank(
        [...samples].sort((a, b) => a - b),
        p / 100,
      ) * 1000,
    ) / 1000
  );
}
