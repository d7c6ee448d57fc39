// Execution ids, asynchronous executions, read-back and Idempotency-Keys through the API, on a real Redis
// with the real execution client and a job worker in this process.
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { createLogger } from "@pes/logger";
import { EVIDENCE_BUNDLE_VERSION } from "@pes/contracts";
import {
  createEvidenceStore,
  createBatchStarts,
  createExecutionWorker,
  createExecutionClient,
  EXECUTE_JOB,
  START_BATCH_JOB,
  type EvidenceStore,
  type ExecutionClient,
} from "@pes/executions";
import { handleJob, keySpace, type JobWorker } from "@pes/jobs";
import { Redis } from "ioredis";
import request from "supertest";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { rsaKey, signToken, startJwksServer, testApp, type JwksServer } from "../testing/fixtures.js";

const key = rsaKey("key-1");
const acme = signToken({ key });
const globex = signToken({ key, claims: { org_id: "globex", client_id: "globex-ci" } });
const logger = createLogger({ name: "api-test", level: "silent" });
const body = { bookName: "disk-full", attributes: { host: "db-1" }, time: "2024-05-01T11:59:00Z" };

let jwks: JwksServer;
let redis: RedisHandle;
let client: ExecutionClient;
let worker: JobWorker;
/** The execution ids the worker ran. */
let runs: string[];
/** Requests that joined an execution. */
let joins: number;
/** While set, the worker holds every job until it resolves. */
let gate: Promise<void> | undefined;
let started: () => void;
let jobStarted: Promise<void>;
/** The evidence bundles the worker keeps, on a connection of the test's. */
let evidence: EvidenceStore;
let evidenceConnection: Redis;

beforeAll(async () => {
  [jwks, redis] = await Promise.all([startJwksServer([key.jwk]), startRedis()]);
});

afterAll(async () => {
  await Promise.all([jwks.close(), redis.stop()]);
});

beforeEach(async () => {
  const prefix = uniquePrefix("api-records");
  evidenceConnection = new Redis(redis.url);
  evidence = createEvidenceStore(() => evidenceConnection, keySpace(prefix, redis.url));
  runs = [];
  joins = 0;
  gate = undefined;
  jobStarted = new Promise((resolve) => {
    started = resolve;
  });
  client = createExecutionClient({
    redisUrl: redis.url,
    prefix,
    logger,
    coalescing: { bucketMs: 60_000, reuseMs: 60_000 },
    onJoined: () => {
      joins += 1;
    },
  });
  const starts = createBatchStarts({ redisUrl: redis.url, prefix, logger });
  worker = createExecutionWorker({
    redisUrl: redis.url,
    prefix,
    logger,
    concurrency: 10,
    batchStarts: starts,
    handlers: [
      handleJob(START_BATCH_JOB, (job, { signal }) => starts.run(job, signal)),
      handleJob(EXECUTE_JOB, async (job, { jobId }) => {
        runs.push(jobId);
        started();
        await gate;
        // As the worker's engine does for an organization that keeps its evidence.
        const window = { start: "2024-05-01T10:59:00.000Z", time: job.time, end: "2024-05-01T12:14:00.000Z" };
        await evidence.keep(
          job.orgId,
          {
            v: EVIDENCE_BUNDLE_VERSION,
            executionId: jobId,
            recordedAt: "2024-05-01T12:00:01.000Z",
            issue: { bookName: job.bookName, time: job.time, attributes: job.attributes },
            actions: [{ gadget: "Disk", title: "Free space", connector: "prometheus", window, observation: { kind: "failed", reason: "no answer" } }],
            mitigations: [],
          },
          { retentionDays: 1, maxBytes: 64 * 1024 },
        );
        return { highlights: `${job.bookName} on ${job.attributes.host}` };
      }),
    ],
  });
  await Promise.all([client.start(), worker.start()]);
});

afterEach(async () => {
  await client.close();
  await worker.close(5_000);
  await evidenceConnection.quit();
});

function api() {
  const { app } = testApp({ jwksUrl: jwks.url, executionClient: client, evidence });
  return {
    post: (token = acme) => request(app).post("/playbook/execution").set("Authorization", `Bearer ${token}`),
    get: (path: string, token = acme) => request(app).get(path).set("Authorization", `Bearer ${token}`),
  };
}

const uuid = /^[0-9a-f-]{36}$/;

