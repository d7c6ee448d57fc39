import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEV_AUDIENCE, DEV_ISSUER, devJwks, loadOrCreateDevKey, mintDevToken } from "@pes/dev-issuer";
import { createLogger } from "@pes/logger";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "./app.js";
import { createTokenVerifier } from "./auth/token-verifier.js";
import { FakeExecutionClient, LogCapture, rsaKey, signToken, startJwksServer, testApp, testCatalog, type JwksServer } from "./testing/fixtures.js";

const key = rsaKey("key-1");
let jwks: JwksServer;

beforeAll(async () => {
  jwks = await startJwksServer([key.jwk]);
});

afterAll(async () => {
  await jwks.close();
});

describe("health", () => {
  it("GET /healthz answers ok without a token", async () => {
    const response = await request(testApp({ jwksUrl: jwks.url }).app).get("/healthz");
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: "ok" });
  });

  it("GET /readyz answers ok when the queue is ready", async () => {
    const response = await request(testApp({ jwksUrl: jwks.url }).app).get("/readyz");
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: "ok" });
  });

  it("GET /readyz answers 503 when the queue is not ready", async () => {
    const client = new FakeExecutionClient();
    client.ready = false;
    const response = await request(testApp({ jwksUrl: jwks.url, executionClient: client }).app).get("/readyz");
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ error: expect.stringContaining("job queue") });
  });

  it("GET /readyz answers 503 once shutdown began", async () => {
    const response = await request(testApp({ jwksUrl: jwks.url, isShuttingDown: () => true }).app).get("/readyz");
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ error: expect.stringContaining("shutting down") });
  });
});

describe("GET /playbook", () => {
  it("answers the organization's playbook list", async () => {
    const response = await request(testApp({ jwksUrl: jwks.url }).app)
      .get("/playbook")
      .set("Authorization", `Bearer ${signToken({ key })}`);
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(response.body).toEqual([
      { name: "checkout-latency", monitorNames: ["High latency on {{service}} in {{env}}"], requiredAttributes: ["service"] },
      { name: "disk-full", monitorNames: ["Disk full on {{host}}"] },
      { name: "node-cpu", monitorNames: ["NodeHighCPU", "High {{metric}} on {{instance}}"], requiredAttributes: ["instance"] },
    ]);
  });
});

