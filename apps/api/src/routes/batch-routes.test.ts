// Async batches through the API: 202 and Location, the read-back by pages, the event stream, Idempotency-Keys,
// another organization's read, and the organizations' limits. A real Redis, the real execution client and
// a job worker in this process.
import { once } from "node:events";
import { get as httpGet, type IncomingMessage, type Server } from "node:http";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { createLogger } from "@pes/logger";
import { createBatchStarts, createExecutionWorker, createExecutionClient, EXECUTE_JOB, START_BATCH_JOB, type ExecutionClient } from "@pes/executions";
import { handleJob, type JobWorker } from "@pes/jobs";
import request from "supertest";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { rsaKey, signToken, startJwksServer, testApp, type JwksServer, type TestAppOptions } from "../testing/fixtures.js";

const key = rsaKey("key-1");
const acme = signToken({ key });
const globex = signToken({ key, claims: { org_id: "globex", client_id: "globex-ci" } });
const logger = createLogger({ name: "api-test", level: "silent" });
const item = (host: string) => ({ bookName: "disk-full", attributes: { host }, time: "2024-05-01T11:59:00Z" });

let jwks: JwksServer;
let redis: RedisHandle;
let client: ExecutionClient;
let worker: JobWorker | undefined;
/** The execution ids the worker ran. */
let runs: string[];
/** The batch position of each job the worker ran, by execution id. */
let positions: Map<string, unknown>;
let prefix: string;

beforeAll(async () => {
  [jwks, redis] = await Promise.all([startJwksServer([key.jwk]), startRedis()]);
});

afterAll(async () => {
  await Promise.all([jwks.close(), redis.stop()]);
});

beforeEach(async () => {
  prefix = uniquePrefix("api-batches");
  runs = [];
  positions = new Map();
  client = createExecutionClient({ redisUrl: redis.url, prefix, logger, coalescing: { bucketMs: 60_000, reuseMs: 60_000 } });
  await client.start();
});

afterEach(async () => {
  await client.close();
  await worker?.close(5_000);
  worker = undefined;
});

async function startWorker(): Promise<void> {
  const starts = createBatchStarts({ redisUrl: redis.url, prefix, logger });
  worker = createExecutionWorker({
    redisUrl: redis.url,
    prefix,
    logger,
    concurrency: 20,
    batchStarts: starts,
    handlers: [
      handleJob(START_BATCH_JOB, (job, { signal }) => starts.run(job, signal)),
      handleJob(EXECUTE_JOB, async (job, { jobId }) => {
        runs.push(jobId);
        positions.set(jobId, job.batch);
        return { highlights: `${job.bookName} on ${job.attributes.host}` };
      }),
    ],
  });
  await worker.start();
}

function api(limits: TestAppOptions["limits"] = {}) {
  const { app } = testApp({ jwksUrl: jwks.url, executionClient: client, limits: { bodyLimit: "1mb", ...limits } });
  return {
    app,
    post: (token = acme) => request(app).post("/playbook/execution/batch").set("Authorization", `Bearer ${token}`),
    async: (token = acme) => request(app).post("/playbook/execution/batch").set("Authorization", `Bearer ${token}`).set("Prefer", "respond-async"),
    get: (path: string, token = acme) => request(app).get(path).set("Authorization", `Bearer ${token}`),
  };
}

