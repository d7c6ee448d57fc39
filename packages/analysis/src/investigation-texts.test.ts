import { describe, expect, it } from "vitest";
import type { Evidence, MetricEvidence } from "./evidence.js";
import { actionResultOf } from "./evidence-text.js";
import type { Finding } from "./ranking.js";
import { summarizeGadget } from "./summarize.js";
import { summarizeExecution } from "./testing/bottom-line.js";

// The texts the engine's tests and the end-to-end tests assert today, from the evidence the connectors
// will return for the same data (the demo incident: p99 ≈ 0.49 s → ≈ 1.95 s at 14:05 UTC, 5xx share
// 1 % → 3 %, 50 req/s throughout). The engine renders them exactly like this once wired.

const time = new Date("2026-11-20T14:08:00Z");
const HOUR = 3_600_000;
const DEPLOYS = "http://127.0.0.1:4000/deploys/checkout";

function metric(action: string, fields: Partial<MetricEvidence> & Pick<MetricEvidence, "value" | "baseline">): MetricEvidence {
  const ratio = fields.value / fields.baseline;
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

/** What an execution renders: every action result, each gadget's highlights and the bottom line. */
function render(gadgets: ReadonlyArray<readonly [string, readonly Evidence[]]>, attributes: Record<string, string>) {
  const findings: Finding[] = gadgets.flatMap(([gadget, items]) => items.map((evidence) => ({ gadget, evidence })));
  return {
    actionResults: findings.map((finding) => actionResultOf(finding.evidence, time)),
    gadgetsHighlights: gadgets.map(([gadget]) =>
      summarizeGadget(
        findings.filter((finding) => finding.gadget === gadget),
        time,
      ),
    ),
    highlights: summarizeExecution({ time, attributes, findings }),
  };
}

const p99 = metric("p99 latency", { unit: "s", value: 1.95, baseline: 0.494, onset: new Date("2026-11-20T14:05:00Z"), link: "http://prometheus/graph" });
const errorRatio = metric("error ratio", { unit: "ratio", value: 0.03, baseline: 0.01, onset: new Date("2026-11-20T14:07:00Z") });
const requestRate = metric("request rate", { unit: "req/s", value: 50, baseline: 50 });
const lastDeploy = (text: string): Evidence => ({ kind: "answer", action: "Last deploy of checkout", text, link: DEPLOYS });

describe("the engine's texts, from evidence", () => {
  it("names what was abnormal first, per gadget and in the bottom line", () => {
    const result = render(
      [
        ["Latency of checkout", [p99]],
        ["Errors and traffic", [errorRatio, requestRate]],
        ["Changes", [lastDeploy("v1.2.3 at 14:01 UTC")]],
      ],
      { service: "checkout" },
    );
    expect(result.actionResults).toEqual([
      {
        title: "p99 latency",
        shortAnswer: "p99 latency 1.95 s, 3.9× its level in the hour before (494 ms), since 14:05 UTC",
        mostImportantLink: "http://prometheus/graph",
      },
      { title: "error ratio", shortAnswer: "error ratio 3%, 3× its level in the hour before (1%), since 14:07 UTC" },
      { title: "request rate", shortAnswer: "request rate 50 req/s, within its usual range (50 req/s over the hour before)" },
      { title: "Last deploy of checkout", shortAnswer: "Last deploy of checkout: v1.2.3 at 14:01 UTC", mostImportantLink: DEPLOYS },
    ]);
    expect(result.gadgetsHighlights).toEqual([
      "p99 latency rose 3.9× since 14:05 UTC.",
      "error ratio rose 3× since 14:07 UTC; request rate within its usual range.",
      "Last deploy of checkout: v1.2.3 at 14:01 UTC.",
    ]);
    expect(result.highlights).toBe(
      "Around 2026-11-20 14:08 UTC for service=checkout: p99 latency 3.9× its level in the hour before (Latency of checkout), since 14:05 UTC. " +
        "Also abnormal: error ratio 3× its level in the hour before (Errors and traffic), since 14:07 UTC. " +
        "First symptom: p99 latency (Latency of checkout) at 14:05 UTC, before the others: the likely place to look for the cause. " +
        "Within usual range: request rate. Other findings: Last deploy of checkout: v1.2.3 at 14:01 UTC.",
    );
    // The end-to-end tests' looser checks on the same texts.
    const latency = result.actionResults[0]?.shortAnswer ?? "";
    const ratio = Number(/(\d+(?:\.\d+)?)\s*×/.exec(latency)?.[1]);
    expect(ratio).toBeGreaterThan(3.5);
    expect(ratio).toBeLessThan(4.5);
    expect(latency).toMatch(/14:0[56]/);
    expect(result.highlights).toMatch(/p99 latency/i);
    expect(result.highlights).toMatch(/14:0[56]/);
    expect(result.actionResults[2]?.shortAnswer).not.toMatch(/×/);
  });

  it("reports a quiet service as within its usual range", () => {
    const quiet = (evidence: MetricEvidence) => ({ ...evidence, value: evidence.baseline, ratio: 1, severity: 1, abnormal: false });
    const { onset: _p99, ...p99Quiet } = quiet(p99);
    const { onset: _errors, ...errorsQuiet } = quiet(errorRatio);
    const result = render(
      [
        ["Latency of search", [p99Quiet]],
        ["Errors and traffic", [errorsQuiet, requestRate]],
        ["Changes", [{ kind: "answer", action: "Last deploy of search", text: "v9" }]],
      ],
      { service: "search" },
    );
    expect(result.gadgetsHighlights[0]).toBe("p99 latency within its usual range.");
    expect(result.highlights).toBe(
      "Around 2026-11-20 14:08 UTC for service=search: nothing abnormal found. Within usual range: p99 latency, error ratio, request rate. Other findings: Last deploy of search: v9.",
    );
    expect(result.actionResults[0]?.shortAnswer).not.toMatch(/×/);
  });

  it("turns a slow action into a timed-out finding", () => {
    const result = render(
      [
        ["Latency of checkout", [p99]],
        ["Errors and traffic", [errorRatio, requestRate]],
        ["Changes", [{ kind: "failed", action: "Last deploy of checkout", reason: "timed out after 300 ms", link: DEPLOYS }]],
      ],
      { service: "checkout" },
    );
    expect(result.actionResults[3]).toEqual({
      title: "Last deploy of checkout",
      shortAnswer: "Last deploy of checkout: timed out after 300 ms",
      mostImportantLink: DEPLOYS,
    });
    expect(result.gadgetsHighlights[2]).toBe("1 of 1 action failed: Last deploy of checkout: timed out after 300 ms.");
    expect(result.highlights).toContain("Could not check: Last deploy of checkout (timed out after 300 ms).");
    expect(result.actionResults[0]?.shortAnswer).toMatch(/since 14:05 UTC$/);
  });

  it("keeps failing actions as findings", () => {
    const failed = (action: string, reason: string): Evidence => ({ kind: "failed", action, reason });
    const result = render(
      [
        [
          "Checks",
          [
            { kind: "answer", action: "good", text: "ok /good" },
            failed("broken", "the data source answered HTTP 500 Internal Server Error"),
            failed("throws", "failed unexpectedly (details in the worker log)"),
            failed("wrong type", 'data source "api" is not a Prometheus data source'),
            failed("missing source", 'the organization has no data source "nowhere"'),
          ],
        ],
      ],
      { service: "checkout" },
    );
    expect(result.actionResults.map((action) => action.shortAnswer)).toEqual([
      "good: ok /good",
      "broken: the data source answered HTTP 500 Internal Server Error",
      "throws: failed unexpectedly (details in the worker log)",
      'wrong type: data source "api" is not a Prometheus data source',
      'missing source: the organization has no data source "nowhere"',
    ]);
    expect(result.gadgetsHighlights[0]).toBe(
      "good: ok /good; 4 of 5 actions failed: broken: the data source answered HTTP 500 Internal Server Error; throws: failed unexpectedly (details in the worker log); " +
        'wrong type: data source "api" is not a Prometheus data source; missing source: the organization has no data source "nowhere".',
    );
  });

  it("skips an action whose attributes are missing and says so", () => {
    const result = render(
      [
        [
          "Checks",
          [
            { kind: "skipped", action: "Pods of {{pod}}", missing: ["pod"] },
            { kind: "answer", action: "fine", text: "yes" },
          ],
        ],
      ],
      {},
    );
    expect(result.actionResults[0]).toEqual({ title: "Pods of {{pod}}", shortAnswer: "Pods of {{pod}}: not run, the issue has no attribute pod" });
    expect(result.highlights).toBe(
      "Around 2026-11-20 14:08 UTC: nothing was compared with a baseline, so nothing was judged normal or abnormal. Other findings: fine: yes. Not run: Pods of {{pod}} (the issue has no attribute pod).",
    );
  });

  it("says no data for a query an injection attempt turned into one matching nothing", () => {
    const result = render([["Latency of checkout", [{ kind: "no-data", action: "p99 latency", reason: "empty" }]]], { service: 'checkout"} or vector(1) #' });
    expect(result.actionResults[0]?.shortAnswer).toMatch(/no data/i);
    expect(result.actionResults[0]?.shortAnswer).not.toMatch(/×/);
  });
});

describe("a deploy before the demo incident, as a change evidence", () => {
  it("leads the bottom line as the likely cause, with how long before the first symptom it came", () => {
    const deploy: Evidence = {
      kind: "change",
      action: "Last deploy of checkout",
      change: "deploy",
      subject: "checkout",
      detail: "v1.2.3",
      at: new Date("2026-11-20T14:01:00Z"),
      link: DEPLOYS,
    };
    const result = render(
      [
        ["Latency of checkout", [p99]],
        ["Errors and traffic", [errorRatio, requestRate]],
        ["Changes", [deploy]],
      ],
      { service: "checkout" },
    );
    expect(result.highlights).toBe(
      "Around 2026-11-20 14:08 UTC for service=checkout: likely cause: deploy of checkout to v1.2.3 at 14:01 UTC (Last deploy of checkout), 4 min before the first symptom (p99 latency rose 3.9× since 14:05 UTC). " +
        "Also abnormal: error ratio 3× its level in the hour before (Errors and traffic), since 14:07 UTC. Within usual range: request rate.",
    );
    expect(result.gadgetsHighlights[2]).toBe("Last deploy of checkout: deploy of checkout to v1.2.3 at 14:01 UTC.");
    expect(result.actionResults[3]).toEqual({
      title: "Last deploy of checkout",
      shortAnswer: "Last deploy of checkout: deploy of checkout to v1.2.3 at 14:01 UTC",
      mostImportantLink: DEPLOYS,
    });
  });

  it("says nothing could be checked when every metric found no data", () => {
    const empty = (action: string): Evidence => ({ kind: "no-data", action, reason: "empty" });
    const result = render(
      [
        ["Latency of checkout", [empty("p99 latency")]],
        ["Errors and traffic", [empty("error ratio"), empty("request rate")]],
      ],
      { service: "checkout" },
    );
    expect(result.highlights).toBe(
      "Around 2026-11-20 14:08 UTC for service=checkout: nothing could be checked: p99 latency, error ratio and request rate found no data in the window.",
    );
    expect(result.gadgetsHighlights).toEqual([
      "p99 latency: no data in the window.",
      "error ratio: no data in the window; request rate: no data in the window.",
    ]);
  });
});
