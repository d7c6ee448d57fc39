import type { Evidence, MetricEvidence } from "@pes/analysis";
import type { TimeWindow } from "@pes/connectors";
import { describe, expect, it } from "vitest";
import { lookBeforeTrends, TREND_LOOKBACK_MS } from "./trend-lookback.js";

const time = new Date("2026-11-21T14:00:00Z");
const window = { start: new Date(time.getTime() - 3_600_000), time, end: new Date(time.getTime() + 900_000) };
const MINUTE = 60_000;

function memory(trend: MetricEvidence["trend"]): MetricEvidence {
  return {
    kind: "metric",
    action: "Memory",
    labels: {},
    seriesCount: 1,
    value: 1,
    baseline: 0.5,
    low: 0.4,
    high: 0.9,
    ratio: 2,
    severity: 2,
    abnormal: true,
    baselineMs: 3_600_000,
    ...(trend === undefined ? {} : { trend, onset: trend.since }),
  };
}
const none: Evidence = { kind: "none", action: "Rollouts", what: "rollouts" };
const rollout: Evidence = { kind: "change", action: "Rollouts", change: "deploy", subject: "search", at: new Date(time.getTime() - 190 * MINUTE) };

describe("lookBeforeTrends", () => {
  it("runs nothing again when no trend began before the window", async () => {
    const calls: number[] = [];
    const first = [{ evidence: [memory({ since: new Date(time.getTime() - 20 * MINUTE), perHour: 1, beforeWindow: false })] }, { evidence: [none] }];
    const found = await lookBeforeTrends(first, [false, true], window, async (index) => {
      calls.push(index);
      return { evidence: [] };
    });
    expect(calls).toEqual([]);
    expect(found).toEqual(first);
  });

  it("dates the trend over the longer look-back, then looks for changes from before its start", async () => {
    const since = new Date(time.getTime() - 186 * MINUTE);
    const windows: Array<{ index: number; start: number }> = [];
    const found = await lookBeforeTrends<{ evidence: readonly Evidence[]; over: TimeWindow }>(
      [
        { evidence: [memory({ since: window.start, perHour: 0.2, beforeWindow: true })], over: window },
        { evidence: [none], over: window },
        { evidence: [none], over: window },
      ],
      [false, true, false],
      window,
      async (index, over) => {
        windows.push({ index, start: over.start.getTime() });
        return { evidence: index === 0 ? [memory({ since, perHour: 0.2, beforeWindow: false })] : [rollout], over };
      },
    );
    expect(windows).toEqual([
      { index: 0, start: time.getTime() - TREND_LOOKBACK_MS },
      { index: 1, start: since.getTime() - 10 * MINUTE },
    ]);
    expect(found[0]?.evidence[0]).toMatchObject({ trend: { since, beforeWindow: false } });
    expect(found[1]?.evidence).toEqual([rollout]);
    // A run that replaces the first comes back whole (the engine keeps its observation and window in the bundle).
    expect(found[0]?.over.start).toEqual(new Date(time.getTime() - TREND_LOOKBACK_MS));
    expect(found[1]?.over.start).toEqual(new Date(since.getTime() - 10 * MINUTE));
    // An action that does not report changes is not asked again.
    expect(found[2]).toEqual({ evidence: [none], over: window });
  });
});
