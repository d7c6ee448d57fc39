import type { LogsObservation, TimeWindow } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import type { LogPatternEvidence, MetricEvidence } from "./evidence.js";
import { readObservation } from "./observation-reading.js";
import type { Finding } from "./ranking.js";
import { judgeExecution } from "./verdict.js";

const time = new Date("2026-11-20T14:08:00Z");
const window: TimeWindow = { start: new Date("2026-11-20T13:08:00Z"), time, end: new Date("2026-11-20T14:23:00Z") };
const at = (clock: string) => new Date(`2026-11-20T${clock}Z`);

function pattern(onset: string, fields: Partial<LogPatternEvidence> = {}): Finding<LogPatternEvidence> {
  return {
    gadget: "Logs",
    evidence: {
      kind: "log-pattern",
      action: "Error logs of checkout",
      pattern: "ERROR connection pool exhausted (<num> waiting)",
      perMinute: 12,
      baselinePerMinute: 0,
      ratio: Infinity,
      severity: 40,
      abnormal: true,
      onset: at(onset),
      baselineMs: 3_600_000,
      ...fields,
    },
  };
}

const errors: Finding<MetricEvidence> = {
  gadget: "Traffic",
  evidence: {
    kind: "metric",
    action: "Error ratio of checkout",
    labels: {},
    seriesCount: 1,
    value: 0.2,
    baseline: 0.01,
    low: 0.005,
    high: 0.02,
    ratio: 20,
    severity: 19,
    abnormal: true,
    onset: at("14:03:00"),
    baselineMs: 3_600_000,
  },
};

describe("a log pattern as a cause", () => {
  // "connection pool exhausted", new in the incident and absent for an hour before, ended as no-cause.
  it("is the cause when it is new and began before every other symptom, its pattern in the detail", () => {
    const { verdict } = judgeExecution([errors, pattern("14:01:10")], { time });
    expect(verdict.conclusion).toBe("cause");
    expect(verdict.cause).toEqual({
      kind: "log-pattern",
      detail: "ERROR connection pool exhausted (<num> waiting)",
      action: "Error logs of checkout",
      onset: "2026-11-20T14:01:10.000Z",
      // A log line says what failed, not always why.
      confidence: "medium",
    });
  });

  it("is none when it grew from a baseline, or began with or after the other symptoms", () => {
    expect(judgeExecution([errors, pattern("14:01:10", { baselinePerMinute: 1, ratio: 12 })], { time }).verdict.conclusion).toBe("no-cause");
    expect(judgeExecution([errors, pattern("14:03:00")], { time }).verdict.conclusion).toBe("no-cause");
    expect(judgeExecution([errors, pattern("14:05:00")], { time }).verdict.conclusion).toBe("no-cause");
  });

  it("labels the total of every line as all lines, not with one of its patterns", () => {
    const total = pattern("14:01:10", { total: true, pattern: "INFO GET /api/cart status=<num>", ratio: 8, baselinePerMinute: 2 });
    const { verdict } = judgeExecution([errors, total], { time });
    expect(verdict.symptoms.find((symptom) => symptom.kind === "log-pattern")?.detail).toBe("all lines");
  });
});

describe("a namespace's log streams", () => {
  // Another service's burst in a namespace-wide query became the paged service's symptom.
  const observation: LogsObservation = {
    kind: "logs",
    streams: [
      { labels: { namespace: "shop", app: "checkout" }, lines: [] },
      { labels: { namespace: "shop", app: "search" }, lines: [] },
    ],
    counts: [],
  };
  for (let minute = 0; minute < 75; minute++) {
    const clock = window.start.getTime() + minute * 60_000;
    observation.streams[0]?.lines.push({ at: clock + 1000, line: `INFO checkout served order ${minute}` });
    if (minute >= 57) for (let i = 0; i < 20; i++) observation.streams[1]?.lines.push({ at: clock + 2000 + i, line: `ERROR search index ${i} unavailable` });
  }
  observation.counts = [{ at: window.start.getTime(), count: 75 + 18 * 20 }];

  it("are read for the paged service alone when the issue's attributes tell its streams apart", () => {
    const paged = readObservation(observation, { action: "Logs of shop", window, attributes: { namespace: "shop", service: "checkout" } });
    expect(paged.map((evidence) => evidence.kind === "log-pattern" && evidence.abnormal)).toEqual([false]);
    // Without attributes that tell them apart, every stream is read, and the burst is named by its stream.
    const all = readObservation(observation, { action: "Logs of shop", window, attributes: { namespace: "shop" } });
    expect(all).toMatchObject([{ kind: "log-pattern", abnormal: true, pattern: "ERROR search index <num> unavailable", labels: { app: "search" } }]);
  });
});

describe("a new pattern with few lines", () => {
  // 11_KubePodCrashLooping: its one line, "Environment variable DEPLOY_ENV is undefined", read as within the usual range.
  it("is too few to judge, however long the incident phase", () => {
    const observation: LogsObservation = {
      kind: "logs",
      streams: [{ lines: [{ at: Date.parse("2026-11-20T14:20:00Z"), line: "Environment variable DEPLOY_ENV is undefined" }] }],
      counts: [],
    };
    const long = { ...window, time: new Date("2026-11-20T13:30:00Z") };
    expect(readObservation(observation, { action: "Logs", window: long })).toMatchObject([{ kind: "no-data", reason: "too-few", count: 1 }]);
  });
});
