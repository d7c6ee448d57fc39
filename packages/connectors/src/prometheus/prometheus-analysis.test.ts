import { describe, expect, it } from "vitest";
import type { TimeWindow } from "../connector.js";
import { analyzeMatrix, analyzeQueryData, analyzeVector } from "./prometheus-analysis.js";
import type { PrometheusMatrixSeries } from "./prometheus-response.js";

const time = new Date("2026-11-21T14:08:00Z");
const window: TimeWindow = {
  start: new Date("2026-11-21T13:08:00Z"),
  time,
  end: new Date("2026-11-21T14:23:00Z"),
};
const JUMP = Date.parse("2026-11-21T14:05:00Z") / 1000;

/** One sample every 15 s over the window, valued by `valueAt(unix seconds)`. */
function series(metric: Record<string, string>, valueAt: (t: number) => number | string, range = window): PrometheusMatrixSeries {
  const values: Array<[number, string]> = [];
  for (let t = range.start.getTime() / 1000; t <= range.end.getTime() / 1000; t += 15) {
    values.push([t, String(valueAt(t))]);
  }
  return { metric, values };
}
// Baseline wobbles 0.42/0.44/0.46 so that the median (0.44) and the range (0.42–0.46) differ.
const wobble = (t: number) => [0.42, 0.44, 0.46][(t / 15) % 3] ?? 0.44;

describe("analyzeMatrix", () => {
  it("finds a 4× jump and dates it to its minute", () => {
    const result = analyzeMatrix([series({ service: "checkout" }, (t) => (t >= JUMP ? 1.8 : wobble(t)))], {
      title: "p99 latency",
      unit: "s",
      window,
    });
    expect(result).toEqual({
      status: "abnormal",
      shortAnswer: "p99 latency 1.8 s, 4.1× its level in the hour before (440 ms), since 14:05 UTC",
      severity: 1.8 / 0.44,
      ratio: 1.8 / 0.44,
      since: new Date(JUMP * 1000),
    });
  });

  it("names the worst of several series by the labels that set it apart", () => {
    const result = analyzeMatrix(
      [
        series({ __name__: "lat", service: "search", zone: "a" }, () => 0.3),
        series({ __name__: "lat", service: "checkout", zone: "a" }, (t) => (t >= JUMP ? 1.8 : wobble(t))),
        series({ __name__: "lat", service: "cart", zone: "a" }, (t) => (t >= JUMP ? 0.9 : 0.5)),
      ],
      { title: "p99 latency", unit: "s", window },
    );
    expect(result.shortAnswer).toBe(
      "p99 latency 1.8 s, 4.1× its level in the hour before (440 ms), since 14:05 UTC; worst of 3 series: service=checkout",
    );
  });

  it("reports a drop with the minimum and a ratio below 1", () => {
    const result = analyzeMatrix([series({}, (t) => (t >= JUMP ? 12 : 48))], { title: "request rate", unit: "req/s", window });
    expect(result).toMatchObject({
      status: "abnormal",
      shortAnswer: "request rate 12 req/s, 0.25× its level in the hour before (48 req/s), since 14:05 UTC",
      severity: 4,
      ratio: 0.25,
    });
  });

  it("dates a change that began before the incident phase to when it began", () => {
    const early = JUMP - 20 * 60;
    const result = analyzeMatrix([series({}, (t) => (t >= early ? 5 : 1))], { title: "queue depth", window });
    expect(result.since).toEqual(new Date(early * 1000));
    expect(result.shortAnswer).toBe("queue depth 5, 5× its level in the hour before (1), since 13:45 UTC");
  });

  it("calls a flat series normal and shows its usual range", () => {
    const result = analyzeMatrix([series({ service: "checkout" }, wobble)], { title: "p99 latency", unit: "s", window });
    expect(result).toEqual({
      status: "normal",
      // The value shown is the extreme that was compared: here the low end, a hair further from 440 ms.
      shortAnswer: "p99 latency 420 ms, within its usual range (420–460 ms over the hour before)",
      ratio: 0.42 / 0.44,
    });
  });

  it("calls a change under 2× normal variation, as a percentage", () => {
    const result = analyzeMatrix(
      [series({ service: "a" }, (t) => (t >= JUMP ? 0.6 : 0.44)), series({ service: "b" }, () => 1)],
      { title: "p99 latency", unit: "s", window },
    );
    expect(result.status).toBe("normal");
    expect(result.shortAnswer).toBe(
      "p99 latency 600 ms, 36% above its level in the hour before (440 ms), within normal variation; most changed of 2 series: service=a",
    );
  });

  it("reads float noise as within range, and a small step as close to its level", () => {
    const noisy = analyzeMatrix([series({}, (t) => (t >= JUMP ? 50.000000000000014 : 50))], { title: "rps", unit: "req/s", window });
    expect(noisy.shortAnswer).toBe("rps 50 req/s, within its usual range (50 req/s over the hour before)");
    const step = analyzeMatrix([series({}, (t) => (t >= JUMP ? 50.2 : 50))], { title: "rps", unit: "req/s", window });
    expect(step.shortAnswer).toBe("rps 50.2 req/s, close to its level in the hour before (50 req/s)");
    const fall = analyzeMatrix([series({}, (t) => (t >= JUMP ? 35 : 50))], { title: "rps", unit: "req/s", window });
    expect(fall.shortAnswer).toBe("rps 35 req/s, 30% below its level in the hour before (50 req/s), within normal variation");
  });

  it("says the baseline period as configured", () => {
    const short: TimeWindow = { start: new Date(time.getTime() - 30 * 60_000), time, end: window.end };
    const result = analyzeMatrix([series({}, wobble, short)], { title: "p99 latency", unit: "s", window: short });
    expect(result.shortAnswer).toContain("over the 30 minutes before");
  });

  it("treats no data as normal, saying so", () => {
    expect(analyzeMatrix([], { title: "error rate", window })).toEqual({
      status: "normal",
      shortAnswer: "error rate: no data in the window",
    });
    expect(analyzeMatrix([series({}, () => "NaN")], { title: "error rate", window })).toEqual({
      status: "normal",
      shortAnswer: "error rate: no data in the window",
    });
  });

  it("says when data stopped before the incident phase", () => {
    const result = analyzeMatrix([series({}, (t) => (t < JUMP - 10 * 60 ? 1 : "NaN"))], { title: "error rate", window });
    expect(result).toEqual({ status: "normal", shortAnswer: "error rate: no data after 13:54 UTC" });
  });

  it("says when there is nothing before the issue to compare with", () => {
    const result = analyzeMatrix([series({}, (t) => (t >= JUMP ? 3 : "NaN"))], { title: "errors", unit: "req/s", window });
    expect(result).toEqual({ status: "normal", shortAnswer: "errors 3 req/s, no data in the hour before to compare with" });
  });

  it("reads a rise from a zero baseline as abnormal", () => {
    const result = analyzeMatrix([series({}, (t) => (t >= JUMP ? 0.5 : 0))], { title: "error rate", unit: "req/s", window });
    expect(result).toEqual({
      status: "abnormal",
      shortAnswer: "error rate 0.5 req/s, up from 0 req/s in the hour before, since 14:05 UTC",
      severity: Infinity,
      ratio: Infinity,
      since: new Date(JUMP * 1000),
    });
  });

  it("reads zero throughout as normal", () => {
    const result = analyzeMatrix([series({}, () => 0)], { title: "error rate", unit: "req/s", window });
    expect(result).toEqual({ status: "normal", shortAnswer: "error rate 0 req/s, within its usual range (0 req/s over the hour before)", ratio: 1 });
  });

  it("reads a fall to zero as abnormal", () => {
    const result = analyzeMatrix([series({}, (t) => (t >= JUMP ? 0 : 40))], { title: "request rate", unit: "req/s", window });
    expect(result).toMatchObject({ status: "abnormal", ratio: 0, severity: Infinity });
    expect(result.shortAnswer).toBe("request rate 0 req/s, down from 40 req/s in the hour before, since 14:05 UTC");
  });

  it("ignores NaN samples among real ones", () => {
    const result = analyzeMatrix([series({}, (t) => (t % 60 === 0 ? "NaN" : t >= JUMP ? 1.8 : 0.44))], {
      title: "p99 latency",
      unit: "s",
      window,
    });
    expect(result.status).toBe("abnormal");
    expect(result.shortAnswer).toBe("p99 latency 1.8 s, 4.1× its level in the hour before (440 ms), since 14:05 UTC");
  });

  it("gives the same answer for the same data in any series order", () => {
    const a = series({ pod: "a" }, (t) => (t >= JUMP ? 4 : 1));
    const b = series({ pod: "b" }, (t) => (t >= JUMP ? 4 : 1));
    const forward = analyzeMatrix([a, b], { title: "restarts", window });
    const backward = analyzeMatrix([b, a], { title: "restarts", window });
    expect(backward).toEqual(forward);
    expect(forward.shortAnswer).toContain("worst of 2 series: pod=a");
  });
});

