import { describe, expect, it } from "vitest";
import type { Evidence, Labels, MetricEvidence, TimeWindow } from "./evidence.js";
import { actionResultOf, shortAnswer, symptomLevel, symptomMovement } from "./evidence-text.js";
import { analyzeInstant, analyzeSeries, type MetricContext, type Series } from "./metric-analysis.js";

const time = new Date("2026-11-21T14:08:00Z");
const window: TimeWindow = {
  start: new Date("2026-11-21T13:08:00Z"),
  time,
  end: new Date("2026-11-21T14:23:00Z"),
};
const JUMP = Date.parse("2026-11-21T14:05:00Z");

/** One sample every 15 s over the window, valued by `valueAt(ms)`. */
function series(labels: Labels, valueAt: (at: number) => number, range: TimeWindow = window): Series {
  const points = [];
  for (let at = range.start.getTime(); at <= range.end.getTime(); at += 15_000) points.push({ at, value: valueAt(at) });
  return { labels, points };
}
const wobble = (at: number) => [0.42, 0.44, 0.46][(at / 15_000) % 3] ?? 0.44;

/** The short answer of the evidence the metric analysis draws from these series. */
function answerOf(input: readonly Series[], context: Omit<MetricContext, "window"> & { window?: TimeWindow }): string {
  return shortAnswer(analyzeSeries(input, { window, ...context }), time);
}

// The expectations of the Prometheus connector's analysis, unchanged, now read from evidence.
describe("short answers of compared series", () => {
  it("a 4× jump, dated to its minute", () => {
    expect(answerOf([series({ service: "checkout" }, (at) => (at >= JUMP ? 1.8 : wobble(at)))], { action: "p99 latency", unit: "s" })).toBe(
      "p99 latency (service=checkout) 1.8 s, 4.1× its level in the hour before (440 ms), since 14:05 UTC",
    );
  });

  it("the worst of several series, by the labels that set it apart", () => {
    const input = [
      series({ __name__: "lat", service: "search", zone: "a" }, () => 0.3),
      series({ __name__: "lat", service: "checkout", zone: "a" }, (at) => (at >= JUMP ? 1.8 : wobble(at))),
      series({ __name__: "lat", service: "cart", zone: "a" }, (at) => (at >= JUMP ? 0.9 : 0.5)),
    ];
    expect(answerOf(input, { action: "p99 latency", unit: "s" })).toBe(
      "p99 latency (service=checkout) 1.8 s, 4.1× its level in the hour before (440 ms), since 14:05 UTC; worst of 3 series",
    );
  });

  it("a drop, and a change that began before the incident phase", () => {
    expect(answerOf([series({}, (at) => (at >= JUMP ? 12 : 48))], { action: "request rate", unit: "req/s" })).toBe(
      "request rate 12 req/s, 0.25× its level in the hour before (48 req/s), since 14:05 UTC",
    );
    const early = JUMP - 20 * 60_000;
    expect(answerOf([series({}, (at) => (at >= early ? 5 : 1))], { action: "queue depth" })).toBe(
      "queue depth 5, 5× its level in the hour before (1), since 13:45 UTC",
    );
  });

  it("a flat series, with its usual range", () => {
    // The value shown is the extreme that was compared: here the low end, a hair further from 440 ms.
    expect(answerOf([series({ service: "checkout" }, wobble)], { action: "p99 latency", unit: "s" })).toBe(
      "p99 latency (service=checkout) 420 ms, within its usual range (420–460 ms over the hour before)",
    );
  });

  it("a change under 2× as normal variation, as a percentage", () => {
    const input = [series({ service: "a" }, (at) => (at >= JUMP ? 0.6 : 0.44)), series({ service: "b" }, () => 1)];
    expect(answerOf(input, { action: "p99 latency", unit: "s" })).toBe(
      "p99 latency (service=a) 600 ms, 36% above its level in the hour before (440 ms), within normal variation; most changed of 2 series",
    );
  });

  it("float noise as within range, and a small step as close to its level", () => {
    const rps = (value: number) => answerOf([series({}, (at) => (at >= JUMP ? value : 50))], { action: "rps", unit: "req/s" });
    expect(rps(50.000000000000014)).toBe("rps 50 req/s, within its usual range (50 req/s over the hour before)");
    expect(rps(50.2)).toBe("rps 50.2 req/s, close to its level in the hour before (50 req/s)");
    expect(rps(35)).toBe("rps 35 req/s, 30% below its level in the hour before (50 req/s), within normal variation");
  });

  it("the baseline period as configured", () => {
    const short: TimeWindow = { start: new Date(time.getTime() - 30 * 60_000), time, end: window.end };
    expect(answerOf([series({}, wobble, short)], { action: "p99 latency", unit: "s", window: short })).toContain("over the 30 minutes before");
  });

  it("no data, saying why", () => {
    expect(answerOf([], { action: "error rate" })).toBe("error rate: no data in the window");
    expect(answerOf([series({}, () => Number.NaN)], { action: "error rate" })).toBe("error rate: no data in the window");
    expect(answerOf([series({}, (at) => (at < JUMP - 10 * 60_000 ? 1 : Number.NaN))], { action: "error rate" })).toBe("error rate: no data after 13:54 UTC");
    expect(answerOf([series({}, (at) => (at >= JUMP ? 3 : Number.NaN))], { action: "errors", unit: "req/s" })).toBe(
      "errors 3 req/s, no data in the hour before to compare with",
    );
  });

  it("from and to zero", () => {
    expect(answerOf([series({}, (at) => (at >= JUMP ? 0.5 : 0))], { action: "error rate", unit: "req/s" })).toBe(
      "error rate 0.5 req/s, up from 0 req/s in the hour before, since 14:05 UTC",
    );
    expect(answerOf([series({}, () => 0)], { action: "error rate", unit: "req/s" })).toBe(
      "error rate 0 req/s, within its usual range (0 req/s over the hour before)",
    );
    expect(answerOf([series({}, (at) => (at >= JUMP ? 0 : 40))], { action: "request rate", unit: "req/s" })).toBe(
      "request rate 0 req/s, down from 40 req/s in the hour before, since 14:05 UTC",
    );
  });

  it("NaN samples among real ones, and any series order", () => {
    expect(answerOf([series({}, (at) => (at % 60_000 === 0 ? Number.NaN : at >= JUMP ? 1.8 : 0.44))], { action: "p99 latency", unit: "s" })).toBe(
      "p99 latency 1.8 s, 4.1× its level in the hour before (440 ms), since 14:05 UTC",
    );
    const a = series({ pod: "a" }, (at) => (at >= JUMP ? 4 : 1));
    const b = series({ pod: "b" }, (at) => (at >= JUMP ? 4 : 1));
    expect(answerOf([b, a], { action: "restarts" })).toBe(answerOf([a, b], { action: "restarts" }));
    expect(answerOf([b, a], { action: "restarts" })).toMatch(/^restarts \(pod=a\) 4, .*; worst of 2 series$/);
  });
});

