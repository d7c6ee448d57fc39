import { describe, expect, it } from "vitest";
import { BLIP_MS, isBlip } from "./blips.js";
import type { MetricEvidence } from "./evidence.js";
import type { Finding } from "./ranking.js";
import { compareSeries } from "./series-comparison.js";
import { bottomLineOf } from "./summarize.js";
import { judgeExecution } from "./verdict.js";

const time = new Date("2026-11-21T14:08:00Z");
const at = (clock: string) => new Date(`2026-11-21T${clock}Z`);
const STEP = 15_000;

/** One sample every 15 s from 13:00 to 14:15: 1 (with a little noise), `value(t)` where it says. */
function series(value: (at: number) => number | undefined) {
  const points = [];
  for (let t = at("13:00:00").getTime(); t <= at("14:15:00").getTime(); t += STEP) points.push({ at: t, value: value(t) ?? 1 + ((t / STEP) % 3) * 0.01 });
  return points;
}

function metric(action: string, fields: Partial<MetricEvidence>): Finding {
  return {
    gadget: "Checks",
    evidence: {
      kind: "metric",
      action,
      labels: {},
      seriesCount: 1,
      value: 0,
      baseline: 1,
      low: 1,
      high: 1,
      ratio: 0,
      severity: 1000,
      abnormal: true,
      baselineMs: 3_600_000,
      ...fields,
    },
  };
}

describe("compareSeries: when an abnormal move was over", () => {
  it("dates the end of a spike at the first sample back within the usual band, and gives none to a move that lasts", () => {
    const spikeFrom = at("14:04:00").getTime();
    const spikeTo = at("14:05:00").getTime();
    const spike = compareSeries(
      series((t) => (t >= spikeFrom && t < spikeTo ? 9 : undefined)),
      at("14:03:00").getTime(),
    );
    expect(spike).toMatchObject({ abnormal: true, onset: new Date(spikeFrom), endedAt: new Date(spikeTo) });
    const lasting = compareSeries(
      series((t) => (t >= spikeFrom ? 9 : undefined)),
      at("14:03:00").getTime(),
    );
    expect(lasting).toMatchObject({ abnormal: true, onset: new Date(spikeFrom) });
    expect(lasting?.endedAt).toBeUndefined();
  });
});

describe("blips", () => {
  it("a move over within BLIP_MS of its onset is a blip; a longer or lasting one is not", () => {
    const brief = metric("probe", { onset: at("14:04:00"), endedAt: at("14:04:15") });
    expect(isBlip(brief.evidence as MetricEvidence)).toBe(true);
    expect(isBlip(metric("probe", { onset: at("14:00:00"), endedAt: new Date(at("14:00:00").getTime() + BLIP_MS + STEP) }).evidence as MetricEvidence)).toBe(
      false,
    );
    expect(isBlip(metric("probe", { onset: at("14:04:00") }).evidence as MetricEvidence)).toBe(false);
  });

  it("names no cause when nothing but a blip was seen: a probe failing one scrape, then a brief error spike", () => {
    const errors = metric("Error ratio of checkout", { value: 9, ratio: 9, severity: 9, onset: at("14:04:30"), endedAt: at("14:07:00") });
    const probe = (endedAt?: Date) => metric("Probes of checkout's dependencies", { onset: at("14:04:00"), ...(endedAt === undefined ? {} : { endedAt }) });
    const judgement = judgeExecution([errors, probe(at("14:04:15"))], { time });
    const { verdict } = judgement;
    expect(verdict.conclusion).toBe("no-cause");
    expect(bottomLineOf(judgement, {})).toContain(
      "No cause found: Probes of checkout's dependencies and Error ratio of checkout were over within minutes, too brief to explain it.",
    );
    expect(verdict.symptoms.map(({ action }) => action)).toEqual(["Probes of checkout's dependencies", "Error ratio of checkout"]);
    // The same probe, still failing: the outage is the cause.
    expect(judgeExecution([errors, probe()], { time }).verdict).toMatchObject({ conclusion: "cause", cause: { kind: "outage" } });
  });
});