/** Reads the batch until it completed. */
async function completed(get: ReturnType<typeof api>["get"], location: string): Promise<request.Response> {
  for (;;) {
    const read = await get(location);
    if (read.body.status === "completed") return read;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("async batches", () => {
  it("posts an item's reply in the batch's thread after the item, as nobody waits for it (no callerWaits)", async () => {
    const { async, get } = api();
    const accepted = await async().send({ channelId: "C-ALL", inputList: [item("db-1"), item("db-2")] });
    expect(accepted.status).toBe(202);
    await startWorker();
    await completed(get, accepted.headers.location ?? "");
    expect([...positions.values()].map((position) => JSON.stringify(position)).sort()).toEqual(
      [0, 1].map((index) => JSON.stringify({ id: accepted.body.id, index, total: 2 })),
    );
  });

  it("answers 202 with Location for 1,000 items, and reads them back with progress, a page at a time, in order", async () => {
    const { async, get } = api();
    const inputList = Array.from({ length: 1_000 }, (_, index) => (index === 3 ? { bookName: "disk-full", time: "yesterday" } : item(`db-${index}`)));
    const accepted = await async().send({ inputList });
    expect(accepted.status).toBe(202);
    expect(accepted.headers["preference-applied"]).toBe("respond-async");
    const location = accepted.headers.location ?? "";
    expect(location).toMatch(/^\/playbook\/execution\/batch\/[0-9a-f-]{36}$/);
    expect(accepted.body).toMatchObject({ id: location.split("/").at(-1), status: "running", progress: { total: 1_000, done: 1, failed: 1 }, items: [] });

    await startWorker();
    const done = await completed(get, location);
    expect(done.body.progress).toEqual({ total: 1_000, done: 1_000, failed: 1 });
    // The default page: the first 100 items.
    expect(done.body.offset).toBe(0);
    expect(done.body.items.map((entry: { index: number }) => entry.index)).toEqual(Array.from({ length: 100 }, (_, index) => index));
    expect(done.body.items[3]).toEqual({ index: 3, status: "failed", result: { error: expect.stringContaining("time") } });
    expect(done.body.items[4]).toEqual({ index: 4, executionId: expect.any(String), status: "completed", result: { highlights: "disk-full on db-4" } });
    expect(runs).toHaveLength(999);

    const last = await get(`${location}?offset=995&limit=1000`);
    expect(last.body.items.map((entry: { index: number; result: unknown }) => [entry.index, entry.result])).toEqual(
      [995, 996, 997, 998, 999].map((index) => [index, { highlights: `disk-full on db-${index}` }]),
    );
    // An item's execution reads back on its own too.
    expect((await get(`/playbook/execution/${done.body.items[4].executionId}`)).body).toMatchObject({ status: "completed" });

    for (const query of ["offset=-1", "limit=1001", "limit=ten"]) {
      const bad = await get(`${location}?${query}`);
      expect(bad.status, query).toBe(400);
      expect(bad.body.error[0].path[0]).toBe("query");
    }
  }, 60_000);

  it("shows a batch to its organization alone: 404 to any other, and for an unknown or malformed id", async () => {
    const { async, get } = api();
    const location = (await async().send({ inputList: [item("db-1")] })).headers.location ?? "";
    expect((await get(location)).status).toBe(200);
    for (const [path, token] of [
      [location, globex],
      ["/playbook/execution/batch/00000000-0000-4000-8000-000000000000", acme],
      ["/playbook/execution/batch/not-an-id", acme],
    ] as const) {
      const missing = await get(path, token);
      expect(missing.status, path).toBe(404);
      expect(missing.body).toEqual({ error: "No such batch" });
    }
  });

  it("streams progress events until the batch completed", async () => {
    const { app, async } = api();
    const location = (await async().send({ inputList: [item("db-1"), item("db-2"), item("db-3")] })).headers.location ?? "";
    const server: Server = app.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const address = server.address();
      if (address === null || typeof address === "string") throw new Error("no port");
      const response = await new Promise<IncomingMessage>((resolve, reject) => {
        httpGet(
          { host: "127.0.0.1", port: address.port, path: location, headers: { Authorization: `Bearer ${acme}`, Accept: "text/event-stream" } },
          resolve,
        ).on("error", reject);
      });
      expect(response.statusCode).toBe(200);
      expect(response.headers["content-type"]).toBe("text/event-stream");
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        text += chunk;
      });
      const ended = once(response, "end");
      // The first event comes at once, before any worker runs.
      while (!text.includes("\n\n")) await once(response, "data");
      await startWorker();
      await ended;
      const events = text
        .trim()
        .split("\n\n")
        .map((block) => {
          const [event, data] = block.split("\n");
          return { event: event?.replace("event: ", ""), data: JSON.parse(data?.replace("data: ", "") ?? "null") };
        });
      expect(events[0]).toEqual({ event: "progress", data: expect.objectContaining({ progress: { total: 3, done: 0, failed: 0 }, items: [] }) });
      expect(events.at(-1)).toEqual({ event: "completed", data: expect.objectContaining({ status: "completed", progress: { total: 3, done: 3, failed: 0 } }) });
      expect(events.slice(0, -1).every((event) => event.event === "progress")).toBe(true);
    } finally {
      server.close();
    }
  });

  it("gives a retry under the same Idempotency-Key the same batch, and refuses another body with 422", async () => {
    const { async, get } = api();
    await startWorker();
    const body = { inputList: [item("db-1"), item("db-2")] };
    const first = await async().set("Idempotency-Key", "nightly-1").set("Cache-Control", "no-cache").send(body);
    await completed(get, first.headers.location ?? "");
    const retry = await async().set("Idempotency-Key", "nightly-1").set("Cache-Control", "no-cache").send(body);
    expect(retry.status).toBe(202);
    expect(retry.headers.location).toBe(first.headers.location);
    expect(retry.body).toMatchObject({ status: "completed", progress: { total: 2, done: 2, failed: 0 } });
    expect(runs).toHaveLength(2);

    const other = await async()
      .set("Idempotency-Key", "nightly-1")
      .send({ inputList: [item("db-3")] });
    expect(other.status).toBe(422);

    // A synchronous batch's retry gets the same results from the same executions.
    const sync = await api().post().set("Idempotency-Key", "sync-1").set("Cache-Control", "no-cache").send(body);
    const syncRetry = await api().post().set("Idempotency-Key", "sync-1").set("Cache-Control", "no-cache").send(body);
    expect(sync.status).toBe(200);
    expect(syncRetry.body).toEqual(sync.body);
    expect(runs).toHaveLength(4);
  });

  it("refuses more items than ASYNC_BATCH_MAX_ITEMS, and more than BATCH_MAX_ITEMS without Prefer: respond-async", async () => {
    const { async, post } = api({ batchMaxItems: 2, asyncBatchMaxItems: 3 });
    const four = { inputList: [item("a"), item("b"), item("c"), item("d")] };
    const three = { inputList: [item("a"), item("b"), item("c")] };
    expect((await async().send(four)).body.error[0]).toMatchObject({ path: ["body", "inputList"], message: "inputList must hold at most 3 inputs" });
    expect((await post().send(three)).body.error[0].message).toBe("inputList must hold at most 2 inputs (more with Prefer: respond-async)");
    expect((await async().send(three)).status).toBe(202);
  });
});

