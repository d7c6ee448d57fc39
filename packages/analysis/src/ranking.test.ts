import { describe, expect, it } from "vitest";
import type { ChangeEvidence, EventEvidence, Evidence, MetricEvidence } from "./evidence.js";
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

function event(action: string, reason: string, clock: string): Finding<EventEvidence> {
  return { gadget: "Pods", evidence: { kind: "event", action, subject: "pod/checkout-1", reason, warning: true, onset: at(clock) } };
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

  it("takes the latest change within 10 min before the first symptom as the likely cause", () => {
    const ranking = rankFindings(
      [metric("latency", 4, "14:05"), change("old", "13:30"), change("recent", "13:57"), change("closest", "14:01"), change("after", "14:06")],
      { time },
    );
    expect(ranking.likelyCause?.basis).toBe("change");
    expect(ranking.likelyCause?.finding.evidence.action).toBe("closest");
    expect(ranking.likelyCause?.leadMs).toBe(4 * 60_000);
    expect(ranking.changes.map(({ evidence, verdict }) => [evidence.action, verdict])).toEqual([
      ["old", "long-before"],
      ["recent", "before-likely-cause"],
      ["after", "after-first-symptom"],
    ]);
  });

  it("leaves a change followed by nothing abnormal for over 10 min, or after the first symptom, as a plain change", () => {
    const early = rankFindings([metric("latency", 4, "14:05"), change("early", "13:54")], { time });
    expect(early.likelyCause).toBeUndefined();
    expect(early.changes.map(({ verdict, leadMs }) => [verdict, leadMs])).toEqual([["long-before", 11 * 60_000]]);
    expect(rankFindings([metric("latency", 4, "14:05"), change("early", "13:54")], { time, changeEffectMs: 3_600_000 }).likelyCause?.leadMs).toBe(11 * 60_000);
    expect(rankFindings([metric("latency", 4, "14:05"), change("within", "13:55")], { time }).likelyCause?.leadMs).toBe(10 * 60_000);
    expect(rankFindings([metric("latency", 4, "14:05"), change("same minute", "14:05")], { time }).likelyCause?.leadMs).toBe(0);
    const after = rankFindings([metric("latency", 4, "14:05"), change("after", "14:06")], { time });
    expect(after.likelyCause).toBeUndefined();
    expect(after.changes.map(({ verdict, leadMs }) => [verdict, leadMs])).toEqual([["after-first-symptom", -60_000]]);
  });

  it("names no likely cause without a symptom, and compares with the issue time when no symptom is dated", () => {
    const healthy = rankFindings([metric("flat", 1), change("deploy", "14:01")], { time });
    expect(healthy.likelyCause).toBeUndefined();
    expect(healthy.changes.map(({ verdict }) => verdict)).toEqual(["no-symptom"]);
    const undated = rankFindings([metric("latency", 4), change("deploy", "14:01")], { time });
    expect(undated.likelyCause?.leadMs).toBe(7 * 60_000);
  });

  it("keeps playbook order between changes at the same time", () => {
    const to = (finding: Finding<ChangeEvidence>, detail: string): Finding<ChangeEvidence> => ({ ...finding, evidence: { ...finding.evidence, detail } });
    const ranking = rankFindings([metric("latency", 4, "14:05"), to(change("first", "14:01"), "v1.42"), to(change("second", "14:01"), "v1.43")], { time });
    expect(ranking.likelyCause?.finding.evidence.action).toBe("first");
    expect(ranking.likelyCause?.rival).toBeUndefined();
    expect(titles(ranking.changes)).toEqual(["second"]);
  });

  it("counts a change seen by several actions once, at its first sighting", () => {
    const seen = (action: string, clock: string, detail?: string): Finding<ChangeEvidence> => {
      const base = change(action, clock);
      return detail === undefined ? base : { ...base, evidence: { ...base.evidence, detail } };
    };
    // The rollout's new ReplicaSet, its pods pulling the image a minute later, the deploy tracker's tag.
    const rollout = seen("Rollouts of checkout", "14:01", "checkout:v1.42, envoy:1.29");
    const pulls = seen("Events of checkout", "14:02", "checkout:v1.42");
    const tracker = seen("Last deploy", "14:02", "v1.42");
    const ranking = rankFindings([metric("latency", 4, "14:05"), tracker, pulls, rollout], { time });
    expect(ranking.likelyCause?.finding.evidence.action).toBe("Rollouts of checkout");
    expect(ranking.changes).toEqual([]);
    // Another version, another action's quick re-deploy, the same action's two ReplicaSets: changes of their own.
    const other = rankFindings([metric("latency", 4, "14:05"), rollout, seen("Events of checkout", "14:02", "checkout:v1.43")], { time });
    expect(other.likelyCause?.finding.evidence.action).toBe("Events of checkout");
    expect(titles(other.changes)).toEqual(["Rollouts of checkout"]);
    const twice = rankFindings([metric("latency", 4, "14:05"), rollout, seen("Rollouts of checkout", "14:02", "checkout:v1.42")], { time });
    expect(twice.changes.map(({ evidence }) => evidence.at)).toEqual([at("14:01")]);
    // Further apart than a rollout takes: two changes, the later one the cause.
    const later = rankFindings([metric("latency", 4, "14:05"), rollout, seen("Events of checkout", "14:04", "checkout:v1.42")], { time });
    expect(later.likelyCause?.finding.evidence.action).toBe("Events of checkout");
  });

  it("names a rival: a change of another subject within 2 min of the likely cause, not one further before", () => {
    const cart: Finding<ChangeEvidence> = { gadget: "Changes", evidence: { ...change("cart", "14:00").evidence, subject: "cart" } };
    const ranking = rankFindings([metric("latency", 4, "14:05"), cart, change("checkout", "14:01")], { time });
    expect(ranking.likelyCause?.finding.evidence.action).toBe("checkout");
    expect(ranking.likelyCause?.rival?.evidence.action).toBe("cart");
    const further = { ...cart, evidence: { ...cart.evidence, at: at("13:58") } };
    expect(rankFindings([metric("latency", 4, "14:05"), further, change("checkout", "14:01")], { time }).likelyCause?.rival).toBeUndefined();
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

/**
 * The rules of rankFindings, one incident each, from hand-built evidence (the scenarios in test/ run the
 * same rules on data served by real tools).
 */
describe("rankFindings on incidents", () => {
  const cause = (ranking: ReturnType<typeof rankFindings>) => [ranking.likelyCause?.basis, ranking.likelyCause?.finding.evidence.action];
  const fallen = (action: string, clock: string): Finding<MetricEvidence> => {
    const base = metric(action, 2, clock);
    return { ...base, evidence: { ...base.evidence, value: 0, ratio: 0, severity: Infinity, abnormal: true } };
  };

  it("a bad deploy followed by an error spike: the deploy", () => {
    const ranking = rankFindings([metric("error ratio", 7, "14:03"), metric("p99", 3, "14:04"), change("Rollouts", "14:02"), metric("cpu", 1.1)], { time });
    expect(cause(ranking)).toEqual(["change", "Rollouts"]);
    expect(ranking.likelyCause?.leadMs).toBe(60_000);
    expect(titles(ranking.likelyCause?.followers ?? [])).toEqual(["error ratio", "p99"]);
  });

  it("a database saturating its connections before the errors: the saturation, though its ratio is the smallest", () => {
    const saturated = metric("DB connections", 2.4, "13:50");
    const connections = { ...saturated, evidence: { ...saturated.evidence, saturation: { limit: 100, of: "max_connections", direction: "up" as const } } };
    const ranking = rankFindings([metric("error ratio", 7, "14:03"), connections, metric("latency", 3, "14:04")], { time });
    expect(cause(ranking)).toEqual(["symptom", "DB connections"]);
    expect(ranking.likelyCause?.leadMs).toBe(13 * 60_000);
    expect(titles(ranking.likelyCause?.followers ?? [])).toEqual(["error ratio", "latency"]);
    // The same rise without a limit reached is the first symptom, named as the place to look.
    const unsaturated = rankFindings([metric("error ratio", 7, "14:03"), saturated, metric("latency", 3, "14:04")], { time });
    expect(unsaturated.likelyCause).toBeUndefined();
    expect(titles(unsaturated.first?.symptoms ?? [])).toEqual(["DB connections"]);
  });

  it("a first symptom that shows harm rather than causes it is no cause; a metric fallen to zero is", () => {
    expect(rankFindings([metric("latency", 4, "14:01"), metric("error ratio", 7, "14:03")], { time }).likelyCause).toBeUndefined();
    const ranking = rankFindings([fallen("db up", "13:50"), metric("error ratio", 7, "14:03"), metric("latency", 3, "14:04")], { time });
    expect(cause(ranking)).toEqual(["symptom", "db up"]);
    expect(ranking.likelyCause?.leadMs).toBe(13 * 60_000);
    expect(titles(ranking.likelyCause?.followers ?? [])).toEqual(["error ratio", "latency"]);
  });

  it("a node under memory pressure OOM-killing pods: the memory at its threshold, else the kills", () => {
    const memory = metric("Node memory", 3, "13:52");
    const oom = event("Pod restarts", "OOMKilled", "14:01");
    const errors = metric("error ratio", 5, "14:01");
    // Memory at its threshold since 13:52: the cause, before the kills it led to.
    const full = { ...memory, evidence: { ...memory.evidence, saturation: { limit: 0.95, direction: "up" as const } } };
    expect(cause(rankFindings([errors, oom, full], { time }))).toEqual(["symptom", "Node memory"]);
    // Rising but not at its threshold: the kills, which began with the errors.
    const ranking = rankFindings([errors, oom, memory], { time });
    expect(cause(ranking)).toEqual(["symptom", "Pod restarts"]);
    expect(ranking.likelyCause?.leadMs).toBe(0);
    expect(titles(ranking.first?.symptoms ?? [])).toEqual(["Node memory"]);
    expect(cause(rankFindings([errors, oom], { time }))).toEqual(["symptom", "Pod restarts"]);
    expect(cause(rankFindings([errors, event("Pod events", "BackOff", "14:01")], { time }))).toEqual([undefined, undefined]);
  });

  it("a crash loop is the kubelet's BackOff restarting a failed container, not its BackOff pulling an image", () => {
    const backOff = (action: string, clock: string, message: string): Finding<EventEvidence> => {
      const base = event(action, "BackOff", clock);
      return { ...base, evidence: { ...base.evidence, message } };
    };
    const crashLoop = backOff("Events of checkout", "14:02", "Back-off restarting failed container app in pod checkout-1_shop(0c1f…) (7 times)");
    const ranking = rankFindings([metric("error ratio", 5, "14:04"), crashLoop], { time });
    expect(cause(ranking)).toEqual(["symptom", "Events of checkout"]);
    expect(ranking.likelyCause?.leadMs).toBe(2 * 60_000);
    const imagePull = backOff("Events of checkout", "14:02", 'Back-off pulling image "registry.example/checkout:v1.43"');
    expect(rankFindings([metric("error ratio", 5, "14:04"), imagePull], { time }).likelyCause).toBeUndefined();
  });

  it("an OOM kill, then a crash loop: the OOM kill first and the likely cause, the crash loop after it", () => {
    // Dated as the kubernetes connector dates them: the kill at the termination of a pod restarted once,
    // the crash loop (a recurring event, last seen at 14:07) when it began. Dated by its last occurrence,
    // the crash loop would read as the last symptom instead.
    const base = event("Restarted pods in shop", "OOMKilled", "14:01");
    const oom = { ...base, evidence: { ...base.evidence, subject: "pod/cart-redis-0", message: "container redis restarted once, last exit code 137" } };
    const backOff = event("Events in shop", "BackOff", "14:02");
    const crashLoop = { ...backOff, evidence: { ...backOff.evidence, message: "Back-off restarting failed container cart in pod cart-5d9-x2k (6 times)" } };
    const ranking = rankFindings([metric("error ratio", 5, "14:03"), crashLoop, oom], { time });
    expect(cause(ranking)).toEqual(["symptom", "Restarted pods in shop"]);
    expect(ranking.likelyCause?.leadMs).toBe(60_000);
    expect(titles(ranking.likelyCause?.followers ?? [])).toEqual(["error ratio", "Events in shop"]);
    expect(titles(ranking.first?.symptoms ?? [])).toEqual(["Restarted pods in shop"]);
    // Without the OOM kill, the crash loop comes first: it is the likely cause of the errors after it.
    expect(cause(rankFindings([metric("error ratio", 5, "14:03"), crashLoop], { time }))).toEqual(["symptom", "Events in shop"]);
  });

  it("two symptoms of a cause's kind from different actions within 2 min: the strongest, and the other as its rival", () => {
    const probe = fallen("payments probe", "14:01");
    const oom = event("Pod restarts", "OOMKilled", "14:02");
    const ranking = rankFindings([metric("error ratio", 9, "14:03"), oom, probe], { time });
    expect(cause(ranking)).toEqual(["symptom", "payments probe"]);
    expect(ranking.likelyCause?.rival?.evidence.action).toBe("Pod restarts");
    // The same action's second finding is one story, not a rival.
    const again = event("Pod restarts", "OOMKilled", "14:01");
    expect(rankFindings([metric("error ratio", 9, "14:03"), again, oom], { time }).likelyCause?.rival).toBeUndefined();
  });

  // 12_KubePodNotReady (test/scenarios/bundles/holmesgpt): its status and its events, read as two causes.
  it("the same fault of the same pod seen by two actions is one candidate, not its own rival", () => {
    const scheduling = event("Events", "FailedScheduling", "14:01");
    const status = event("Pod", "Unschedulable", "14:02");
    const ranking = rankFindings([metric("error ratio", 9, "14:03"), scheduling, status], { time });
    expect(cause(ranking)).toEqual(["symptom", "Events"]);
    expect(ranking.likelyCause?.rival).toBeUndefined();
  });

  it("an upstream dependency outage: its probe failing as the errors begin", () => {
    const ranking = rankFindings([metric("error ratio", 9, "14:02"), fallen("payments probe", "14:02"), metric("latency", 3, "14:03")], { time });
    expect(cause(ranking)).toEqual(["symptom", "payments probe"]);
    expect(ranking.likelyCause?.leadMs).toBe(0);
    const alert: Finding = { gadget: "Alerts", evidence: { kind: "alert", action: "Related alerts", name: "PaymentsDown", onset: at("14:00") } };
    expect(cause(rankFindings([metric("error ratio", 9, "14:02"), alert], { time }))).toEqual(["symptom", "Related alerts"]);
  });

  it("a deploy that is not the cause: two hours before, or after the first symptom", () => {
    const longBefore = rankFindings([change("Rollouts", "12:05"), fallen("db up", "13:50"), metric("error ratio", 7, "14:03")], { time });
    expect(cause(longBefore)).toEqual(["symptom", "db up"]);
    expect(longBefore.changes.map(({ verdict }) => verdict)).toEqual(["long-before"]);
    const after = rankFindings([metric("error ratio", 7, "14:00"), change("Rollouts", "14:04"), metric("latency", 3, "14:02")], { time });
    expect(after.likelyCause).toBeUndefined();
    expect(titles(after.first?.symptoms ?? [])).toEqual(["error ratio"]);
    expect(after.changes.map(({ verdict }) => verdict)).toEqual(["after-first-symptom"]);
  });

  // test/scenarios: deploy-not-cause and db-connections, where a change 16–19 min before the first
  // symptom was named as its cause.
  it("a deploy followed by 19 quiet minutes, then a traffic surge: the deploy is not the cause", () => {
    const ranking = rankFindings(
      [
        change("Rollouts of catalog", "13:36"),
        metric("Request rate of catalog", 3.3, "13:55"),
        metric("p99 latency of catalog", 4, "13:56"),
        metric("Error ratio of catalog", 8.6, "13:57"),
      ],
      { time },
    );
    expect(ranking.likelyCause).toBeUndefined();
    expect(titles(ranking.first?.symptoms ?? [])).toEqual(["Request rate of catalog"]);
    expect(ranking.changes.map(({ verdict, leadMs }) => [verdict, leadMs])).toEqual([["long-before", 19 * 60_000]]);
  });

  it("another service's rollout 16 min before connections begin to climb to their limit: the saturation is the cause", () => {
    const climbing = metric("Connections in use", 2.6, "13:46");
    const connections = { ...climbing, evidence: { ...climbing.evidence, saturation: { limit: 100, of: "max_connections", direction: "up" as const } } };
    const ranking = rankFindings(
      [change("Rollouts in shop", "13:30"), connections, metric("Error ratio by service", 76, "13:59"), change("Rollouts in shop", "13:51")],
      { time },
    );
    expect(cause(ranking)).toEqual(["symptom", "Connections in use"]);
    expect(ranking.changes.map(({ verdict }) => verdict)).toEqual(["long-before", "after-first-symptom"]);
  });

  it("a healthy system: no cause, whatever changed", () => {
    const ranking = rankFindings([metric("error ratio", 1.1), metric("latency", 1.3), change("Rollouts", "14:02")], { time });
    expect(ranking.symptoms).toEqual([]);
    expect(ranking.likelyCause).toBeUndefined();
  });

  it("a symptom that began long before the issue is background, not the first symptom", () => {
    const ranking = rankFindings([metric("disk", 3, "13:00"), change("Rollouts", "14:01"), metric("error ratio", 7, "14:03")], { time });
    expect(titles(ranking.background)).toEqual(["disk"]);
    expect(titles(ranking.symptoms)).toEqual(["error ratio"]);
    expect(ranking.first?.at).toEqual(at("14:03"));
    expect(cause(ranking)).toEqual(["change", "Rollouts"]);
  });

  it("names no cause for a lone symptom, or for symptoms that began together with none of a cause's kind", () => {
    expect(rankFindings([metric("error ratio", 7, "14:03")], { time }).likelyCause).toBeUndefined();
    expect(rankFindings([metric("error ratio", 7, "14:03"), metric("latency", 3, "14:03")], { time }).likelyCause).toBeUndefined();
    // An undated symptom is taken to begin at the issue time: a dated one before it precedes it.
    expect(cause(rankFindings([fallen("probe", "14:03"), metric("latency", 3)], { time }))).toEqual(["symptom", "probe"]);
    expect(rankFindings([fallen("probe", "14:03")], { time }).likelyCause).toBeUndefined();
    // An alert that began with the errors is more likely about them.
    const alert: Finding = { gadget: "Alerts", evidence: { kind: "alert", action: "Related alerts", name: "HighErrors", onset: at("14:03") } };
    expect(rankFindings([metric("error ratio", 7, "14:03"), alert], { time }).likelyCause).toBeUndefined();
  });

  it("a warning that recurs from before the incident is background, as is one from long before", () => {
    const ranking = rankFindings([event("Events", "Unhealthy", "13:20"), event("Events", "Unhealthy", "14:02"), event("Events", "OOMKilled", "14:03")], {
      time,
    });
    expect(ranking.background.map(({ evidence }) => evidence.onset)).toEqual([at("13:20"), at("14:02")]);
    expect(ranking.symptoms.map(({ evidence }) => evidence.kind === "event" && evidence.reason)).toEqual(["OOMKilled"]);
    expect(rankFindings([event("Events", "Unhealthy", "13:20"), metric("flat", 1.1)], { time }).symptoms).toEqual([]);
  });
});
