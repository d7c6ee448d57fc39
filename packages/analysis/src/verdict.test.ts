import { Verdict } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import type { ChangeEvidence, Evidence, EventEvidence, MetricEvidence } from "./evidence.js";
import type { Finding } from "./ranking.js";
import { bottomLineOf } from "./summarize.js";
import { judgeExecution } from "./verdict.js";

const time = new Date("2026-11-21T14:08:00Z");
const at = (clock: string) => new Date(`2026-11-21T${clock}:00Z`);
const iso = (clock: string) => at(clock).toISOString();
const MINUTE = 60_000;

function finding(evidence: Evidence, gadget = "Checks"): Finding {
  return { gadget, evidence };
}

/** A metric `ratio` times its baseline of 1 (abnormal from 2×), as the analysis judges it. */
function metric(action: string, ratio: number, fields: Partial<MetricEvidence> = {}): Finding {
  return finding({
    kind: "metric",
    action,
    labels: {},
    seriesCount: 1,
    value: ratio,
    baseline: 1,
    low: 1,
    high: 1,
    ratio,
    severity: ratio > 0 ? Math.max(ratio, 1 / ratio) : 1000,
    abnormal: ratio >= 2 || ratio <= 0.5,
    baselineMs: 3_600_000,
    ...fields,
  });
}

function rollout(action: string, subject: string, clock: string, detail?: string): Finding {
  const change: ChangeEvidence = { kind: "change", action, change: "deploy", subject, at: at(clock), ...(detail === undefined ? {} : { detail }) };
  return finding(change, "Changes");
}

function event(action: string, subject: string, reason: string, clock: string): Finding {
  const evidence: EventEvidence = { kind: "event", action, subject, reason, warning: true, onset: at(clock) };
  return finding(evidence, "Kubernetes");
}

const judge = (findings: readonly Finding[]) => judgeExecution(findings, { time });

/** What a test compares of a finding of the verdict: its kind, subject and action. */
const named = (entries: ReadonlyArray<{ kind: string; subject?: string; action: string }>) =>
  entries.map(({ kind, subject, action }) => ({ kind, subject, action }));

