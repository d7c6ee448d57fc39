/**
 * Order statistics for judging a series against its baseline: the median and the median absolute
 * deviation resist the odd spike in the baseline, where a mean and a standard deviation would follow it.
 */

/** MAD × this estimates the standard deviation of normally distributed noise. */
const MAD_TO_SIGMA = 1.4826;

/** The median of values sorted in ascending order (NaN for none). */
export function median(sorted: readonly number[]): number {
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length % 2 === 1) return sorted[middle] ?? Number.NaN;
  return ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2;
}

/** The `q` quantile (0..1) of values sorted in ascending order, interpolated between neighbours. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const low = sorted[below] ?? Number.NaN;
  const high = sorted[Math.min(below + 1, sorted.length - 1)] ?? low;
  return low + (high - low) * (position - below);
}

/** The noise of values around their median, as a standard deviation: 1.4826 × MAD (0 for a flat baseline). */
export function robustSpread(sorted: readonly number[], center: number): number {
  const deviations = sorted.map((value) => Math.abs(value - center)).sort((a, b) => a - b);
  return MAD_TO_SIGMA * median(deviations);
}
