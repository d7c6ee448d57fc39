import { describe, expect, it } from "vitest";
import { alertTitles, resolveAlert } from "./alert-execution.js";
import { createMonitorNameMatcher } from "./monitor-name-matcher.js";
import { PlaybookDefinition } from "./playbook-definition.js";

const gadgets = [{ title: "g", actions: [{ title: "a", dataSource: "metrics", prometheus: { query: "up" } }] }];
const definitions = [
  PlaybookDefinition.parse({
    name: "checkout-latency",
    monitorNames: ["High latency on {{service}} in {{env}}", "CheckoutLatencyHigh"],
    requiredAttributes: ["service"],
    optionalAttributes: ["region"],
    gadgets,
  }),
  PlaybookDefinition.parse({ name: "node-cpu", monitorNames: ["NodeHighCPU"], requiredAttributes: ["instance"], gadgets }),
];
const org = {
  playbooks: new Map(definitions.map((definition) => [definition.name, definition])),
  matcher: createMonitorNameMatcher(definitions),
};
const now = new Date("2024-05-01T12:00:00.000Z");

describe("alertTitles", () => {
  it("tries alertname, then summary, each once, normalised and never blank", () => {
    expect(alertTitles({ labels: { alertname: "X" }, annotations: { summary: " High  latency " } })).toEqual([
      { source: "labels.alertname", text: "X" },
      { source: "annotations.summary", text: "High latency" },
    ]);
    expect(alertTitles({ labels: { alertname: "Same" }, annotations: { summary: "Same" } })).toEqual([{ source: "labels.alertname", text: "Same" }]);
    expect(alertTitles({ labels: { alertname: "  " } })).toEqual([]);
    expect(alertTitles({ labels: { alertname: "a".repeat(5000) } })[0]?.text).toHaveLength(1024);
  });
});

describe("resolveAlert", () => {
  it("matches the alertname, takes the playbook's attributes from the labels and the time from startsAt", () => {
    const result = resolveAlert(
      {
        labels: { alertname: "CheckoutLatencyHigh", service: " checkout ", region: "eu", instance: "10.0.0.1:9100", severity: "page" },
        annotations: { summary: "High latency on web in prod", description: "p99 above 2 s" },
        startsAt: "2024-05-01T13:58:00.123456789+02:00",
      },
      org,
      now,
    );
    expect(result).toEqual({
      ok: true,
      value: {
        bookName: "checkout-latency",
        monitorName: "CheckoutLatencyHigh",
        title: "CheckoutLatencyHigh",
        attributes: { service: "checkout", region: "eu" },
        time: "2024-05-01T11:58:00.123Z",
        details: "p99 above 2 s",
      },
    });
  });

  it("falls back to the summary, whose captures the labels override", () => {
    const result = resolveAlert(
      { labels: { alertname: "Unknown", env: "staging" }, annotations: { summary: "High latency on checkout in prod" }, startsAt: "2024-05-01T10:00:00Z" },
      org,
      now,
    );
    expect(result).toMatchObject({
      ok: true,
      value: { bookName: "checkout-latency", title: "High latency on checkout in prod", attributes: { service: "checkout", env: "staging" } },
    });
  });

  it("reports an alert no monitor name matches, naming the texts it tried", () => {
    expect(resolveAlert({ labels: { alertname: "Watchdog" }, annotations: { summary: "Always firing" } }, org, now)).toEqual({
      ok: false,
      reason: "no_playbook",
      message: `no playbook's monitor name matches labels.alertname "Watchdog", annotations.summary "Always firing"`,
    });
    expect(resolveAlert({ labels: {} }, org, now)).toMatchObject({ ok: false, reason: "no_playbook", message: expect.stringContaining("neither") });
  });

  it("reports a match without a required attribute, naming the playbook and the attribute", () => {
    expect(resolveAlert({ labels: { alertname: "NodeHighCPU", instance: "  " } }, org, now)).toEqual({
      ok: false,
      reason: "missing_attributes",
      bookName: "node-cpu",
      missing: ["instance"],
      message: 'matches playbook "node-cpu", which requires attribute "instance": neither a label nor captured from the alert\'s text',
    });
  });

  it("uses the request time for an alert without startsAt, and leaves out overlong label values", () => {
    const result = resolveAlert({ labels: { alertname: "NodeHighCPU", instance: "i-1", region: "x".repeat(2000) } }, org, now);
    expect(result).toMatchObject({ ok: true, value: { time: "2024-05-01T12:00:00.000Z", attributes: { instance: "i-1" } } });
  });
});
