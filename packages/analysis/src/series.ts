import type { Labels } from "./evidence.js";
import { compareText } from "./plain-text.js";

export { compareText };

/** One sample: `at` in ms since the epoch. NaN and ±Infinity are allowed (and ignored in comparisons). */
export interface SeriesPoint {
  at: number;
  value: number;
}

/** A time series from any metric source: its labels and its samples, in any order. */
export interface Series {
  labels: Labels;
  points: readonly SeriesPoint[];
}

/** The finite samples of a series within [start, end], in time order: what every comparison reads. */
export function usablePoints(points: readonly SeriesPoint[], start: number, end: number): SeriesPoint[] {
  return points.filter((point) => Number.isFinite(point.value) && point.at >= start && point.at <= end).sort((a, b) => a.at - b.at);
}

/** Canonical label text: ties are broken by it so that the same data always gives the same evidence. */
export function labelKey(labels: Labels): string {
  return Object.keys(labels)
    .sort(compareText)
    .map((name) => `${name}=${labels[name] ?? ""}`)
    .join(", ");
}
