import { describe, expect, it } from "vitest";
import type { ActionOutcome } from "@pes/connectors";
import { summarizeExecution, summarizeGadget, type ActionFinding } from "./summarize.js";

const time = new Date("2026-11-21T14:05:00Z");
const at = (clock: string) => new Date(`2026-11-21T${clock}:00Z`);

function finding(title: string, outcome: ActionOutcome, gadgetTitle = "Checkout"): ActionFinding {
  return { title, gadgetTitle, outcome };
}
const latency = finding("p99 latency", {
  status: "abnormal",
  shortAnswer: "p99 latency 1.8 s, 4.1× its level in the hour before (440 ms), since 14:05 UTC",
  severity: 4.09,
  ratio: 4.09,
  since: at("14:05"),
});
const errors = finding("error rate", {
  status: "abnormal",
  shortAnswer: "error rate 3%, 3× its level in the hour before (1%), since 14:03 UTC",
  severity: 3,
  ratio: 3,
  since: at("14:03"),
}, "Errors");
const traffic = finding("request rate", { status: "normal", shortAnswer: "request rate 50 req/s, within its usual range (50 req/s over the hour before)", ratio: 1 });
const saturation = finding("CPU", { status: "normal", shortAnswer: "CPU 40%, within its usual range (38–42% over the hour before)", ratio: 1.02 });
const deploy = finding("Last deploy", { status: "normal", shortAnswer: "Last deploy: v1.2.3 at 14:01" }, "Changes");
const slow = finding("Deploy status", { status: "failed", shortAnswer: "Deploy status: timed out after 15 s", mostImportantLink: "https://x" }, "Changes");
const skipped = finding("Pod restarts", { status: "skipped", shortAnswer: "Pod restarts: not run, the issue has no attribute pod" }, "Pods");

describe("summarizeGadget", () => {
  it("puts abnormal findings first, strongest first", () => {
    expect(summarizeGadget([traffic, errors, latency], time)).toBe(
      "p99 latency rose 4.1× since 14:05 UTC; error rate rose 3× since 14:03 UTC; request rate within its usual range.",
    );
  });

  it("says when everything was within its usual range", () => {
    expect(summarizeGadget([traffic, saturation, { ...traffic, title: "queue" }], time)).toBe("All 3 actions within their usual range.");
    expect(summarizeGadget([traffic], time)).toBe("request rate within its usual range.");
    expect(summarizeGadget([traffic, saturation, latency], time)).toBe("p99 latency rose 4.1× since 14:05 UTC; request rate and CPU within their usual range.");
  });

  it("counts failures and keeps answers and skipped actions", () => {
    expect(summarizeGadget([deploy, slow, skipped], time)).toBe(
      "Last deploy: v1.2.3 at 14:01; Pod restarts: not run, the issue has no attribute pod; 1 of 3 actions failed: Deploy status: timed out after 15 s.",
    );
  });

  it("words falls and changes from or to zero", () => {
    const fall = (ratio: number) => finding("rps", { status: "abnormal", shortAnswer: "", ratio, severity: ratio === 0 ? Infinity : 1 / ratio });
    expect(summarizeGadget([fall(0.25)], time)).toBe("rps fell to 0.25×.");
    expect(summarizeGadget([fall(0)], time)).toBe("rps fell to zero.");
    expect(summarizeGadget([finding("errors", { status: "abnormal", shortAnswer: "", ratio: Infinity, severity: Infinity })], time)).toBe("errors rose from zero.");
  });
});

describe("summarizeExecution", () => {
  const base = { time, attributes: { service: "checkout", env: "prod" }, baselineMs: 3_600_000 };

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

  it("says nothing abnormal was found, with the baseline period as configured", () => {
    expect(summarizeExecution({ ...base, attributes: {}, findings: [traffic, saturation] })).toBe(
      "Around 2026-11-21 14:05 UTC: nothing abnormal found. Within usual range: request rate, CPU.",
    );
    const drop = finding("rps", { status: "abnormal", shortAnswer: "", ratio: 0.25, severity: 4 });
    expect(summarizeExecution({ ...base, attributes: {}, baselineMs: 1_800_000, findings: [drop] })).toBe(
      "Around 2026-11-21 14:05 UTC: rps down to 0.25× its level in the 30 minutes before (Checkout).",
    );
  });

  it("says when nothing could be checked", () => {
    expect(summarizeExecution({ ...base, attributes: {}, findings: [slow] })).toBe(
      "Around 2026-11-21 14:05 UTC: nothing could be checked. Could not check: Deploy status (timed out after 15 s).",
    );
  });

  it("says when the abnormal findings started together", () => {
    const together = { ...errors, outcome: { ...errors.outcome, since: at("14:05") } };
    expect(summarizeExecution({ ...base, attributes: {}, findings: [latency, together] })).toContain("All of them started together at 14:05 UTC.");
  });

  it("is the same for the same findings", () => {
    const findings = [traffic, errors, latency, deploy, slow];
    expect(summarizeExecution({ ...base, findings })).toBe(summarizeExecution({ ...base, findings: [...findings] }));
  });
});