describe("GET /openapi.json", () => {
  it("is an OpenAPI 3.1 document whose every $ref resolves to a component", async () => {
    const response = await request(testApp({ jwksUrl: jwks.url }).app).get("/openapi.json");
    expect(response.status).toBe(200);
    const document = response.body;
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths).sort()).toEqual([
      "/audit",
      "/healthz",
      "/playbook",
      "/playbook/execution",
      "/playbook/execution/batch",
      "/playbook/execution/batch/{id}",
      "/playbook/execution/{id}",
      "/playbook/execution/{id}/charts/{action}",
      "/playbook/execution/{id}/evidence",
      "/playbook/execution/{id}/similar",
      "/playbook/match",
      "/readyz",
      "/webhooks/alertmanager",
    ]);
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });

    const refs: string[] = [];
    const collect = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(collect);
      else if (typeof value === "object" && value !== null) {
        for (const [name, child] of Object.entries(value)) {
          if (name === "$ref" && typeof child === "string") refs.push(child);
          else collect(child);
        }
      }
    };
    collect(document);
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(document.components.schemas[ref.slice("#/components/schemas/".length)], ref).toBeDefined();
    }
  });

  it("documents every status of the execution endpoints with the right schema", async () => {
    const document = (await request(testApp({ jwksUrl: jwks.url }).app).get("/openapi.json")).body;
    const statuses = {
      "/playbook/execution": ["200", "202", "400", "401", "403", "413", "415", "422", "429", "500", "503"],
      "/playbook/execution/batch": ["200", "202", "400", "401", "403", "413", "415", "422", "429", "500", "503"],
    };
    for (const [path, expected] of Object.entries(statuses)) {
      const responses = document.paths[path].post.responses;
      expect(Object.keys(responses).sort()).toEqual(expected);
      expect(responses["400"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ValidationError" });
      expect(responses["401"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ErrorResponse" });
    }
    // Asynchronous executions: the request headers, the 202 and its headers, and the read-back.
    const run = document.paths["/playbook/execution"].post;
    expect(run.parameters.map((parameter: { name: string; in: string }) => `${parameter.in}:${parameter.name}`)).toEqual([
      "header:X-Request-Id",
      "header:Prefer",
      "header:Cache-Control",
      "header:Idempotency-Key",
    ]);
    expect(run.responses["202"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ExecutionStatus" });
    expect(Object.keys(run.responses["202"].headers).sort()).toEqual(["Location", "Preference-Applied", "X-Execution-Id"]);
    expect(Object.keys(run.responses["200"].headers)).toEqual(["X-Execution-Id"]);
    expect(run.responses["422"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ErrorResponse" });
    const read = document.paths["/playbook/execution/{id}"].get;
    expect(read.operationId).toBe("getExecution");
    expect(read.parameters).toContainEqual(expect.objectContaining({ name: "id", in: "path", required: true }));
    expect(Object.keys(read.responses).sort()).toEqual(["200", "401", "403", "404", "500", "503"]);
    expect(read.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ExecutionStatus" });
    expect(document.components.schemas.ExecutionStatus.properties.status.enum).toEqual(["queued", "running", "completed", "failed"]);
    expect(document.paths["/playbook/execution"].post.operationId).toBe("runPlaybook");
    expect(document.paths["/playbook/execution"].post.requestBody.content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/PlaybookExecutionInput",
    });
    // Async batches: the same headers, a 202 with Location, the read-back by pages and as an event stream.
    const batch = document.paths["/playbook/execution/batch"].post;
    expect(batch.parameters.map((parameter: { name: string }) => parameter.name)).toEqual(["X-Request-Id", "Prefer", "Cache-Control", "Idempotency-Key"]);
    expect(batch.responses["202"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/BatchStatus" });
    expect(Object.keys(batch.responses["202"].headers).sort()).toEqual(["Location", "Preference-Applied"]);
    expect(batch.responses["429"].headers["Retry-After"]).toBeDefined();
    const readBatch = document.paths["/playbook/execution/batch/{id}"].get;
    expect(readBatch.operationId).toBe("getBatch");
    expect(readBatch.parameters.map((parameter: { name: string; in: string }) => `${parameter.in}:${parameter.name}`)).toEqual([
      "header:X-Request-Id",
      "path:id",
      "query:offset",
      "query:limit",
      "header:Accept",
    ]);
    expect(Object.keys(readBatch.responses).sort()).toEqual(["200", "401", "403", "404", "429", "500", "503"]);
    expect(readBatch.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/BatchStatus" });
    expect(readBatch.responses["200"].content["text/event-stream"].schema.type).toBe("string");
    expect(document.components.schemas.BatchStatus.properties.progress).toEqual({ $ref: "#/components/schemas/BatchProgress" });
    // The larger of the two limits: 5 synchronous items, 10,000 asynchronous ones by default.
    expect(document.components.schemas.BatchExecutionInput.properties.inputList).toMatchObject({
      items: { $ref: "#/components/schemas/PlaybookExecutionInput" },
      maxItems: 10_000,
    });
    expect(document.components.schemas.PlaybookExecutionInput.additionalProperties).toBe(false);
    expect(Object.keys(document.components.schemas).sort()).toEqual([
      "ActionResult",
      "ActionableMitigation",
      "AlertWebhookAccepted",
      "AlertWebhookPayload",
      "AlertmanagerAlert",
      "AuditEntry",
      "AuditPage",
      "BatchExecutionInput",
      "BatchExecutionResult",
      "BatchItemStatus",
      "BatchProgress",
      "BatchStatus",
      "BudgetKind",
      "BudgetSpent",
      "ErrorResponse",
      "EvidenceBundle",
      "ExecutionAnalysis",
      "ExecutionBudget",
      "ExecutionHistory",
      "ExecutionStatus",
      "GadgetHighlights",
      "HistoryConfirmation",
      "HistoryDifference",
      "HistoryEntry",
      "HistoryMatch",
      "MonitorNameVerdict",
      "NormalAction",
      "Playbook",
      "PlaybookExecutionInput",
      "PlaybookExecutionResult",
      "PlaybookList",
      "PlaybookMatchInput",
      "PlaybookMatchResult",
      "RuledOutChange",
      "SimilarExecutions",
      "StartedAlertExecution",
      "TriedTitle",
      "UncheckedAction",
      "UnmatchedAlert",
      "ValidationError",
      "ValidationIssue",
      "Verdict",
      "VerdictCause",
      "VerdictFinding",
    ]);
  });

  it("documents the alert webhook (202, its query parameter) and the dry-run", async () => {
    const document = (await request(testApp({ jwksUrl: jwks.url }).app).get("/openapi.json")).body;
    const webhook = document.paths["/webhooks/alertmanager"].post;
    expect(Object.keys(webhook.responses).sort()).toEqual(["202", "400", "401", "403", "413", "415", "500", "503"]);
    expect(webhook.responses["202"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/AlertWebhookAccepted" });
    expect(webhook.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/AlertWebhookPayload" });
    expect(webhook.parameters).toContainEqual({
      name: "channelId",
      in: "query",
      required: false,
      description: expect.stringContaining("slack.alertChannelId"),
      schema: expect.objectContaining({ type: "string", maxLength: 256 }),
    });
    const match = document.paths["/playbook/match"].post;
    expect(match.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/PlaybookMatchInput" });
    expect(match.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/PlaybookMatchResult" });
    expect(document.components.schemas.PlaybookMatchInput.properties.alert).toMatchObject({ $ref: "#/components/schemas/AlertmanagerAlert" });
  });
});

describe("request ids", () => {
  it("echoes an acceptable incoming X-Request-Id", async () => {
    const response = await request(testApp({ jwksUrl: jwks.url }).app)
      .get("/healthz")
      .set("X-Request-Id", "abc.DEF_123-x");
    expect(response.headers["x-request-id"]).toBe("abc.DEF_123-x");
  });

  it("replaces an unacceptable one with a UUID", async () => {
    const response = await request(testApp({ jwksUrl: jwks.url }).app)
      .get("/healthz")
      .set("X-Request-Id", "a b<script>");
    expect(response.headers["x-request-id"]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it("is on error responses too", async () => {
    const { app } = testApp({ jwksUrl: jwks.url });
    for (const response of [await request(app).get("/playbook"), await request(app).get("/nowhere")]) {
      expect(response.headers["x-request-id"]).toEqual(expect.any(String));
    }
  });
});

describe("errors", () => {
  it("answers an unknown path with a JSON 404", async () => {
    const response = await request(testApp({ jwksUrl: jwks.url }).app).get("/nowhere");
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: "No route for GET /nowhere" });
  });

  it("turns an unexpected failure into a generic 500, logged with the request id", async () => {
    const logs = new LogCapture();
    const failing = new FakeExecutionClient(() => {
      throw new Error("database password is hunter2");
    });
    const { app } = testApp({ jwksUrl: jwks.url, executionClient: failing, logger: logs.logger });
    const response = await request(app)
      .post("/playbook/execution")
      .set("Authorization", `Bearer ${signToken({ key })}`)
      .set("X-Request-Id", "boom-1")
      .send({ bookName: "disk-full" });
    expect(response.status).toBe(500);
    expect(response.body).toEqual({ error: "Internal server error" });
    const line = await logs.waitFor((entry) => entry.msg === "unhandled error");
    expect(line).toMatchObject({ requestId: "boom-1", err: { message: "database password is hunter2" } });
  });

  it("answers a path that is not valid percent-encoding with a 400, whatever the method, token or none", async () => {
    const logs = new LogCapture();
    const { app } = testApp({ jwksUrl: jwks.url, logger: logs.logger });
    const token = signToken({ key });
    const paths = ["/playbook/execution/%", "/playbook/execution/batch/%zz", "/playbook/execution/%ED%A0%80", "/playbook/execution/%FF"];
    const cases = paths.flatMap((path) =>
      (["get", "post", "delete"] as const).flatMap((method) => [true, false].map((withToken) => ({ method, path, withToken }))),
    );
    const answers = [];
    for (const [index, { method, path, withToken }] of cases.entries()) {
      const sent = request(app)[method](path).set("X-Request-Id", `malformed-${index}`);
      const response = await (withToken ? sent.set("Authorization", `Bearer ${token}`) : sent);
      answers.push({ method, path, withToken, status: response.status, body: response.body });
    }
    expect(answers).toEqual(cases.map((sent) => ({ ...sent, status: 400, body: { error: "Malformed URL: the path is not valid percent-encoding" } })));
    // A caller's mistake, not a bug: the access log has its 400s and nothing else is logged.
    await logs.waitFor((entry) => entry.requestId === `malformed-${cases.length - 1}`);
    const lines = logs.all
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map(({ msg, status }) => ({ msg, status }))).toEqual(cases.map(() => ({ msg: "request completed", status: 400 })));
  });
});

describe("logging", () => {
  it("logs each request with its id and never the token", async () => {
    const logs = new LogCapture();
    const { app } = testApp({ jwksUrl: jwks.url, logger: logs.logger });
    const token = signToken({ key });
    const response = await request(app)
      .post("/playbook/execution")
      .set("Authorization", `Bearer ${token}`)
      .set("X-Request-Id", "log-1")
      .send({ bookName: "disk-full" });
    expect(response.status).toBe(200);
    const bad = await request(app).get("/playbook").set("Authorization", `Bearer ${token}x`).set("X-Request-Id", "log-2");
    expect(bad.status).toBe(401);

    const first = await logs.waitFor((entry) => entry.requestId === "log-1");
    expect(first).toMatchObject({ method: "POST", url: "/playbook/execution", status: 200 });
    const second = await logs.waitFor((entry) => entry.requestId === "log-2");
    expect(second).toMatchObject({ method: "GET", url: "/playbook", status: 401 });
    expect(logs.all).not.toContain(token);
    expect(logs.all).not.toContain(token.split(".")[2]);
  });
});

describe("development issuer", () => {
  it("is not served unless switched on", async () => {
    const response = await request(testApp({ jwksUrl: jwks.url }).app).get("/.well-known/jwks.json");
    expect(response.status).toBe(404);
  });

  it("serves its JWKS and accepts tokens minted with its key, verified against that JWKS over HTTP", async () => {
    const dir = await mkdtemp(join(tmpdir(), "api-dev-issuer-"));
    // As with AUTH_DEV_ISSUER=true: the API's verifier fetches the JWKS the API itself serves.
    const server = createServer();
    try {
      server.listen(0, "127.0.0.1");
      await once(server, "listening");
      const { port } = server.address() as AddressInfo;
      const devKey = await loadOrCreateDevKey(dir);
      const app = createApp({
        catalog: testCatalog(),
        executionClient: new FakeExecutionClient(),
        tokenVerifier: createTokenVerifier({
          jwksUrl: `http://127.0.0.1:${port}/.well-known/jwks.json`,
          issuer: DEV_ISSUER,
          audience: DEV_AUDIENCE,
          orgClaim: "org_id",
        }),
        logger: createLogger({ name: "api-test", level: "silent" }),
        limits: { executionTimeoutMs: 1000, batchMaxItems: 5, bodyLimit: "16kb", maxInFlight: 10 },
        allowedChatHosts: [],
        devJwks: devJwks(devKey),
      });
      server.on("request", app);

      const served = await request(server).get("/.well-known/jwks.json");
      expect(served.status).toBe(200);
      expect(served.body).toEqual(devJwks(devKey));

      const token = mintDevToken(devKey, { org: "acme", clientId: "acme-ci" });
      const listed = await request(server).get("/playbook").set("Authorization", `Bearer ${token}`);
      expect(listed.status).toBe(200);
      const foreign = signToken({ key, kid: devKey.kid, issuer: DEV_ISSUER, audience: DEV_AUDIENCE });
      expect((await request(server).get("/playbook").set("Authorization", `Bearer ${foreign}`)).status).toBe(401);
    } finally {
      server.closeAllConnections();
      server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
