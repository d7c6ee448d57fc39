import { ExecutionJob, RequestRefusal } from "@pes/contracts";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CANNED_RESULT,
  FakeExecutionClient,
  rsaKey,
  signToken,
  startJwksServer,
  testApp,
  UnavailableExecutionClient,
  type JwksServer,
} from "../testing/fixtures.js";

const key = rsaKey("key-1");
const token = signToken({ key });
let jwks: JwksServer;

beforeAll(async () => {
  jwks = await startJwksServer([key.jwk]);
});

afterAll(async () => {
  await jwks.close();
});

function setup(client = new FakeExecutionClient(), limits: Parameters<typeof testApp>[0]["limits"] = {}) {
  const { app } = testApp({ jwksUrl: jwks.url, executionClient: client, limits });
  const post = (path: string) => request(app).post(path).set("Authorization", `Bearer ${token}`);
  return { app, client, execute: () => post("/playbook/execution"), batch: () => post("/playbook/execution/batch") };
}

describe("POST /playbook/execution", () => {
  it("enqueues the resolved execution and answers the result as is", async () => {
    const { client, execute } = setup();
    const response = await execute()
      .set("X-Request-Id", "req-123")
      .send({ title: "High latency on checkout in prod", time: "2024-04-30T10:00:00+02:00", details: "p99 up", channelId: "C1" });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(CANNED_RESULT);
    expect(client.requests).toEqual([
      {
        orgId: "acme",
        requestId: "req-123",
        bookName: "checkout-latency",
        time: "2024-04-30T08:00:00.000Z",
        attributes: { service: "checkout", env: "prod" },
        title: "High latency on checkout in prod",
        details: "p99 up",
        liveRun: false,
        channelId: "C1",
        // A caller of no team: it runs for no team.
        teams: [],
      },
    ]);
    expect(client.timeouts).toEqual([5000]);
  });

  it("defaults the time to the request time when only bookName is given", async () => {
    const { client, execute } = setup();
    const response = await execute().send({ bookName: "disk-full", liveRun: true });
    expect(response.status).toBe(200);
    expect(client.requests[0]).toMatchObject({ bookName: "disk-full", time: "2024-05-01T12:00:00.000Z", attributes: {}, liveRun: true });
  });

  it("sends a message link to the worker, which reads the message, with bookName when given", async () => {
    const { client, execute } = setup();
    const messageLink = "https://acme.slack.com/archives/C123/p1700000000123456";
    expect((await execute().set("X-Request-Id", "req-link").send({ messageLink, bookName: "disk-full" })).status).toBe(200);
    expect((await execute().send({ messageLink, channelId: "C123", liveRun: true })).status).toBe(200);
    expect(client.requests).toEqual([
      { kind: "message", orgId: "acme", requestId: "req-link", messageLink, bookName: "disk-full", liveRun: false, teams: [] },
      { kind: "message", orgId: "acme", requestId: expect.any(String), messageLink, liveRun: true, channelId: "C123", teams: [] },
    ]);
  });

  it("answers the worker's refusal of a linked message as a 400 on messageLink", async () => {
    const refusal = new RequestRefusal([{ path: ["messageLink"], message: "the Slack app is not a member of channel C123" }]);
    const { execute } = setup(new FakeExecutionClient(() => refusal));
    const response = await execute().send({ messageLink: "https://acme.slack.com/archives/C123/p1700000000123456" });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: [{ path: ["body", "messageLink"], message: "the Slack app is not a member of channel C123" }] });
  });

  it("refuses a message link, channelId and liveRun for an organization without Slack or an incident tool, naming what is missing", async () => {
    const client = new FakeExecutionClient();
    const { app } = testApp({ jwksUrl: jwks.url, executionClient: client });
    const globex = signToken({ key, claims: { org_id: "globex", client_id: "globex-ci" } });
    const response = await request(app)
      .post("/playbook/execution")
      .set("Authorization", `Bearer ${globex}`)
      .send({ messageLink: "https://globex.slack.com/archives/C1/p1700000000123456", channelId: "C1", liveRun: true });
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual([
      { path: ["body", "channelId"], message: expect.stringContaining("no Slack app configured (slack.botToken in its organization file)") },
      { path: ["body", "liveRun"], message: expect.stringContaining("no incident tool configured (incidentTools.pagerduty or incidentTools.opsgenie") },
      { path: ["body", "messageLink"], message: expect.stringContaining("no Slack app configured") },
    ]);
    expect(client.requests).toEqual([]);
  });

  it("refuses a message link on a chat host that is not allowed, unless CHAT_ALLOWED_HOSTS or the organization's Slack lists it", async () => {
    const messageLink = "https://chat.acme.test/archives/C123/p1700000000123456";
    const refused = await setup().execute().send({ messageLink, bookName: "disk-full" });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual([{ path: ["body", "messageLink"], message: "messageLink host chat.acme.test is not an allowed chat host" }]);

    const client = new FakeExecutionClient();
    const { app } = testApp({ jwksUrl: jwks.url, executionClient: client, allowedChatHosts: ["chat.acme.test"] });
    const accepted = await request(app).post("/playbook/execution").set("Authorization", `Bearer ${token}`).send({ messageLink, bookName: "disk-full" });
    expect(accepted.status).toBe(200);
    expect(client.requests[0]).toMatchObject({ kind: "message", messageLink });

    // acme's organization file lists chat.acme.example for its Slack.
    const own = await setup().execute().send({ messageLink: "https://chat.acme.example/archives/C123/p1700000000123456" });
    expect(own.status).toBe(200);
  });

  it("passes a failed execution's { error } through with 200", async () => {
    const { execute } = setup(new FakeExecutionClient(() => ({ error: "Execution timed out after 5000 ms" })));
    const response = await execute().send({ bookName: "disk-full" });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ error: "Execution timed out after 5000 ms" });
  });

  it("answers 400 with an issue per broken rule, paths from body", async () => {
    const { client, execute } = setup();
    const response = await execute().send({ attributes: { host: 1 }, liveRun: "yes" });
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual(
      expect.arrayContaining([
        { path: ["body", "attributes", "host"], message: expect.any(String) },
        { path: ["body", "liveRun"], message: expect.any(String) },
      ]),
    );
    expect(client.requests).toEqual([]);
  });

  it("answers 400 at body.attributes for more attributes than anybody needs", async () => {
    const { client, execute } = setup();
    const attributes = Object.fromEntries(Array.from({ length: 65 }, (_, index) => [`k${index}`, "v"]));
    const response = await execute().send({ bookName: "disk-full", attributes });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: [{ path: ["body", "attributes"], message: "attributes must hold at most 64 entries (got 65)" }],
    });
    expect(client.requests).toEqual([]);
  });

  it("names each unknown field", async () => {
    const { execute } = setup();
    const response = await execute().send({ bookName: "disk-full", bookname: "x", orgId: "globex" });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: [
        { path: ["body", "bookname"], message: 'Unknown field "bookname"' },
        { path: ["body", "orgId"], message: 'Unknown field "orgId"' },
      ],
    });
  });

  it("requires time without bookName or messageLink", async () => {
    const { execute } = setup();
    const response = await execute().send({ title: "High latency on checkout in prod" });
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual([{ path: ["body", "time"], message: expect.stringContaining("time is required") }]);
  });

  it("answers 400 at body.time for a time an offset carries outside the years 0000–9999 in UTC, and runs the extremes", async () => {
    const { client, execute } = setup();
    for (const time of ["0000-01-01T00:00:00+23:59", "9999-12-31T23:59:59-23:59"]) {
      const response = await execute().send({ bookName: "disk-full", time });
      expect({ time, status: response.status, body: response.body }).toEqual({
        time,
        status: 400,
        body: { error: [{ path: ["body", "time"], message: expect.any(String) }] },
      });
    }
    expect(client.requests).toEqual([]);

    for (const time of ["0000-01-01T23:59:00+23:59", "9999-12-31T00:00:59.999-23:59"]) {
      expect((await execute().send({ bookName: "disk-full", time })).status).toBe(200);
    }
    // In UTC, as the job carries them, and as the worker reads a job back.
    const times = client.requests.map((enqueued) => ("time" in enqueued ? enqueued.time : undefined));
    expect(times).toEqual(["0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z"]);
    for (const enqueued of client.requests) {
      expect(ExecutionJob.safeParse({ ...enqueued, v: 1, replyTo: "api-1", deadline: Date.now() + 60_000 }).error).toBeUndefined();
    }
  });

  it("answers 400 for an unknown playbook of the organization", async () => {
    const { execute } = setup();
    const response = await execute().send({ bookName: "no-such-playbook" });
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual([{ path: ["body", "bookName"], message: expect.stringContaining("Unknown playbook") }]);
  });

  it("answers 400 for a title no monitor name matches", async () => {
    const { execute } = setup();
    const response = await execute().send({ title: "Something else", time: "2024-04-30T10:00:00Z" });
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual([{ path: ["body", "title"], message: expect.any(String) }]);
  });

  it("answers 400 naming a missing required attribute", async () => {
    const { execute } = setup();
    const response = await execute().send({ bookName: "checkout-latency" });
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual([{ path: ["body", "attributes", "service"], message: expect.any(String) }]);
  });

  it("does not let the body choose another organization's playbook", async () => {
    // globex has disk-full only; acme's caller asking for it by name gets acme's, and acme's org id.
    const { client, execute } = setup();
    await execute().send({ bookName: "disk-full" });
    expect(client.requests[0]?.orgId).toBe("acme");
  });

  it("answers 415 when the body is not JSON", async () => {
    const { execute } = setup();
    const response = await execute().set("Content-Type", "text/plain").send("bookName=disk-full");
    expect(response.status).toBe(415);
    expect(response.body).toEqual({ error: "Content-Type must be application/json" });
  });

  it("answers 400 with a string for malformed JSON", async () => {
    const { execute } = setup();
    const response = await execute().set("Content-Type", "application/json").send('{"bookName": ');
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: expect.stringMatching(/^Malformed JSON: /) });
  });

  it("answers 400 for a JSON value that is not an object", async () => {
    const { execute } = setup();
    const response = await execute().set("Content-Type", "application/json").send("[1, 2]");
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual([{ path: ["body"], message: expect.any(String) }]);
  });

  it("answers 413 above the body limit", async () => {
    const { client, execute } = setup();
    const response = await execute().send({ bookName: "disk-full", details: "x".repeat(20_000) });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ error: "Request body exceeds the limit of 16kb" });
    expect(client.requests).toEqual([]);
  });

  it("answers 503 when the queue cannot be reached", async () => {
    const { execute } = setup(new UnavailableExecutionClient());
    const response = await execute().send({ bookName: "disk-full" });
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ error: "Service unavailable: the job queue cannot be reached" });
  });

  it("answers 429 with Retry-After beyond MAX_IN_FLIGHT, and takes executions again once they finish", async () => {
    const client = new FakeExecutionClient();
    client.hold();
    const { execute } = setup(client, { maxInFlight: 2 });
    const first = execute()
      .send({ bookName: "disk-full" })
      .then((response) => response);
    const second = execute()
      .send({ bookName: "disk-full" })
      .then((response) => response);
    await client.waitForRequests(2);

    const refused = await execute().send({ bookName: "disk-full" });
    expect(refused.status).toBe(429);
    expect(refused.headers["retry-after"]).toBe("1");
    expect(refused.body).toEqual({ error: expect.any(String) });

    client.release();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    expect((await execute().send({ bookName: "disk-full" })).status).toBe(200);
  });
});

