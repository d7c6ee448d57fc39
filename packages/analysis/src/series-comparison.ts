import type { MetricEvidence } from "./evidence.js";
import { median, quantile, robustSpread } from "./robust-statistics.js";
import type { SaturationCheck } from "./saturation.js";
import type { SeriesPoint } from "./series.js";

/** A move is abnormal only if the value is at least this many times its baseline (or this fraction of it). */
export const ABNORMAL_RATIO = 2;
/** ...and this many robust standard deviations (1.4826 × MAD) of the baseline away from its median... */
export const ABNORMAL_SPREADS = 5;
/** ...and beyond what the baseline reached this share of the time (its 99th or 1st percentile). */
export const USUAL_QUANTILE = 0.99;
/** A sample departs from the baseline (and may date a change) this many robust standard deviations away... */
export const ONSET_SPREADS = 3;
/** ...or, for a quiet baseline, this share of its level away. */
export const ONSET_SHARE = 0.01;
/** A series that varied before and has held one exact value at least this long has stopped moving. */
export const FLAT_MIN_MS = 10 * 60_000;
/** A move's severity is its ratio's distance from 1 (4 for 4× and ¼), at most this: a move from or to zero. */
export const MAX_MOVE_SEVERITY = 1000;
/** A saturated metric's severity is this plus its move's: saturation ranks above every move. */
export const SATURATION_SEVERITY = 10_000;

/**
 * One series compared with its baseline: the fields of its metric evidence (MetricEvidence says what each
 * means), and the incident phase's sample that was compared, whose value is the evidence's `value`.
 */
export interface Comparison
  extends Pick<MetricEvidence, "baseline" | "low" | "high" | "ratio" | "severity" | "abnormal" | "onset" | "endedAt" | "flat" | "saturation"> {
  extreme: SeriesPoint;
}

/** Below this relative spread a baseline is not "moving" (rate() of a steady counter wobbles in its 15th digit). */
const MOVING_SPREAD = 1e-3;

/**
 * Compares the incident phase of one series (`points`: finite, in time order) with its baseline, the
 * samples before `incidentFrom`; undefined when either phase is empty. The rules:
 *
 * - baseline: the median before `incidentFrom`; its noise: 1.4826 × the MAD.
 * - a move (the maximum or the minimum of the incident phase) is abnormal when it is ≥ 2× (≤ ½×) the
 *   median, ≥ 5 noise deviations from it, and beyond the 99th (1st) percentile of the baseline before the
 *   change began: large, clear of the noise, and not something the baseline did too.
 * - onset: the change point, not the threshold crossing: from the first abnormal sample of the incident
 *   phase back over the unbroken run of samples that depart the same way (by > 3 noise deviations, or > 1 %
 *   of the median for a quiet baseline), so a slow drain is dated when it began to drain.
 * - saturation (`check`): a sample at its limit or threshold in the incident phase, when fewer than half
 *   of the baseline's were (a resource always at its limit is its normal): abnormal whatever the ratio,
 *   the most saturated sample is the value, and it ranks above any move.
 * - flat: a baseline that varied, then one exact value for ≥ 10 min up to the last sample, more than four
 *   times longer than it ever held still before: a stuck metric.
 * - ended: an abnormal move or saturation whose last samples are back (no longer depart, no longer at the
 *   limit) is over from the first of them; one that lasts to the last sample has no end.
 */
export function compareSeries(points: readonly SeriesPoint[], incidentFrom: number, check?: SaturationCheck): Comparison | undefined {
  const split = points.findIndex((point) => point.at >= incidentFrom);
  if (split <= 0) return undefined;
  const sortedBefore = points
    .slice(0, split)
    .map((point) => point.value)
    .sort((a, b) => a - b);
  const baseline = median(sortedBefore);
  const spread = robustSpread(sortedBefore, baseline);
  const departs = (value: number, side: number) => (value - baseline) * side > Math.max(ONSET_SPREADS * spread, ONSET_SHARE * Math.abs(baseline));
  const common = { baseline, low: sortedBefore[0] ?? baseline, high: sortedBefore[sortedBefore.length - 1] ?? baseline };

  const saturated = check === undefined ? undefined : saturationOf(points, split, check);
  if (check !== undefined && saturated !== undefined) {
    const { extreme, first, limit } = saturated;
    const { direction, of } = check;
    const side = direction === "down" ? -1 : 1;
    const ratio = ratioOf(extreme.value, baseline);
    const ended = endedAt(points, split, (point) => {
      const at = check.limitAt(point.at);
      return at !== undefined && check.saturated(point.value, at);
    });
    return {
      ...common,
      extreme,
      ratio,
      severity: SATURATION_SEVERITY + moveSeverity(ratio),
      abnormal: true,
      onset: new Date((points[runStart(points, first, (value) => departs(value, side))] ?? extreme).at),
      ...(ended === undefined ? {} : { endedAt: ended }),
      saturation: { limit, direction, ...(of === undefined ? {} : { of }) },
    };
  }

  // The maximum and the minimum of the incident phase: an abnormal one wins, then the larger move.
  let highest = points[split] as SeriesPoint;
  let lowest = highest;
  for (let index = split; index < points.length; index += 1) {
    const point = points[index] as SeriesPoint;
    if (point.value > highest.value) highest = point;
    if (point.value < lowest.value) lowest = point;
  }
  const moves = [moveOf(highest, 1), moveOf(lowest, -1)];
  const [move] = moves.sort((a, b) => Number(b.abnormal) - Number(a.abnormal) || b.severity - a.severity);
  if (move === undefined) return undefined;
  if (move.abnormal) {
    const ended = endedAt(points, split, (point) => departs(point.value, move.side));
    return {
      ...common,
      extreme: move.extreme,
      ratio: move.ratio,
      severity: move.severity,
      abnormal: true,
      onset: new Date(move.onsetAt),
      ...(ended === undefined ? {} : { endedAt: ended }),
    };
  }
  const flat = spread > MOVING_SPREAD * Math.abs(baseline) ? flatRun(points) : undefined;
  if (flat !== undefined) {
    const ratio = ratioOf(flat.value, baseline);
    return { ...common, extreme: flat, ratio, severity: Math.max(moveSeverity(ratio), ABNORMAL_RATIO), abnormal: true, onset: new Date(flat.at), flat: true };
  }
  return { ...common, extreme: move.extreme, ratio: move.ratio, severity: move.severity, abnormal: false };

  function moveOf(extreme: SeriesPoint, side: number) {
    const ratio = ratioOf(extreme.value, baseline);
    const severity = moveSeverity(ratio);
    const large = (value: number) =>
      (value - baseline) * side > 0 && deviationOf(ratioOf(value, baseline)) >= ABNORMAL_RATIO && Math.abs(value - baseline) >= ABNORMAL_SPREADS * spread;
    const first = points.findIndex((point, index) => index >= split && large(point.value));
    if (!large(extreme.value) || first < 0) return { extreme, ratio, severity, abnormal: false, onsetAt: 0, side };
    const start = runStart(points, first, (value) => departs(value, side));
    // What the baseline did before this change began: a level it reached at times is not abnormal.
    const usualBefore =
      start >= split
        ? sortedBefore
        : points
            .slice(0, start)
            .map((point) => point.value)
            .sort((a, b) => a - b);
    const usual = quantile(usualBefore, side > 0 ? USUAL_QUANTILE : 1 - USUAL_QUANTILE);
    const beyondUsual = usualBefore.length === 0 || (extreme.value - usual) * side > 0;
    return { extreme, ratio, severity, abnormal: beyondUsual, onsetAt: (points[start] as SeriesPoint).at, side };
  }
}

