// Incident notes through undici against local servers speaking PagerDuty's REST API and Opsgenie's Alert
// API, with a real Redis holding each execution's record.
import type { PlaybookExecutionResult } from "@pes/contracts";
import { startFakeOpsgenie, startFakePagerDuty, startRedis, uniquePrefix, type FakeIncidentTool, type RedisHandle } from "@pes/local-services";
import { incidentNoteKey, keySpace, type KeySpace } from "@pes/jobs";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { addIncidentNote, type IncidentNoteContext, type IncidentNoteRequest } from "./add-incident-note.js";
import type { OpsgenieConfig, PagerDutyConfig } from "./incident-note-targets.js";
import { executionMark } from "./incident-note-text.js";

const PD_TOKEN = "pd-secret-token-u+abc";
const OG_KEY = "og-secret-key-1234-5678";
const INCIDENT = "Q2FX6LP4ZS9TPM";
const ALERT = { id: "22a1d1f7-8a77-4e3a-8050-8c51405541c1-1689010338026", alias: "checkout-latency" };

const result: PlaybookExecutionResult = {
  highlights: "Around 14:05 UTC for service=checkout: p99 latency rose 4.1×.",
  gadgetsHighlights: [{ title: "Golden signals", highlights: "p99 latency rose 4.1× since 14:02 UTC." }],
  actionResults: [{ title: "p99 latency", shortAnswer: "p99 latency rose 4.1× since 14:02 UTC", mostImportantLink: "https://grafana.example/d/1" }],
  actionableMitigations: [{ toolName: "argocd", customName: "Roll back checkout", url: "https://argocd.example/app/checkout" }],
};

let redisHandle: RedisHandle;
let redis: Redis;
let keys: KeySpace;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  redisHandle = await startRedis();
  redis = new Redis(redisHandle.url);
});

afterAll(async () => {
  redis.disconnect();
  await redisHandle.stop();
});