describe("judgeExecution: the verdict of each incident", () => {
  it("a bad deploy followed by an error spike: the deploy, with high confidence", () => {
    const { verdict } = judge([
      metric("Error ratio of checkout", 7, { onset: at("14:03") }),
      metric("p99 latency of checkout", 3, { onset: at("14:04") }),
      rollout("Rollouts of checkout", "checkout", "14:02", "checkout:v1.42"),
      metric("CPU of checkout pods", 1.1),
      finding({ kind: "none", action: "Restarted pods of checkout", what: "pod restarts" }),
    ]);
    expect(verdict).toEqual({
      conclusion: "cause",
      cause: { kind: "deploy", subject: "checkout", detail: "checkout:v1.42", action: "Rollouts of checkout", onset: iso("14:02"), confidence: "high" },
      symptoms: [
        { kind: "rise", action: "Error ratio of checkout", onset: iso("14:03") },
        { kind: "rise", action: "p99 latency of checkout", onset: iso("14:04") },
      ],
      background: [],
      ruledOut: [],
      normal: [
        { action: "CPU of checkout pods", found: "within-usual-range" },
        { action: "Restarted pods of checkout", found: "none" },
      ],
      unchecked: [],
    });
    expect(Verdict.parse(verdict)).toEqual(verdict);
  });

  it("a database saturating its connections: the saturation by its series, the rollouts around it ruled out with why", () => {
    const connections = metric("Connections in use on orders-db", 2.6, {
      labels: { db: "orders-db" },
      onset: at("13:46"),
      saturation: { limit: 100, of: "max_connections", direction: "up" },
    });
    const { verdict } = judge([
      rollout("Rollouts in shop", "cart", "13:30"),
      connections,
      metric("Error ratio by service", 76, { labels: { service: "orders" }, onset: at("13:59") }),
      rollout("Rollouts in shop", "search", "13:51", "search:v3.1"),
    ]);
    expect(verdict.conclusion).toBe("cause");
    expect(verdict.cause).toEqual({
      kind: "saturation",
      subject: "db=orders-db",
      detail: "max_connections",
      action: "Connections in use on orders-db",
      onset: iso("13:46"),
      confidence: "high",
    });
    expect(verdict.ruledOut).toEqual([
      { kind: "deploy", subject: "cart", action: "Rollouts in shop", onset: iso("13:30"), why: "long-before", leadMs: 16 * MINUTE },
      {
        kind: "deploy",
        subject: "search",
        detail: "search:v3.1",
        action: "Rollouts in shop",
        onset: iso("13:51"),
        why: "after-first-symptom",
        leadMs: -5 * MINUTE,
      },
    ]);
  });

  it("a node under memory pressure OOM-killing pods: the memory; a crash loop from hours before is background", () => {
    const memory = metric("Memory used per node", 1.3, {
      labels: { node: "node-2" },
      value: 0.93,
      baseline: 0.7,
      abnormal: true,
      onset: at("13:52"),
      saturation: { limit: 0.9, direction: "up" },
    });
    const findings = [
      memory,
      event("Restarted pods in shop", "pod/recommendations-1", "OOMKilled", "14:01"),
      event("Restarted pods in shop", "pod/recommendations-2", "OOMKilled", "14:04"),
      event("Events of node-2", "node/node-2", "SystemOOM", "14:01"),
      event("Crash loops in shop", "pod/report-generator-1", "CrashLoopBackOff", "11:00"),
    ];
    const { verdict } = judge(findings);
    expect(verdict.conclusion).toBe("cause");
    expect(verdict.cause).toMatchObject({ kind: "saturation", subject: "node=node-2", action: "Memory used per node", confidence: "high" });
    expect(named(verdict.symptoms)).toEqual([
      { kind: "saturation", subject: "node=node-2", action: "Memory used per node" },
      { kind: "oom", subject: "pod/recommendations-1", action: "Restarted pods in shop" },
      { kind: "oom", subject: "pod/recommendations-2", action: "Restarted pods in shop" },
      { kind: "oom", subject: "node/node-2", action: "Events of node-2" },
    ]);
    expect(named(verdict.background)).toEqual([{ kind: "crash-loop", subject: "pod/report-generator-1", action: "Crash loops in shop" }]);
    // Without the memory at its threshold: the first kill, which began with the node's event (another action, the same minute).
    const kills = judge(findings.filter((item) => item !== memory)).verdict;
    expect(kills.conclusion).toBe("ambiguous");
    expect(named([kills.cause ?? { kind: "", action: "" }, kills.alternative ?? { kind: "", action: "" }])).toEqual([
      { kind: "oom", subject: "pod/recommendations-1", action: "Restarted pods in shop" },
      { kind: "oom", subject: "node/node-2", action: "Events of node-2" },
    ]);
    expect([kills.cause?.confidence, kills.alternative?.confidence]).toEqual(["low", "low"]);
  });

  it("an upstream outage: the probe fallen to zero as the errors began, with medium confidence", () => {
    const { verdict } = judge([
      metric("Error ratio of checkout", 9, { onset: at("14:02") }),
      metric("Probes of checkout's dependencies", 0, { labels: { dependency: "payments-provider" }, onset: at("14:02") }),
      metric("Failed calls from checkout", 40, { onset: at("14:03") }),
    ]);
    expect(verdict.conclusion).toBe("cause");
    expect(verdict.cause).toMatchObject({
      kind: "outage",
      subject: "dependency=payments-provider",
      action: "Probes of checkout's dependencies",
      confidence: "medium",
    });
  });

  it("an alert that fired before anything else: the alert, by its name, with medium confidence", () => {
    const alert = finding({ kind: "alert", action: "Related alerts", name: "PaymentsDown", subject: "service=payments", onset: at("14:00") }, "Alerts");
    const { verdict } = judge([metric("Error ratio of checkout", 9, { onset: at("14:03") }), alert]);
    expect(verdict.cause).toEqual({
      kind: "alert",
      subject: "service=payments",
      detail: "PaymentsDown",
      action: "Related alerts",
      onset: iso("14:00"),
      confidence: "medium",
    });
  });

  it("a deploy that is not the cause: no cause, the deploy ruled out as too long before, the first symptom among the symptoms", () => {
    const { verdict } = judge([
      rollout("Rollouts of catalog", "catalog", "13:36", "catalog:v2.8"),
      metric("Request rate of catalog", 3.3, { onset: at("13:55") }),
      metric("p99 latency of catalog", 4, { onset: at("13:56") }),
      metric("Error ratio of catalog", 8.6, { onset: at("13:57") }),
    ]);
    expect(verdict.conclusion).toBe("no-cause");
    expect(verdict.cause).toBeUndefined();
    expect(verdict.ruledOut).toEqual([
      {
        kind: "deploy",
        subject: "catalog",
        detail: "catalog:v2.8",
        action: "Rollouts of catalog",
        onset: iso("13:36"),
        why: "long-before",
        leadMs: 19 * MINUTE,
      },
    ]);
    expect(verdict.symptoms.map(({ action }) => action)).toEqual(["Error ratio of catalog", "p99 latency of catalog", "Request rate of catalog"]);
  });

  it("a healthy service: no cause, no symptom, the rollout followed by nothing abnormal, what was normal", () => {
    const { verdict } = judge([
      metric("Error ratio of checkout", 1.1),
      rollout("Rollouts of checkout", "checkout", "13:18", "checkout:v1.42"),
      finding({ kind: "none", action: "Alerts firing for checkout", what: "alerts firing" }),
    ]);
    expect(verdict).toEqual({
      conclusion: "no-cause",
      symptoms: [],
      background: [],
      ruledOut: [{ kind: "deploy", subject: "checkout", detail: "checkout:v1.42", action: "Rollouts of checkout", onset: iso("13:18"), why: "no-symptom" }],
      normal: [
        { action: "Error ratio of checkout", found: "within-usual-range" },
        { action: "Alerts firing for checkout", found: "none" },
      ],
      unchecked: [],
    });
  });

  it("nothing could be checked: no cause, and each action with why it could not check", () => {
    const { verdict } = judge([
      finding({ kind: "no-data", action: "p99 latency", reason: "empty" }),
      finding({ kind: "failed", action: "Deploy status", reason: "timed out after 15 s" }),
      finding({ kind: "skipped", action: "Pod restarts", missing: ["pod"] }),
      finding({ kind: "no-data", action: "request rate", reason: "stopped", lastAt: at("13:54") }),
    ]);
    expect(verdict).toEqual({
      conclusion: "no-cause",
      symptoms: [],
      background: [],
      ruledOut: [],
      normal: [],
      unchecked: [
        { action: "p99 latency", reason: "no-data", noData: "empty" },
        { action: "request rate", reason: "no-data", noData: "stopped" },
        { action: "Deploy status", reason: "failed", error: "timed out after 15 s" },
        { action: "Pod restarts", reason: "not-run", missing: ["pod"] },
      ],
    });
  });

  it("two deploys of different services a minute apart: ambiguous, naming both, neither ruled out", () => {
    const { verdict } = judge([
      metric("Error ratio", 7, { onset: at("14:04") }),
      rollout("Rollouts in shop", "cart", "14:01", "cart:v9"),
      rollout("Rollouts in shop", "checkout", "14:02", "checkout:v1.42"),
      rollout("Rollouts in shop", "search", "13:40"),
    ]);
    expect(verdict.conclusion).toBe("ambiguous");
    expect(verdict.cause).toMatchObject({ kind: "deploy", subject: "checkout", confidence: "low" });
    expect(verdict.alternative).toMatchObject({ kind: "deploy", subject: "cart", confidence: "low" });
    expect(verdict.ruledOut.map(({ subject, why }) => [subject, why])).toEqual([["search", "long-before"]]);
  });

  it("a metric that stopped moving, a log pattern and a warning of no cause's kind are symptoms of their own kinds", () => {
    const { verdict } = judge([
      metric("Queue depth", 3, { flat: true, onset: at("14:03") }),
      metric("Request rate", 0.2, { onset: at("14:03") }),
      finding({
        kind: "log-pattern",
        action: "Error logs",
        pattern: "timeout <_>",
        perMinute: 12,
        baselinePerMinute: 2,
        ratio: 6,
        severity: 6,
        abnormal: true,
        onset: at("14:04"),
        baselineMs: 3_600_000,
      }),
      event("Pod events", "pod/checkout-1", "BackOff", "14:05"),
    ]);
    expect(verdict.conclusion).toBe("no-cause");
    expect(verdict.symptoms.map(({ kind, detail }) => [kind, detail])).toEqual([
      ["log-pattern", "timeout <_>"],
      ["drop", undefined],
      ["flat", undefined],
      ["warning-event", "BackOff"],
    ]);
  });
});

describe("bottomLineOf renders the verdict's conclusion", () => {
  const cases: Array<readonly Finding[]> = [
    [rollout("Rollouts", "checkout", "14:02"), metric("Errors", 7, { onset: at("14:03") })],
    [rollout("Rollouts", "checkout", "13:30"), metric("Errors", 7, { onset: at("14:03") })],
    [rollout("Rollouts", "cart", "14:01"), rollout("Rollouts", "checkout", "14:02"), metric("Errors", 7, { onset: at("14:03") })],
    [metric("Errors", 1.1)],
    [finding({ kind: "failed", action: "Errors", reason: "timed out" })],
  ];

  it.each(cases)("names a likely cause exactly when the verdict has one (case %#)", (...findings) => {
    const judgement = judge(findings);
    const text = bottomLineOf(judgement, {});
    expect(/likely causes?\b/.test(text)).toBe(judgement.verdict.conclusion !== "no-cause");
    for (const cause of [judgement.verdict.cause, judgement.verdict.alternative]) {
      if (cause !== undefined) expect(text).toContain(`(${cause.action})`);
    }
  });
});
