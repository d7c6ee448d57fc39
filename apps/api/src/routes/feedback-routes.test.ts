// Feedback through the app: the real feedback store in a real Redis, the executions' records as the
// lifecycle leaves them there.
import { executionKey, keySpace, type KeySpace } from "@pes/jobs";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { createFeedbackStore } from "@pes/executions";
import { createApiMetrics, type ApiMetrics } from "@pes/metrics";
import { Redis } from "ioredis";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rsaKey, signToken, startJwksServer, testApp, type JwksServer } from "../testing/fixtures.js";

const key = rsaKey("key-1");
const alice = signToken({ key, claims: { org_id: "acme", client_id: "acme-ci", sub: "alice@acme.example" } });
const bob = signToken({ key, claims: { org_id: "acme", client_id: "acme-ci", sub: "bob@acme.example" } });
const globex = signToken({ key, claims: { org_id: "globex", client_id: "globex-ci", sub: "eve@globex.example" } });
const E1 = "0b9c7f4e-1d7a-4b8e-9f51-5e6f7a8b9c0d";
const E2 = "1c8d6e5f-2e8b-4c9f-8a62-6f7a8b9c0d1e";
const UNKNOWN = "2d9e7f6a-3f9c-4dab-9b73-7a8b9c0d1e2f";
let clock = new Date("2026-11-21T14:00:00.000Z");

let jwks: JwksServer;
let redisHandle: RedisHandle;
let redis: Redis;
let keys: KeySpace;
let metrics: ApiMetrics;
let app: ReturnType<typeof testApp>["app"];

beforeAll(async () => {
  [jwks, redisHandle] = await Promise.all([startJwksServer([key.jwk]), startRedis()]);
  redis = new Redis(redisHandle.url);
  keys = keySpace(uniquePrefix("feedback-routes"), redisHandle.url);
  for (const id of [E1, E2]) {
    await redis.hset(executionKey(keys, "acme", id), "status", "completed");
    await redis.pexpire(executionKey(keys, "acme", id), 3_600_000);
  }
  metrics = createApiMetrics();
  app = testApp({ jwksUrl: jwks.url, feedback: createFeedbackStore(() => redis, keys), metrics, now: () => clock }).app;
});

afterAll(async () => {
  redis.disconnect();
  await Promise.all([jwks.close(), redisHandle.stop()]);
});

const give = (id: string, token: string, body: object) =>
  request(app).post(`/playbook/execution/${id}/feedback`).set("Authorization", `Bearer ${token}`).send(body);
const read = (path: string, token: string) => request(app).get(path).set("Authorization", `Bearer ${token}`);

