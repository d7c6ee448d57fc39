import { describe, expect, it } from "vitest";
import type { MetricEvidence } from "./evidence.js";
import type { Finding } from "./ranking.js";
import { bottomLineOf } from "./summarize.js";
import { judgeExecution } from "./verdict.js";

const time = new Date("2026-11-21T14:05:00Z");
const at = (clock: string) => new Date(`2026-11-21T${clock}Z`);

/** A service's metric that moved from `baseline` to `value`, between `onset` and `endedAt` (absent: still going). */
function moved(
  service: string,
  metric: string,
  fields: { value: number; baseline: number; onset: string; endedAt?: string; low?: number } & Omit<Partial<MetricEvidence>, "onset" | "endedAt">,
): Finding<MetricEvidence> {
  const { value, baseline, onset, endedAt, low, ...rest } = fields;
  const ratio = value / baseline;
  return {
    gadget: `Metrics of ${service}`,
    evidence: {
      kind: "metric",
      action: `Metrics of ${service}: ${metric}`,
      labels: { service },
      seriesCount: 1,
      value,
      baseline,
      low: low ?? baseline,
      high: baseline,
      ratio,
      severity: Math.min(1000, ratio >= 1 ? ratio - 1 : 1 / ratio - 1),
      abnormal: true,
      baselineMs: 60_000,
      onset: at(onset),
      ...(endedAt === undefined ? {} : { endedAt: at(endedAt) }),
      ...rest,
    },
  };
}

const latency = (service: string, value: number, onset: string, endedAt?: string) =>
  moved(service, "p95latency", { value, baseline: 5, onset, unit: "ms", ...(endedAt === undefined ? {} : { endedAt }) });

/** A service's CPU at its limit from `onset` to `endedAt`, with its throttling over its threshold. */
function cpuAtLimit(service: string, onset: string, endedAt: string): Array<Finding<MetricEvidence>> {
  return [
    moved(service, "cpu", { value: 0.19, baseline: 0.03, onset, endedAt, saturation: { limit: 0.2, of: "cpu limit", direction: "up" }, saturates: "up" }),
    moved(service, "cpu_cfs", { value: 0.9, baseline: 0.04, onset, endedAt, saturation: { limit: 0.25, direction: "up" }, saturates: "up" }),
  ];
}

describe("a short incident: a CPU at its limit for two minutes", () => {
  it("is the cause when it was still at its limit at the issue time, however soon it was over after; its limit and its throttling are one fault", () => {
    const { verdict } = judgeExecution([...cpuAtLimit("adservice", "14:04:10", "14:06:10"), latency("adservice", 70, "14:04:20", "14:06:30")], { time });
    expect(verdict).toMatchObject({ conclusion: "cause", cause: { kind: "saturation", subject: "service=adservice" } });
    expect(verdict.alternative).toBeUndefined();
  });

  it("is a blip, no cause, when it was over before the issue time", () => {
    const { verdict } = judgeExecution([...cpuAtLimit("adservice", "13:58:00", "14:00:00"), latency("adservice", 70, "13:58:10")], { time });
    expect(verdict.conclusion).toBe("no-cause");
  });
});

describe("a metric fallen to zero", () => {
  it("is no outage when the playbook says it saturates upward (throttling, CPU)", () => {
    const throttling = moved("frontend", "cpu_cfs", { value: 0, baseline: 0.04, low: 0.02, onset: "14:03:00", saturates: "up" });
    const requests = moved("cartservice", "rps", { value: 0, baseline: 20, low: 15, onset: "14:03:00" });
    expect(judgeExecution([throttling], { time }).verdict.conclusion).toBe("no-cause");
    expect(judgeExecution([throttling, requests], { time }).verdict).toMatchObject({
      conclusion: "cause",
      cause: { kind: "outage", subject: "service=cartservice" },
    });
  });

  it("is the service's slowdown seen again when its latency rose as it stopped: requests that never finish are not counted", () => {
    const requests = moved("adservice", "rps", { value: 0, baseline: 12, low: 7, onset: "14:03:00" });
    const findings = [requests, latency("adservice", 240, "14:03:05"), latency("frontend", 20, "14:03:10")];
    const judgement = judgeExecution(findings, { time });
    expect(judgement.verdict).toMatchObject({ conclusion: "cause", cause: { kind: "latency", subject: "service=adservice", confidence: "medium" } });
  });
});

describe("a slowdown across services", () => {
  it("likely begins where the latency rose most against its normal: named with medium confidence, where and not why", () => {
    const judgement = judgeExecution(
      [latency("frontend", 120, "14:03:10"), latency("currencyservice", 900, "14:03:00"), latency("checkoutservice", 400, "14:03:05")],
      {
        time,
      },
    );
    expect(judgement.verdict).toMatchObject({
      conclusion: "cause",
      cause: { kind: "latency", subject: "service=currencyservice", detail: "rose most of 3 services slowed", confidence: "medium" },
    });
    expect(bottomLineOf(judgement, {})).toContain("the slowdown likely begins at");
  });

  it("is ambiguous when another rose at least half as much, and names nothing when one service alone slowed", () => {
    const close = judgeExecution([latency("productcatalogservice", 2500, "14:03:00"), latency("recommendationservice", 2100, "14:03:00")], { time });
    expect(close.verdict).toMatchObject({ conclusion: "ambiguous", cause: { kind: "latency", confidence: "low" } });
    expect(judgeExecution([latency("emailservice", 900, "14:03:00")], { time }).verdict.conclusion).toBe("no-cause");
  });

  it("yields to anything of a cause's kind", () => {
    const { verdict } = judgeExecution(
      [latency("frontend", 120, "14:03:10"), latency("currencyservice", 900, "14:03:00"), ...cpuAtLimit("currencyservice", "14:02:50", "14:06:00")],
      {
        time,
      },
    );
    expect(verdict).toMatchObject({ conclusion: "cause", cause: { kind: "saturation", subject: "service=currencyservice" } });
  });
});
