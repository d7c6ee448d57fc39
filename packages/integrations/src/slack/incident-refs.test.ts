import { describe, expect, it } from "vitest";
import { opsgenieAlertId, pagerDutyIncidentId } from "./incident-refs.js";

describe("pagerDutyIncidentId", () => {
  it.each([
    ["https://acme.pagerduty.com/incidents/Q2W3E4R5T6Y7U8", "Q2W3E4R5T6Y7U8"],
    ["https://acme.eu.pagerduty.com/incidents/PT4KHLK?utm_source=slack", "PT4KHLK"],
    ["https://acme.pagerduty.com/incidents/PT4KHLK/log_entries", "PT4KHLK"],
  ])("reads %s", (url, id) => expect(pagerDutyIncidentId(url)).toBe(id));

  it.each([
    "http://acme.pagerduty.com/incidents/PT4KHLK",
    "https://pagerduty.com.evil.example/incidents/PT4KHLK",
    "https://acme.pagerduty.com/incidents/pt4khlk",
    "https://acme.pagerduty.com/incidents/PT4KHLK%2F..",
    "https://acme.pagerduty.com/services/PT4KHLK",
    "https://user@acme.pagerduty.com/incidents/PT4KHLK",
    "not a url",
  ])("refuses %s", (url) => expect(pagerDutyIncidentId(url)).toBeUndefined());
});

describe("opsgenieAlertId", () => {
  const id = "22a1d1f7-8a77-4e3a-8050-8c51405541c1-1689010338026";
  it.each([
    [`https://acme.app.opsgenie.com/alert/detail/${id}/details`, id],
    [`https://acme.app.eu.opsgenie.com/alert/detail/${id}`, id],
    ["https://app.opsgenie.com/alert/detail/22a1d1f7-8a77-4e3a-8050-8c51405541c1/logs", "22a1d1f7-8a77-4e3a-8050-8c51405541c1"],
  ])("reads %s", (url, expected) => expect(opsgenieAlertId(url)).toBe(expected));

  it.each([
    `https://acme.opsgenie.com.evil.example/alert/detail/${id}`,
    "https://acme.app.opsgenie.com/alert/detail/123/details",
    `https://acme.app.opsgenie.com/incident/detail/${id}`,
  ])("refuses %s", (url) => expect(opsgenieAlertId(url)).toBeUndefined());
});
