import { AlertmanagerAlert, PlaybookExecutionInput } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { resolveAlert } from "./alert-execution.js";
import { explainAlert, explainExecution } from "./match-explanation.js";
import { createMonitorNameMatcher } from "./monitor-name-matcher.js";
import { PlaybookDefinition } from "./playbook-definition.js";

const gadgets = [{ title: "g", actions: [{ title: "a", dataSource: "metrics", prometheus: { query: "up" } }] }];
const definitions = [
  PlaybookDefinition.parse({
    name: "checkout-latency",
    monitorNames: ["High latency on {{service}} in {{env}}"],
    requiredAttributes: ["service"],
    gadgets,
  }),
  PlaybookDefinition.parse({ name: "any-latency", monitorNames: ["High latency on {{target}}"], gadgets }),
  PlaybookDefinition.parse({ name: "node-cpu", monitorNames: ["NodeHighCPU"], requiredAttributes: ["instance"], gadgets }),
];
const org = {
  playbooks: new Map(definitions.map((definition) => [definition.name, definition])),
  matcher: createMonitorNameMatcher(definitions),
};
const now = new Date("2024-05-01T12:00:00.000Z");
const options = { now, allowedChatHosts: [] };

const explain = (body: unknown) => explainExecution(PlaybookExecutionInput.parse(body), org, options);

describe("explainExecution", () => {
  it("answers the matched playbook, the monitor name, why the others lost, the attributes and their sources", () => {
    const result = explain({ title: "High latency on checkout in prod", time: "2024-05-01T10:00:00+02:00", attributes: { env: "staging" } });
    expect(result).toEqual({
      wouldRun: true,
      issues: [],
      bookName: "checkout-latency",
      chosenBy: "monitorName",
      monitorName: "High latency on {{service}} in {{env}}",
      titles: [
        {
          source: "title",
          text: "High latency on checkout in prod",
          matched: true,
          monitorNames: [
            expect.objectContaining({ bookName: "checkout-latency", verdict: "chosen", captured: { service: "checkout", env: "prod" } }),
            expect.objectContaining({ bookName: "any-latency", verdict: "outranked", reason: expect.stringContaining("more specific") }),
            { bookName: "node-cpu", monitorName: "NodeHighCPU", verdict: "no_match", reason: 'the text does not begin with "NodeHighCPU"' },
          ],
        },
      ],
      attributes: { service: { value: "checkout", source: "title" }, env: { value: "staging", source: "explicit" } },
      requiredAttributes: ["service"],
      missingAttributes: [],
      time: "2024-05-01T08:00:00.000Z",
      timeSource: "explicit",
    });
  });

  it("answers an unmatched title with the execution's own 400 issue and every monitor name's reason", () => {
    const result = explain({ title: "Disk full on db-1", time: "2024-05-01T10:00:00Z" });
    expect(result.wouldRun).toBe(false);
    expect(result.issues).toEqual([{ path: ["body", "title"], message: "No playbook's monitor name matches this title" }]);
    expect(result.bookName).toBeUndefined();
    expect(result.titles[0]?.monitorNames.map((verdict) => verdict.verdict)).toEqual(["no_match", "no_match", "no_match"]);
    expect(result.attributes).toEqual({});
  });

  it("lists the required attributes still missing, as the execution's issues", () => {
    const result = explain({ bookName: "node-cpu" });
    expect(result).toMatchObject({
      wouldRun: false,
      bookName: "node-cpu",
      chosenBy: "bookName",
      missingAttributes: ["instance"],
      time: "2024-05-01T12:00:00.000Z",
      timeSource: "now",
      issues: [{ path: ["body", "attributes", "instance"], message: expect.stringContaining("missing") }],
    });
  });

  it("with bookName, explains the title against that playbook's monitor names only", () => {
    const result = explain({ bookName: "any-latency", title: "High latency on checkout in prod" });
    expect(result.titles[0]?.monitorNames).toEqual([expect.objectContaining({ bookName: "any-latency", verdict: "chosen" })]);
    expect(result.attributes).toEqual({ target: { value: "checkout in prod", source: "title" } });
  });
});

describe("explainAlert", () => {
  const alert = (value: unknown) => AlertmanagerAlert.parse(value);

  it("tries alertname, then summary, and says which labels became attributes", () => {
    const result = explainAlert(
      alert({
        labels: { alertname: "CheckoutSlow", service: "cart", instance: "i-1" },
        annotations: { summary: "High latency on checkout in prod" },
        startsAt: "2024-05-01T11:00:00Z",
      }),
      org,
      now,
    );
    expect(result).toMatchObject({
      wouldRun: true,
      issues: [],
      bookName: "checkout-latency",
      titles: [
        { source: "labels.alertname", text: "CheckoutSlow", matched: false },
        { source: "annotations.summary", text: "High latency on checkout in prod", matched: true },
      ],
      attributes: { service: { value: "cart", source: "labels" }, env: { value: "prod", source: "title" } },
      ignoredLabels: [
        { name: "alertname", reason: 'not an attribute of playbook "checkout-latency"' },
        { name: "instance", reason: 'not an attribute of playbook "checkout-latency"' },
      ],
      time: "2024-05-01T11:00:00.000Z",
      timeSource: "startsAt",
    });
  });

  it("agrees with resolveAlert on matched, incomplete and unmatched alerts", () => {
    const alerts = [
      alert({ labels: { alertname: "NodeHighCPU", instance: "i-1" } }),
      alert({ labels: { alertname: "NodeHighCPU" } }),
      alert({ labels: { alertname: "Watchdog" } }),
    ];
    for (const item of alerts) {
      const resolved = resolveAlert(item, org, now);
      const explained = explainAlert(item, org, now);
      expect(explained.wouldRun).toBe(resolved.ok);
      if (resolved.ok) {
        expect(explained.bookName).toBe(resolved.value.bookName);
        expect(Object.fromEntries(Object.entries(explained.attributes).map(([name, { value }]) => [name, value]))).toEqual(resolved.value.attributes);
      }
    }
    expect(explainAlert(alerts[1] as AlertmanagerAlert, org, now).issues).toEqual([
      { path: ["body", "alert", "labels", "instance"], message: 'Required attribute "instance" is missing: add the label, or capture it in a monitor name' },
    ]);
    expect(explainAlert(alerts[2] as AlertmanagerAlert, org, now)).toMatchObject({
      issues: [{ path: ["body", "alert"], message: expect.stringContaining('"Watchdog"') }],
      ignoredLabels: [{ name: "alertname", reason: "no playbook matched" }],
    });
  });

  it("says a resolved alert starts nothing", () => {
    const result = explainAlert(alert({ status: "resolved", labels: { alertname: "NodeHighCPU", instance: "i-1" } }), org, now);
    expect(result.wouldRun).toBe(false);
    expect(result.issues).toEqual([{ path: ["body", "alert", "status"], message: "a resolved alert starts nothing" }]);
  });
});
