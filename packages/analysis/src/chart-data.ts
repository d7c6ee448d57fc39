import {
  incidentPhaseStart,
  UnreadableObservationError,
  type ChartData,
  type ChartSeries,
  type LogsObservation,
  type Observation,
  type PrometheusObservation,
} from "@pes/contracts";
import type { Evidence, Labels, LogPatternEvidence, MetricEvidence } from "./evidence.js";
import { datadogSeries } from "./observation-reading.js";
import { saturationOf, seriesOf } from "./prometheus-reading.js";
import type { ReadingContext } from "./reading-context.js";
import { median, quantile } from "./robust-statistics.js";
import { saturationCheck } from "./saturation.js";
import { USUAL_QUANTILE } from "./series-comparison.js";
import { usablePoints, type Series, type SeriesPoint } from "./series.js";

/** Points kept per series: a few hundred draw a window's shape; the extremes of each bucket are kept. */
export const MAX_CHART_POINTS = 300;
const MINUTE = 60_000;

type Point = [number, number | null];

/**
 * The chart of an action, from what its source answered and what the analysis found in it: a metric
 * finding's series (the one the finding names, or the mean of all when it was judged on the mean) with its
 * usual range before the incident phase, its onset and end, and the threshold or limit it saturates
 * against; a log finding's count of matching lines per step (every line, not one pattern's), with the
 * usual range of those counts. Nothing else is drawn (undefined): values at an instant, events, changes,
 * no data, failures. Pure, as `readObservation`: a replay of a bundle draws the same chart.
 */
export function chartOf(observation: Observation | { kind: string }, evidence: readonly Evidence[], reading: ReadingContext): ChartData | undefined {
  const [first] = evidence;
  try {
    if (first?.kind === "metric") return metricChart(observation as Observation, first, reading);
    if (first?.kind === "log-pattern" && observation.kind === "logs") return logChart(observation as LogsObservation, first, reading);
  } catch (error) {
    // The analysis read the same answer before: a part it cannot read now has nothing to draw.
    if (error instanceof UnreadableObservationError) return undefined;
    throw error;
  }
  return undefined;
}

function metricChart(observation: Observation, evidence: MetricEvidence, reading: ReadingContext): ChartData | undefined {
  const all = metricSeries(observation);
  if (all === undefined) return undefined;
  const { window } = reading;
  const start = window.start.getTime();
  const end = window.end.getTime();
  const chosen = evidence.aggregated === true ? meanOf(all, start, end) : namedSeries(all, evidence.labels, start, end);
  if (chosen === undefined) return undefined;
  const points = downsample(chosen.points.map((point): Point => [point.at, point.value]));
  const name = labelText(evidence.labels) || (evidence.aggregated === true ? `mean of ${evidence.seriesCount} series` : evidence.action);
  return {
    title: evidence.action,
    kind: "metric",
    ...(evidence.unit === undefined ? {} : { unit: evidence.unit }),
    window: windowOf(reading),
    series: [{ name, points }],
    band: { low: evidence.low, high: evidence.high, median: evidence.baseline, until: incidentPhaseStart(window).getTime() },
    ...(evidence.onset === undefined ? {} : { onset: evidence.onset.getTime() }),
    ...(evidence.endedAt === undefined ? {} : { endedAt: evidence.endedAt.getTime() }),
    ...limitOf(observation, chosen.labels, points),
    abnormal: evidence.abnormal,
  };
}

/** The series of a range answer, read when reached (a Prometheus answer is re-read from its bytes). */
function metricSeries(observation: Observation): Iterable<Series> | undefined {
  if (observation.kind === "prometheus" && observation.data.resultType === "matrix") return mapped(observation.data.result, seriesOf);
  if (observation.kind === "datadog-metrics") return observation.series.map(datadogSeries);
  return undefined;
}

/**
 * The first series, in the answer's order, that carries every label the finding names it by (its
 * identifying labels, `__name__` aside) and has samples in the window. Reading stops there.
 */
function namedSeries(all: Iterable<Series>, labels: Labels, start: number, end: number): Series | undefined {
  const wanted = Object.entries(labels);
  for (const series of all) {
    if (!wanted.every(([name, value]) => series.labels[name] === value)) continue;
    const points = usablePoints(series.points, start, end);
    if (points.length > 0) return { labels: series.labels, points };
  }
  return undefined;
}

/** The mean of every series at each instant, as the analysis judged it when no series spanned the window. */
function meanOf(all: Iterable<Series>, start: number, end: number): Series | undefined {
  const sums = new Map<number, { sum: number; count: number }>();
  let common: Labels | undefined;
  for (const series of all) {
    const points = usablePoints(series.points, start, end);
    if (points.length === 0) continue;
    common = common === undefined ? series.labels : Object.fromEntries(Object.entries(common).filter(([name, value]) => series.labels[name] === value));
    for (const { at, value } of points) {
      const sum = sums.get(at) ?? { sum: 0, count: 0 };
      sum.sum += value;
      sum.count += 1;
      sums.set(at, sum);
    }
  }
  if (common === undefined) return undefined;
  const points = [...sums].map(([at, { sum, count }]) => ({ at, value: sum / count })).sort((a, b) => a.at - b.at);
  return { labels: common, points };
}