beforeEach(() => {
  keys = keySpace(uniquePrefix("incident-note"), redisHandle.url);
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function context(): IncidentNoteContext {
  return { redis, keys, deadline: Date.now() + 30_000 };
}

async function pagerDuty(): Promise<{ fake: FakeIncidentTool; tool: PagerDutyConfig }> {
  const fake = await startFakePagerDuty({ token: PD_TOKEN, incidents: [INCIDENT] });
  closers.push(() => fake.close());
  return { fake, tool: { tool: "pagerduty", apiToken: PD_TOKEN, fromEmail: "oncall@example.com", baseUrl: fake.url } };
}

async function opsgenie(): Promise<{ fake: FakeIncidentTool; tool: OpsgenieConfig }> {
  const fake = await startFakeOpsgenie({ apiKey: OG_KEY, alerts: [ALERT] });
  closers.push(() => fake.close());
  return { fake, tool: { tool: "opsgenie", apiKey: OG_KEY, baseUrl: fake.url } };
}

function request(tool: IncidentNoteRequest["tool"], overrides: Partial<IncidentNoteRequest> = {}): IncidentNoteRequest {
  return {
    executionId: "exec-1",
    tool,
    attributes: { pagerduty_incident_id: INCIDENT, opsgenie_alias: ALERT.alias },
    result,
    title: "High latency",
    ...overrides,
  };
}

describe("PagerDuty incident notes", () => {
  it("adds the result as a note with PagerDuty's headers and body", async () => {
    const { fake, tool } = await pagerDuty();
    const outcome = await addIncidentNote(context(), request(tool, { enrichmentLink: "https://acme.slack.com/archives/C1/p1700000000000100" }));

    expect(outcome).toEqual({ status: "added", tool: "pagerduty", incident: `PagerDuty incident ${INCIDENT}`, byThisCall: true });
    const [post] = fake.requests;
    expect(post).toMatchObject({ method: "POST", path: `/incidents/${INCIDENT}/notes` });
    expect(post?.headers).toMatchObject({
      authorization: `Token token=${PD_TOKEN}`,
      accept: "application/vnd.pagerduty+json;version=2",
      from: "oncall@example.com",
      "content-type": "application/json",
    });
    const [note] = fake.notes(INCIDENT);
    expect(post?.body).toEqual({ note: { content: note } });
    expect(note).toContain("Playbook findings: High latency\nAround 14:05 UTC for service=checkout: p99 latency rose 4.1×.");
    expect(note).toContain("Slack thread: https://acme.slack.com/archives/C1/p1700000000000100");
    expect(note).toContain("- Golden signals: p99 latency rose 4.1× since 14:02 UTC.");
    expect(note).toContain("- p99 latency rose 4.1× since 14:02 UTC (https://grafana.example/d/1)");
    expect(note).toContain("- Roll back checkout: https://argocd.example/app/checkout");
    expect(note?.endsWith(executionMark("exec-1"))).toBe(true);
  });

  it("finds the incident in a PagerDuty link of the alert's message", async () => {
    const { fake, tool } = await pagerDuty();
    const messageText = `[FIRING:1] HighLatency\nIncident: https://acme.pagerduty.com/incidents/${INCIDENT} (triggered)`;
    const outcome = await addIncidentNote(context(), request(tool, { attributes: {}, messageText }));

    expect(outcome.status).toBe("added");
    expect(fake.notes(INCIDENT)).toHaveLength(1);
  });

  it("sends nothing when nothing names an incident, or the id is no PagerDuty id", async () => {
    const { fake, tool } = await pagerDuty();
    const none = await addIncidentNote(context(), request(tool, { attributes: {}, messageText: "https://evil.example/x.pagerduty.com/incidents/P1" }));
    const traversal = await addIncidentNote(context(), request(tool, { executionId: "exec-2", attributes: { pagerduty_incident_id: "../../users" } }));

    expect(none).toEqual({ status: "no_reference", reason: expect.stringMatching(/no PagerDuty incident to add the note to: .*pagerduty_incident_id/) });
    expect(traversal.status).toBe("no_reference");
    expect(fake.requests).toHaveLength(0);
  });

  it("adds exactly one note across a retried job", async () => {
    const { fake, tool } = await pagerDuty();
    const first = await addIncidentNote(context(), request(tool));
    const retry = await addIncidentNote(context(), request(tool));

    expect(first).toMatchObject({ status: "added", byThisCall: true });
    expect(retry).toMatchObject({ status: "added", byThisCall: false });
    expect(fake.notes(INCIDENT)).toHaveLength(1);
    expect(fake.requests).toHaveLength(1);
    expect(await redis.exists(incidentNoteKey(keys, "exec-1"))).toBe(1);
  });

  it("after a try that lost PagerDuty's answer, finds its note instead of adding another", async () => {
    const { fake, tool } = await pagerDuty();
    fake.failNextAdd({ dropAfterHandling: true });

    const lost = await addIncidentNote(context(), request(tool));
    const retry = await addIncidentNote(context(), request(tool));

    expect(lost.status).toBe("failed");
    expect(retry).toMatchObject({ status: "added", byThisCall: false });
    expect(fake.notes(INCIDENT)).toHaveLength(1);
    expect(fake.requests.map((each) => each.method)).toEqual(["POST", "GET"]);
  });

  it("reports PagerDuty failing (500, then 401) without the key, and adds the note once it works", async () => {
    const { fake, tool } = await pagerDuty();
    fake.failNextAdd({ httpStatus: 500, body: { error: { message: `Internal error for Token token=${PD_TOKEN}` } } });
    const broken = await addIncidentNote(context(), request(tool));
    const unauthorized = await addIncidentNote(context(), request(tool, { executionId: "exec-401", tool: { ...tool, apiToken: "pd-wrong-secret" } }));

    expect(broken).toEqual({
      status: "failed",
      tool: "pagerduty",
      reason: expect.stringMatching(/^adding the note to PagerDuty incident Q2FX6LP4ZS9TPM failed: PagerDuty answered HTTP 500/),
    });
    expect(unauthorized).toEqual({
      status: "failed",
      tool: "pagerduty",
      reason: `adding the note to PagerDuty incident ${INCIDENT} failed: PagerDuty answered HTTP 401: Unauthorized`,
    });
    expect(JSON.stringify([broken, unauthorized])).not.toMatch(/secret/);
    expect(fake.notes(INCIDENT)).toHaveLength(0);

    // The 500 left it unsure: the retry looks for the note, finds none, and adds it.
    const retry = await addIncidentNote(context(), request(tool));
    expect(retry).toMatchObject({ status: "added", byThisCall: true });
    expect(fake.notes(INCIDENT)).toHaveLength(1);
  });

  it("waits out a 429's Retry-After", async () => {
    const { fake, tool } = await pagerDuty();
    fake.failNextAdd({ retryAfterSeconds: 1 });
    expect(await addIncidentNote(context(), request(tool))).toMatchObject({ status: "added" });
    expect(fake.notes(INCIDENT)).toHaveLength(1);
  });

  it("reports an unreachable PagerDuty", async () => {
    const { fake, tool } = await pagerDuty();
    await fake.close();
    const outcome = await addIncidentNote(context(), request(tool));
    expect(outcome).toEqual({
      status: "failed",
      tool: "pagerduty",
      reason: `adding the note to PagerDuty incident ${INCIDENT} failed: PagerDuty unreachable (ECONNREFUSED)`,
    });
  });
});

describe("Opsgenie alert notes", () => {
  it("adds the note by alias with Opsgenie's header and body (202)", async () => {
    const { fake, tool } = await opsgenie();
    const outcome = await addIncidentNote(context(), request(tool));

    expect(outcome).toEqual({ status: "added", tool: "opsgenie", incident: `Opsgenie alert with alias ${ALERT.alias}`, byThisCall: true });
    const [post] = fake.requests;
    expect(post).toMatchObject({ method: "POST", path: `/v2/alerts/${ALERT.alias}/notes`, query: { identifierType: "alias" } });
    expect(post?.headers.authorization).toBe(`GenieKey ${OG_KEY}`);
    expect(post?.body).toEqual({ note: fake.notes(ALERT.id)[0], source: "Playbook Execution Service" });
  });

  it("finds the alert by its id attribute, or by an Opsgenie link in the message", async () => {
    const { fake, tool } = await opsgenie();
    await addIncidentNote(context(), request(tool, { attributes: { opsgenie_alert_id: ALERT.id } }));
    await addIncidentNote(
      context(),
      request(tool, { executionId: "exec-2", attributes: {}, messageText: `See https://acme.app.eu.opsgenie.com/alert/detail/${ALERT.id}/details` }),
    );

    expect(fake.requests.map((each) => [each.path, each.query.identifierType])).toEqual([
      [`/v2/alerts/${ALERT.id}/notes`, "id"],
      [`/v2/alerts/${ALERT.id}/notes`, "id"],
    ]);
    expect(fake.notes(ALERT.id)).toHaveLength(2);
  });

  it("keeps an alias inside its path segment", async () => {
    const { fake, tool } = await opsgenie();
    const path = await addIncidentNote(context(), request(tool, { attributes: { opsgenie_alias: "../heartbeats/x?y=1#z" } }));
    // `..` alone would be resolved by URL parsing, encoded or not: it names no alert we can address.
    const dots = await addIncidentNote(context(), request(tool, { executionId: "exec-2", attributes: { opsgenie_alias: ".." } }));
    expect(path.status).toBe("failed");
    expect(dots.status).toBe("no_reference");
    expect(fake.requests.map((each) => each.path)).toEqual(["/v2/alerts/..%2Fheartbeats%2Fx%3Fy%3D1%23z/notes"]);
  });

  it("adds exactly one note across a retry that lost the answer", async () => {
    const { fake, tool } = await opsgenie();
    fake.failNextAdd({ dropAfterHandling: true });
    await addIncidentNote(context(), request(tool));
    const retry = await addIncidentNote(context(), request(tool));

    expect(retry).toMatchObject({ status: "added", byThisCall: false });
    expect(fake.notes(ALERT.id)).toHaveLength(1);
    expect(fake.requests.at(-1)?.query).toMatchObject({ identifierType: "alias", order: "desc" });
  });

  it("reports Opsgenie refusing the key without the key", async () => {
    const { fake, tool } = await opsgenie();
    const outcome = await addIncidentNote(context(), request({ ...tool, apiKey: "og-wrong-secret-key" }));
    expect(outcome).toEqual({
      status: "failed",
      tool: "opsgenie",
      reason: `adding the note to Opsgenie alert with alias ${ALERT.alias} failed: Opsgenie answered HTTP 401: Could not authenticate`,
    });
    expect(fake.notes(ALERT.id)).toHaveLength(0);
  });
});
