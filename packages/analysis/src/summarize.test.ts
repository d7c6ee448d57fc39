import { describe, expect, it } from "vitest";
import type { ChangeEvidence, Evidence, MetricEvidence } from "./evidence.js";
import type { Finding } from "./ranking.js";
import { summarizeGadget } from "./summarize.js";
import { summarizeExecution } from "./testing/bottom-line.js";

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
const deployChange: ChangeEvidence = { kind: "change", action: "Last deploy", change: "deploy", subject: "checkout", detail: "v1.2.3", at: at("14:01") };
const deployed = finding(deployChange, "Changes");
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

  it("leads with a deploy shortly before the first symptom as the likely cause", () => {
    expect(summarizeExecution({ ...base, findings: [traffic, errors, latency, deployed, slow, skipped] })).toBe(
      "Around 2026-11-21 14:05 UTC for env=prod, service=checkout: likely cause: deploy of checkout to v1.2.3 at 14:01 UTC (Last deploy), 2 min before the first symptom (error rate rose 3× since 14:03 UTC). " +
        "Also abnormal: p99 latency 4.1× its level in the hour before (Checkout), since 14:05 UTC. " +
        "Within usual range: request rate. " +
        "Could not check: Deploy status (timed out after 15 s). " +
        "Not run: Pod restarts (the issue has no attribute pod).",
    );
  });

  it("names the strongest finding with its start, the others, and the first symptom, with a plain answer among other findings", () => {
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

  it("lists a change that is not the likely cause under Changes", () => {
    const early = finding({ ...deployChange, at: at("13:00") }, "Changes");
    expect(summarizeExecution({ ...base, attributes: {}, findings: [errors, latency, early] })).toBe(
      "Around 2026-11-21 14:05 UTC: p99 latency 4.1× its level in the hour before (Checkout), since 14:05 UTC. " +
        "Also abnormal: error rate 3× its level in the hour before (Errors), since 14:03 UTC. " +
        "First symptom: error rate (Errors) at 14:03 UTC, before the others: the likely place to look for the cause. " +
        "Changes: deploy of checkout to v1.2.3 at 13:00 UTC (Last deploy), 1 h 3 min before the first symptom, too long before to be the cause.",
    );
    const restart = finding({ kind: "change", action: "Restarts", change: "restart", subject: "pod/checkout-1", at: at("14:04") }, "Pods");
    expect(summarizeExecution({ ...base, attributes: {}, findings: [errors, deployed, restart] })).toBe(
      "Around 2026-11-21 14:05 UTC: likely cause: deploy of checkout to v1.2.3 at 14:01 UTC (Last deploy), 2 min before the first symptom (error rate rose 3× since 14:03 UTC). " +
        "Other changes: restart of pod/checkout-1 at 14:04 UTC (Restarts), 1 min after the first symptom: not the cause.",
    );
    expect(summarizeExecution({ ...base, attributes: {}, findings: [traffic, deployed] })).toBe(
      "Around 2026-11-21 14:05 UTC: nothing abnormal found. Changes: deploy of checkout to v1.2.3 at 14:01 UTC (Last deploy), followed by nothing abnormal. Within usual range: request rate.",
    );
  });

  it("says when the change came as the first symptoms began, or before the issue when no symptom is dated", () => {
    const together = finding({ ...errorRate, onset: at("14:05") }, "Errors");
    const atOnset = finding({ ...deployChange, at: at("14:05") }, "Changes");
    expect(summarizeExecution({ ...base, attributes: {}, findings: [latency, together, atOnset] })).toBe(
      "Around 2026-11-21 14:05 UTC: likely cause: deploy of checkout to v1.2.3 at 14:05 UTC (Last deploy), as the first symptoms began (p99 latency rose 4.1× since 14:05 UTC and error rate rose 3× since 14:05 UTC).",
    );
    const alert = finding({ kind: "alert", action: "Alerts", name: "HighLatency" }, "Alerts");
    expect(summarizeExecution({ ...base, attributes: {}, findings: [alert, deployed] })).toBe(
      "Around 2026-11-21 14:05 UTC: likely cause: deploy of checkout to v1.2.3 at 14:01 UTC (Last deploy), 4 min before the issue. Abnormal: Alerts: HighLatency firing.",
    );
  });

  it("ranks other kinds of symptoms after measured ones, in their own words", () => {
    const alert = finding({ kind: "alert", action: "Alerts", name: "HighLatency", level: "critical", onset: at("14:04") }, "Alerts");
    const oom = finding({ kind: "event", action: "Pod events", subject: "pod/checkout-1", reason: "OOMKilled", warning: true, onset: at("14:02") }, "Pods");
    const logs = finding(
      {
        kind: "log-pattern",
        action: "Log errors",
        pattern: "timeout <_>",
        perMinute: 12,
        baselinePerMinute: 2,
        ratio: 6,
        severity: 6,
        abnormal: true,
        onset: at("14:04"),
        baselineMs: HOUR,
      },
      "Logs",
    );
    const scheduled = finding(
      { kind: "event", action: "Pod events", subject: "pod/checkout-2", reason: "Scheduled", warning: false, onset: at("14:03") },
      "Pods",
    );
    expect(summarizeExecution({ ...base, attributes: {}, findings: [alert, oom, logs, latency, scheduled] })).toBe(
      "Around 2026-11-21 14:05 UTC: likely cause: Pod events: OOMKilled on pod/checkout-1 (Pods), at 14:02 UTC, 2 min before the next symptom. " +
        'Also abnormal: Log errors: "timeout <_>" 6× its rate in the hour before (Logs), since 14:04 UTC; p99 latency 4.1× its level in the hour before (Checkout), since 14:05 UTC; ' +
        "Alerts: HighLatency firing, since 14:04 UTC. " +
        "Other findings: Pod events: Scheduled on pod/checkout-2 at 14:03 UTC.",
    );
    const backOff = finding({ kind: "event", action: "Pod events", subject: "pod/checkout-1", reason: "BackOff", warning: true, onset: at("14:02") }, "Pods");
    expect(summarizeExecution({ ...base, attributes: {}, findings: [alert, backOff, logs, latency] })).toBe(
      'Around 2026-11-21 14:05 UTC: Log errors: "timeout <_>" 6× its rate in the hour before (Logs), since 14:04 UTC. ' +
        "Also abnormal: p99 latency 4.1× its level in the hour before (Checkout), since 14:05 UTC; Alerts: HighLatency firing, since 14:04 UTC; " +
        "Pod events: BackOff on pod/checkout-1 (Pods), at 14:02 UTC. " +
        "First symptom: Pod events (Pods) at 14:02 UTC, before the others: the likely place to look for the cause.",
    );
    expect(summarizeGadget([logs, alert, oom], time)).toBe(
      'Log errors: "timeout <_>" rose 6× since 14:04 UTC; Alerts: HighLatency firing since 14:04 UTC; Pod events: OOMKilled on pod/checkout-1 at 14:02 UTC.',
    );
  });

  it("names a probe fallen to zero before the errors as the likely cause, and a change after the first symptom as not the cause", () => {
    const probe = finding(metric("payments probe", { value: 0, baseline: 1, onset: at("14:01") }), "Payments");
    const hotfix = finding({ ...deployChange, at: at("14:04") }, "Changes");
    expect(summarizeExecution({ ...base, attributes: {}, findings: [errors, probe, hotfix] })).toBe(
      "Around 2026-11-21 14:05 UTC: likely cause: payments probe down to zero from its level in the hour before (Payments), since 14:01 UTC, 2 min before the next symptom. " +
        "Also abnormal: error rate 3× its level in the hour before (Errors), since 14:03 UTC. " +
        "Changes: deploy of checkout to v1.2.3 at 14:04 UTC (Last deploy), 3 min after the first symptom: not the cause.",
    );
  });

  it("names both candidates when two are too close to tell apart, and lists neither under Changes", () => {
    const cart = finding({ ...deployChange, subject: "cart", detail: "v9", at: at("14:00") }, "Changes");
    expect(summarizeExecution({ ...base, attributes: {}, findings: [errors, cart, deployed] })).toBe(
      "Around 2026-11-21 14:05 UTC: two likely causes, too close to tell apart: deploy of checkout to v1.2.3 at 14:01 UTC (Last deploy) and deploy of cart to v9 at 14:00 UTC (Last deploy), 2 min before the first symptom (error rate rose 3× since 14:03 UTC).",
    );
    const probe = finding(metric("payments probe", { value: 0, baseline: 1, onset: at("14:01") }), "Payments");
    const oom = finding({ kind: "event", action: "Pod events", subject: "pod/checkout-1", reason: "OOMKilled", warning: true, onset: at("14:02") }, "Pods");
    expect(summarizeExecution({ ...base, attributes: {}, findings: [errors, oom, probe] })).toBe(
      "Around 2026-11-21 14:05 UTC: two likely causes, too close to tell apart: payments probe down to zero from its level in the hour before (Payments), since 14:01 UTC and Pod events: OOMKilled on pod/checkout-1 (Pods), at 14:02 UTC. " +
        "Also abnormal: error rate 3× its level in the hour before (Errors), since 14:03 UTC.",
    );
  });

  it("rounds leads to what a person reads: whole seconds, whole minutes", () => {
    const seconds = (clock: string, offset: number) => new Date(at(clock).getTime() + offset);
    const probe = finding(metric("payments probe", { value: 0, baseline: 1, onset: at("14:01") }), "Payments");
    const followed = finding({ ...errorRate, onset: seconds("14:01", 1_750) }, "Errors");
    expect(summarizeExecution({ ...base, attributes: {}, findings: [followed, probe] })).toMatch(/since 14:01 UTC, 2 s before the next symptom\./);
    const late = finding({ ...errorRate, onset: seconds("14:02", 1_200) }, "Errors");
    expect(summarizeExecution({ ...base, attributes: {}, findings: [late, deployed] })).toMatch(/\(Last deploy\), 1 min before the first symptom/);
    const old = finding({ ...deployChange, at: seconds("13:44", -18_000) }, "Changes");
    expect(summarizeExecution({ ...base, attributes: {}, findings: [errors, old] })).toMatch(
      /\(Last deploy\), 19 min before the first symptom, too long before/,
    );
  });

  it("says when the likely cause began after another symptom", () => {
    const memory = finding(metric("Node memory", { value: 0.9, baseline: 0.4, onset: at("13:52") }), "Nodes");
    const oom = finding({ kind: "event", action: "Pod restarts", subject: "pod/checkout-1", reason: "OOMKilled", warning: true, onset: at("14:01") }, "Pods");
    expect(summarizeExecution({ ...base, attributes: {}, findings: [memory, oom, errors] })).toBe(
      "Around 2026-11-21 14:05 UTC: likely cause: Pod restarts: OOMKilled on pod/checkout-1 (Pods), at 14:01 UTC, 2 min before the next symptom. " +
        "It began after the first symptom: Node memory (Nodes) at 13:52 UTC. " +
        "Also abnormal: error rate 3× its level in the hour before (Errors), since 14:03 UTC; Node memory 2.3× its level in the hour before (Nodes), since 13:52 UTC.",
    );
  });

  it("keeps a symptom that began long before the issue apart, as background", () => {
    const disk = finding(metric("disk used", { value: 3, baseline: 1, onset: at("13:10") }), "Nodes");
    expect(summarizeExecution({ ...base, attributes: {}, findings: [disk, errors, deployed] })).toBe(
      "Around 2026-11-21 14:05 UTC: likely cause: deploy of checkout to v1.2.3 at 14:01 UTC (Last deploy), 2 min before the first symptom (error rate rose 3× since 14:03 UTC). " +
        "Abnormal since before the incident (background, not counted as its symptoms): disk used 3× its level in the hour before (Nodes), since 13:10 UTC.",
    );
  });

  it("says nothing abnormal began near the issue when all it found was so before, recurring warnings included", () => {
    const warning = (clock: string) =>
      finding({ kind: "event", action: "Warning events", subject: "pod/checkout-1", reason: "Unhealthy", warning: true, onset: at(clock) }, "Pods");
    expect(summarizeExecution({ ...base, attributes: {}, findings: [traffic, warning("13:20"), warning("14:02")] })).toBe(
      "Around 2026-11-21 14:05 UTC: nothing abnormal began near the issue time. " +
        "Abnormal since before the incident (background, not counted as its symptoms): Warning events: Unhealthy on pod/checkout-1 (Pods), at 13:20 UTC; " +
        "Warning events: Unhealthy on pod/checkout-1 (Pods), at 14:02 UTC. Within usual range: request rate.",
    );
    const oom = finding({ kind: "event", action: "Pod restarts", subject: "pod/checkout-1", reason: "OOMKilled", warning: true, onset: at("14:02") }, "Pods");
    expect(summarizeExecution({ ...base, attributes: {}, findings: [warning("13:20"), oom, errors] })).toMatch(
      /^Around 2026-11-21 14:05 UTC: likely cause: Pod restarts: OOMKilled/,
    );
  });

  it("judges nothing from answers alone: they are context, not normal", () => {
    expect(summarizeExecution({ ...base, attributes: {}, findings: [deploy] })).toBe(
      "Around 2026-11-21 14:05 UTC: nothing was compared with a baseline, so nothing was judged normal or abnormal. Other findings: Last deploy: v1.2.3 at 14:01.",
    );
    const none = finding({ kind: "none", action: "Related alerts", what: "alerts firing" }, "Alerts");
    expect(summarizeExecution({ ...base, attributes: {}, findings: [deploy, none] })).toBe(
      "Around 2026-11-21 14:05 UTC: nothing abnormal found. Found none: Related alerts: no alerts firing. Other findings: Last deploy: v1.2.3 at 14:01.",
    );
  });

  it("counts an action's events that are not warnings, with their reasons, instead of listing each; warnings stay listed", () => {
    const event = (reason: string, pod: string, warning = false) =>
      finding({ kind: "event", action: "Events in shop", subject: `pod/${pod}`, reason, warning, onset: at("14:01") }, "Kubernetes");
    const rollout = ["a", "b", "c"].flatMap((pod) => [event("Started", pod), event("Pulling", pod), event("Scheduled", pod)]);
    const rescale = finding(
      { kind: "event", action: "Autoscaler", subject: "hpa/checkout", reason: "SuccessfulRescale", warning: false, onset: at("14:02") },
      "Kubernetes",
    );
    const findings = [traffic, deploy, ...rollout, event("ScalingReplicaSet", "checkout"), rescale, event("BackOff", "a", true)];
    expect(summarizeExecution({ ...base, attributes: {}, findings })).toBe(
      "Around 2026-11-21 14:05 UTC: Events in shop: BackOff on pod/a (Kubernetes), at 14:01 UTC. Within usual range: request rate. " +
        "Other findings: Last deploy: v1.2.3 at 14:01; Events in shop: 10 normal events (Started, Pulling, Scheduled…); Autoscaler: SuccessfulRescale on hpa/checkout at 14:02 UTC.",
    );
    expect(summarizeGadget([...rollout.slice(0, 2), traffic], time)).toBe(
      "request rate within its usual range; Events in shop: 2 normal events (Started, Pulling).",
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

  it("says that nothing could be checked when every action found no data, and why", () => {
    const empty = (action: string): Finding => finding({ kind: "no-data", action, reason: "empty" });
    expect(
      summarizeExecution({ ...base, attributes: { service: "checkout" }, findings: [empty("p99 latency"), empty("error ratio"), empty("request rate")] }),
    ).toBe(
      "Around 2026-11-21 14:05 UTC for service=checkout: nothing could be checked: p99 latency, error ratio and request rate found no data in the window.",
    );
    const stopped = finding({ kind: "no-data", action: "CPU", reason: "stopped", lastAt: at("13:54") });
    const noBaseline = finding({ kind: "no-data", action: "errors", reason: "no-baseline", latest: 3, baselineMs: HOUR });
    expect(summarizeExecution({ ...base, attributes: {}, findings: [empty("p99 latency"), stopped, empty("error ratio"), noBaseline, slow] })).toBe(
      "Around 2026-11-21 14:05 UTC: nothing could be checked: p99 latency and error ratio found no data in the window; CPU found no data after 13:54 UTC; " +
        "errors found no data in the hour before to compare with. Could not check: Deploy status (timed out after 15 s).",
    );
  });

  it("lists the actions that found no data under their own heading, apart from what was normal", () => {
    const empty = finding({ kind: "no-data", action: "p99 latency", reason: "empty" });
    const stopped = finding({ kind: "no-data", action: "error ratio", reason: "stopped", lastAt: at("13:54") });
    expect(summarizeExecution({ ...base, attributes: {}, findings: [empty, traffic, stopped] })).toBe(
      "Around 2026-11-21 14:05 UTC: nothing abnormal found. Within usual range: request rate. No data: p99 latency in the window; error ratio after 13:54 UTC.",
    );
    expect(summarizeExecution({ ...base, attributes: {}, findings: [latency, empty] })).toBe(
      "Around 2026-11-21 14:05 UTC: p99 latency 4.1× its level in the hour before (Checkout), since 14:05 UTC. No data: p99 latency in the window.",
    );
    expect(summarizeGadget([traffic, empty], time)).toBe("request rate within its usual range; p99 latency: no data in the window.");
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
