import { describe, expect, it } from "vitest";
import type { Evidence, MetricEvidence } from "./evidence.js";
import { summarizeExecution, summarizeGadget, type Finding } from "./summarize.js";

const time = new Date("2026-11-21T14:05:00Z");
const at = (clock: string) => new Date(`2026-11-21T${clock}:00Z`);
const HOUR = 3_600_000;

function finding(evidence: Evidence, gadget = "Checkout"): Finding {
  return { gadget, evidence };
}

/** A metric compared with the hour before; abnormal at 2× either way, as the analysis judges it. */
function metric(action: string, fields: Partial<MetricEvidence> & Pick<MetricEvidence, "value" | "baseline">): MetricEvidence {
  const ratio = fields.ratio ?? fields.value / fields.baseline;
  const severity = ratio > 0 ? Math.max(ratio, 1 / ratio) : Infinity;
  return {
    kind: "metric",
    action,
    labels: {},
    seriesCount: 1,
    low: fields.baseline,
    high: fields.baseline,
    ratio,
    severity,
    abnormal: severity >= 2,
    baselineMs: HOUR,
    ...fields,
  };
}

const latency = finding(metric("p99 latency", { unit: "s", value: 1.8, baseline: 0.44, ratio: 4.09, onset: at("14:05") }));
const errorRate = metric("error rate", { unit: "ratio", value: 0.03, baseline: 0.01, ratio: 3, onset: at("14:03") });
const errors = finding(errorRate, "Errors");
const traffic = finding(metric("request rate", { unit: "req/s", value: 50, baseline: 50 }));
const saturation = finding(metric("CPU", { unit: "percent", value: 40.8, baseline: 40, low: 38, high: 42 }));
const deploy = finding({ kind: "answer", action: "Last deploy", text: "v1.2.3 at 14:01" }, "Changes");
const slow = finding({ kind: "failed", action: "Deploy status", reason: "timed out after 15 s", link: "https://x" }, "Changes");
const skipped = finding({ kind: "skipped", action: "Pod restarts", missing: ["pod"] }, "Pods");

describe("summarizeGadget", () => {
  it("puts abnormal findings first, strongest first", () => {
    expect(summarizeGadget([traffic, errors, latency], time)).toBe(
      "p99 latency rose 4.1× since 14:05 UTC; error rate rose 3× since 14:03 UTC; request rate within its usual range.",
    );
  });

  it("says when everything was within its usual range", () => {
    const queue = finding({ ...traffic.evidence, action: "queue" });
    expect(summarizeGadget([traffic, saturation, queue], time)).toBe("All 3 actions within their usual range.");
    expect(summarizeGadget([traffic], time)).toBe("request rate within its usual range.");
    expect(summarizeGadget([traffic, saturation, latency], time)).toBe("p99 latency rose 4.1× since 14:05 UTC; request rate and CPU within their usual range.");
  });

  it("counts failures and keeps answers and skipped actions", () => {
    expect(summarizeGadget([deploy, slow, skipped], time)).toBe(
      "Last deploy: v1.2.3 at 14:01; Pod restarts: not run, the issue has no attribute pod; 1 of 3 actions failed: Deploy status: timed out after 15 s.",
    );
  });

  it("words falls and changes from or to zero", () => {
    const rps = (value: number, baseline: number) => finding(metric("rps", { value, baseline }));
    expect(summarizeGadget([rps(10, 40)], time)).toBe("rps fell to 0.25×.");
    expect(summarizeGadget([rps(0, 40)], time)).toBe("rps fell to zero.");
    expect(summarizeGadget([finding(metric("errors", { value: 3, baseline: 0, ratio: Infinity }))], time)).toBe("errors rose from zero.");
  });
});

describe("summarizeExecution", () => {
  const base = { time, attributes: { service: "checkout", env: "prod" } };

  it("names the strongest finding with its start, the others, and the first symptom", () => {
    expect(summarizeExecution({ ...base, findings: [traffic, errors, latency, deploy, slow, skipped] })).toBe(
      "Around 2026-11-21 14:05 UTC for env=prod, service=checkout: p99 latency 4.1× its level in the hour before (Checkout), since 14:05 UTC. " +
        "Also abnormal: error rate 3× its level in the hour before (Errors), since 14:03 UTC. " +
        "First symptom: error rate (Errors) at 14:03 UTC, before the others: the likely place to look for the cause. " +
        "Within usual range: request rate. " +
        "Other findings: Last deploy: v1.2.3 at 14:01. " +
        "Could not check: Deploy status (timed out after 15 s). " +
        "Not run: Pod restarts (the issue has no attribute pod).",
    );
  });

  it("says nothing abnormal was found, with the baseline period each comparison used", () => {
    expect(summarizeExecution({ ...base, attributes: {}, findings: [traffic, saturation] })).toBe(
      "Around 2026-11-21 14:05 UTC: nothing abnormal found. Within usual range: request rate, CPU.",
    );
    const drop = finding(metric("rps", { value: 10, baseline: 40, baselineMs: 1_800_000 }));
    expect(summarizeExecution({ ...base, attributes: {}, findings: [drop] })).toBe(
      "Around 2026-11-21 14:05 UTC: rps down to 0.25× its level in the 30 minutes before (Checkout).",
    );
  });

  it("says when nothing could be checked", () => {
    expect(summarizeExecution({ ...base, attributes: {}, findings: [slow] })).toBe(
      "Around 2026-11-21 14:05 UTC: nothing could be checked. Could not check: Deploy status (timed out after 15 s).",
    );
  });

  it("says when the abnormal findings started together", () => {
    const together = finding({ ...errorRate, onset: at("14:05") }, "Errors");
    expect(summarizeExecution({ ...base, attributes: {}, findings: [latency, together] })).toContain("All of them started together at 14:05 UTC.");
  });

  it("is the same for the same findings", () => {
    const findings = [traffic, errors, latency, deploy, slow];
    expect(summarizeExecution({ ...base, findings })).toBe(summarizeExecution({ ...base, findings: [...findings] }));
  });
});