describe("texts of a metric name its series", () => {
  const metric = (fields: Partial<MetricEvidence>): MetricEvidence => ({
    kind: "metric",
    action: "probe success",
    labels: { instance: "api.example:443" },
    seriesCount: 3,
    value: 0,
    baseline: 1,
    low: 1,
    high: 1,
    ratio: 0,
    severity: 1000,
    abnormal: true,
    onset: new Date(JUMP),
    baselineMs: 3_600_000,
    ...fields,
  });

  it("in the short answer, the gadget's highlights and the bottom line", () => {
    const probe = metric({});
    expect(shortAnswer(probe, time)).toBe("probe success (instance=api.example:443) 0, down from 1 in the hour before, since 14:05 UTC; worst of 3 series");
    expect(symptomMovement(probe, time)).toBe("probe success (instance=api.example:443) fell to zero since 14:05 UTC");
    expect(symptomLevel(probe, "Probes", time)).toBe(
      "probe success (instance=api.example:443) down to zero from its level in the hour before (Probes), since 14:05 UTC",
    );
    // A query that aggregates everything away has no labels to name.
    expect(symptomMovement(metric({ labels: {}, seriesCount: 1 }), time)).toBe("probe success fell to zero since 14:05 UTC");
  });

  it("saturation against a limit series, and against a threshold", () => {
    const connections = metric({
      action: "connections",
      labels: { instance: "db-1:9187" },
      seriesCount: 1,
      value: 98,
      baseline: 40,
      ratio: 2.45,
      severity: 10_002.45,
      onset: new Date("2026-11-21T14:02:00Z"),
      saturation: { limit: 100, of: "max_connections", direction: "up" },
    });
    expect(shortAnswer(connections, time)).toBe(
      "connections (instance=db-1:9187) 98 of 100 (98% of its max connections), up from 40 in the hour before, since 14:02 UTC",
    );
    expect(symptomMovement(connections, time)).toBe("connections (instance=db-1:9187) at 98% of its max connections, 100, since 14:02 UTC");
    expect(symptomLevel(connections, "Database", time)).toBe(
      "connections (instance=db-1:9187) at 98 of 100, 98% of its max connections (Database), since 14:02 UTC",
    );

    const free = metric({
      action: "free space",
      unit: "bytes",
      labels: { mountpoint: "/data" },
      seriesCount: 1,
      value: 0,
      baseline: 50 * 2 ** 30,
      onset: new Date("2026-11-21T14:00:00Z"),
      saturation: { limit: 0, direction: "down" },
    });
    expect(shortAnswer(free, time)).toBe(
      "free space (mountpoint=/data) 0 B, at or below its threshold of 0 B, down from 50 GiB in the hour before, since 14:00 UTC",
    );
    expect(symptomMovement(free, time)).toBe("free space (mountpoint=/data) fell to its threshold of 0 B since 14:00 UTC");
    // The threshold is not in parentheses: the action is cited in them next.
    expect(symptomLevel(free, "Disk", time)).toBe("free space (mountpoint=/data) at 0 B, at or below its threshold of 0 B (Disk), since 14:00 UTC");

    // A value and its limit in the same unit name it once.
    const pool = { ...connections, unit: "conns", value: 100, saturation: { limit: 100, of: "max_connections", direction: "up" as const } };
    expect(shortAnswer(pool, time)).toBe(
      "connections (instance=db-1:9187) 100 of 100 conns (100% of its max connections), up from 40 conns in the hour before, since 14:02 UTC",
    );
    expect(symptomLevel(pool, "Database", time)).toBe(
      "connections (instance=db-1:9187) at 100 of 100 conns, 100% of its max connections (Database), since 14:02 UTC",
    );
  });

  it("names a limit by what it is, with its value in the series' unit, never by its query", () => {
    const memory = metric({
      action: "Memory of checkout",
      unit: "bytes",
      labels: { pod: "checkout-1" },
      seriesCount: 1,
      value: 511 * 2 ** 20,
      baseline: 300 * 2 ** 20,
      ratio: 1.7,
      severity: 10_001.7,
      onset: new Date("2026-11-21T14:02:00Z"),
      saturation: { limit: 512 * 2 ** 20, of: "container_spec_memory_limit_bytes", direction: "up" },
    });
    expect(shortAnswer(memory, time)).toBe(
      "Memory of checkout (pod=checkout-1) 511 of 512 MiB (100% of its memory limit), up from 300 MiB in the hour before, since 14:02 UTC",
    );
    expect(symptomMovement(memory, time)).toBe("Memory of checkout (pod=checkout-1) at 100% of its memory limit, 512 MiB, since 14:02 UTC");
    expect(symptomLevel(memory, "Pods", time)).toBe("Memory of checkout (pod=checkout-1) at 511 of 512 MiB, 100% of its memory limit (Pods), since 14:02 UTC");
    const named = (of: string) => symptomMovement({ ...memory, saturation: { limit: 512 * 2 ** 20, of, direction: "up" } }, time);
    expect(named("node_filesystem_size_bytes")).toBe("Memory of checkout (pod=checkout-1) at 100% of its filesystem size, 512 MiB, since 14:02 UTC");
    // No word of the name says limit: the name as it is.
    expect(named("machine_memory_bytes")).toBe("Memory of checkout (pod=checkout-1) at 100% of machine_memory_bytes, 512 MiB, since 14:02 UTC");
    // A limit query that reads no metric: named by its value alone.
    expect(named("vector(536870912)")).toBe("Memory of checkout (pod=checkout-1) at 100% of its limit, 512 MiB, since 14:02 UTC");
    const { onset: _onset, ...undated } = memory;
    expect(symptomMovement(undated, time)).toBe("Memory of checkout (pod=checkout-1) at 100% of its memory limit, 512 MiB");
  });

  it("a new log pattern appeared at a time, a grown one rose since it", () => {
    const pattern = {
      kind: "log-pattern",
      action: "Log errors",
      pattern: "panic",
      perMinute: 3,
      baselinePerMinute: 0,
      ratio: Infinity,
      severity: 90,
      abnormal: true,
      onset: new Date(JUMP),
      baselineMs: 3_600_000,
    } as const;
    expect(symptomMovement(pattern, time)).toBe('Log errors: "panic" appeared at 14:05 UTC');
    expect(symptomMovement({ ...pattern, baselinePerMinute: 0.5, ratio: 6, severity: 6 }, time)).toBe('Log errors: "panic" rose 6× since 14:05 UTC');
  });

  it("a flat line", () => {
    const stuck = metric({
      action: "queue depth",
      labels: { queue: "orders" },
      seriesCount: 1,
      value: 42,
      baseline: 40,
      low: 30,
      high: 50,
      ratio: 1.05,
      severity: 2,
      flat: true,
      onset: new Date("2026-11-21T14:03:00Z"),
    });
    expect(shortAnswer(stuck, time)).toBe("queue depth (queue=orders) 42, flat since 14:03 UTC after moving within 30–50 over the hour before");
    expect(symptomMovement(stuck, time)).toBe("queue depth (queue=orders) flat at 42 since 14:03 UTC");
    expect(symptomLevel(stuck, "Queues", time)).toBe(
      "queue depth (queue=orders) flat at 42 after moving within 30–50 in the hour before (Queues), since 14:03 UTC",
    );
  });

  it("the series left out as churn, and a mean of replaced series", () => {
    const normal = { value: 0.5, baseline: 0.5, low: 0.49, high: 0.51, ratio: 1, severity: 1, abnormal: false } as const;
    const { onset: _onset, ...base } = metric({ action: "CPU usage", labels: { pod: "checkout-a" }, seriesCount: 2, churned: 2, ...normal });
    expect(shortAnswer(base, time)).toBe(
      "CPU usage (pod=checkout-a) 0.5, within its usual range (0.49–0.51 over the hour before); most changed of 2 series, leaving out 2 that started or stopped in the window",
    );
    expect(shortAnswer({ ...base, seriesCount: 1, churned: 1 }, time)).toBe(
      "CPU usage (pod=checkout-a) 0.5, within its usual range (0.49–0.51 over the hour before); leaving out 1 series that started or stopped in the window",
    );
    const { churned: _churned, ...mean } = { ...base, labels: { app: "checkout" }, seriesCount: 4, aggregated: true };
    expect(shortAnswer(mean, time)).toBe("CPU usage (mean of 4 series: app=checkout) 0.5, within its usual range (0.49–0.51 over the hour before)");
  });

  it("at most 120 characters of labels", () => {
    const long = metric({ labels: { pod: "p".repeat(200) }, seriesCount: 1 });
    expect(shortAnswer(long, time)).toMatch(/^probe success \(pod=p{115}…\) 0, down from 1/);
  });
});