describe("POST and GET /playbook/execution/{id}/feedback", () => {
  it("records who said what: the current answer, every answer kept in order, and counts them by verdict", async () => {
    clock = new Date("2026-11-21T14:00:00.000Z");
    const first = await give(E1, alice, { verdict: "right" });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      executionId: E1,
      current: { verdict: "right", by: { via: "api", subject: "alice@acme.example" }, at: "2026-11-21T14:00:00.000Z" },
      history: [{ verdict: "right", by: { via: "api", subject: "alice@acme.example" }, at: "2026-11-21T14:00:00.000Z" }],
    });

    clock = new Date("2026-11-21T14:30:00.000Z");
    const changed = await give(E1, bob, { verdict: "wrong", cause: { kind: "deploy", subject: "payments" }, resolution: "Rolled payments back" });
    expect(changed.status).toBe(200);
    const answer = await read(`/playbook/execution/${E1}/feedback`, alice);
    expect(answer.status).toBe(200);
    expect(answer.body.current).toEqual({
      verdict: "wrong",
      cause: { kind: "deploy", subject: "payments" },
      resolution: "Rolled payments back",
      by: { via: "api", subject: "bob@acme.example" },
      at: "2026-11-21T14:30:00.000Z",
    });
    expect(answer.body.history.map((entry: { verdict: string; by: { subject: string } }) => [entry.verdict, entry.by.subject])).toEqual([
      ["right", "alice@acme.example"],
      ["wrong", "bob@acme.example"],
    ]);

    const counted = await metrics.registry.getSingleMetric("pes_feedback_total")?.get();
    const byVerdict = Object.fromEntries((counted?.values ?? []).map((value) => [`${value.labels.organization}/${value.labels.verdict}`, value.value]));
    expect(byVerdict).toEqual({ "acme/right": 1, "acme/wrong": 1 });
  });

  it("is a 404 for another organization's execution, an unknown one and a malformed id, recording nothing", async () => {
    expect((await give(E2, globex, { verdict: "right" })).status).toBe(404);
    expect((await give(UNKNOWN, alice, { verdict: "right" })).status).toBe(404);
    expect((await give("not-an-id", alice, { verdict: "right" })).status).toBe(404);
    expect((await read(`/playbook/execution/${E1}/feedback`, globex)).status).toBe(404);
    // E2 exists, but nobody answered on it.
    expect((await read(`/playbook/execution/${E2}/feedback`, alice)).status).toBe(404);
    expect((await give(E2, alice, { verdict: "right" })).status).toBe(200);
    expect((await read(`/playbook/execution/${E2}/feedback`, globex)).status).toBe(404);
  });

  it("answers 400 naming the field for a bad answer, and changes nothing", async () => {
    const before = (await read(`/playbook/execution/${E1}/feedback`, alice)).body;
    const cases: Array<[object, (string | number)[]]> = [
      [{}, ["body", "verdict"]],
      [{ verdict: "maybe" }, ["body", "verdict"]],
      [{ verdict: "right", cause: { kind: "deploy" } }, ["body", "cause"]],
      [{ verdict: "wrong", cause: { subject: "payments" } }, ["body", "cause", "kind"]],
      [{ verdict: "wrong", cause: {} }, ["body", "cause", "kind"]],
      [{ verdict: "wrong", resolution: "x".repeat(2_001) }, ["body", "resolution"]],
      [{ verdict: "wrong", by: "someone else" }, ["body", "by"]],
    ];
    for (const [body, path] of cases) {
      const answer = await give(E1, alice, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error.map((issue: { path: unknown }) => issue.path)).toContainEqual(path);
    }
    expect((await read(`/playbook/execution/${E1}/feedback`, alice)).body).toEqual(before);
  });
});

describe("GET /playbook/feedback", () => {
  it("lists the organization's confirmed executions from `since`, oldest answer first, and no other organization's", async () => {
    const all = await read("/playbook/feedback", alice);
    expect(all.status).toBe(200);
    expect(all.body.items.map((item: { executionId: string }) => item.executionId)).toEqual([E1, E2]);
    const since = await read(`/playbook/feedback?since=${encodeURIComponent("2026-11-21T14:15:00Z")}&limit=1`, alice);
    expect(since.body.items.map((item: { executionId: string; feedback: { verdict: string } }) => [item.executionId, item.feedback.verdict])).toEqual([
      [E1, "wrong"],
    ]);
    expect(since.body.nextOffset).toBe(1);
    expect((await read("/playbook/feedback", globex)).body).toEqual({ items: [] });
    const bad = await read("/playbook/feedback?since=yesterday", alice);
    expect(bad.status).toBe(400);
    expect(bad.body.error.map((issue: { path: unknown }) => issue.path)).toContainEqual(["query", "since"]);
  });
});

describe("the OpenAPI document", () => {
  it("declares the feedback routes with their schemas", async () => {
    const document = (await request(app).get("/openapi.json")).body;
    expect(Object.keys(document.paths["/playbook/execution/{id}/feedback"] ?? {}).sort()).toEqual(["get", "post"]);
    expect(document.paths["/playbook/feedback"]?.get?.parameters?.map((parameter: { name: string }) => parameter.name)).toEqual([
      "X-Request-Id",
      "since",
      "offset",
      "limit",
    ]);
    expect(Object.keys(document.components.schemas)).toEqual(expect.arrayContaining(["FeedbackInput", "ExecutionFeedback", "ConfirmedExecutions"]));
  });
});
