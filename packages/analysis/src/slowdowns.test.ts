import { describe, expect, it } from "vitest";
import type { MetricEvidence, ServiceGraphEvidence } from "./evidence.js";
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

/** A service graph answered by an action: each `caller>callee`. */
function graph(...calls: string[]): Finding<ServiceGraphEvidence> {
  return {
    gadget: "Services",
    evidence: {
      kind: "service-graph",
      action: "Service graph",
      calls: calls.map((call) => {
        const [caller = "", callee = ""] = call.split(">");
        return { caller, callee };
      }),
    },
  };
}

/** The boutique's calls, as its service graph draws them. */
const BOUTIQUE = graph(
  "frontend>adservice",
  "frontend>recommendationservice",
  "frontend>productcatalogservice",
  "frontend>checkoutservice",
  "frontend>cartservice",
  "recommendationservice>productcatalogservice",
  "checkoutservice>productcatalogservice",
  "checkoutservice>paymentservice",
  "checkoutservice>emailservice",
  "checkoutservice>cartservice",
  "cartservice>redis-cart",
);

const slowed = (service: string, value: number, baseline: number) => moved(service, "p90latency", { value, baseline, onset: "14:03:00", unit: "ms" });

describe("a slowdown across services, with a service graph", () => {
  it("begins at the service whose slowdown explains the others, not at a callee whose tiny normal rose most", () => {
    // A delay at the frontend slows every call it makes: each callee's latency rose with it.
    const findings = [
      slowed("frontend", 28_000, 26),
      slowed("productcatalogservice", 2_300, 0.5),
      slowed("cartservice", 2_200, 4.7),
      slowed("recommendationservice", 2_250, 4.8),
      slowed("checkoutservice", 2_250, 24),
    ];
    expect(judgeExecution(findings, { time }).verdict.cause).toMatchObject({ subject: "service=productcatalogservice" });
    expect(judgeExecution([...findings, BOUTIQUE], { time }).verdict).toMatchObject({
      conclusion: "cause",
      cause: { kind: "latency", subject: "service=frontend", detail: "explains by who calls whom of 5 services slowed", confidence: "medium" },
    });
  });

  it("begins at the one service that explains the others, even when it is the one the issue names", () => {
    // Paged for the frontend: of three services slowed, only its slowdown explains the others'.
    const findings = [slowed("frontend", 28_000, 26), slowed("productcatalogservice", 2_300, 0.5), slowed("cartservice", 2_200, 4.7), BOUTIQUE];
    expect(judgeExecution(findings, { time, attributes: { service: "frontend" } }).verdict).toMatchObject({
      conclusion: "cause",
      cause: { kind: "latency", subject: "service=frontend", detail: "explains by who calls whom of 3 services slowed" },
    });
  });

  it("is not at a service one of whose callers did not slow: its slowdown would have reached them all", () => {
    // productcatalog is called by checkout too, which kept its pace: the delay is recommendation's.
    const findings = [slowed("productcatalogservice", 1_240, 0.5), slowed("recommendationservice", 9_600, 4.8), slowed("frontend", 9_600, 31)];
    expect(judgeExecution(findings, { time }).verdict.conclusion).toBe("ambiguous");
    expect(judgeExecution([...findings, BOUTIQUE], { time }).verdict).toMatchObject({
      conclusion: "cause",
      cause: { kind: "latency", subject: "service=recommendationservice" },
    });
  });

  it("does not count a caller outside what was looked at: one nothing calls and no finding names (a graph's user)", () => {
    const findings = [slowed("frontend", 28_000, 26), slowed("productcatalogservice", 2_300, 0.5), slowed("cartservice", 2_200, 4.7)];
    expect(judgeExecution([...findings, BOUTIQUE, graph("user>frontend")], { time }).verdict.cause).toMatchObject({ subject: "service=frontend" });
    const userLooked = moved("user", "p90latency", { value: 40, baseline: 40, onset: "14:03:00", unit: "ms", abnormal: false });
    expect(judgeExecution([...findings, BOUTIQUE, graph("user>frontend"), userLooked], { time }).verdict.cause).toMatchObject({
      subject: "service=productcatalogservice",
    });
  });

  it("names one service slowed alone when the issue does not name it, and nothing when it does", () => {
    const alone = [slowed("adservice", 220, 4.8)];
    expect(judgeExecution([...alone, BOUTIQUE], { time, attributes: { namespace: "boutique" } }).verdict).toMatchObject({
      conclusion: "cause",
      cause: { kind: "latency", subject: "service=adservice" },
    });
    expect(judgeExecution([...alone, BOUTIQUE], { time, attributes: { service: "adservice" } }).verdict.conclusion).toBe("no-cause");
    expect(judgeExecution(alone, { time, attributes: { namespace: "boutique" } }).verdict.conclusion).toBe("no-cause");
  });
});

describe("requests fallen to zero, with a service graph", () => {
  const lull = moved("adservice", "rps", { value: 0, baseline: 12, low: 7, onset: "14:02:50" });

  it("are the callers calling less when a service that calls it slowed as they fell", () => {
    const findings = [lull, slowed("cartservice", 4_000, 2.3), slowed("checkoutservice", 7_400, 18), slowed("frontend", 4_100, 17)];
    expect(judgeExecution(findings, { time }).verdict.cause).toMatchObject({ kind: "outage", subject: "service=adservice" });
    expect(judgeExecution([...findings, BOUTIQUE], { time }).verdict).toMatchObject({
      conclusion: "cause",
      cause: { kind: "latency", subject: "service=cartservice" },
    });
  });

  it("are an outage when no caller slowed: the service stopped on its own", () => {
    const findings = [lull, slowed("paymentservice", 40, 3), slowed("checkoutservice", 400, 17), BOUTIQUE];
    expect(judgeExecution(findings, { time }).verdict).toMatchObject({ conclusion: "cause", cause: { kind: "outage", subject: "service=adservice" } });
  });
});

describe("a metric the playbook says goes up in trouble", () => {
  it("falling to zero is relief, not an outage, with no limit to saturate at (retransmissions)", () => {
    const retransmissions = moved("worker-02", "tcp_retans", { value: 0, baseline: 0.6, low: 0.2, onset: "14:02:50", saturates: "up" });
    expect(judgeExecution([retransmissions], { time }).verdict.conclusion).toBe("no-cause");
  });
});
