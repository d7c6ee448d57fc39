import { describe, expect, it } from "vitest";
import type { Labels, TimeWindow } from "./evidence.js";
import { analyzeInstant, analyzeSeries, type Series } from "./metric-analysis.js";

const time = new Date("2026-11-21T14:08:00Z");
const window: TimeWindow = {
  start: new Date("2026-11-21T13:08:00Z"),
  time,
  end: new Date("2026-11-21T14:23:00Z"),
};
const HOUR = 3_600_000;
const JUMP = Date.parse("2026-11-21T14:05:00Z");

/** One sample every 15 s over the window, valued by `valueAt(ms)`. */
function series(labels: Labels, valueAt: (at: number) => number, range: TimeWindow = window): Series {
  const points = [];
  for (let at = range.start.getTime(); at <= range.end.getTime(); at += 15_000) points.push({ at, value: valueAt(at) });
  return { labels, points };
}
// Baseline wobbles 0.42/0.44/0.46 so that the median (0.44) and the range (0.42–0.46) differ.
const wobble = (at: number) => [0.42, 0.44, 0.46][(at / 15_000) % 3] ?? 0.44;

describe("analyzeSeries", () => {
  it("finds a 4× jump, dates it to its minute and cites the action", () => {
    const evidence = analyzeSeries([series({ service: "checkout" }, (at) => (at >= JUMP ? 1.8 : wobble(at)))], {
      action: "p99 latency",
      unit: "s",
      window,
      link: "https://prometheus.example/graph",
    });
    expect(evidence).toEqual({
      kind: "metric",
      action: "p99 latency",
      link: "https://prometheus.example/graph",
      unit: "s",
      labels: { service: "checkout" },
      seriesCount: 1,
      value: 1.8,
      baseline: 0.44,
      low: 0.42,
      high: 0.46,
      ratio: 1.8 / 0.44,
      severity: 1.8 / 0.44,
      abnormal: true,
      onset: new Date(JUMP),
      baselineMs: HOUR,
    });
  });

  it("keeps the worst of several series, identified by the labels that set it apart", () => {
    const evidence = analyzeSeries(
      [
        series({ __name__: "lat", service: "search", zone: "a" }, () => 0.3),
        series({ __name__: "lat", service: "checkout", zone: "a" }, (at) => (at >= JUMP ? 1.8 : wobble(at))),
        series({ __name__: "lat", service: "cart", zone: "a" }, (at) => (at >= JUMP ? 0.9 : 0.5)),
      ],
      { action: "p99 latency", unit: "s", window },
    );
    expect(evidence).toMatchObject({ kind: "metric", labels: { service: "checkout" }, seriesCount: 3, value: 1.8 });
  });

  it("reports a drop with the minimum and a ratio below 1", () => {
    const evidence = analyzeSeries([series({}, (at) => (at >= JUMP ? 12 : 48))], { action: "request rate", unit: "req/s", window });
    expect(evidence).toMatchObject({ kind: "metric", value: 12, baseline: 48, ratio: 0.25, severity: 4, abnormal: true, onset: new Date(JUMP) });
  });

  it("dates a change that began before the incident phase to when it began", () => {
    const early = JUMP - 20 * 60_000;
    const evidence = analyzeSeries([series({}, (at) => (at >= early ? 5 : 1))], { action: "queue depth", window });
    expect(evidence).toMatchObject({ kind: "metric", onset: new Date(early), ratio: 5 });
  });

  it("calls a flat series normal, with its usual range and no onset", () => {
    const evidence = analyzeSeries([series({ service: "checkout" }, wobble)], { action: "p99 latency", unit: "s", window });
    expect(evidence).toMatchObject({ kind: "metric", abnormal: false, value: 0.42, baseline: 0.44, low: 0.42, high: 0.46, ratio: 0.42 / 0.44 });
    expect(evidence).not.toHaveProperty("onset");
  });

  it("keeps the most changed series when none is abnormal", () => {
    const evidence = analyzeSeries(
      [series({ service: "a" }, (at) => (at >= JUMP ? 0.6 : 0.44)), series({ service: "b" }, () => 1)],
      { action: "p99 latency", unit: "s", window },
    );
    expect(evidence).toMatchObject({ kind: "metric", abnormal: false, labels: { service: "a" }, seriesCount: 2, value: 0.6 });
  });

  it("measures the baseline period from the window", () => {
    const short: TimeWindow = { start: new Date(time.getTime() - 30 * 60_000), time, end: window.end };
    expect(analyzeSeries([series({}, wobble, short)], { action: "p99 latency", window: short })).toMatchObject({ baselineMs: 30 * 60_000 });
  });

  it("says there is no data in the window, ignoring NaN samples and samples outside it", () => {
    expect(analyzeSeries([], { action: "error rate", window })).toEqual({ kind: "no-data", action: "error rate", reason: "empty" });
    expect(analyzeSeries([series({}, () => Number.NaN)], { action: "error rate", window })).toEqual({ kind: "no-data", action: "error rate", reason: "empty" });
    const outside = { labels: {}, points: [{ at: window.end.getTime() + 1, value: 1 }] };
    expect(analyzeSeries([outside], { action: "error rate", window })).toMatchObject({ reason: "empty" });
  });

  it("says when data stopped before the incident phase", () => {
    const evidence = analyzeSeries([series({}, (at) => (at < JUMP - 10 * 60_000 ? 1 : Number.NaN))], { action: "error rate", window });
    expect(evidence).toEqual({ kind: "no-data", action: "error rate", reason: "stopped", lastAt: new Date("2026-11-21T13:54:45Z") });
  });

  it("says when there is nothing before the issue to compare with, with the highest latest value", () => {
    const evidence = analyzeSeries(
      [series({ pod: "a" }, (at) => (at >= JUMP ? 3 : Number.NaN)), series({ pod: "b" }, (at) => (at >= JUMP ? 5 : Number.NaN))],
      { action: "errors", unit: "req/s", window },
    );
    expect(evidence).toEqual({ kind: "no-data", action: "errors", reason: "no-baseline", latest: 5, unit: "req/s", baselineMs: HOUR });
  });

  it("reads a rise from a zero baseline, and a fall to zero, as abnormal", () => {
    const rise = analyzeSeries([series({}, (at) => (at >= JUMP ? 0.5 : 0))], { action: "error rate", unit: "req/s", window });
    expect(rise).toMatchObject({ kind: "metric", ratio: Infinity, severity: Infinity, abnormal: true, onset: new Date(JUMP) });
    const fall = analyzeSeries([series({}, (at) => (at >= JUMP ? 0 : 40))], { action: "request rate", unit: "req/s", window });
    expect(fall).toMatchObject({ kind: "metric", ratio: 0, severity: Infinity, abnormal: true });
  });

  it("reads zero throughout as normal", () => {
    expect(analyzeSeries([series({}, () => 0)], { action: "error rate", window })).toMatchObject({ kind: "metric", ratio: 1, severity: 1, abnormal: false });
  });

  it("ignores NaN samples among real ones", () => {
    const evidence = analyzeSeries([series({}, (at) => (at % 60_000 === 0 ? Number.NaN : at >= JUMP ? 1.8 : 0.44))], { action: "p99 latency", window });
    // The 14:05:00 sample is NaN: the first real departing one is 15 s later.
    expect(evidence).toMatchObject({ kind: "metric", abnormal: true, value: 1.8, baseline: 0.44, onset: new Date(JUMP + 15_000) });
  });

  it("gives the same evidence for the same data in any series order", () => {
    const a = series({ pod: "a" }, (at) => (at >= JUMP ? 4 : 1));
    const b = series({ pod: "b" }, (at) => (at >= JUMP ? 4 : 1));
    const forward = analyzeSeries([a, b], { action: "restarts", window });
    expect(analyzeSeries([b, a], { action: "restarts", window })).toEqual(forward);
    expect(forward).toMatchObject({ labels: { pod: "a" }, seriesCount: 2 });
  });
});

describe("analyzeInstant", () => {
  it("keeps one value with its labels", () => {
    expect(analyzeInstant([{ labels: { job: "api" }, value: 0.031 }], { action: "error ratio", unit: "ratio", window })).toEqual({
      kind: "values",
      action: "error ratio",
      unit: "ratio",
      values: [{ labels: { job: "api" }, value: 0.031 }],
      count: 1,
    });
  });

  it("keeps the highest values first, NaN last, identified by their distinguishing labels", () => {
    const values = [1, 7, Number.NaN, 3, 2, 5, 4].map((value, index) => ({ labels: { job: "api", pod: `p${index}` }, value }));
    expect(analyzeInstant(values, { action: "restarts", window })).toEqual({
      kind: "values",
      action: "restarts",
      values: [7, 5, 4, 3, 2].map((value) => ({ labels: { pod: `p${values.findIndex((item) => item.value === value)}` }, value })),
      count: 7,
    });
  });

  it("says when there is no value at the issue time", () => {
    expect(analyzeInstant([], { action: "restarts", window, link: "https://x" })).toEqual({
      kind: "no-data",
      action: "restarts",
      link: "https://x",
      reason: "none-at-time",
      at: time,
    });
  });
});
