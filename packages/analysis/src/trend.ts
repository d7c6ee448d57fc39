import type { MetricTrend } from "./evidence.js";
import { median, robustSpread } from "./robust-statistics.js";
import type { Comparison } from "./series-comparison.js";
import type { SeriesPoint } from "./series.js";

/**
 * A slow climb (or fall) is dated by the slope it began, not by the moment it crossed a line. A leak
 * that fills a container over hours crosses its limit long after its cause; dated at the crossing, the
 * release that started it looks hours too early to be the cause.
 */

/** A line at least this long before the incident phase is a trend; a shorter one is a step or a ramp into it. */
export const TREND_MIN_MS = 30 * 60_000;
/** ...and it rose (fell) at least this many robust deviations of what the fit leaves over: clear of the noise. */
export const TREND_CLEAR_SPREADS = 10;
/** A trend whose fitted start is this close to the first sample began before the data: the window is too short to date it. */
export const TREND_EDGE_MS = 5 * 60_000;
/** ...and each third of its line moves at between 1/this and this times its whole pace. */
export const TREND_PACE_FACTOR = 2;
/** The climb is fitted up to where it first came this close (as a share of its move) to its extreme. */
const TREND_REACHED_SHARE = 0.95;
/** A trend is dated when it had risen this many robust deviations of the fit's residuals, as a change point is (ONSET_SPREADS). */
const TREND_ONSET_SPREADS = 3;

/**
 * The trend of a series before `until`, when there is one in the direction `side` (1: rising, −1:
 * falling): the level-then-line (a hinge) that fits the samples best by least squares, every sample a
 * candidate start. It is a trend when the line lasts at least TREND_MIN_MS up to `until`,
 * moved by at least TREND_CLEAR_SPREADS of the noise around it, and each of its thirds moved at about
 * its pace (TREND_PACE_FACTOR): a flat series moves by nothing, a step or a short ramp between two
 * levels moves in one third and not in the others. Its start is when the line had moved three deviations (a fitted knee
 * is uncertain by about that, and a change point is dated the same way); one within TREND_EDGE_MS of the
 * first sample began before the data (`beforeWindow`), and is dated at the first sample.
 */
export function trendOf(points: readonly SeriesPoint[], until: number, side: 1 | -1): MetricTrend | undefined {
  const split = points.findIndex((point) => point.at >= until);
  const before = split < 0 ? points : points.slice(0, split);
  const n = before.length;
  const first = before[0];
  const last = before[n - 1];
  if (first === undefined || last === undefined || last.at - first.at < TREND_MIN_MS) return undefined;

  // Suffix sums over samples after each candidate knee, in hours from the first sample (well-conditioned).
  const hours = before.map((point) => (point.at - first.at) / 3_600_000);
  const values = before.map((point) => point.value);
  const suffix = { t: new Float64Array(n + 1), tt: new Float64Array(n + 1), ty: new Float64Array(n + 1), y: new Float64Array(n + 1) };
  for (let index = n - 1; index >= 0; index -= 1) {
    const t = hours[index] as number;
    const y = values[index] as number;
    suffix.t[index] = (suffix.t[index + 1] as number) + t;
    suffix.tt[index] = (suffix.tt[index + 1] as number) + t * t;
    suffix.ty[index] = (suffix.ty[index + 1] as number) + t * y;
    suffix.y[index] = (suffix.y[index + 1] as number) + y;
  }
  const sumY = suffix.y[0] as number;
  let sumYY = 0;
  for (const y of values) sumYY += y * y;

  let best: { knee: number; level: number; slope: number; error: number } | undefined;
  const lastHour = hours[n - 1] as number;
  for (let knee = 0; knee < n - 2; knee += 1) {
    const tk = hours[knee] as number;
    if ((lastHour - tk) * 3_600_000 < TREND_MIN_MS) break;
    // y ≈ level + slope·x with x = max(0, t − tk): least squares over [1, x].
    const m = n - knee - 1;
    const sx = (suffix.t[knee + 1] as number) - m * tk;
    const sxx = (suffix.tt[knee + 1] as number) - 2 * tk * (suffix.t[knee + 1] as number) + m * tk * tk;
    const sxy = (suffix.ty[knee + 1] as number) - tk * (suffix.y[knee + 1] as number);
    const det = n * sxx - sx * sx;
    if (det <= 0) continue;
    const slope = (n * sxy - sx * sumY) / det;
    const level = (sumY - slope * sx) / n;
    const error = sumYY - level * sumY - slope * sxy;
    if (best === undefined || error < best.error) best = { knee, level, slope, error };
  }
  if (best === undefined || Math.sign(best.slope) !== side) return undefined;

  const { knee, level, slope } = best;
  const tk = hours[knee] as number;
  const residuals = values
    .slice(knee)
    .map((y, index) => y - (level + slope * ((hours[knee + index] as number) - tk)))
    .sort((a, b) => a - b);
  const noise = robustSpread(residuals, median(residuals));
  const moved = Math.abs(slope) * (lastHour - tk);
  if (moved < TREND_CLEAR_SPREADS * noise) return undefined;
  // A line, not a step or a ramp between two levels: each third of it moves at about the same pace.
  const third = (lastHour - tk) / 3;
  for (let part = 0; part < 3; part += 1) {
    const pace = slopeOf(hours, values, tk + part * third, tk + (part + 1) * third);
    if (pace === undefined || pace / slope < 1 / TREND_PACE_FACTOR || pace / slope > TREND_PACE_FACTOR) return undefined;
  }

  const kneeAt = before[knee] as SeriesPoint;
  const beforeWindow = kneeAt.at - first.at <= TREND_EDGE_MS;
  const clearAfterMs = slope === 0 ? 0 : ((TREND_ONSET_SPREADS * noise) / Math.abs(slope)) * 3_600_000;
  const since = beforeWindow ? first.at : Math.min(kneeAt.at + clearAfterMs, last.at);
  return { since: new Date(since), perHour: slope, beforeWindow };
}

