import { once } from "node:events";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createLogger } from "@pes/logger";
import { createApiMetrics, type ApiMetrics } from "@pes/metrics";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "./app.js";
import { createTokenVerifier } from "./auth/token-verifier.js";
import { AUDIENCE, FakeExecutionClient, ISSUER, rsaKey, signToken, startJwksServer, testCatalog, type JwksServer } from "./testing/fixtures.js";

const key = rsaKey("key-1");
let jwks: JwksServer;

beforeAll(async () => {
  jwks = await startJwksServer([key.jwk]);
});

afterAll(async () => {
  await jwks.close();
});

/** The app as main.ts builds it: with metrics, and a token for /metrics when given. */
function appWithMetrics(options: { metricsToken?: string; client?: FakeExecutionClient } = {}) {
  const metrics: ApiMetrics = createApiMetrics();
  const app = createApp({
    catalog: testCatalog(),
    executionClient: options.client ?? new FakeExecutionClient(),
    tokenVerifier: createTokenVerifier({ jwksUrl: jwks.url, issuer: ISSUER, audience: AUDIENCE, orgClaim: "org_id" }),
    logger: createLogger({ name: "api-test", level: "silent" }),
    limits: { executionTimeoutMs: 5000, batchMaxItems: 5, bodyLimit: "16kb", maxInFlight: 100 },
    allowedChatHosts: [],
    metrics,
    metricsToken: options.metricsToken,
  });
  return { app, metrics };
}

const count = (method: string, route: string, status: number) =>
  `pes_http_request_duration_seconds_count{method="${method}",route="${route}",status="${status}"} `;

describe("GET /metrics", () => {
  it("serves the Prometheus text format without a token, with the process metrics", async () => {
    const response = await request(appWithMetrics().app).get("/metrics");
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(response.text).toMatch(/^# TYPE process_cpu_seconds_total counter$/m);
    expect(response.text).toMatch(/^# TYPE pes_http_request_duration_seconds histogram$/m);
  });

  it("counts requests by route pattern and status, never by URL", async () => {
    const { app } = appWithMetrics();
    const token = signToken({ key });
    await request(app).post("/playbook/execution").set("Authorization", `Bearer ${token}`).send({ bookName: "disk-full" }).expect(200);
    await request(app).post("/playbook/execution").set("Authorization", `Bearer ${token}`).send({ bookName: "disk-full" }).expect(200);
    await request(app).post("/playbook/execution").send({ bookName: "disk-full" }).expect(401);
    await request(app).get("/playbook/runs/run-4f1c9e").expect(404);
    // A route with a parameter counts under its pattern, not the id.
    await request(app).get("/playbook/execution/0b9c7f4e-1d7a-4b8e-9f51-5e6f7a8b9c0d").set("Authorization", `Bearer ${token}`).expect(404);
    await request(app).get("/healthz").expect(200);

    const text = (await request(app).get("/metrics")).text;

    expect(text).toContain(`${count("POST", "/playbook/execution", 200)}2`);
    expect(text).toContain(`${count("POST", "/playbook/execution", 401)}1`);
    expect(text).toContain(`${count("GET", "unmatched", 404)}1`);
    expect(text).toContain(`${count("GET", "/playbook/execution/:id", 404)}1`);
    expect(text).toContain(`${count("GET", "/healthz", 200)}1`);
    expect(text).not.toContain("run-4f1c9e");
    expect(text).not.toContain("0b9c7f4e");
  });

  it("records a caller that hung up before its answer as 499", async () => {
    const client = new FakeExecutionClient();
    client.hold();
    const { app, metrics } = appWithMetrics({ client });
    const server: Server = createServer(app).listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const { port } = server.address() as AddressInfo;
      const body = JSON.stringify({ bookName: "disk-full" });
      const hungUp = httpRequest({
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/playbook/execution",
        headers: { authorization: `Bearer ${signToken({ key })}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      });
      hungUp.on("error", () => {});
      hungUp.end(body);
      await client.waitForRequests(1);
      hungUp.destroy();

      // The server sees the socket close on its own schedule: wait for the series (the test's timeout bounds it).
      for (;;) {
        if ((await metrics.registry.metrics()).includes(`${count("POST", "/playbook/execution", 499)}1`)) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      client.release();
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it("wants METRICS_TOKEN as a bearer token when it is set", async () => {
    const token = "scrape-token-0123456789abcdef";
    const { app } = appWithMetrics({ metricsToken: token });

    const none = await request(app).get("/metrics");
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toBe("Bearer");
    expect(none.body).toEqual({ error: "Metrics need the scrape token" });
    expect((await request(app).get("/metrics").set("Authorization", "Bearer not-the-token")).status).toBe(401);
    // A caller's JWT is not a scrape token.
    expect(
      (
        await request(app)
          .get("/metrics")
          .set("Authorization", `Bearer ${signToken({ key })}`)
      ).status,
    ).toBe(401);

    const allowed = await request(app).get("/metrics").set("Authorization", `Bearer ${token}`);
    expect(allowed.status).toBe(200);
    expect(allowed.text).toContain(`${count("GET", "/metrics", 401)}3`);
  });

  it("is not there when the app is built without metrics", async () => {
    const { app } = appWithMetrics();
    const bare = createApp({
      catalog: testCatalog(),
      executionClient: new FakeExecutionClient(),
      tokenVerifier: createTokenVerifier({ jwksUrl: jwks.url, issuer: ISSUER, audience: AUDIENCE, orgClaim: "org_id" }),
      logger: createLogger({ name: "api-test", level: "silent" }),
      limits: { executionTimeoutMs: 5000, batchMaxItems: 5, bodyLimit: "16kb", maxInFlight: 100 },
      allowedChatHosts: [],
    });
    expect((await request(bare).get("/metrics")).status).toBe(404);
    expect((await request(app).get("/metrics")).status).toBe(200);
  });
});
