import type { Labels, MetricEvidence, NoDataEvidence, TimeWindow, ValuesEvidence } from "./evidence.js";

/** A value this many times its baseline (or this fraction of it, inverted) is abnormal. */
export const ABNORMAL_RATIO = 2;
/** The incident phase starts this long before the issue time: alerts fire after the change began. */
export const INCIDENT_LEAD_MS = 5 * 60_000;
/** Instant values listed at most; the evidence counts the rest. */
export const MAX_LISTED_VALUES = 5;

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

/** One series' value at an instant. */
export interface InstantValue {
  labels: Labels;
  value: number;
}

export interface MetricContext {
  /** The action's title: the evidence cites it. */
  action: string;
  unit?: string;
  window: TimeWindow;
  /** The action's most important link, carried into the evidence. */
  link?: string;
}

interface SeriesFinding {
  labels: Labels;
  /** Canonical label text: ties are broken by it so that the same data always gives the same evidence. */
  key: string;
  baseline: number;
  low: number;
  high: number;
  extreme: SeriesPoint;
  ratio: number;
  deviation: number;
  onset?: Date;
}

/**
 * Compares each series' incident phase with its baseline and returns the series that moved most, or
 * why nothing could be compared.
 *
 * - baseline: the median of the series in [start, time − 5 min) (robust to a spike or two);
 * - incident: the extreme in [time − 5 min, end]: the maximum if it rose, the minimum if it fell,
 *   whichever is further from the baseline;
 * - abnormal when incident/baseline ≥ 2 or ≤ 0.5 (a baseline of 0 with any other value counts too);
 * - onset: the first departing sample from the incident phase on, extended back over the unbroken run of
 *   departing samples it belongs to (a change that began before time − 5 min is dated when it began).
 * NaN and ±Inf samples and samples outside the window are ignored; a series with nothing to compare is
 * left out. No data: `empty` (nothing in the window), `stopped` (nothing from the incident phase on),
 * `no-baseline` (nothing before it). Deterministic: the order of the series does not matter. The series
 * are read once, in order, and not kept: a connector may hand them over one at a time (a generator), so
 * that a large answer is never held whole.
 */
export function analyzeSeries(series: Iterable<Series>, context: MetricContext): MetricEvidence | NoDataEvidence {
  const { window, action, unit, link } = context;
  const cited = { action, ...(link === undefined ? {} : { link }) };
  const start = window.start.getTime();
  const end = window.end.getTime();
  const baselineMs = window.time.getTime() - start;
  const lead = Math.min(INCIDENT_LEAD_MS, baselineMs / 2);
  const incidentFrom = window.time.getTime() - lead;

  const findings: SeriesFinding[] = [];
  const withoutBaseline: Array<{ key: string; latest: SeriesPoint }> = [];
  let lastSeen: SeriesPoint | undefined;
  for (const item of series) {
    const points = item.points.filter((point) => Number.isFinite(point.value) && point.at >= start && point.at <= end).sort((a, b) => a.at - b.at);
    const before = points.filter((point) => point.at < incidentFrom);
    const during = points.filter((point) => point.at >= incidentFrom);
    const latest = points[points.length - 1];
    if (latest !== undefined && (lastSeen === undefined || latest.at > lastSeen.at)) lastSeen = latest;
    const key = labelKey(item.labels);
    if (during.length === 0) continue;
    if (before.length === 0) {
      const last = during[during.length - 1];
      if (last !== undefined) withoutBaseline.push({ key, latest: last });
      continue;
    }
    findings.push(compare(item.labels, key, points, before, during, incidentFrom));
  }

  if (findings.length === 0) {
    const first = withoutBaseline.sort((a, b) => b.latest.value - a.latest.value || compareText(a.key, b.key))[0];
    if (first !== undefined) {
      return { kind: "no-data", ...cited, reason: "no-baseline", latest: first.latest.value, ...(unit === undefined ? {} : { unit }), baselineMs };
    }
    if (lastSeen !== undefined) return { kind: "no-data", ...cited, reason: "stopped", lastAt: new Date(lastSeen.at) };
    return { kind: "no-data", ...cited, reason: "empty" };
  }

  findings.sort((a, b) => b.deviation - a.deviation || compareText(a.key, b.key));
  const worst = findings[0] as SeriesFinding;
  const identify = identifyingLabels(findings.map((finding) => finding.labels));
  return {
    kind: "metric",
    ...cited,
    ...(unit === undefined ? {} : { unit }),
    labels: identify(worst.labels),
    seriesCount: findings.length,
    value: worst.extreme.value,
    baseline: worst.baseline,
    low: worst.low,
    high: worst.high,
    ratio: worst.ratio,
    severity: worst.deviation,
    abnormal: worst.deviation >= ABNORMAL_RATIO,
    ...(worst.onset === undefined ? {} : { onset: worst.onset }),
    baselineMs,
  };
}