/** The least-squares slope of the samples from `from` to `to` hours; undefined with fewer than three. */
function slopeOf(hours: readonly number[], values: readonly number[], from: number, to: number): number | undefined {
  let n = 0;
  let st = 0;
  let sy = 0;
  let stt = 0;
  let sty = 0;
  hours.forEach((t, index) => {
    if (t < from || t > to) return;
    const y = values[index] as number;
    n += 1;
    st += t;
    sy += y;
    stt += t * t;
    sty += t * y;
  });
  const det = n * stt - st * st;
  return n < 3 || det <= 0 ? undefined : (n * sty - st * sy) / det;
}

/**
 * An abnormal comparison with the trend that led to it, if the samples before the incident phase show
 * one in the direction it moved, up to where it came close to its extreme (a saturated series: up to its
 * highest point before the incident phase): its onset becomes the trend's start. Anything else is
 * returned as it is.
 */
export function withTrend<C extends Comparison>(comparison: C, points: readonly SeriesPoint[], incidentFrom: number): C & { trend?: MetricTrend } {
  if (!comparison.abnormal || comparison.flat === true) return comparison;
  const side =
    comparison.saturation !== undefined ? (comparison.saturation.direction === "up" ? 1 : -1) : comparison.extreme.value >= comparison.baseline ? 1 : -1;
  // The climb is what led to the extreme: what followed once it got there (a plateau at the limit, a
  // container killed and climbing again) is not part of it.
  const move = (comparison.extreme.value - comparison.baseline) * side;
  // A saturated climb ends at its highest point before the incident phase: a series at its limit in a
  // sawtooth of kills and restarts peaks a little higher or lower by the scrape, and how near its extreme
  // a peak counts as "there" would hang on the baseline, which moves with the moment of the page.
  const reached =
    comparison.saturation !== undefined
      ? peakBefore(points, incidentFrom, side)
      : points.find((point) => (point.value - comparison.baseline) * side >= TREND_REACHED_SHARE * move);
  const trend = trendOf(points, Math.min(incidentFrom, reached?.at ?? incidentFrom), side);
  if (trend === undefined) return comparison;
  return { ...comparison, onset: trend.since, trend };
}

/** The first of the highest (`side` 1) or lowest (−1) samples before `until`; undefined when there is none. */
function peakBefore(points: readonly SeriesPoint[], until: number, side: 1 | -1): SeriesPoint | undefined {
  let peak: SeriesPoint | undefined;
  for (const point of points) {
    if (point.at >= until) break;
    if (peak === undefined || (point.value - peak.value) * side > 0) peak = point;
  }
  return peak;
}
