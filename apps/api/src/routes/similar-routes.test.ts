// GET /playbook/execution/{id}/similar through the app: the real memory and feedback store on a real Redis,
// the execution records in the fake client. umbrella (testing/config) remembers its executions, with the
// teams payments and search; globex has its memory off.
import { randomUUID } from "node:crypto";
import { JsonText, SimilarExecutions, type PlaybookExecutionResult, type Verdict } from "@pes/contracts";
import { createFeedbackStore } from "@pes/executions";
import { executionKey, feedbackIndexKey, keySpace, type KeySpace } from "@pes/jobs";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { confirmationsFrom, createExecutionMemory, fingerprintOf, type ExecutionMemory } from "@pes/memory";
import { Redis } from "ioredis";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeExecutionClient, rsaKey, signToken, startJwksServer, testApp, type JwksServer } from "../testing/fixtures.js";

const key = rsaKey("key-1");
const umbrella = (claims: Record<string, unknown>) => signToken({ key, claims: { org_id: "umbrella", client_id: "umbrella-ci", ...claims } });
const payments = umbrella({ teams: ["payments"], sub: "alice" });
const search = umbrella({ teams: ["search"] });
const noTeam = umbrella({});
const admin = umbrella({ scope: "pes:org-admin" });
const globex = signToken({ key, claims: { org_id: "globex", client_id: "globex-ci" } });
const acme = signToken({ key });

const RETENTION_MS = 90 * 86_400_000;
const now = Date.now();
const hoursAgo = (hours: number) => new Date(now - hours * 3_600_000);

const verdict = (pod: string): Verdict => ({
  conclusion: "cause",
  cause: { kind: "oom", subject: `pod/${pod}`, detail: "OOMKilled", action: "Warnings", confidence: "high" },
  symptoms: [{ kind: "oom", subject: `pod/${pod}`, action: "Warnings" }],
  background: [],
  ruledOut: [],
  normal: [],
  unchecked: [],
});

let jwks: JwksServer;
let redisHandle: RedisHandle;
let redis: Redis;
let keys: KeySpace;
let memory: ExecutionMemory;
const client = new FakeExecutionClient();
let app: ReturnType<typeof testApp>["app"];

/** An execution as the worker leaves it: its record (in the fake client) and, unless `remembered` is false, its fingerprint. */
async function executed(
  orgId: string,
  teams: string[] | undefined,
  at: Date,
  options: { result?: PlaybookExecutionResult; remembered?: boolean; pod?: string } = {},
): Promise<string> {
  const id = randomUUID();
  const result = options.result ?? { highlights: "Likely cause: OOM kill", verdict: verdict(options.pod ?? "ledger-7d9f8b6c5d-x2x7q") };
  client.executions.set(id, { orgId, createdAt: at, outcome: JsonText.of(result), ...(teams === undefined ? {} : { teams }) });
  if (options.remembered !== false && result.verdict !== undefined) {
    const fingerprint = fingerprintOf({
      executionId: id,
      playbook: "disk-full",
      at,
      attributes: { host: "db-1" },
      verdict: result.verdict,
      ...(teams === undefined ? {} : { teams }),
    });
    await memory.remember(orgId, fingerprint, RETENTION_MS);
  }
  return id;
}

const similar = (id: string, token: string) => request(app).get(`/playbook/execution/${id}/similar`).set("Authorization", `Bearer ${token}`);

// Four past executions of one incident (OOM kills of the ledger's pods) in umbrella: two of payments, the first
// of them confirmed; one of search; one of no team (the organization's). Then a new one of payments, and one of search.
let confirmedPayments: string;
let laterPayments: string;
let searchPast: string;
let organizationPast: string;
let paymentsNow: string;
let searchNow: string;

beforeAll(async () => {
  [jwks, redisHandle] = await Promise.all([startJwksServer([key.jwk]), startRedis()]);
  redis = new Redis(redisHandle.url);
  keys = keySpace(uniquePrefix("similar-routes"), redisHandle.url);
  const feedback = createFeedbackStore(() => redis, keys);
  memory = createExecutionMemory({
    redis: () => redis,
    keys,
    confirmations: confirmationsFrom(feedback),
    confirmedIndex: (orgId) => feedbackIndexKey(keys, orgId),
  });
  app = testApp({ jwksUrl: jwks.url, executionClient: client, memory, feedback }).app;

  confirmedPayments = await executed("umbrella", ["payments"], hoursAgo(72));
  laterPayments = await executed("umbrella", ["payments"], hoursAgo(48));
  searchPast = await executed("umbrella", ["search"], hoursAgo(30));
  organizationPast = await executed("umbrella", undefined, hoursAgo(24));
  paymentsNow = await executed("umbrella", ["payments"], hoursAgo(1));
  searchNow = await executed("umbrella", ["search"], hoursAgo(1));
  // The confirmation lives on the execution's record, which the feedback store checks exists.
  await redis.hset(executionKey(keys, "umbrella", confirmedPayments), "status", "completed");
  const given = await request(app)
    .post(`/playbook/execution/${confirmedPayments}/feedback`)
    .set("Authorization", `Bearer ${payments}`)
    .send({ verdict: "right", resolution: "Raised the ledger's memory limit" });
  expect(given.status).toBe(200);
});

