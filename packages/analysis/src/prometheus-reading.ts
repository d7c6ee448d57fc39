import type { PrometheusMatrixSeries, PrometheusObservation, PrometheusVectorSample } from "@pes/contracts";
import type { Evidence } from "./evidence.js";
import { analyzeInstant, analyzeSeries, compactLimit, type InstantValue, type MetricContext } from "./metric-analysis.js";
import type { SaturationRule } from "./saturation.js";
import type { Series } from "./series.js";
import type { ReadingContext } from "./reading-context.js";

/**
 * A Prometheus answer as evidence: a range compared with the level before the issue (`analyzeSeries`),
 * each series also judged against its limit or threshold when the action declares one; instant values
 * and scalars as they are; a string as an answer. The series are read one at a time and not kept, so a
 * worker reading a large answer from its bytes never holds it whole.
 */
export function readPrometheus(observation: PrometheusObservation, reading: ReadingContext): Evidence {
  const { data } = observation;
  const context: MetricContext = {
    action: reading.action,
    window: reading.window,
    ...(observation.unit === undefined ? {} : { unit: observation.unit }),
    ...(reading.link === undefined ? {} : { link: reading.link }),
    ...(observation.direction === undefined ? {} : { direction: observation.direction }),
    ...saturationOf(observation),
  };
  switch (data.resultType) {
    case "matrix":
      return analyzeSeries(mapped(data.result, seriesOf), context);
    case "vector":
      // One sample per series: small even when there are many, and its analysis sorts them.
      return analyzeInstant([...data.result].flatMap(instantValueOf), context);
    case "scalar":
      return analyzeInstant([{ labels: {}, value: sampleValue(data.result[1]) }], context);
    case "string":
      return { kind: "answer", action: reading.action, text: data.result[1], ...(reading.link === undefined ? {} : { link: reading.link }) };
  }
}

/** What the action's series saturate against, read from its observation (its `threshold` or `limit` answer). */
export function saturationOf(observation: PrometheusObservation): { saturation?: SaturationRule } {
  const direction = observation.direction ?? "up";
  if (observation.limit !== undefined) {
    // A limit rarely moves: each of its series is reduced to its changes as it is read.
    const limits = Array.from(observation.limit.result, (series) => compactLimit(seriesOf(series)));
    return { saturation: { direction, limits, name: observation.limit.name } };
  }
  return observation.threshold === undefined ? {} : { saturation: { direction, threshold: observation.threshold } };
}

/** A range answer's series as the analysis reads it: its labels and its samples in ms. */
export function seriesOf(series: PrometheusMatrixSeries): Series {
  return { labels: series.metric, points: series.values.map(([seconds, value]) => ({ at: seconds * 1000, value: sampleValue(value) })) };
}

/** A vector sample's value; none for a sample without one (a native-histogram-only series). */
function instantValueOf(sample: PrometheusVectorSample): InstantValue[] {
  return sample.value === undefined ? [] : [{ labels: sample.metric, value: sampleValue(sample.value[1]) }];
}

/** A sample's value: Prometheus writes "+Inf" and "-Inf", which Number() reads as NaN. */
function sampleValue(text: string): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  return Number(text);
}

/** Each item as `map` makes it, when it is reached: a series is converted only when the analysis gets to it. */
function* mapped<T, U>(items: Iterable<T>, map: (item: T) => U): Generator<U> {
  for (const item of items) yield map(item);
}
