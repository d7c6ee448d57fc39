/** Summary of a set of latency samples, in milliseconds. */
export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/**
 * The q-quantile (0 ≤ q ≤ 1) of already sorted samples, nearest-rank: the smallest sample such that
 * at least q of all samples are ≤ it. Nearest-rank reports a value that was actually measured.
 */
export function quantileOfSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] ?? Number.NaN;
}

/**
 * The item whose `key` is the median of all items' keys (nearest-rank, so an item that was measured):
 * of several rounds of one comparison, the round that stands for all of them.
 */
export function medianItem<T>(items: readonly T[], key: (item: T) => number): T {
  const sorted = [...items].sort((a, b) => key(a) - key(b));
  const item = sorted[Math.max(0, Math.ceil(sorted.length / 2) - 1)];
  if (item === undefined) throw new RangeError("medianItem of no items");
  return item;
}

/** p50/p90/p99/max/mean of unsorted latency samples. */
export function summarizeLatencies(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    count: sorted.length,
    p50: quantileOfSorted(sorted, 0.5),
    p90: quantileOfSorted(sorted, 0.9),
    p99: quantileOfSorted(sorted, 0.99),
    max: sorted.length === 0 ? Number.NaN : (sorted[sorted.length - 1] ?? Number.NaN),
    mean: sorted.length === 0 ? Number.NaN : sum / sorted.length,
  };
}
