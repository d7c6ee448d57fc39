// The feedback page a Teams card's buttons open: a signed link, a form, the real feedback store in a real Redis.
import { createFeedbackStore } from "@pes/executions";
import { executionKey, keySpace, type KeySpace } from "@pes/jobs";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { feedbackReference } from "@pes/signed-links";
import { Redis } from "ioredis";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rsaKey, signToken, startJwksServer, testApp, type JwksServer } from "../testing/fixtures.js";

const key = rsaKey("key-1");
const acme = signToken({ key });
const LINK_SECRET = "a-link-signing-secret-of-32-chars!!";
const E1 = "0b9c7f4e-1d7a-4b8e-9f51-5e6f7a8b9c0d";
const UNKNOWN = "2d9e7f6a-3f9c-4dab-9b73-7a8b9c0d1e2f";
const NOW = new Date("2026-11-21T14:00:00.000Z");

let jwks: JwksServer;
let redisHandle: RedisHandle;
let redis: Redis;
let keys: KeySpace;
let app: ReturnType<typeof testApp>["app"];

beforeAll(async () => {
  [jwks, redisHandle] = await Promise.all([startJwksServer([key.jwk]), startRedis()]);
  redis = new Redis(redisHandle.url);
  keys = keySpace(uniquePrefix("feedback-page"), redisHandle.url);
  await redis.hset(executionKey(keys, "acme", E1), "status", "completed");
  await redis.pexpire(executionKey(keys, "acme", E1), 3_600_000);
  app = testApp({ jwksUrl: jwks.url, feedback: createFeedbackStore(() => redis, keys), linkSigningSecret: LINK_SECRET, now: () => NOW }).app;
});

afterAll(async () => {
  redis.disconnect();
  await Promise.all([jwks.close(), redisHandle.stop()]);
});

const link = (executionId: string, lifetimeSeconds = 3_600, orgId = "acme") =>
  feedbackReference({ secret: LINK_SECRET, lifetimeSeconds }, { orgId, executionId }, NOW);
const feedbackOf = () => request(app).get(`/playbook/execution/${E1}/feedback`).set("Authorization", `Bearer ${acme}`);

describe("/view/execution/{id}/feedback (signed)", () => {
  it("shows a form without recording anything, then records what the form sends, by link", async () => {
    const page = await request(app).get(`${link(E1)}&verdict=wrong`);
    expect(page.status).toBe(200);
    expect(page.headers["content-security-policy"]).toContain("form-action 'self'");
    expect(page.text).toContain('value="wrong" checked');
    expect((await feedbackOf()).status).toBe(404);

    const sent = await request(app)
      .post(link(E1))
      .type("form")
      .send({ verdict: "wrong", causeKind: "deploy", causeSubject: "payments", causeText: "", resolution: "Rolled back" });
    expect(sent.status).toBe(200);
    expect((await feedbackOf()).body.current).toEqual({
      verdict: "wrong",
      cause: { kind: "deploy", subject: "payments" },
      resolution: "Rolled back",
      by: { via: "link" },
      at: NOW.toISOString(),
    });
  });

  it("answers 400 for a form the contract refuses, and records nothing", async () => {
    const before = (await feedbackOf()).body;
    const sent = await request(app).post(link(E1)).type("form").send({ verdict: "wrong", causeSubject: "payments" });
    expect(sent.status).toBe(400);
    expect((await feedbackOf()).body).toEqual(before);
  });

  it("refuses an altered or expired link (403) and an execution not kept (404), recording nothing", async () => {
    const before = (await feedbackOf()).body;
    const altered = link(E1).replace("org=acme", "org=globex");
    expect((await request(app).get(altered)).status).toBe(403);
    expect((await request(app).post(altered).type("form").send({ verdict: "right" })).status).toBe(403);
    const expired = feedbackReference({ secret: LINK_SECRET, lifetimeSeconds: 60 }, { orgId: "acme", executionId: E1 }, new Date(NOW.getTime() - 120_000));
    expect((await request(app).post(expired).type("form").send({ verdict: "right" })).status).toBe(403);
    expect((await request(app).post(link(UNKNOWN)).type("form").send({ verdict: "right" })).status).toBe(404);
    expect((await feedbackOf()).body).toEqual(before);
  });
});
