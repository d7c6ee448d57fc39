import { PlaybookExecutionInput } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { createMonitorNameMatcher } from "./monitor-name-matcher.js";
import { PlaybookDefinition } from "./playbook-definition.js";
import { resolveExecution, resolveMessageExecution, type ResolveExecutionOrganization } from "./resolve-execution.js";

const gadgets = [{ title: "g", actions: [{ title: "a", dataSource: "metrics", prometheus: { query: "up" } }] }];
const definitions = [
  PlaybookDefinition.parse({
    name: "checkout-latency",
    monitorNames: ["High latency on {{service}} in {{env}}", "Checkout p99 latency above SLO"],
    requiredAttributes: ["service"],
    gadgets,
  }),
  PlaybookDefinition.parse({ name: "node-cpu", monitorNames: ["High CPU on {{host}}"], gadgets }),
  PlaybookDefinition.parse({ name: "two-required", requiredAttributes: ["service", "region"], gadgets }),
];
const org = {
  playbooks: new Map(definitions.map((definition) => [definition.name, definition])),
  matcher: createMonitorNameMatcher(definitions),
  slack: { allowedHosts: ["workspace.example.org"] },
  incidentTools: { pagerduty: {} },
};
/** The same organization without Slack or an incident tool. */
const bare = { playbooks: org.playbooks, matcher: org.matcher };
const now = new Date("2024-05-01T12:00:00.000Z");
const options = { now, allowedChatHosts: ["chat.example.com"] };
const link = "https://acme.slack.com/archives/C0123/p1700000000123456";

/** Parses with the contract first, as the API does, so each case is a body the API would pass on. */
function resolve(body: unknown, organization: Parameters<typeof resolveExecution>[1] = org) {
  return resolveExecution(PlaybookExecutionInput.parse(body), organization, options);
}

