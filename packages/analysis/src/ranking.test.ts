import { describe, expect, it } from "vitest";
import type { ChangeEvidence, Evidence, MetricEvidence } from "./evidence.js";
import { rankFindings, roleOf, type Finding } from "./ranking.js";

const time = new Date("2026-11-21T14:08:00Z");
const at = (clock: string) => new Date(`2026-11-21T${clock}:00Z`);

function metric(action: string, severity: number, onset?: string): Finding<MetricEvidence> {
  return {
    gadget: "Metrics",
    evidence: {
      kind: "metric",
      action,
      labels: {},
      seriesCount: 1,
      value: severity,
      baseline: 1,
      low: 1,
      high: 1,
      ratio: severity,
      severity,
      abnormal: severity >= 2,
      baselineMs: 3_600_000,
      ...(onset === undefined ? {} : { onset: at(onset) }),
    },
  };
}

function change(action: string, clock: string): Finding<ChangeEvidence> {
  return { gadget: "Changes", evidence: { kind: "change", action, change: "deploy", subject: "checkout", at: at(clock) } };
}

const titles = (findings: ReadonlyArray<Finding>) => findings.map((finding) => finding.evidence.action);

describe("rankFindings", () => {
  it("puts symptoms strongest first, measured ones before alerts and events, ties in playbook order", () => {
    const alert: Finding = { gadget: "Alerts", evidence: { kind: "alert", action: "alert", name: "HighLatency" } };
    const warning: Finding = { gadget: "Pods", evidence: { kind: "event", action: "warning", subject: "pod/a", reason: "BackOff", warning: true } };
    const ranking = rankFindings([alert, metric("a", 3), metric("b", 5), warning, metric("c", 3), metric("flat", 1.2)], { time });
    expect(titles(ranking.symptoms)).toEqual(["b", "a", "c", "alert", "warning"]);
    expect(titles(ranking.normal)).toEqual(["flat"]);
    expect([alert, metric("a", 3), warning, metric("flat", 1.2), change("deploy", "14:01")].map((finding) => roleOf(finding.evidence))).toEqual([
      "symptom",
      "symptom",
      "symptom",
      "normal",
      "change",
    ]);
  });

  it("finds the symptoms that began first", () => {
    const ranking = rankFindings([metric("late", 9, "14:06"), metric("early", 3, "14:02"), metric("undated", 4), metric("also early", 5, "14:02")], { time });
    expect(ranking.first?.at).toEqual(at("14:02"));
    expect(titles(ranking.first?.symptoms ?? [])).toEqual(["also early", "early"]);
    expect(rankFindings([metric("undated", 4)], { time }).first).toBeUndefined();
  });

  it("takes the latest change within 30 min before the first symptom as the likely cause", () => {
    const ranking = rankFindings(
      [metric("latency", 4, "14:05"), change("old", "13:30"), change("recent", "13:50"), change("closest", "14:01"), change("after", "14:06")],
      { time },
    );
    expect(ranking.likelyCause?.finding.evidence.action).toBe("closest");
    expect(ranking.likelyCause?.leadMs).toBe(4 * 60_000);
    expect(titles(ranking.changes)).toEqual(["old", "recent", "after"]);
  });

  it("leaves a change outside the lookback, or after the first symptom, as a plain change", () => {
    const early = rankFindings([metric("latency", 4, "14:05"), change("early", "13:34")], { time });
    expect(early.likelyCause).toBeUndefined();
    expect(titles(early.changes)).toEqual(["early"]);
    expect(rankFindings([metric("latency", 4, "14:05"), change("early", "13:34")], { time, changeLookbackMs: 3_600_000 }).likelyCause?.leadMs).toBe(31 * 60_000);
    expect(rankFindings([metric("latency", 4, "14:05"), change("same minute", "14:05")], { time }).likelyCause?.leadMs).toBe(0);
    expect(rankFindings([metric("latency", 4, "14:05"), change("after", "14:06")], { time }).likelyCause).toBeUndefined();
  });

  it("names no likely cause without a symptom, and compares with the issue time when no symptom is dated", () => {
    expect(rankFindings([metric("flat", 1), change("deploy", "14:01")], { time }).likelyCause).toBeUndefined();
    const undated = rankFindings([metric("latency", 4), change("deploy", "14:01")], { time });
    expect(undated.likelyCause?.leadMs).toBe(7 * 60_000);
  });

  it("keeps playbook order between changes at the same time", () => {
    const ranking = rankFindings([metric("latency", 4, "14:05"), change("first", "14:01"), change("second", "14:01")], { time });
    expect(ranking.likelyCause?.finding.evidence.action).toBe("first");
    expect(titles(ranking.changes)).toEqual(["second"]);
  });

  it("sorts every other finding by its role, in playbook order", () => {
    const findings: Finding[] = (
      [
        { kind: "answer", action: "answer", text: "v1" },
        { kind: "no-data", action: "no data", reason: "empty" },
        { kind: "values", action: "values", values: [{ labels: {}, value: 1 }], count: 1 },
        { kind: "failed", action: "failed", reason: "timed out" },
        { kind: "skipped", action: "skipped", missing: ["pod"] },
        { kind: "event", action: "event", subject: "pod/a", reason: "Scheduled", warning: false },
      ] satisfies Evidence[]
    ).map((evidence) => ({ gadget: "G", evidence }));
    const ranking = rankFindings(findings, { time });
    expect(titles(ranking.answers)).toEqual(["answer", "values", "event"]);
    expect(titles(ranking.noData)).toEqual(["no data"]);
    expect(titles(ranking.failed)).toEqual(["failed"]);
    expect(titles(ranking.skipped)).toEqual(["skipped"]);
    expect(findings.map((finding) => roleOf(finding.evidence))).toEqual(["answer", "no-data", "answer", "failed", "skipped", "answer"]);
  });

  it("is the same for the same findings", () => {
    const findings = [metric("a", 3, "14:03"), change("deploy", "14:01"), metric("b", 3, "14:03")];
    expect(rankFindings(findings, { time })).toEqual(rankFindings([...findings], { time }));
  });
});