/**
 * Instant values, highest first (NaN last), each named by the labels that set its series apart; at most
 * MAX_LISTED_VALUES are kept, with the count of all. An instant has no baseline, so it is never abnormal.
 */
export function analyzeInstant(values: readonly InstantValue[], context: MetricContext): ValuesEvidence | NoDataEvidence {
  const { window, action, unit, link } = context;
  const cited = { action, ...(link === undefined ? {} : { link }) };
  if (values.length === 0) return { kind: "no-data", ...cited, reason: "none-at-time", at: window.time };
  const sorted = values
    .map((item) => ({ ...item, key: labelKey(item.labels) }))
    .sort((a, b) => compareValues(b.value, a.value) || compareText(a.key, b.key));
  const identify = identifyingLabels(sorted.map((item) => item.labels));
  return {
    kind: "values",
    ...cited,
    ...(unit === undefined ? {} : { unit }),
    values: sorted.slice(0, MAX_LISTED_VALUES).map((item) => ({ labels: identify(item.labels), value: item.value })),
    count: sorted.length,
  };
}

function compare(
  labels: Labels,
  key: string,
  points: readonly SeriesPoint[],
  before: readonly SeriesPoint[],
  during: readonly SeriesPoint[],
  incidentFrom: number,
): SeriesFinding {
  const sortedBefore = before.map((point) => point.value).sort((a, b) => a - b);
  const baseline = median(sortedBefore);
  let highest = during[0] as SeriesPoint;
  let lowest = during[0] as SeriesPoint;
  for (const point of during) {
    if (point.value > highest.value) highest = point;
    if (point.value < lowest.value) lowest = point;
  }
  const rise = ratioOf(highest.value, baseline);
  const fall = ratioOf(lowest.value, baseline);
  const rose = deviationOf(rise) >= deviationOf(fall);
  const extreme = rose ? highest : lowest;
  const ratio = rose ? rise : fall;
  const deviation = deviationOf(ratio);
  const finding: SeriesFinding = {
    labels,
    key,
    baseline,
    low: sortedBefore[0] ?? baseline,
    high: sortedBefore[sortedBefore.length - 1] ?? baseline,
    extreme,
    ratio,
    deviation,
  };
  if (deviation < ABNORMAL_RATIO) return finding;

  const departs = (point: SeriesPoint) =>
    deviationOf(ratioOf(point.value, baseline)) >= ABNORMAL_RATIO &&
    Math.sign(point.value - baseline) === Math.sign(extreme.value - baseline);
  let index = points.findIndex((point) => point.at >= incidentFrom && departs(point));
  while (index > 0 && departs(points[index - 1] as SeriesPoint)) index -= 1;
  const first = points[index];
  return first === undefined ? finding : { ...finding, onset: new Date(first.at) };
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

function median(sorted: readonly number[]): number {
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length % 2 === 1) return sorted[middle] ?? Number.NaN;
  return ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2;
}

function labelKey(labels: Labels): string {
  return Object.keys(labels)
    .sort(compareText)
    .map((name) => `${name}=${labels[name] ?? ""}`)
    .join(", ");
}

/**
 * The labels that identify each series among `all`: those whose values differ between the series (a
 * missing label counts as different), so that a name says what sets it apart. A series that has none of
 * them, or that is alone, keeps all of its labels.
 */
function identifyingLabels(all: readonly Labels[]): (labels: Labels) => Labels {
  if (all.length < 2) return (labels) => labels;
  const names = new Set(all.flatMap((labels) => Object.keys(labels)));
  const distinguishing = [...names].filter((name) => new Set(all.map((labels) => labels[name])).size > 1);
  return (labels) => {
    const shown = distinguishing.filter((name) => labels[name] !== undefined);
    return shown.length === 0 ? labels : Object.fromEntries(shown.map((name) => [name, labels[name] ?? ""]));
  };
}

function compareValues(a: number, b: number): number {
  // NaN sorts below every number so that real values are listed first.
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : -1;
  if (Number.isNaN(b)) return 1;
  return a === b ? 0 : a < b ? -1 : 1;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
