import { PlaybookExecutionInput } from "@pes/contracts";
import { describe, expect, it } from "vitest";
import { createMonitorNameMatcher } from "./monitor-name-matcher.js";
import { PlaybookDefinition } from "./playbook-definition.js";
import { resolveExecution } from "./resolve-execution.js";

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
};
const now = new Date("2024-05-01T12:00:00.000Z");
const options = { now, allowedChatHosts: ["chat.example.com"] };
const link = "https://acme.slack.com/archives/C0123/p1700000000123456";

/** Parses with the contract first, as the API does, so each case is a body the API would pass on. */
function resolve(body: unknown) {
  return resolveExecution(PlaybookExecutionInput.parse(body), org, options);
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

  it("takes the time from the message link when bookName is given", () => {
    expect(resolve({ bookName: "node-cpu", messageLink: link })).toEqual({
      ok: true,
      value: { bookName: "node-cpu", attributes: {}, time: "2023-11-14T22:13:20.123Z" },
    });
  });

  it("says that a message link alone needs the chat integration", () => {
    expect(resolve({ messageLink: link })).toEqual({
      ok: false,
      issues: [
        {
          path: ["messageLink"],
          message:
            "identifying the playbook from a message link needs the chat integration, which is not configured; pass bookName",
        },
      ],
    });
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

  it("accepts a message link on a configured chat host", () => {
    expect(resolve({ bookName: "node-cpu", messageLink: "https://chat.example.com/archives/C1/p1700000000123456" }).ok).toBe(true);
  });

  it("says that required attributes cannot come from a message link yet", () => {
    expect(resolve({ bookName: "checkout-latency", messageLink: link })).toEqual({
      ok: false,
      issues: [
        {
          path: ["attributes", "service"],
          message:
            'Required attribute "service" is missing: it cannot be read from the message link until the chat ' +
            "integration is configured; pass title and attributes instead of messageLink",
        },
      ],
    });
  });

  it("collects issues of several fields", () => {
    const result = resolveExecution(
      { bookName: "nope", messageLink: "https://example.com/archives/C1/p1700000000123456" },
      org,
      options,
    );
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
    expect(result.ok && result.value.time).toBe("2024-03-01T00:30:00.500Z");
  });
});