describe("resolveExecution", () => {
  it("runs the named playbook at now when only bookName is given", () => {
    expect(resolve({ bookName: "node-cpu" })).toEqual({
      ok: true,
      value: { bookName: "node-cpu", attributes: {}, time: "2024-05-01T12:00:00.000Z" },
    });
  });

  it("refuses an unknown bookName", () => {
    expect(resolve({ bookName: "nope", time: "2024-05-01T10:00:00Z" })).toEqual({
      ok: false,
      issues: [{ path: ["bookName"], message: 'Unknown playbook "nope" for this organization' }],
    });
  });

  it("matches bookName exactly (case-sensitive)", () => {
    expect(resolve({ bookName: "Node-CPU" }).ok).toBe(false);
  });

  it("identifies the playbook from the title and captures its attributes", () => {
    expect(resolve({ title: "High latency on checkout in prod", time: "2024-05-01T10:00:00+02:00" })).toEqual({
      ok: true,
      value: {
        bookName: "checkout-latency",
        attributes: { service: "checkout", env: "prod" },
        time: "2024-05-01T08:00:00.000Z",
      },
    });
  });

  it("lets explicit attributes override captured ones", () => {
    const result = resolve({
      title: "High latency on checkout in prod",
      time: "2024-05-01T10:00:00Z",
      attributes: { env: "staging", team: "payments" },
    });
    expect(result).toEqual({
      ok: true,
      value: {
        bookName: "checkout-latency",
        attributes: { service: "checkout", env: "staging", team: "payments" },
        time: "2024-05-01T10:00:00.000Z",
      },
    });
  });

  it("refuses a title that matches no monitor name", () => {
    expect(resolve({ title: "Disk full", time: "2024-05-01T10:00:00Z" })).toEqual({
      ok: false,
      issues: [{ path: ["title"], message: "No playbook's monitor name matches this title" }],
    });
  });

  it("with bookName and a title matching that playbook, takes the title's captures", () => {
    expect(resolve({ bookName: "checkout-latency", title: "High latency on cart in prod" })).toEqual({
      ok: true,
      value: { bookName: "checkout-latency", attributes: { service: "cart", env: "prod" }, time: now.toISOString() },
    });
  });

  it("with bookName, a title of another playbook is context only", () => {
    expect(resolve({ bookName: "node-cpu", title: "High latency on cart in prod" })).toEqual({
      ok: true,
      value: { bookName: "node-cpu", attributes: {}, time: now.toISOString() },
    });
    expect(resolve({ bookName: "checkout-latency", title: "High CPU on db-1" })).toEqual({
      ok: false,
      issues: [{ path: ["attributes", "service"], message: 'Required attribute "service" is missing: pass it in attributes' }],
    });
  });

  it("names every missing required attribute", () => {
    expect(resolve({ bookName: "two-required", attributes: { region: " " } })).toEqual({
      ok: false,
      issues: [
        { path: ["attributes", "service"], message: 'Required attribute "service" is missing: pass it in attributes' },
        { path: ["attributes", "region"], message: 'Required attribute "region" is missing: pass it in attributes' },
      ],
    });
  });

  it("accepts required attributes captured from the title", () => {
    expect(resolve({ title: "Checkout p99 latency above SLO", time: "2024-05-01T10:00:00Z", attributes: { service: "checkout" } }).ok).toBe(true);
    expect(resolve({ title: "Checkout p99 latency above SLO", time: "2024-05-01T10:00:00Z" })).toEqual({
      ok: false,
      issues: [{ path: ["attributes", "service"], message: 'Required attribute "service" is missing: pass it in attributes' }],
    });
  });

  it("leaves a message link to the worker, with bookName when given", () => {
    const linked = { channelId: "C0123", ts: "1700000000.123456", time: new Date("2023-11-14T22:13:20.123Z") };
    expect(resolve({ bookName: "node-cpu", messageLink: link })).toEqual({ ok: true, linked: { messageLink: link, link: linked, bookName: "node-cpu" } });
    expect(resolve({ messageLink: link, channelId: "C9", liveRun: true })).toEqual({ ok: true, linked: { messageLink: link, link: linked } });
    // Required attributes may come from the message: the worker checks them once it has read it.
    expect(resolve({ bookName: "checkout-latency", messageLink: link }).ok).toBe(true);
  });

  it("refuses a message link, a channel and liveRun the organization has no integration for, naming what is missing", () => {
    expect(resolve({ messageLink: link, channelId: "C9", liveRun: true }, bare)).toEqual({
      ok: false,
      issues: [
        {
          path: ["channelId"],
          message: "channelId needs Slack: the organization has no Slack app configured (slack.botToken in its organization file)",
        },
        {
          path: ["liveRun"],
          message:
            "liveRun needs an incident tool: the organization has no incident tool configured " +
            "(incidentTools.pagerduty or incidentTools.opsgenie in its organization file)",
        },
        {
          path: ["messageLink"],
          message: "messageLink needs Slack to read the message: the organization has no Slack app configured (slack.botToken in its organization file)",
        },
      ],
    });
    expect(resolve({ bookName: "node-cpu", liveRun: false }, bare).ok).toBe(true);
  });

  it("checks a Microsoft Teams channel against the organization's Teams account, and names the form it must have", () => {
    const teamsChannel = "fbe2bf47-16c8-47cf-b4a5-4b9b187c508b/19:4a95f7d8db4c4e7fae857bcebe0623e6@thread.tacv2";
    const issuesOf = (channelId: string, org: ResolveExecutionOrganization) => {
      const resolved = resolve({ bookName: "node-cpu", channelId }, org);
      return resolved.ok ? [] : resolved.issues.map((issue) => issue.message);
    };
    const teamsOnly = { ...bare, teams: {} };
    expect(issuesOf(teamsChannel, teamsOnly)).toEqual([]);
    expect(issuesOf(teamsChannel, { ...org, teams: {} })).toEqual([]);
    expect(issuesOf(teamsChannel, org)).toEqual([
      "channelId names a Microsoft Teams channel: the organization has no Microsoft Teams account configured (teams: in its organization file)",
    ]);
    expect(issuesOf("C0OPS", teamsOnly)).toEqual([
      "channelId needs Slack: the organization has no Slack app configured (slack.botToken in its organization file); a Microsoft Teams channel is written <team-id>/<channel-id>",
    ]);
    expect(issuesOf("19:4a95f7d8db4c4e7fae857bcebe0623e6@thread.tacv2", teamsOnly)).toEqual([
      "channelId looks like a Microsoft Teams channel but is not <team-id>/<channel-id> (the team's GUID, then the channel's 19:…@thread.tacv2 id)",
    ]);
  });

  it("refuses a message link on a host that is not a chat host", () => {
    expect(resolve({ bookName: "node-cpu", messageLink: "https://example.com/archives/C1/p1700000000123456" })).toEqual({
      ok: false,
      issues: [{ path: ["messageLink"], message: "messageLink host example.com is not an allowed chat host" }],
    });
    expect(resolve({ messageLink: "https://example.com/archives/C1/p1700000000123456" })).toEqual({
      ok: false,
      issues: [{ path: ["messageLink"], message: "messageLink host example.com is not an allowed chat host" }],
    });
  });

  it("refuses a message link whose time is more than a day after the request", () => {
    // 2024-05-02T12:00:01Z: a day and a second after `now`.
    expect(resolve({ bookName: "node-cpu", messageLink: "https://acme.slack.com/archives/C1/p1714651201000000" })).toEqual({
      ok: false,
      issues: [{ path: ["messageLink"], message: "messageLink time 2024-05-02T12:00:01.000Z is more than a day in the future" }],
    });
  });

  it("accepts a message link on a chat host of the service or of the organization's Slack", () => {
    expect(resolve({ bookName: "node-cpu", messageLink: "https://chat.example.com/archives/C1/p1700000000123456" }).ok).toBe(true);
    expect(resolve({ messageLink: "https://WORKSPACE.example.org/archives/C1/p1700000000123456" }).ok).toBe(true);
  });

  it("collects issues of several fields", () => {
    const result = resolveExecution({ bookName: "nope", messageLink: "https://example.com/archives/C1/p1700000000123456" }, org, options);
    expect(result.ok ? [] : result.issues.map((issue) => issue.path)).toEqual([["messageLink"], ["bookName"]]);
  });

  it("refuses an input that identifies no playbook (defence in depth: the contract refuses it first)", () => {
    expect(resolveExecution({ time: "2024-05-01T10:00:00Z" }, org, options)).toEqual({
      ok: false,
      issues: [{ path: ["bookName"], message: "One of bookName, messageLink or title is required to identify the playbook" }],
    });
  });

  it("normalises explicit times with offsets and fractions to UTC", () => {
    const result = resolve({ bookName: "node-cpu", time: "2024-02-29T23:30:00.5-01:00" });
    expect("value" in result && result.value.time).toBe("2024-03-01T00:30:00.500Z");
  });
});