/** The most saturated sample of the incident phase, the first saturated one and its limit; undefined when not saturated. */
function saturationOf(points: readonly SeriesPoint[], split: number, check: SaturationCheck) {
  let saturatedBefore = 0;
  let first: number | undefined;
  let extreme: { point: SeriesPoint; limit: number; degree: number } | undefined;
  points.forEach((point, index) => {
    const limit = check.limitAt(point.at);
    if (limit === undefined || !check.saturated(point.value, limit)) return;
    if (index < split) {
      saturatedBefore += 1;
      return;
    }
    first ??= index;
    const degree = check.degree(point.value, limit);
    if (extreme === undefined || degree > extreme.degree) extreme = { point, limit, degree };
  });
  if (extreme === undefined || first === undefined || saturatedBefore * 2 >= split) return undefined;
  return { extreme: extreme.point, first, limit: extreme.limit };
}

/**
 * When an abnormal stretch of the incident phase was over: the sample after the last one that is still
 * abnormal, when it is not the last sample; undefined while it lasts.
 */
function endedAt(points: readonly SeriesPoint[], split: number, abnormal: (point: SeriesPoint) => boolean): Date | undefined {
  let last = -1;
  for (let index = split; index < points.length; index += 1) if (abnormal(points[index] as SeriesPoint)) last = index;
  const back = points[last + 1];
  return last < 0 || back === undefined ? undefined : new Date(back.at);
}

/** The index where the unbroken run of departing samples that leads up to `index` began (`index` itself if none). */
function runStart(points: readonly SeriesPoint[], index: number, departs: (value: number) => boolean): number {
  let start = index;
  while (start > 0 && departs((points[start - 1] as SeriesPoint).value)) start -= 1;
  return start;
}

/**
 * The first sample of the final run of one exact value, when that run lasts ≥ FLAT_MIN_MS and more than
 * four times any run before it; undefined otherwise.
 */
function flatRun(points: readonly SeriesPoint[]): SeriesPoint | undefined {
  const last = points[points.length - 1];
  if (last === undefined) return undefined;
  let start = points.length - 1;
  while (start > 0 && (points[start - 1] as SeriesPoint).value === last.value) start -= 1;
  const runMs = last.at - (points[start] as SeriesPoint).at;
  if (start === 0 || runMs < FLAT_MIN_MS) return undefined;
  let longestBefore = 0;
  let runFrom = 0;
  for (let index = 1; index < start; index += 1) {
    if ((points[index] as SeriesPoint).value !== (points[index - 1] as SeriesPoint).value) runFrom = index;
    longestBefore = Math.max(longestBefore, (points[index] as SeriesPoint).at - (points[runFrom] as SeriesPoint).at);
  }
  return runMs > 4 * longestBefore ? points[start] : undefined;
}

/** value / baseline, with a zero baseline read as "from nothing": 1 if still 0, else ±Infinity. */
function ratioOf(value: number, baseline: number): number {
  if (baseline === 0) return value === 0 ? 1 : value > 0 ? Infinity : -Infinity;
  return value / baseline;
}

/** How far a ratio is from 1 either way (4 for both 4× and 0.25×); a sign change or a fall to 0 is infinite. */
function deviationOf(ratio: number): number {
  return ratio > 0 ? Math.max(ratio, 1 / ratio) : Infinity;
}

function moveSeverity(ratio: number): number {
  return Math.min(deviationOf(ratio), MAX_MOVE_SEVERITY);
}