describe("organization limits", () => {
  it("answers 429 with Retry-After once the organization's batch items queued reach its limit, and another organization is unaffected", async () => {
    const { async } = api({ organizationLimits: { executionsInFlight: 10, itemsQueued: 5 } });
    expect((await async().send({ inputList: [item("a"), item("b"), item("c")] })).status).toBe(202);
    const refused = await async().send({ inputList: [item("d"), item("e"), item("f")] });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(refused.body.error).toMatch(/batch items queued/);
    expect((await async(globex).send({ inputList: [item("d"), item("e"), item("f")] })).status).toBe(202);
    // Larger than the organization may ever queue: a 400, not a 429 to retry forever.
    const never = await async().send({ inputList: Array.from({ length: 6 }, (_, index) => item(`h-${index}`)) });
    expect(never.status).toBe(400);

    await startWorker();
    let retried = await async().send({ inputList: [item("d"), item("e"), item("f")] });
    while (retried.status === 429) retried = await async().send({ inputList: [item("d"), item("e"), item("f")] });
    expect(retried.status).toBe(202);
  });

  it("answers 429 with Retry-After once the organization's executions in flight reach its limit", async () => {
    const { app } = api({ organizationLimits: { executionsInFlight: 1, itemsQueued: 100 } });
    const post = () => request(app).post("/playbook/execution").set("Authorization", `Bearer ${acme}`);
    // No worker: the first stays in flight.
    expect((await post().set("Prefer", "respond-async").send(item("db-1"))).status).toBe(202);
    const refused = await post().send(item("db-2"));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    // Identical to the one in flight: it joins, and needs no room.
    expect((await post().set("Prefer", "respond-async").send(item("db-1"))).status).toBe(202);
  });
});