describe("POST /playbook/execution/batch", () => {
  it("answers one result per input in order, bad items as their own { error }", async () => {
    const { client, batch } = setup(new FakeExecutionClient((request) => ({ highlights: `ran ${request.bookName}` })), {
      batchMaxItems: 10,
    });
    const response = await batch()
      .set("X-Request-Id", "b-1")
      .send({
        liveRun: true,
        channelId: "C-ALL",
        inputList: [
          { bookName: "disk-full" },
          { bookName: "nope" },
          { title: "High latency on checkout in prod", time: "2024-04-30T10:00:00Z", channelId: "C-OWN", liveRun: false },
          { bookName: "checkout-latency" },
          "not an object",
          { bookName: "disk-full", extra: 1 },
        ],
      });
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      { highlights: "ran disk-full" },
      { error: expect.stringMatching(/^bookName: Unknown playbook/) },
      { highlights: "ran checkout-latency" },
      { error: expect.stringMatching(/^attributes\.service: /) },
      { error: expect.stringContaining("expected object") },
      { error: 'extra: Unknown field "extra"' },
    ]);
    // One round trip for the valid items; envelope settings fill what an item leaves out.
    expect(client.requests).toEqual([
      expect.objectContaining({ requestId: "b-1.0", bookName: "disk-full", liveRun: true, channelId: "C-ALL" }),
      expect.objectContaining({ requestId: "b-1.2", bookName: "checkout-latency", liveRun: false, channelId: "C-OWN" }),
    ]);
  });

  it("puts the items posted to a channel in one batch thread, and answers a refused message link as that item's { error }", async () => {
    const refusal = new RequestRefusal([{ path: ["messageLink"], message: "message 1700000000.123456 was not found in channel C123" }]);
    const { client, batch } = setup(new FakeExecutionClient((item) => ("kind" in item ? refusal : CANNED_RESULT)), { batchMaxItems: 10 });
    const messageLink = "https://acme.slack.com/archives/C123/p1700000000123456";
    const response = await batch().send({
      channelId: "C-ALL",
      inputList: [{ bookName: "disk-full" }, { messageLink }, { bookName: "disk-full", channelId: "C-OWN" }],
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual([CANNED_RESULT, { error: "messageLink: message 1700000000.123456 was not found in channel C123" }, CANNED_RESULT]);
    const batches = client.requests.map((item) => item.batch);
    // The caller waits: each item's reply is posted before it is answered, so that its link opens it.
    expect(batches).toEqual([
      { id: expect.any(String), index: 0, total: 3, callerWaits: true },
      { id: batches[0]?.id, index: 1, total: 3, callerWaits: true },
      { id: batches[0]?.id, index: 2, total: 3, callerWaits: true },
    ]);
    // Without a channel, no batch thread.
    await batch().send({ inputList: [{ bookName: "disk-full" }] });
    expect(client.requests[3]?.batch).toBeUndefined();
  });

  it("refuses envelope settings the organization has no integration for, once, on the envelope", async () => {
    const client = new FakeExecutionClient();
    const { app } = testApp({ jwksUrl: jwks.url, executionClient: client });
    const globex = signToken({ key, claims: { org_id: "globex", client_id: "globex-ci" } });
    const response = await request(app)
      .post("/playbook/execution/batch")
      .set("Authorization", `Bearer ${globex}`)
      .send({ channelId: "C1", inputList: [{ bookName: "disk-full" }, { bookName: "disk-full" }] });
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual([{ path: ["body", "channelId"], message: expect.stringContaining("no Slack app configured") }]);
    expect(client.requests).toEqual([]);
  });

  it("enqueues nothing when every item is invalid", async () => {
    const { client, batch } = setup();
    const response = await batch().send({ inputList: [{}, { bookName: "nope" }] });
    expect(response.status).toBe(200);
    expect(response.body).toHaveLength(2);
    expect(client.requests).toEqual([]);
  });

  it.each([
    ["missing", {}],
    ["not an array", { inputList: { bookName: "disk-full" } }],
    ["empty", { inputList: [] }],
    ["longer than BATCH_MAX_ITEMS", { inputList: Array.from({ length: 6 }, () => ({ bookName: "disk-full" })) }],
  ])("answers 400 at body.inputList when inputList is %s", async (_case, body) => {
    const { client, batch } = setup();
    const response = await batch().send(body);
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual([{ path: ["body", "inputList"], message: expect.any(String) }]);
    expect(client.requests).toEqual([]);
  });

  it("rejects unknown envelope fields", async () => {
    const { batch } = setup();
    const response = await batch().send({ inputList: [{ bookName: "disk-full" }], orgId: "globex" });
    expect(response.status).toBe(400);
    expect(response.body.error).toEqual([{ path: ["body", "orgId"], message: 'Unknown field "orgId"' }]);
  });

  it("answers 503 when the queue cannot be reached", async () => {
    const { batch } = setup(new UnavailableExecutionClient());
    const response = await batch().send({ inputList: [{ bookName: "disk-full" }] });
    expect(response.status).toBe(503);
  });

  it("counts every item against MAX_IN_FLIGHT", async () => {
    const { client, batch } = setup(new FakeExecutionClient(), { maxInFlight: 2, batchMaxItems: 2 });
    client.hold();
    const first = batch()
      .send({ inputList: [{ bookName: "disk-full" }] })
      .then((response) => response);
    await client.waitForRequests(1);
    const refused = await batch().send({ inputList: [{ bookName: "disk-full" }, { bookName: "disk-full" }] });
    expect(refused.status).toBe(429);
    client.release();
    expect((await first).status).toBe(200);
  });
});
