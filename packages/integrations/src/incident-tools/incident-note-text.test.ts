import type { PlaybookExecutionResult } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { executionMark, INCIDENT_NOTE_MAX_CHARS, renderIncidentNote } from "./incident-note-text.js";
import { findIncidentReference } from "./incident-reference.js";

describe("renderIncidentNote", () => {
  it("keeps a huge result within the note limit, its mark last, saying what it left out", () => {
    const huge: PlaybookExecutionResult = {
      highlights: "bottom line ".repeat(2_000),
      gadgetsHighlights: Array.from({ length: 300 }, (_, index) => ({ title: `Gadget ${index}`, highlights: "finding ".repeat(500) })),
      actionResults: Array.from({ length: 300 }, (_, index) => ({ shortAnswer: `answer ${index}`, mostImportantLink: `https://grafana.example/${index}` })),
    };
    const note = renderIncidentNote({ result: huge, executionId: "exec-huge", enrichmentLink: "https://acme.slack.com/archives/C1/p1" });

    expect(note.length).toBeLessThanOrEqual(INCIDENT_NOTE_MAX_CHARS);
    expect(note.endsWith(`\n\n${executionMark("exec-huge")}`)).toBe(true);
    expect(note).toMatch(/… \d+ more lines not shown\./);
    // The bottom line and the Slack thread come before anything that may be cut.
    expect(note.indexOf("Slack thread: https://acme.slack.com/archives/C1/p1")).toBeLessThan(note.indexOf("Findings:"));
  });

  it("drops control characters but keeps the lines", () => {
    const note = renderIncidentNote({ result: { highlights: "a\u0000b\u001b[31mc\nd\te" }, executionId: "x" });
    expect(note).toContain("ab[31mc\nd\te");
  });
});

describe("findIncidentReference", () => {
  it("prefers the attribute to a link, and refuses values that are no identifier", () => {
    const text = "https://acme.eu.pagerduty.com/incidents/PLINKED";
    expect(findIncidentReference("pagerduty", { attributes: { pagerduty_incident_id: "PATTR" }, messageText: text })).toEqual({
      tool: "pagerduty",
      incidentId: "PATTR",
    });
    expect(findIncidentReference("pagerduty", { attributes: {}, messageText: text })).toEqual({ tool: "pagerduty", incidentId: "PLINKED" });
    expect(findIncidentReference("pagerduty", { attributes: { pagerduty_incident_id: "P1/../x" } })).toBeUndefined();
    expect(findIncidentReference("pagerduty", { attributes: {}, messageText: "https://pagerduty.com.evil.example/incidents/P1" })).toBeUndefined();
    expect(findIncidentReference("opsgenie", { attributes: { opsgenie_alert_id: "abc-123", opsgenie_alias: "x" } })).toEqual({
      tool: "opsgenie",
      identifier: "abc-123",
      identifierType: "id",
    });
    expect(findIncidentReference("opsgenie", { attributes: { opsgenie_alert_id: "a/b" } })).toBeUndefined();
    expect(findIncidentReference("opsgenie", { attributes: {}, messageText: "https://x.app.opsgenie.com.evil.example/alert/detail/abc" })).toBeUndefined();
  });
});