describe("execution ids and read-back", () => {
  it("names the execution of a synchronous answer, which its organization alone reads back", async () => {
    const { post, get } = api();
    const answer = await post().send(body);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ highlights: "disk-full on db-1" });
    const id = answer.headers["x-execution-id"];
    expect(id).toMatch(uuid);

    const read = await get(`/playbook/execution/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      id,
      status: "completed",
      createdAt: expect.any(String),
      completedAt: expect.any(String),
      result: { highlights: "disk-full on db-1" },
    });
    for (const [path, token] of [
      [`/playbook/execution/${id}`, globex],
      ["/playbook/execution/00000000-0000-4000-8000-000000000000", acme],
      ["/playbook/execution/not-an-id", acme],
      [`/playbook/execution/${id?.toUpperCase()}`, acme],
    ] as const) {
      const missing = await get(path, token);
      expect(missing.status, path).toBe(404);
      expect(missing.body).toEqual({ error: "No such execution" });
    }
  });

  it("reads an execution's evidence bundle back for its organization alone", async () => {
    const { post, get } = api();
    const answer = await post().send(body);
    const id = answer.headers["x-execution-id"];
    const read = await get(`/playbook/execution/${id}/evidence`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      v: EVIDENCE_BUNDLE_VERSION,
      executionId: id,
      issue: { bookName: "disk-full", attributes: { host: "db-1" } },
      actions: [{ title: "Free space", observation: { kind: "failed", reason: "no answer" } }],
    });
    for (const [path, token] of [
      [`/playbook/execution/${id}/evidence`, globex],
      ["/playbook/execution/00000000-0000-4000-8000-000000000000/evidence", acme],
      ["/playbook/execution/not-an-id/evidence", acme],
    ] as const) {
      const missing = await get(path, token);
      expect(missing.status, path).toBe(404);
      expect(missing.body).toEqual({ error: "No evidence kept for such an execution" });
    }
  });

  it("answers 202 with Location for Prefer: respond-async, and the execution reads back until completed", async () => {
    const { post, get } = api();
    let release!: () => void;
    gate = new Promise((resolve) => {
      release = resolve;
    });
    const accepted = await post().set("Prefer", "respond-async, wait=5").send(body);
    expect(accepted.status).toBe(202);
    const id = accepted.headers["x-execution-id"];
    expect(accepted.headers.location).toBe(`/playbook/execution/${id}`);
    expect(accepted.headers["preference-applied"]).toBe("respond-async");
    expect(accepted.body).toMatchObject({ id, status: expect.stringMatching(/^(queued|running)$/), createdAt: expect.any(String) });

    await jobStarted;
    expect((await get(accepted.headers.location ?? "")).body).toMatchObject({ id, status: "running" });
    release();
    let read = await get(accepted.headers.location ?? "");
    while (read.body.status !== "completed") read = await get(accepted.headers.location ?? "");
    expect(read.body.result).toEqual({ highlights: "disk-full on db-1" });
    expect((await get(accepted.headers.location ?? "", globex)).status).toBe(404);
  });

  it("gives identical concurrent requests one execution and one id; Cache-Control: no-cache runs its own", async () => {
    const { post } = api();
    let release!: () => void;
    gate = new Promise((resolve) => {
      release = resolve;
    });
    const first = post()
      .send(body)
      .then((response) => response);
    await jobStarted;
    const second = post()
      .send({ ...body, time: "2024-05-01T11:59:30Z" })
      .then((response) => response);
    const own = post()
      .set("Cache-Control", "no-cache")
      .send(body)
      .then((response) => response);
    // Released once the second request joined and the third started its own.
    while (runs.length < 2 || joins < 1) await new Promise((resolve) => setTimeout(resolve, 10));
    release();

    const [a, b, c] = await Promise.all([first, second, own]);
    expect(a.headers["x-execution-id"]).toBe(b.headers["x-execution-id"]);
    expect(c.headers["x-execution-id"]).not.toBe(a.headers["x-execution-id"]);
    expect(runs).toHaveLength(2);
    for (const response of [a, b, c]) expect(response.body).toEqual({ highlights: "disk-full on db-1" });
  });
});

describe("Idempotency-Key", () => {
  it("gives a retry with the same body the same execution, and refuses another body with 422", async () => {
    const { post } = api();
    // Opted out of sharing: only the key makes the retry the same execution.
    const send = (sent: object, idempotencyKey: string, token = acme) =>
      post(token).set("Idempotency-Key", idempotencyKey).set("Cache-Control", "no-cache").send(sent);

    const first = await send(body, '"retry-42"');
    const retry = await send({ time: body.time, attributes: body.attributes, bookName: body.bookName }, "retry-42");
    expect(first.status).toBe(200);
    expect(retry.status).toBe(200);
    expect(retry.headers["x-execution-id"]).toBe(first.headers["x-execution-id"]);
    expect(retry.body).toEqual(first.body);
    expect(runs).toEqual([first.headers["x-execution-id"]]);

    const other = await send({ ...body, attributes: { host: "db-2" } }, "retry-42");
    expect(other.status).toBe(422);
    expect(other.body).toEqual({ error: "Idempotency-Key was already used with another request" });

    // Asynchronous retries name the same execution too.
    const async = await send(body, "retry-42").set("Prefer", "respond-async");
    expect(async.status).toBe(202);
    expect(async.headers["x-execution-id"]).toBe(first.headers["x-execution-id"]);
    expect(async.body).toMatchObject({ status: "completed", result: { highlights: "disk-full on db-1" } });

    // Keys are the organization's own: another's use of it is another execution.
    const elsewhere = await send({ bookName: "disk-full", attributes: { host: "db-1" }, time: body.time }, "retry-42", globex);
    expect(elsewhere.status).not.toBe(422);
    expect(elsewhere.headers["x-execution-id"]).not.toBe(first.headers["x-execution-id"]);
    expect(runs).toEqual([first.headers["x-execution-id"], elsewhere.headers["x-execution-id"]]);
  });

  it.each([
    ["empty", ""],
    ["too long", "k".repeat(256)],
    ["not printable ASCII", "clé"],
  ])("refuses a key that is %s with a 400 naming the header, and starts nothing", async (_case, value) => {
    const response = await api().post().set("Idempotency-Key", value).send(body);
    expect(response.status).toBe(400);
    expect(response.body.error[0].path).toEqual(["headers", "Idempotency-Key"]);
    expect(runs).toEqual([]);
  });
});