/** The threshold, or the limit series matching the drawn series, at the drawn instants. */
function limitOf(observation: Observation, labels: Labels, points: readonly Point[]): Pick<ChartData, "limit"> {
  if (observation.kind !== "prometheus") return {};
  const { saturation } = saturationOf(observation as PrometheusObservation);
  if (saturation === undefined) return {};
  if ("threshold" in saturation) return { limit: { name: "threshold", value: saturation.threshold } };
  const check = saturationCheck(saturation, labels);
  if (check === undefined) return {};
  const limitPoints = points.map(([at]): Point => [at, check.limitAt(at) ?? null]);
  return { limit: { name: check.of ?? saturation.name, points: limitPoints } };
}

function logChart(observation: LogsObservation, evidence: LogPatternEvidence, reading: ReadingContext): ChartData | undefined {
  const { window } = reading;
  const start = window.start.getTime();
  const end = window.end.getTime();
  const counted = observation.counts.filter(({ at, count }) => at >= start && at <= end && Number.isFinite(count));
  // Without counts, the lines read per minute (a sample when the source read the latest lines only).
  const steps = counted.length > 0 ? counted.map(({ at, count }) => ({ at, value: count })) : linesPerMinute(observation, start, end);
  if (steps.length === 0) return undefined;
  steps.sort((a, b) => a.at - b.at);
  const until = incidentPhaseStart(window).getTime();
  const before = steps
    .filter(({ at }) => at < until)
    .map(({ value }) => value)
    .sort((a, b) => a - b);
  const series: ChartSeries = {
    name: counted.length > 0 ? "matching lines" : "matching lines read, per minute",
    points: downsample(steps.map(({ at, value }): Point => [at, value])),
  };
  return {
    title: evidence.action,
    kind: "log-count",
    window: windowOf(reading),
    series: [series],
    ...(before.length === 0
      ? {}
      : { band: { low: quantile(before, 1 - USUAL_QUANTILE), high: quantile(before, USUAL_QUANTILE), median: median(before), until } }),
    ...(evidence.onset === undefined ? {} : { onset: evidence.onset.getTime() }),
    abnormal: evidence.abnormal,
  };
}

function linesPerMinute(observation: LogsObservation, start: number, end: number): SeriesPoint[] {
  const buckets = new Map<number, number>();
  for (const stream of observation.streams) {
    for (const { at } of stream.lines) {
      if (at < start || at > end) continue;
      const bucket = start + Math.floor((at - start) / MINUTE) * MINUTE;
      buckets.set(bucket, (buckets.get(bucket) ?? 0) + 1);
    }
  }
  if (buckets.size === 0) return [];
  // Minutes without a line count as 0: a new pattern shows as a rise from nothing.
  const points: SeriesPoint[] = [];
  for (let at = start; at <= end; at += MINUTE) points.push({ at, value: buckets.get(at) ?? 0 });
  return points;
}

function windowOf(reading: ReadingContext): ChartData["window"] {
  const { window } = reading;
  return { start: window.start.getTime(), time: window.time.getTime(), end: window.end.getTime() };
}

/**
 * At most `max` points, in time order: the points are cut into buckets of equal count and each bucket
 * keeps its lowest and highest point (in time order), so that a spike or a dip, often the finding itself,
 * survives the cut. Fewer points are kept as they are.
 */
export function downsample(points: readonly Point[], max = MAX_CHART_POINTS): Point[] {
  if (points.length <= max) return [...points];
  const buckets = Math.floor(max / 2);
  const size = points.length / buckets;
  const kept: Point[] = [];
  for (let bucket = 0; bucket < buckets; bucket += 1) {
    const from = Math.floor(bucket * size);
    const to = Math.min(points.length, Math.floor((bucket + 1) * size));
    let low: Point | undefined;
    let high: Point | undefined;
    for (let index = from; index < to; index += 1) {
      const point = points[index] as Point;
      if (point[1] === null) continue;
      if (low === undefined || point[1] < (low[1] ?? Infinity)) low = point;
      if (high === undefined || point[1] > (high[1] ?? -Infinity)) high = point;
    }
    if (low === undefined || high === undefined) continue;
    if (low === high) kept.push(low);
    else kept.push(...(low[0] <= high[0] ? [low, high] : [high, low]));
  }
  return kept;
}

/** `pod="checkout-7d9f", node="node-2"`, as PromQL writes a selector's labels. */
function labelText(labels: Labels): string {
  return Object.entries(labels)
    .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
    .join(", ");
}

function* mapped<T, U>(items: Iterable<T>, map: (item: T) => U): Generator<U> {
  for (const item of items) yield map(item);
}