describe("resolveMessageExecution", () => {
  const message = {
    titleCandidates: ["[FIRING:1] HighLatency", "High latency on checkout in prod"],
    attributes: { region: "eu" },
    time: "2024-05-01T09:59:00Z",
  };

  it("identifies the playbook from the first title candidate that matches, with its captures and the message's labels", () => {
    expect(resolveMessageExecution(message, undefined, org)).toEqual({
      ok: true,
      value: { bookName: "checkout-latency", attributes: { service: "checkout", env: "prod", region: "eu" }, time: "2024-05-01T09:59:00.000Z" },
    });
  });

  it("lets the message's labels override what a title captured", () => {
    const result = resolveMessageExecution({ ...message, attributes: { service: "payments" } }, undefined, org);
    expect(result.ok && result.value.attributes).toEqual({ service: "payments", env: "prod" });
  });

  it("takes a field only for an attribute the playbook declares and nothing else gave", () => {
    // PagerDuty's Service field names a PagerDuty service: the title's capture stays, as does a label.
    const fields = { service: "checkout-prod", env: "production", urgency: "High" };
    const result = resolveMessageExecution({ ...message, attributes: { env: "staging" }, fields }, undefined, org);
    expect(result.ok && result.value.attributes).toEqual({ service: "checkout", env: "staging" });

    // Captured by nothing: the declared attribute is filled from the field, an undeclared one is not.
    const untitled = resolveMessageExecution({ ...message, titleCandidates: ["Checkout p99 latency above SLO"], attributes: {}, fields }, undefined, org);
    expect(untitled).toEqual({
      ok: true,
      value: { bookName: "checkout-latency", attributes: { service: "checkout-prod", env: "production" }, time: "2024-05-01T09:59:00.000Z" },
    });
    // A blank label gives nothing: the field fills it.
    const blank = resolveMessageExecution(
      { ...message, titleCandidates: ["Checkout p99 latency above SLO"], attributes: { service: " " }, fields },
      undefined,
      org,
    );
    expect(blank.ok && blank.value.attributes.service).toBe("checkout-prod");
  });

  it("runs the named playbook, with captures only from its own monitor names", () => {
    expect(resolveMessageExecution({ ...message, attributes: { host: "web-1" } }, "node-cpu", org)).toEqual({
      ok: true,
      value: { bookName: "node-cpu", attributes: { host: "web-1" }, time: "2024-05-01T09:59:00.000Z" },
    });
  });

  it("refuses a message that matches no playbook, on messageLink, quoting its title", () => {
    expect(resolveMessageExecution({ ...message, titleCandidates: ["Disk full on db-1"] }, undefined, org)).toEqual({
      ok: false,
      issues: [{ path: ["messageLink"], message: "No playbook's monitor name matches the linked message's title \"Disk full on db-1\"; pass bookName" }],
    });
    expect(resolveMessageExecution({ ...message, titleCandidates: [] }, undefined, org)).toEqual({
      ok: false,
      issues: [{ path: ["messageLink"], message: "the linked message has no title to match against the playbooks' monitor names; pass bookName" }],
    });
  });

  it("refuses a message that lacks a required attribute, on messageLink, naming it", () => {
    expect(resolveMessageExecution({ ...message, titleCandidates: ["Checkout p99 latency above SLO"] }, undefined, org)).toEqual({
      ok: false,
      issues: [{ path: ["messageLink"], message: 'Playbook "checkout-latency" requires attribute "service", which the linked message does not carry' }],
    });
    expect(resolveMessageExecution({ ...message, attributes: {} }, "two-required", org)).toEqual({
      ok: false,
      issues: [{ path: ["messageLink"], message: 'Playbook "two-required" requires attributes "service", "region", which the linked message does not carry' }],
    });
  });

  it("refuses a message whose time is not one a job can carry, on messageLink", () => {
    // The second is what toISOString writes for a time in the year 10000.
    for (const time of ["yesterday", "+010000-01-01T00:00:00.000Z"]) {
      expect(resolveMessageExecution({ ...message, time }, undefined, org)).toEqual({
        ok: false,
        issues: [{ path: ["messageLink"], message: "the linked message has no usable time" }],
      });
    }
  });

  it("refuses a bookName the organization no longer has", () => {
    expect(resolveMessageExecution(message, "gone", org)).toEqual({
      ok: false,
      issues: [{ path: ["bookName"], message: 'Unknown playbook "gone" for this organization' }],
    });
  });
});