afterAll(async () => {
  redis.disconnect();
  await Promise.all([jwks.close(), redisHandle.stop()]);
});

describe("GET /playbook/execution/{id}/similar", () => {
  it("answers the past executions like it that the caller's teams may see, itself left out, with what someone confirmed", async () => {
    const answer = await similar(paymentsNow, payments);
    expect(answer.status).toBe(200);
    const { executionId, history } = SimilarExecutions.parse(answer.body);
    expect(executionId).toBe(paymentsNow);
    // One entry per incident: of equally similar ones, the confirmed one.
    expect(history.map((entry) => entry.executionId)).toEqual([confirmedPayments]);
    const [entry] = history;
    expect(entry?.similarity).toBe(1);
    expect(entry?.cause).toEqual({ kind: "oom", subject: "pod/ledger", detail: "OOMKilled" });
    expect(entry?.confirmed).toMatchObject({ verdict: "right", resolution: "Raised the ledger's memory limit", by: "alice" });
    // Counted: payments' and the organization's executions of the incident, this one among them; not search's.
    expect(entry?.occurrences).toEqual({ count: 4, first: hoursAgo(72).toISOString(), last: hoursAgo(1).toISOString() });
  });

  it("never shows another team's execution: search sees its own and the organization's", async () => {
    const { history } = SimilarExecutions.parse((await similar(searchNow, search)).body);
    expect(history.map((entry) => entry.executionId)).toEqual([organizationPast]);
    expect(history[0]?.occurrences.count).toBe(3);
    expect(history.map((entry) => entry.executionId)).not.toContain(laterPayments);
  });

  it("shows an admin every team's", async () => {
    const { history } = SimilarExecutions.parse((await similar(paymentsNow, admin)).body);
    expect(history.map((entry) => entry.executionId)).toEqual([confirmedPayments]);
    expect(history[0]?.occurrences.count).toBe(6);
    expect(history.map((entry) => entry.executionId)).not.toContain(searchPast);
  });

  it("is a 404 for an execution the caller may not read, exactly as GET /playbook/execution/{id}", async () => {
    for (const [id, token] of [
      [paymentsNow, search],
      [paymentsNow, noTeam],
      [paymentsNow, globex],
      [paymentsNow, acme],
      [randomUUID(), payments],
      ["not-an-id", payments],
    ] as const) {
      const answer = await similar(id, token);
      expect(answer.status, `${id}`).toBe(404);
      expect(answer.body).toEqual({ error: "No such execution" });
      expect((await request(app).get(`/playbook/execution/${id}`).set("Authorization", `Bearer ${token}`)).status).toBe(404);
    }
    expect((await request(app).get(`/playbook/execution/${paymentsNow}/similar`)).status).toBe(401);
  });

  it("is a 409 saying why when there is nothing to recall from", async () => {
    const offId = await executed("globex", undefined, hoursAgo(1), { remembered: false });
    expect((await similar(offId, globex)).body).toEqual({
      error: "Memory is off for this organization (memory.recall in its configuration): no execution is remembered or recalled",
    });
    const failed = await executed("umbrella", ["payments"], hoursAgo(1), { result: { error: "Data source prom timed out" } });
    const queued = randomUUID();
    client.executions.set(queued, { orgId: "umbrella", createdAt: new Date(), teams: ["payments"] });
    const forgotten = await executed("umbrella", ["payments"], hoursAgo(1), { remembered: false });
    const cases = [
      [offId, globex, "Memory is off"],
      [failed, payments, "The execution reached no verdict"],
      [queued, payments, "The execution is queued"],
      [forgotten, payments, "Nothing of this execution was remembered"],
    ] as const;
    for (const [id, token, words] of cases) {
      const answer = await similar(id, token);
      expect(answer.status, words).toBe(409);
      expect(answer.body.error).toMatch(new RegExp(`^${words}`));
    }
  });

  it("is in the OpenAPI document with its answers", async () => {
    const document = (await request(app).get("/openapi.json")).body;
    const operation = document.paths["/playbook/execution/{id}/similar"].get;
    expect(operation.operationId).toBe("findSimilarExecutions");
    expect(Object.keys(operation.responses).sort()).toEqual(["200", "401", "403", "404", "409", "500", "503"]);
    expect(operation.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/SimilarExecutions" });
  });
});
