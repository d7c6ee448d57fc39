import { describe, expect, it } from "vitest";
import type { TimeWindow } from "./evidence.js";
import { shortAnswer } from "./evidence-text.js";
import { analyzeSeries, type Series } from "./metric-analysis.js";
import { rankFindings } from "./ranking.js";
import { trendOf } from "./trend.js";

const MINUTE = 60_000;
const time = Date.parse("2026-11-21T14:00:00Z");
const at = (minutes: number) => time + minutes * MINUTE;
/** A deterministic wobble of ±0.5 %, so that the fit has noise to measure. */
const wobble = (ms: number) => 1 + 0.005 * Math.sin(ms / 37_000);

function points(from: number, to: number, valueAt: (minutes: number) => number) {
  const found = [];
  for (let ms = at(from); ms <= at(to); ms += 15_000) found.push({ at: ms, value: valueAt((ms - time) / MINUTE) * wobble(ms) });
  return found;
}

/** Memory at 0.4 of its limit until `start` minutes, then climbing 0.6 in `minutes`. */
const leak = (start: number, minutes: number) => (m: number) => (m < start ? 0.4 : Math.min(1, 0.4 + (0.6 * (m - start)) / minutes));

describe("trendOf", () => {
  it("dates a climb that began inside the data when it had cleared the noise, a few minutes after its knee", () => {
    const trend = trendOf(points(-360, 15, leak(-190, 186)), at(-5), 1);
    expect(trend?.beforeWindow).toBe(false);
    const since = (trend?.since.getTime() ?? 0) - at(-190);
    expect(since).toBeGreaterThanOrEqual(0);
    expect(since).toBeLessThan(6 * MINUTE);
    expect(trend?.perHour).toBeCloseTo((0.6 / 186) * 60, 2);
  });

  it("says a climb that runs through the whole data began before it, dated at the first sample", () => {
    const trend = trendOf(points(-60, 15, leak(-190, 186)), at(-5), 1);
    expect(trend).toMatchObject({ beforeWindow: true, since: new Date(at(-60)) });
  });

  it("finds none in a step, a short ramp, a flat line or the other direction", () => {
    expect(
      trendOf(
        points(-60, 15, (m) => (m < -40 ? 0.4 : 0.9)),
        at(-5),
        1,
      ),
    ).toBeUndefined();
    expect(trendOf(points(-60, 15, leak(-25, 17)), at(-5), 1)).toBeUndefined();
    expect(
      trendOf(
        points(-60, 15, () => 0.4),
        at(-5),
        1,
      ),
    ).toBeUndefined();
    expect(trendOf(points(-360, 15, leak(-190, 186)), at(-5), -1)).toBeUndefined();
  });
});

describe("a trend in the analysis and the ranking", () => {
  const window: TimeWindow = { start: new Date(at(-360)), time: new Date(time), end: new Date(at(10)) };
  const series: Series = { labels: { container: "search" }, points: points(-360, 10, leak(-190, 186)) };

  it("dates a saturated metric when its climb began, and keeps it out of the background", () => {
    const evidence = analyzeSeries([series], { action: "Memory of search", window, saturation: { direction: "up", threshold: 0.95 } });
    expect(evidence).toMatchObject({ kind: "metric", abnormal: true, saturation: { direction: "up" }, trend: { beforeWindow: false } });
    const onset = evidence.kind === "metric" ? (evidence.onset?.getTime() ?? 0) : 0;
    expect(onset - at(-190)).toBeLessThan(6 * MINUTE);

    // Words: the climb, from when it began.
    expect(shortAnswer(evidence, new Date(time))).toMatch(/, up from .* in the 6 hours before, climbing since 10:5\d UTC$/);

    const deploy = {
      kind: "change" as const,
      action: "Rollouts of search",
      change: "deploy" as const,
      subject: "search",
      detail: "search:v3.1",
      at: new Date(at(-190)),
    };
    const ranking = rankFindings(
      [
        { gadget: "Memory", evidence },
        { gadget: "Changes", evidence: deploy },
      ],
      { time: new Date(time) },
    );
    expect(ranking.background).toEqual([]);
    expect(ranking.likelyCause).toMatchObject({ basis: "change", finding: { evidence: deploy } });
  });
});