describe("analyzeVector and other result types", () => {
  it("reports one value", () => {
    expect(analyzeVector([{ metric: {}, value: [1, "0.031"] }], { title: "error ratio", unit: "ratio", window })).toEqual({
      status: "normal",
      shortAnswer: "error ratio 3.1%",
    });
  });

  it("lists several values, highest first, by their distinguishing labels", () => {
    const samples = ["1", "7", "NaN", "3", "2", "5", "4"].map((value, index) => ({
      metric: { job: "api", pod: `p${index}` },
      value: [1, value] as [number, string],
    }));
    expect(analyzeVector(samples, { title: "restarts", window }).shortAnswer).toBe(
      "restarts: 7 (pod=p1), 5 (pod=p5), 4 (pod=p6), 3 (pod=p3), 2 (pod=p4), and 2 more",
    );
  });

  it("says when there is no value at the issue time", () => {
    expect(analyzeVector([], { title: "restarts", window }).shortAnswer).toBe("restarts: no data at 14:08 UTC");
  });

  it("reads scalars and strings", () => {
    expect(analyzeQueryData({ resultType: "scalar", result: [1, "2048"] }, { title: "heap", unit: "bytes", window }).shortAnswer).toBe("heap 2 KiB");
    expect(analyzeQueryData({ resultType: "string", result: [1, "ok"] }, { title: "state", window }).shortAnswer).toBe("state: ok");
  });
});
