import type { FakeSlackMessage } from "@pes/local-services";
import { describe, expect, it } from "vitest";
import {
  alertmanagerAlertList,
  alertmanagerDefault,
  datadogMonitor,
  genericBlocks,
  grafanaDefault,
  pagerDutyAttachment,
  pagerDutyBlocks,
  personMessage,
} from "../testing/alert-messages.js";
import { issueFromSlackMessage } from "./issue-from-message.js";
import { parseAlertMessage } from "./parse-alert-message.js";
import { SlackMessage } from "./slack-message.js";

const MESSAGE_TIME = "2024-05-02T12:00:00.000Z";
const read = (message: FakeSlackMessage) => SlackMessage.parse(message);

describe("parseAlertMessage and issueFromSlackMessage, per alerting tool", () => {
  it("reads Alertmanager's default template: the subject as title, no label names to read", () => {
    const issue = issueFromSlackMessage(read(alertmanagerDefault));
    expect(issue).toMatchObject({
      source: "alertmanager",
      title: "HighCPU web-1:9100 (node critical)",
      titleCandidates: ["HighCPU web-1:9100 (node critical)", "[FIRING:1] HighCPU web-1:9100 (node critical)"],
      attributes: {},
      time: MESSAGE_TIME,
      timeSource: "message",
      incidentRefs: [],
    });
    expect(issue.attributes).toEqual({});
    expect(issue.fields).toEqual({});
  });

  it("reads Alertmanager's __text_alert_list: the labels common to the firing alerts, the alertname as title", () => {
    const issue = issueFromSlackMessage(read(alertmanagerAlertList));
    expect(issue).toMatchObject({
      source: "alertmanager",
      title: "HighCPU",
      titleCandidates: ["HighCPU", "HighCPU (node critical)", "[FIRING:2] HighCPU (node critical)"],
      time: MESSAGE_TIME,
    });
    expect(issue.attributes).toEqual({ alertname: "HighCPU", job: "node", severity: "critical" });
    expect(issue.fields).toEqual({});
    expect(issue.details).toContain("for 5 minutes & rising");
    expect(issue.details).toContain("g0.tab=1");
  });

  it("reads a single alert of __text_alert_list with all its labels, its summary first among titles", () => {
    const single = structuredClone(alertmanagerAlertList);
    const attachment = (single.attachments as Array<{ text: string; title: string }>)[0];
    if (attachment === undefined) throw new Error("fixture has an attachment");
    attachment.title = "[FIRING:1] HighCPU web-1:9100 (node critical)";
    attachment.text = attachment.text.split("Labels:").slice(0, 2).join("Labels:");

    const parsed = parseAlertMessage(read(single));

    expect(parsed.labels).toEqual({ alertname: "HighCPU", instance: "web-1:9100", job: "node", severity: "critical" });
    expect(parsed.titleCandidates).toEqual([
      "High CPU on web-1:9100",
      "HighCPU",
      "HighCPU web-1:9100 (node critical)",
      "[FIRING:1] HighCPU web-1:9100 (node critical)",
    ]);
  });

  it("reads Grafana's default template: labels, summary as title, the rule name among the titles", () => {
    const issue = issueFromSlackMessage(read(grafanaDefault));
    expect(issue).toMatchObject({
      source: "grafana",
      title: "High CPU on web-1",
      titleCandidates: [
        "High CPU on web-1",
        "High CPU usage",
        "High CPU usage Infrastructure (checkout web-1)",
        "[FIRING:1] High CPU usage Infrastructure (checkout web-1)",
      ],
      time: MESSAGE_TIME,
      timeSource: "message",
    });
    expect(issue.attributes).toEqual({ alertname: "High CPU usage", grafana_folder: "Infrastructure", instance: "web-1", service: "checkout" });
  });

  it("reads Grafana's resolved alerts when none is firing", () => {
    const resolved = structuredClone(grafanaDefault);
    const attachment = (resolved.attachments as Array<{ text: string; title: string }>)[0];
    if (attachment === undefined) throw new Error("fixture has an attachment");
    attachment.title = "[RESOLVED] High CPU usage Infrastructure (checkout web-1)";
    attachment.text = attachment.text.replace("**Firing**", "**Resolved**");
    const parsed = parseAlertMessage(read(resolved));
    expect(parsed).toMatchObject({ source: "grafana", title: "High CPU on web-1" });
    expect(parsed.labels).toEqual({ alertname: "High CPU usage", grafana_folder: "Infrastructure", instance: "web-1", service: "checkout" });
  });

  it("reads a Datadog monitor notification: monitor name, scope tags, the time it last triggered", () => {
    const issue = issueFromSlackMessage(read(datadogMonitor));
    expect(issue).toMatchObject({
      source: "datadog",
      title: "High CPU on web-1",
      titleCandidates: ["High CPU on web-1", "[P2] [Triggered on {host:web-1,env:prod}] High CPU on web-1"],
      time: "2024-05-02T11:55:00.000Z",
      timeSource: "alert",
    });
    expect(issue.attributes).toEqual({ host: "web-1", env: "prod" });
    expect(issue.details).toContain("was *> 90.0* on average");
  });

  it("recognizes Datadog by its 'last triggered' line when the title is the message's first line", () => {
    const parsed = parseAlertMessage(
      read({
        ts: "1714651200.000100",
        text: "*[Re-Triggered on {service:checkout}] Checkout errors*\nErrors are up.\n\nThe monitor was last triggered at Thu May 02 2024 11:50:10 UTC.",
      }),
    );
    expect(parsed).toMatchObject({ source: "datadog", title: "Checkout errors", startsAt: new Date("2024-05-02T11:50:10Z") });
    expect(parsed.labels).toEqual({ service: "checkout" });
  });

  it("reads PagerDuty's attachment message: the incident title, its fields apart from attributes, the incident as an attribute", () => {
    const issue = issueFromSlackMessage(read(pagerDutyAttachment));
    expect(issue).toMatchObject({
      source: "pagerduty",
      title: "High CPU on web-1",
      titleCandidates: ["High CPU on web-1", "[#1234] High CPU on web-1"],
      time: MESSAGE_TIME,
      incidentRefs: [{ tool: "pagerduty", incidentId: "Q2W3E4R5T6Y7U8", url: "https://acme.pagerduty.com/incidents/Q2W3E4R5T6Y7U8" }],
    });
    // The Service field names a PagerDuty service: a vendor field, not a label of the alert.
    expect(issue.attributes).toEqual({ pagerduty_incident_id: "Q2W3E4R5T6Y7U8" });
    expect(issue.fields).toEqual({ status: "Triggered", urgency: "High", service: "checkout", assigned: "@U0ONCALL" });
  });

  it("reads PagerDuty's blocks message: the linked title, section fields, an EU incident URL", () => {
    const issue = issueFromSlackMessage(read(pagerDutyBlocks));
    expect(issue).toMatchObject({
      source: "pagerduty",
      title: "Checkout latency above SLO",
      incidentRefs: [{ tool: "pagerduty", incidentId: "Q9Z8X7C6V5B4N3" }],
    });
    expect(issue.attributes).toEqual({ pagerduty_incident_id: "Q9Z8X7C6V5B4N3" });
    expect(issue.fields).toEqual({ service: "checkout", urgency: "High", status: "Triggered" });
  });

  it("reads another bot's blocks generically: header as title, its fields, a stated start, an Opsgenie link as an attribute", () => {
    const issue = issueFromSlackMessage(read(genericBlocks));
    expect(issue).toMatchObject({
      source: "generic",
      title: "Disk almost full on db-3",
      time: "2024-05-02T11:40:00.000Z",
      timeSource: "alert",
      incidentRefs: [{ tool: "opsgenie", alertId: "22a1d1f7-8a77-4e3a-8050-8c51405541c1-1714651100000" }],
    });
    expect(issue.attributes).toEqual({ opsgenie_alert_id: "22a1d1f7-8a77-4e3a-8050-8c51405541c1-1714651100000" });
    expect(issue.fields).toMatchObject({ host: "db-3", severity: "warning", alert_name: "DiskFull" });
    expect(issue.details).toContain("is below 5% & falling.");
    // With blocks, `text` is the notification fallback: it is not read again.
    expect(issue.details.match(/Disk almost full/g)).toHaveLength(1);
  });

  it("reads a person's message: first line as title, name = value lines, Slack's escaping undone", () => {
    const issue = issueFromSlackMessage(read(personMessage));
    expect(issue).toMatchObject({
      source: "generic",
      title: "checkout is slow for EU customers <!channel> — see the dashboard",
      time: MESSAGE_TIME,
      timeSource: "message",
    });
    expect(issue.attributes).toEqual({ service: "checkout", region: "eu-west-1" });
    expect(issue.fields).toEqual({});
    // Rich text repeats the message's text: it is read once.
    expect(issue.details.match(/checkout is slow/g)).toHaveLength(1);
  });

  it("reads an attachment-only message generically: its title and fields", () => {
    const parsed = parseAlertMessage(
      read({
        ts: "1714651200.000100",
        attachments: [
          {
            title: "Backup failed on &lt;db-1&gt;",
            text: "Job <https://ci.example/jobs/42|#42> exited with 2",
            fields: [
              { title: "Environment", value: "prod" },
              { title: "Job", value: "nightly-backup" },
            ],
          },
        ],
      }),
    );
    expect(parsed).toMatchObject({
      source: "generic",
      title: "Backup failed on <db-1>",
      links: [{ url: "https://ci.example/jobs/42", label: "#42" }],
    });
    expect(parsed.labels).toEqual({});
    expect(parsed.fields).toEqual({ environment: "prod", job: "nightly-backup" });
  });
});
