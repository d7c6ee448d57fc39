import { describe, expect, it } from "vitest";
import type { Labels, TimeWindow } from "./evidence.js";
import { analyzeInstant, analyzeSeries, compactLimit, MAX_MOVE_SEVERITY, SATURATION_SEVERITY, type MetricContext, type Series } from "./metric-analysis.js";
import { rankFindings } from "./ranking.js";

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
    const evidence = analyzeSeries([series({ service: "a" }, (at) => (at >= JUMP ? 0.6 : 0.44)), series({ service: "b" }, () => 1)], {
      action: "p99 latency",
      unit: "s",
      window,
    });
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
    const evidence = analyzeSeries([series({ pod: "a" }, (at) => (at >= JUMP ? 3 : Number.NaN)), series({ pod: "b" }, (at) => (at >= JUMP ? 5 : Number.NaN))], {
      action: "errors",
      unit: "req/s",
      window,
    });
    expect(evidence).toEqual({ kind: "no-data", action: "errors", reason: "no-baseline", latest: 5, unit: "req/s", baselineMs: HOUR });
  });

  it("reads a rise from a zero baseline, and a fall to zero, as abnormal", () => {
    const rise = analyzeSeries([series({}, (at) => (at >= JUMP ? 0.5 : 0))], { action: "error rate", unit: "req/s", window });
    expect(rise).toMatchObject({ kind: "metric", ratio: Infinity, severity: MAX_MOVE_SEVERITY, abnormal: true, onset: new Date(JUMP) });
    const fall = analyzeSeries([series({}, (at) => (at >= JUMP ? 0 : 40))], { action: "request rate", unit: "req/s", window });
    expect(fall).toMatchObject({ kind: "metric", ratio: 0, severity: MAX_MOVE_SEVERITY, abnormal: true });
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

/** Deterministic noise in [-1, 1] for an instant and a seed (a hash, so that every run sees the same data). */
function noise(at: number, seed = 1): number {
  let x = Math.imul((at / 15_000) ^ (seed * 0x9e3779b1), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (((x ^ (x >>> 16)) >>> 0) / 0xffffffff) * 2 - 1;
}
const at = (clock: string) => Date.parse(`2026-11-21T${clock}:00Z`);

describe("analyzeSeries judges a move against the baseline's noise", () => {
  it("does not call a move of 2.2× abnormal when it is under 5 noise deviations of a noisy baseline", () => {
    // Level 1 ± 0.4 (uniform: 1.4826 × MAD ≈ 0.3): 2.2 is 2.2× the median but 4 noise deviations away.
    const evidence = analyzeSeries([series({}, (t) => (t === JUMP ? 2.2 : 1 + 0.4 * noise(t)))], { action: "queue depth", window });
    expect(evidence).toMatchObject({ kind: "metric", abnormal: false, value: 2.2 });
    expect(evidence.kind === "metric" && evidence.ratio).toBeGreaterThan(2);
  });

  it("finds a jump out of noise, dated to its minute", () => {
    const evidence = analyzeSeries([series({}, (t) => (t >= JUMP ? 6 : 1) + 0.3 * noise(t))], { action: "queue depth", window });
    expect(evidence).toMatchObject({ kind: "metric", abnormal: true, onset: new Date(JUMP) });
  });

  it("does not call a tiny wiggle of a flat, noiseless baseline abnormal", () => {
    const evidence = analyzeSeries([series({}, (t) => (t >= JUMP && t < JUMP + 60_000 ? 100.5 : 100))], { action: "connections", window });
    expect(evidence).toMatchObject({ kind: "metric", abnormal: false, value: 100.5 });
    expect(evidence).not.toHaveProperty("onset");
  });

  it("does not call a blip the sparse baseline had too abnormal, but a larger level is", () => {
    // Errors at 0, with 5-minute blips of 0.02 every 20 minutes (rate() over a lone error).
    const blips = (t: number) => ((t - window.start.getTime()) % (20 * 60_000) < 5 * 60_000 ? 0.02 : 0);
    const same = analyzeSeries([series({}, (t) => (t >= JUMP && t < JUMP + 5 * 60_000 ? 0.02 : blips(t)))], { action: "errors", window });
    expect(same).toMatchObject({ kind: "metric", abnormal: false });
    const more = analyzeSeries([series({}, (t) => (t >= JUMP ? 0.1 : blips(t)))], { action: "errors", window });
    expect(more).toMatchObject({ kind: "metric", abnormal: true, value: 0.1, onset: new Date(JUMP) });
  });
});

describe("analyzeSeries dates the change point, not the threshold crossing", () => {
  const drainFrom = at("14:00");
  const drainTo = at("14:15");
  /** 50 until 14:00, then down to 0 at 14:15 and there on. */
  const drain = (t: number) => (t < drainFrom ? 50 : t >= drainTo ? 0 : 50 * (1 - (t - drainFrom) / (drainTo - drainFrom)));

  it("dates a slow drain when it began, not when it fell under half", () => {
    const evidence = analyzeSeries([series({ pool: "db" }, drain)], { action: "free connections", window });
    expect(evidence).toMatchObject({ kind: "metric", abnormal: true, value: 0 });
    const onset = evidence.kind === "metric" ? (evidence.onset?.getTime() ?? 0) : 0;
    expect(onset).toBeGreaterThan(drainFrom);
    expect(onset).toBeLessThanOrEqual(drainFrom + 30_000);
  });

  it("dates a noisy drain within a few minutes of when it began", () => {
    const evidence = analyzeSeries([series({}, (t) => drain(t) + noise(t, 7))], { action: "free connections", window });
    const onset = evidence.kind === "metric" ? (evidence.onset?.getTime() ?? 0) : 0;
    expect(onset).toBeGreaterThan(drainFrom);
    expect(onset).toBeLessThanOrEqual(drainFrom + 3 * 60_000);
  });

  it("so the slow cause is the first symptom, before the fast symptom it caused", () => {
    const cause = analyzeSeries([series({ pool: "db" }, drain)], { action: "free connections", window });
    const symptom = analyzeSeries([series({}, (t) => (t >= drainTo ? 0.3 : 0.01))], { action: "error ratio", unit: "ratio", window });
    expect(symptom).toMatchObject({ abnormal: true, onset: new Date(drainTo) });
    const ranking = rankFindings(
      [
        { gadget: "Errors", evidence: symptom },
        { gadget: "Database", evidence: cause },
      ],
      { time },
    );
    expect(ranking.first?.symptoms.map((finding) => finding.evidence.action)).toEqual(["free connections"]);
  });
});

describe("analyzeSeries leaves churn out", () => {
  const replacedAt = at("13:58");
  /** A pod that stops at 13:58: its rate() fades to nothing over the next 5 minutes as its samples age out. */
  const fading = (level: number) => (t: number) =>
    t < replacedAt ? level + 0.01 * noise(t) : t < replacedAt + 5 * 60_000 ? level * (1 - (t - replacedAt) / (5 * 60_000)) + 0.005 : Number.NaN;
  const replacement = (level: number) => (t: number) => (t >= replacedAt ? level + 0.01 * noise(t, 3) : Number.NaN);
  const steady = (level: number, seed: number) => (t: number) => level + 0.01 * noise(t, seed);

  it("judges only the series that span the window, counting those that came or went", () => {
    const evidence = analyzeSeries(
      [
        series({ pod: "checkout-old" }, fading(0.5)),
        series({ pod: "checkout-new" }, replacement(0.5)),
        series({ pod: "checkout-a" }, steady(0.5, 4)),
        series({ pod: "checkout-b" }, steady(0.5, 5)),
      ],
      { action: "CPU usage", window },
    );
    expect(evidence).toMatchObject({ kind: "metric", abnormal: false, seriesCount: 2, churned: 2 });
    expect(evidence.kind === "metric" && evidence.labels.pod).toMatch(/^checkout-[ab]$/);
  });

  it("compares the mean of all series when every one of them was replaced", () => {
    const input = [
      series({ pod: "checkout-old-1", app: "checkout" }, fading(0.5)),
      series({ pod: "checkout-old-2", app: "checkout" }, fading(0.5)),
      series({ pod: "checkout-new-1", app: "checkout" }, replacement(0.5)),
      series({ pod: "checkout-new-2", app: "checkout" }, replacement(0.5)),
    ];
    expect(analyzeSeries(input, { action: "CPU usage", window })).toMatchObject({
      kind: "metric",
      abnormal: false,
      aggregated: true,
      seriesCount: 4,
      labels: { app: "checkout" },
    });
    // A replacement that does use much more is still found.
    input[3] = series({ pod: "checkout-new-2", app: "checkout" }, (t) => (t >= replacedAt ? (t >= JUMP ? 4 : 0.5) : Number.NaN));
    expect(analyzeSeries(input, { action: "CPU usage", window })).toMatchObject({ kind: "metric", abnormal: true, aggregated: true });
  });

  it("judges the series still there at the end, not their mean, against a limit when every one was replaced", () => {
    const limit = { direction: "up" as const, threshold: 90 };
    // The old pods stop; the new ones start, and one of them climbs to its limit.
    const input = [
      series({ pod: "search-old-1" }, fading(40)),
      series({ pod: "search-old-2" }, fading(40)),
      series({ pod: "search-new-1" }, replacement(40)),
      series({ pod: "search-new-2" }, (t) => (t >= replacedAt ? Math.min(99, 40 + ((t - replacedAt) / 60_000) * 2.5) : Number.NaN)),
    ];
    const evidence = analyzeSeries(input, { action: "memory", window, saturation: limit });
    expect(evidence).toMatchObject({ kind: "metric", abnormal: true, labels: { pod: "search-new-2" }, seriesCount: 2, churned: 2 });
    expect(evidence).not.toHaveProperty("aggregated");
  });

  it("names several series at their limit by what they share, whichever reached it by a little more", () => {
    const atLimit = (level: number) => (t: number) => (t >= JUMP ? level : 40 + noise(t, level));
    const input = [
      series({ pod: "search-a", node: "node-1" }, atLimit(99)),
      series({ pod: "search-b", node: "node-1" }, atLimit(98)),
      series({ pod: "search-c", node: "node-2" }, steady(40, 7)),
    ];
    const evidence = analyzeSeries(input, { action: "CPU", window, saturation: { direction: "up", threshold: 90 } });
    expect(evidence).toMatchObject({ kind: "metric", abnormal: true, labels: { node: "node-1" }, atLimit: 2, seriesCount: 3 });
    expect(analyzeSeries([...input].reverse(), { action: "CPU", window, saturation: { direction: "up", threshold: 90 } })).toEqual(evidence);
  });

  it("leaves out a series that started within the baseline, with its warm-up", () => {
    const started = at("13:40");
    const evidence = analyzeSeries(
      [series({ pod: "new" }, (t) => (t < started ? Number.NaN : t < started + 5 * 60_000 ? 0.1 : 2)), series({ pod: "a" }, steady(1, 6))],
      { action: "CPU usage", window },
    );
    expect(evidence).toMatchObject({ kind: "metric", abnormal: false, labels: { pod: "a" }, seriesCount: 1, churned: 1 });
  });

  it("still judges a lone series that stops within the incident phase", () => {
    const evidence = analyzeSeries([series({}, (t) => (t >= JUMP + 60_000 ? Number.NaN : t >= JUMP ? 0 : 40))], { action: "request rate", window });
    expect(evidence).toMatchObject({ kind: "metric", abnormal: true, ratio: 0 });
    expect(evidence).not.toHaveProperty("churned");
  });
});

describe("analyzeSeries weighs saturation against a limit or a threshold", () => {
  const rising = (from: number, to: number) => (t: number) => (t < at("14:02") ? from + noise(t, 2) : to);
  const limits = (entries: Array<[Labels, number]>) =>
    entries.map(([labels, value]) => compactLimit(series({ __name__: "pg_settings_max_connections", ...labels }, () => value)));
  const connections = (context: Partial<MetricContext> = {}) =>
    analyzeSeries([series({ instance: "db-1:9187" }, rising(40, 98))], {
      action: "connections",
      window,
      saturation: { direction: "up", limits: limits([[{ instance: "db-1:9187" }, 100]]), name: "pg_settings_max_connections" },
      ...context,
    });

  it("finds a resource at 98% of its limit, dated when it began to rise", () => {
    expect(connections()).toMatchObject({
      kind: "metric",
      abnormal: true,
      value: 98,
      saturation: { limit: 100, of: "pg_settings_max_connections", direction: "up" },
      onset: new Date(at("14:02")),
    });
  });

  it("ranks saturation at 2.4× above an error ratio at 7×", () => {
    const saturated = connections();
    const errors = analyzeSeries([series({}, (t) => (t >= JUMP ? 0.07 : 0.01))], { action: "error ratio", unit: "ratio", window });
    expect(saturated.kind === "metric" && saturated.ratio).toBeCloseTo(2.45, 1);
    expect(saturated.kind === "metric" && saturated.severity).toBeGreaterThan(SATURATION_SEVERITY);
    expect(errors).toMatchObject({ abnormal: true });
    expect(errors.kind === "metric" && errors.severity).toBeCloseTo(7, 6);
    const ranking = rankFindings(
      [
        { gadget: "Errors", evidence: errors },
        { gadget: "Database", evidence: saturated },
      ],
      { time },
    );
    expect(ranking.symptoms.map((finding) => finding.evidence.action)).toEqual(["connections", "error ratio"]);
  });

  it("matches each series with its own limit by their shared labels", () => {
    const evidence = analyzeSeries([series({ instance: "db-1:9187" }, rising(40, 98)), series({ instance: "db-2:9187" }, rising(40, 98))], {
      action: "connections",
      window,
      saturation: {
        direction: "up",
        limits: limits([
          [{ instance: "db-1:9187" }, 500],
          [{ instance: "db-2:9187" }, 100],
        ]),
        name: "max",
      },
    });
    expect(evidence).toMatchObject({ labels: { instance: "db-2:9187" }, saturation: { limit: 100 } });
  });

  it("reads a limit that changes as it was at the saturated instant", () => {
    const raised = compactLimit(series({}, (t) => (t >= at("14:10") ? 200 : 100)));
    expect(raised.steps).toHaveLength(2);
    const evidence = analyzeSeries([series({}, rising(40, 98))], {
      action: "connections",
      window,
      saturation: { direction: "up", limits: [raised], name: "max_connections" },
    });
    expect(evidence).toMatchObject({ saturation: { limit: 100, of: "max_connections" } });
  });

  it("finds free space falling to its threshold, or under 5% of its limit", () => {
    const free = (t: number) => (t < at("14:00") ? 50e9 : Math.max(0, 50e9 * (1 - (t - at("14:00")) / (15 * 60_000))));
    const threshold = analyzeSeries([series({ mountpoint: "/data" }, free)], {
      action: "free space",
      unit: "bytes",
      window,
      saturation: { direction: "down", threshold: 0 },
    });
    expect(threshold).toMatchObject({ kind: "metric", abnormal: true, value: 0, saturation: { limit: 0, direction: "down" } });
    expect(threshold.kind === "metric" && threshold.saturation).not.toHaveProperty("of");
    const size = [compactLimit(series({ __name__: "node_filesystem_size_bytes", mountpoint: "/data" }, () => 100e9))];
    const limit = analyzeSeries([series({ mountpoint: "/data" }, free)], {
      action: "free space",
      window,
      saturation: { direction: "down", limits: size, name: "size" },
    });
    expect(limit).toMatchObject({ saturation: { limit: 100e9, of: "node_filesystem_size_bytes", direction: "down" } });
    expect(limit.kind === "metric" && (limit.onset?.getTime() ?? 0) - at("14:00")).toBeLessThanOrEqual(30_000);
  });

  it("treats a resource at its limit most of the baseline as its normal", () => {
    const pinned = analyzeSeries([series({}, (t) => 97 + (t % 2))], {
      action: "connections",
      window,
      saturation: { direction: "up", limits: limits([[{}, 100]]), name: "max" },
    });
    expect(pinned).toMatchObject({ kind: "metric", abnormal: false });
    expect(pinned).not.toHaveProperty("saturation");
  });

  it("compares a series without a matching limit with its baseline only", () => {
    const evidence = connections({ saturation: { direction: "up", limits: limits([[{ instance: "db-9:9187" }, 100]]), name: "max" } });
    expect(evidence).toMatchObject({ abnormal: true, severity: expect.any(Number) });
    expect(evidence).not.toHaveProperty("saturation");
    expect(evidence.kind === "metric" && evidence.severity).toBeLessThan(SATURATION_SEVERITY);
  });
});

describe("analyzeSeries finds a metric that stopped moving", () => {
  const stuckFrom = at("14:03");

  it("reports a varying metric stuck at one value as flat, since it stuck", () => {
    const evidence = analyzeSeries([series({ queue: "orders" }, (t) => (t >= stuckFrom ? 42 : 40 + 10 * noise(t)))], { action: "queue depth", window });
    expect(evidence).toMatchObject({ kind: "metric", abnormal: true, flat: true, value: 42, onset: new Date(stuckFrom) });
  });

  it("does not call a stepwise gauge that holds a while flat", () => {
    // Replicas moving between 3 and 4 every 10 minutes, then 4 for 20 minutes.
    const steps = (t: number) => (t >= at("14:03") ? 4 : Math.floor((t - window.start.getTime()) / (10 * 60_000)) % 2 === 0 ? 3 : 4);
    expect(analyzeSeries([series({}, steps)], { action: "replicas", window })).toMatchObject({ kind: "metric", abnormal: false });
    expect(analyzeSeries([series({}, steps)], { action: "replicas", window })).not.toHaveProperty("flat");
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
