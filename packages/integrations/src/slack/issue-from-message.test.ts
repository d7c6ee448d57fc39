import { MAX_ATTRIBUTES, MAX_ATTRIBUTES_BYTES } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import type { ParsedAlertMessage } from "./alert-parsers/alert-parser.js";
import { issueFromAlertMessage } from "./issue-from-message.js";

const MESSAGE_TIME = new Date("2024-05-02T12:00:00Z");

function parsed(overrides: Partial<ParsedAlertMessage> = {}): ParsedAlertMessage {
  return { source: "generic", title: "t", titleCandidates: ["t"], labels: {}, fields: {}, details: "", links: [], ...overrides };
}

describe("issueFromAlertMessage", () => {
  it("keeps only labels with simple names and usable values", () => {
    const issue = issueFromAlertMessage(
      parsed({
        labels: {
          service: "checkout",
          "app.kubernetes.io/name": "checkout",
          "team-name": "payments",
          __alert_rule_uid__: "abc",
          "9lives": "x",
          blank: "   ",
          long: "x".repeat(1025),
          _private: " trimmed ",
          ["n".repeat(129)]: "too long a name",
        },
      }),
      MESSAGE_TIME,
    );
    expect(issue.attributes).toEqual({ service: "checkout", _private: "trimmed" });
  });

  it("keeps at most the API's number of attributes, in the message's order", () => {
    const labels = Object.fromEntries(Array.from({ length: MAX_ATTRIBUTES + 6 }, (_, index) => [`label_${index}`, "v"]));
    const attributes = issueFromAlertMessage(parsed({ labels }), MESSAGE_TIME).attributes;
    expect(Object.keys(attributes)).toHaveLength(MAX_ATTRIBUTES);
    expect(attributes).toHaveProperty("label_0");
    expect(attributes).not.toHaveProperty(`label_${MAX_ATTRIBUTES}`);
  });

  it("keeps the attributes within the API's bytes, leaving out a label that does not fit", () => {
    // Twenty values of 1000 bytes (é is two bytes in UTF-8) exceed 16 KiB; the small label after them fits.
    const big = Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`big_${String(index).padStart(2, "0")}`, "é".repeat(500)]));
    const attributes = issueFromAlertMessage(parsed({ labels: { ...big, small: "ok" } }), MESSAGE_TIME).attributes;
    const bytes = Object.entries(attributes).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + Buffer.byteLength(value), 0);
    expect(bytes).toBeLessThanOrEqual(MAX_ATTRIBUTES_BYTES);
    expect(Object.keys(attributes)).toHaveLength(17);
    expect(attributes.small).toBe("ok");
  });

  it("takes the alert's start as the issue time, else the message's time", () => {
    const started = new Date("2024-05-02T11:30:00Z");
    expect(issueFromAlertMessage(parsed({ startsAt: started }), MESSAGE_TIME)).toMatchObject({ time: "2024-05-02T11:30:00.000Z", timeSource: "alert" });
    expect(issueFromAlertMessage(parsed(), MESSAGE_TIME)).toMatchObject({ time: "2024-05-02T12:00:00.000Z", timeSource: "message" });
  });

  it("ignores a start time that cannot be the alert's: after the message, or before 2013", () => {
    for (const startsAt of [new Date("2024-05-02T12:10:00Z"), new Date("2001-01-01T00:00:00Z")]) {
      expect(issueFromAlertMessage(parsed({ startsAt }), MESSAGE_TIME)).toMatchObject({ time: "2024-05-02T12:00:00.000Z", timeSource: "message" });
    }
    // A tool's clock a little ahead of Slack's is still the alert's start.
    expect(issueFromAlertMessage(parsed({ startsAt: new Date("2024-05-02T12:01:00Z") }), MESSAGE_TIME).timeSource).toBe("alert");
  });

  it("caps title and details as the API does, without splitting a character", () => {
    const issue = issueFromAlertMessage(
      parsed({ title: `${"a".repeat(1022)}😀😀`, titleCandidates: ["x".repeat(2000)], details: "d".repeat(20_000) }),
      MESSAGE_TIME,
    );
    expect(issue.title).toBe(`${"a".repeat(1022)}…`);
    expect(issue.titleCandidates[0]).toHaveLength(1024);
    expect(issue.details).toHaveLength(16_384);
  });

  it("finds incident references in links and in labels named for them", () => {
    const issue = issueFromAlertMessage(
      parsed({
        links: [{ url: "https://acme.pagerduty.com/incidents/PABC123/timeline" }, { url: "https://example.com/incidents/PNOPE12" }],
        labels: { pagerduty_incident_id: "PABC123", opsgenie_alias: "checkout-latency", opsgenie_alert_id: "not-an-id" },
      }),
      MESSAGE_TIME,
    );
    expect(issue.incidentRefs).toEqual([
      { tool: "pagerduty", incidentId: "PABC123", url: "https://acme.pagerduty.com/incidents/PABC123/timeline" },
      { tool: "opsgenie", alias: "checkout-latency" },
    ]);
  });

  it("makes the incident a link names an attribute, unless a label names it", () => {
    const opsgenieId = "22a1d1f7-8a77-4e3a-8050-8c51405541c1-1714651100000";
    const links = [{ url: "https://acme.pagerduty.com/incidents/PABC123" }, { url: `https://acme.app.opsgenie.com/alert/detail/${opsgenieId}/details` }];
    expect(issueFromAlertMessage(parsed({ links, labels: { service: "checkout" } }), MESSAGE_TIME).attributes).toEqual({
      pagerduty_incident_id: "PABC123",
      opsgenie_alert_id: opsgenieId,
      service: "checkout",
    });
    const labelled = issueFromAlertMessage(parsed({ links, labels: { pagerduty_incident_id: "PLABEL1" } }), MESSAGE_TIME);
    expect(labelled.attributes).toEqual({ opsgenie_alert_id: opsgenieId, pagerduty_incident_id: "PLABEL1" });
  });

  it("keeps a message's fields apart from its labels, under the same rules", () => {
    const issue = issueFromAlertMessage(
      parsed({ labels: { service: "checkout" }, fields: { service: "checkout-prod", urgency: " High ", "team-name": "payments", blank: " " } }),
      MESSAGE_TIME,
    );
    expect(issue.attributes).toEqual({ service: "checkout" });
    expect(issue.fields).toEqual({ service: "checkout-prod", urgency: "High" });
  });
});
