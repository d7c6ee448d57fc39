import { createLogger } from "@pes/logger";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { BATCH_EXECUTION_QUEUE, BATCH_START_QUEUE, CHAT_POST_QUEUE, EXECUTION_QUEUE, MESSAGE_EXECUTION_QUEUE, SERVICE_QUEUES } from "@pes/executions";
import { openDashboardQueues, type DashboardQueues } from "@pes/jobs";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTokenVerifier } from "../auth/token-verifier.js";
import { AUDIENCE, ISSUER, rsaKey, signToken, startJwksServer, testApp, type JwksServer } from "../testing/fixtures.js";
import { type QueueDashboardSettings, queueDashboard } from "./queue-dashboard.js";

const key = rsaKey("key-1");
const admin = signToken({ key, claims: { sub: "ops-1", scope: "openid pes:admin" } });
const orgClient = signToken({ key });
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
const PASSWORD = "correct horse battery staple";

let jwks: JwksServer;
let redis: RedisHandle;
let dashboard: DashboardQueues;

beforeAll(async () => {
  [jwks, redis] = await Promise.all([startJwksServer([key.jwk]), startRedis()]);
  dashboard = openDashboardQueues({
    redisUrl: redis.url,
    prefix: uniquePrefix("api-dashboard"),
    logger: createLogger({ name: "test", level: "silent" }),
    queues: SERVICE_QUEUES,
  });
  // One waiting job, for the board to count.
  const [queue] = dashboard.queues;
  await queue?.add("execute", { requestId: "r-1" });
});

afterAll(async () => {
  await dashboard?.close();
  await Promise.all([jwks?.close(), redis?.stop()]);
});

function app(settings: Partial<QueueDashboardSettings> = {}) {
  const verifier = createTokenVerifier({ jwksUrl: jwks.url, issuer: ISSUER, audience: AUDIENCE, orgClaim: "org_id" });
  return testApp({
    jwksUrl: jwks.url,
    queueDashboard: queueDashboard({
      queues: dashboard.queues,
      settings: { scope: "pes:admin", basic: undefined, readOnly: true, ...settings },
      verifier,
    }),
  }).app;
}

describe("the queue dashboard at /admin/queues", () => {
  it("is not there unless switched on", async () => {
    const off = testApp({ jwksUrl: jwks.url }).app;
    for (const path of ["/admin/queues", "/admin/queues/api/queues"]) {
      const response = await request(off).get(path).set("Authorization", `Bearer ${admin}`);
      expect(response.status, path).toBe(404);
    }
  });

  it("answers 401 without a token or with an invalid one, on pages, files and API alike", async () => {
    const on = app();
    for (const path of ["/admin/queues", "/admin/queues/api/queues", "/admin/queues/static/favicon-32x32.png"]) {
      const response = await request(on).get(path);
      expect(response.status, path).toBe(401);
      expect(response.headers["www-authenticate"]).toBe("Bearer");
      expect(response.body).toEqual({ error: "Missing Authorization header" });
    }
    const forged = signToken({ key: rsaKey("key-1"), claims: { scope: "pes:admin" } });
    expect((await request(on).get("/admin/queues").set("Authorization", `Bearer ${forged}`)).status).toBe(401);
    expect((await request(on).get("/admin/queues").set("Authorization", basic("admin", PASSWORD))).status).toBe(401);
  });

  it("answers 403 to a valid token without the admin scope", async () => {
    const on = app();
    for (const token of [orgClient, signToken({ key, claims: { scope: "pes:admins read", roles: ["viewer"] } })]) {
      const response = await request(on).get("/admin/queues/api/queues").set("Authorization", `Bearer ${token}`);
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ error: "The token does not grant the admin scope" });
    }
  });

  it("shows an admin the board and the declared queues, read-only", async () => {
    const on = app();
    const page = await request(on).get("/admin/queues").set("Authorization", `Bearer ${admin}`);
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    expect(page.text).toContain('<base href="/admin/queues/" />');
    expect(page.text).toContain("<title>Playbook Execution Service</title>");

    const roleHolder = signToken({ key, claims: { roles: ["pes:admin"] } });
    const api = await request(on).get("/admin/queues/api/queues").set("Authorization", `Bearer ${roleHolder}`);
    expect(api.status).toBe(200);
    expect(api.body.queues).toEqual([
      expect.objectContaining({ name: EXECUTION_QUEUE, readOnlyMode: true, counts: expect.objectContaining({ waiting: 1 }) }),
      expect.objectContaining({ name: MESSAGE_EXECUTION_QUEUE, readOnlyMode: true }),
      expect.objectContaining({ name: BATCH_EXECUTION_QUEUE, readOnlyMode: true }),
      expect.objectContaining({ name: BATCH_START_QUEUE, readOnlyMode: true }),
      expect.objectContaining({ name: CHAT_POST_QUEUE, readOnlyMode: true }),
    ]);

    // Read-only holds in the API too, not only in the UI.
    const pause = await request(on).put(`/admin/queues/api/queues/${EXECUTION_QUEUE}/pause`).set("Authorization", `Bearer ${admin}`);
    expect(pause.status).toBe(405);
    expect(await dashboard.queues[0]?.isPaused()).toBe(false);
  });

  it("lets an admin act on the queues when read-only is switched off", async () => {
    const on = app({ readOnly: false });
    const pause = await request(on).put(`/admin/queues/api/queues/${EXECUTION_QUEUE}/pause`).set("Authorization", `Bearer ${admin}`);
    expect(pause.status).toBe(200);
    expect(await dashboard.queues[0]?.isPaused()).toBe(true);
    const resume = await request(on).put(`/admin/queues/api/queues/${EXECUTION_QUEUE}/resume`).set("Authorization", `Bearer ${admin}`);
    expect(resume.status).toBe(200);
    expect(await dashboard.queues[0]?.isPaused()).toBe(false);
  });

  it("takes the Basic credentials from the environment when set, and challenges a browser for them", async () => {
    const on = app({ basic: { user: "ops", password: PASSWORD } });
    const challenged = await request(on).get("/admin/queues");
    expect(challenged.status).toBe(401);
    expect(challenged.headers["www-authenticate"]).toBe('Basic realm="pes admin", charset="UTF-8"');
    for (const wrong of [basic("ops", `${PASSWORD}!`), basic("admin", PASSWORD), "Basic !!!", "Digest x"]) {
      expect((await request(on).get("/admin/queues").set("Authorization", wrong)).status, wrong).toBe(401);
    }
    expect((await request(on).get("/admin/queues/api/queues").set("Authorization", basic("ops", PASSWORD))).status).toBe(200);
    expect((await request(on).get("/admin/queues/api/queues").set("Authorization", `Bearer ${admin}`)).status).toBe(200);
    expect((await request(on).get("/admin/queues/api/queues").set("Authorization", `Bearer ${orgClient}`)).status).toBe(403);
  });
});
