import type { LogsObservation, Observation, PrometheusMatrixSeries, TimeWindow } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { chartOf, downsample, MAX_CHART_POINTS } from "./chart-data.js";
import { readObservation } from "./observation-reading.js";

const window: TimeWindow = {
  start: new Date("2026-11-21T13:08:00Z"),
  time: new Date("2026-11-21T14:08:00Z"),
  end: new Date("2026-11-21T14:23:00Z"),
};
const JUMP = Date.parse("2026-11-21T14:05:00Z");
const reading = { action: "Connections of orders-db", window };

/** A range answer's series: one sample every 15 s over the window (Prometheus writes values as text). */
function matrixSeries(metric: Record<string, string>, valueAt: (at: number) => number): PrometheusMatrixSeries {
  const values: [number, string][] = [];
  for (let at = window.start.getTime(); at <= window.end.getTime(); at += 15_000) values.push([at / 1000, String(valueAt(at))]);
  return { metric, values };
}

const wobble = (at: number) => [40, 44, 48][(at / 15_000) % 3] ?? 44;

/** What the analysis reads of it, then the chart of the same answer. */
function readAndDraw(observation: Observation) {
  const evidence = readObservation(observation, reading);
  return { evidence, chart: chartOf(observation, evidence, reading) };
}

describe("chartOf", () => {
  it("draws the series a metric finding names, with its usual range, onset and limit, from the points already fetched", () => {
    const limit = [matrixSeries({ __name__: "pg_settings_max_connections", instance: "db-1" }, () => 100)];
    const observation: Observation = {
      kind: "prometheus",
      unit: "connections",
      data: {
        resultType: "matrix",
        result: [
          matrixSeries({ __name__: "pg_connections", instance: "db-2" }, () => 10),
          matrixSeries({ __name__: "pg_connections", instance: "db-1" }, (at) => (at >= JUMP ? 99 : wobble(at))),
        ],
      },
      limit: { name: "pg_settings_max_connections", result: limit },
    };
    const { evidence, chart } = readAndDraw(observation);
    const [finding] = evidence;
    if (finding?.kind !== "metric") throw new Error(`expected a metric finding, got ${finding?.kind}`);

    expect(chart).toMatchObject({
      title: "Connections of orders-db",
      kind: "metric",
      unit: "connections",
      window: { start: window.start.getTime(), time: window.time.getTime(), end: window.end.getTime() },
      band: { low: 40, high: 48, median: 44, until: Date.parse("2026-11-21T14:03:00Z") },
      onset: finding.onset?.getTime(),
      abnormal: true,
    });
    const [series] = chart?.series ?? [];
    expect(series?.name).toBe('instance="db-1"');
    // The window holds 301 samples: cut to at most MAX_CHART_POINTS, keeping the peak.
    expect(series?.points.length).toBeLessThanOrEqual(MAX_CHART_POINTS);
    expect(Math.max(...(series?.points ?? []).map(([, value]) => value ?? 0))).toBe(99);
    expect(series?.points.every(([at]) => at >= window.start.getTime() && at <= window.end.getTime())).toBe(true);
    expect(chart?.limit?.name).toBe("pg_settings_max_connections");
    expect(new Set(chart?.limit?.points?.map(([, value]) => value))).toEqual(new Set([100]));
  });

  it("draws a threshold as a value, and the mean when the finding was judged on the mean of series that came and went", () => {
    const half = window.start.getTime() + (window.end.getTime() - window.start.getTime()) / 2;
    const observation: Observation = {
      kind: "prometheus",
      threshold: 0.9,
      data: {
        resultType: "matrix",
        result: [
          { metric: { pod: "a" }, values: matrixSeries({}, () => 0.5).values.filter(([seconds]) => seconds * 1000 < half) },
          { metric: { pod: "b" }, values: matrixSeries({}, () => 0.7).values.filter(([seconds]) => seconds * 1000 >= half) },
        ],
      },
    };
    const { evidence, chart } = readAndDraw(observation);
    expect(evidence[0]).toMatchObject({ kind: "metric", aggregated: true });
    expect(chart?.limit).toEqual({ name: "threshold", value: 0.9 });
    expect(chart?.series[0]?.name).toBe("mean of 2 series");
    expect(new Set(chart?.series[0]?.points.map(([, value]) => value))).toEqual(new Set([0.5, 0.7]));
  });

  it("draws a log finding as the count of matching lines per step, with the usual range of the counts", () => {
    const counts = [];
    for (let at = window.start.getTime(); at < window.end.getTime(); at += 60_000) counts.push({ at, count: at >= JUMP ? 120 : 4 });
    const lines = counts.filter(({ at }) => at >= JUMP).map(({ at }) => ({ at, line: `level=error msg="price lookup failed" order=${at}` }));
    const observation: LogsObservation = { kind: "logs", streams: [{ labels: { app: "checkout" }, lines }], counts };
    const { evidence, chart } = readAndDraw(observation);
    expect(evidence[0]).toMatchObject({ kind: "log-pattern", abnormal: true });
    expect(chart).toMatchObject({ kind: "log-count", series: [{ name: "matching lines" }], band: { low: 4, high: 4, median: 4 }, abnormal: true });
    expect(chart?.series[0]?.points).toHaveLength(counts.length);
    expect(chart?.onset).toBe(evidence[0]?.kind === "log-pattern" ? evidence[0].onset?.getTime() : undefined);
  });

  it("draws nothing that is not a series: values at an instant, a failure", () => {
    const instant: Observation = { kind: "prometheus", data: { resultType: "vector", result: [{ metric: {}, value: [1, "3"] }] } };
    expect(readAndDraw(instant).chart).toBeUndefined();
    expect(readAndDraw({ kind: "failed", reason: "timed out" }).chart).toBeUndefined();
  });
});

describe("downsample", () => {
  it("keeps every point of a short series and the extremes of each bucket of a long one, in time order", () => {
    expect(
      downsample(
        [
          [1, 1],
          [2, null],
          [3, 3],
        ],
        10,
      ),
    ).toEqual([
      [1, 1],
      [2, null],
      [3, 3],
    ]);
    const long = Array.from({ length: 1_000 }, (_, index): [number, number] => [index, index === 501 ? 1_000 : index === 777 ? -5 : 1]);
    const kept = downsample(long, 100);
    expect(kept.length).toBeLessThanOrEqual(100);
    expect(kept.map(([, value]) => value)).toEqual(expect.arrayContaining([1_000, -5]));
    expect(kept.map(([at]) => at)).toEqual([...kept.map(([at]) => at)].sort((a, b) => a - b));
  });
});