describe("short answers of instant values", () => {
  const instant = (values: Array<{ labels: Labels; value: number }>, action: string, unit?: string) =>
    shortAnswer(analyzeInstant(values, { action, window, ...(unit === undefined ? {} : { unit }) }), time);

  it("one value, several highest first, none", () => {
    expect(instant([{ labels: {}, value: 0.031 }], "error ratio", "ratio")).toBe("error ratio 3.1%");
    const values = [1, 7, Number.NaN, 3, 2, 5, 4].map((value, index) => ({ labels: { job: "api", pod: `p${index}` }, value }));
    expect(instant(values, "restarts")).toBe("restarts: 7 (pod=p1), 5 (pod=p5), 4 (pod=p6), 3 (pod=p3), 2 (pod=p4), and 2 more");
    expect(instant([], "restarts")).toBe("restarts: no data at 14:08 UTC");
  });

  it("a scalar as one value without labels, a string as the answer it is", () => {
    expect(instant([{ labels: {}, value: 2048 }], "heap", "bytes")).toBe("heap 2 KiB");
    expect(shortAnswer({ kind: "answer", action: "state", text: "ok" }, time)).toBe("state: ok");
  });
});

describe("short answers of the other kinds", () => {
  const cases: Array<[Evidence, string]> = [
    [
      { kind: "change", action: "Last deploy", change: "deploy", subject: "checkout", detail: "v1.2.3", at: new Date("2026-11-21T14:01:00Z") },
      "Last deploy: deploy of checkout to v1.2.3 at 14:01 UTC",
    ],
    [
      { kind: "change", action: "Changes", change: "config", subject: "checkout", at: new Date("2026-11-20T23:50:00Z") },
      "Changes: config change of checkout at 2026-11-20 23:50 UTC",
    ],
    [
      { kind: "change", action: "Restarts", change: "restart", subject: "pod/checkout-1", at: new Date("2026-11-21T14:06:00Z") },
      "Restarts: restart of pod/checkout-1 at 14:06 UTC",
    ],
    [
      { kind: "alert", action: "Alerts", name: "HighLatency", level: "critical", subject: "service=checkout", onset: new Date("2026-11-21T14:06:00Z") },
      "Alerts: HighLatency (critical) firing for service=checkout since 14:06 UTC",
    ],
    [{ kind: "alert", action: "Alerts", name: "HighLatency" }, "Alerts: HighLatency firing"],
    [
      {
        kind: "event",
        action: "Pod events",
        subject: "pod/checkout-1",
        reason: "OOMKilled",
        message: "memory limit",
        warning: true,
        onset: new Date("2026-11-21T14:04:00Z"),
      },
      "Pod events: OOMKilled on pod/checkout-1 at 14:04 UTC: memory limit",
    ],
    [
      {
        kind: "log-pattern",
        action: "Log errors",
        pattern: "timeout <_>",
        perMinute: 12,
        baselinePerMinute: 2,
        ratio: 6,
        severity: 6,
        abnormal: true,
        onset: new Date(JUMP),
        baselineMs: 3_600_000,
      },
      'Log errors: "timeout <_>" 12 lines/min, 6× its rate in the hour before (2 lines/min), since 14:05 UTC',
    ],
    [
      {
        kind: "log-pattern",
        action: "Log errors",
        pattern: "panic",
        perMinute: 3,
        baselinePerMinute: 0,
        ratio: Infinity,
        severity: Infinity,
        abnormal: true,
        baselineMs: 3_600_000,
      },
      'Log errors: "panic" 3 lines/min, not seen in the hour before',
    ],
    [
      {
        kind: "log-pattern",
        action: "Log errors",
        pattern: "retry",
        perMinute: 3,
        baselinePerMinute: 2,
        ratio: 1.5,
        severity: 1.5,
        abnormal: false,
        baselineMs: 3_600_000,
      },
      'Log errors: "retry" 3 lines/min, within normal variation of its rate in the hour before (2 lines/min)',
    ],
    [{ kind: "failed", action: "Deploy status", reason: "timed out after 15 s" }, "Deploy status: timed out after 15 s"],
    [{ kind: "skipped", action: "Pods of {{pod}}", missing: ["pod"] }, "Pods of {{pod}}: not run, the issue has no attribute pod"],
    [{ kind: "skipped", action: "Hosts", missing: ["host", "zone"] }, "Hosts: not run, the issue has no attributes host, zone"],
  ];
  it.each(cases)("%o", (evidence, expected) => {
    expect(shortAnswer(evidence, time)).toBe(expected);
  });

  it("cuts a long answer to 300 characters", () => {
    const answer = shortAnswer({ kind: "answer", action: "Last deploy", text: "v".repeat(400) }, time);
    expect(answer).toHaveLength(300);
    expect(answer.startsWith("Last deploy: vvv")).toBe(true);
  });
});

describe("actionResultOf", () => {
  it("is the action's title, short answer and link", () => {
    expect(
      actionResultOf({ kind: "answer", action: "Last deploy of checkout", text: "v1.2.3 at 14:01 UTC", link: "http://api/deploys/checkout" }, time),
    ).toEqual({
      title: "Last deploy of checkout",
      shortAnswer: "Last deploy of checkout: v1.2.3 at 14:01 UTC",
      mostImportantLink: "http://api/deploys/checkout",
    });
    expect(actionResultOf({ kind: "failed", action: "throws", reason: "failed unexpectedly (details in the worker log)" }, time)).toEqual({
      title: "throws",
      shortAnswer: "throws: failed unexpectedly (details in the worker log)",
    });
  });
});
