// Async batches (bulk-enqueued items under a batch record), the batch lane behind interactive executions,
// and per-organization limits counted in Redis. Real Redis, real BullMQ workers.
import { encodeReply, JsonText, type ExecutionJob, type PlaybookExecutionResult } from "@pes/contracts";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { batchItemIds } from "./batch-store.js";
import { batchKey, executionKey, handleJob, keySpace, laneKey } from "@pes/jobs";
import {
  createExecutionClient,
  createBatchStarts,
  createExecutionWorker,
  BATCH_EXECUTION_QUEUE,
  BATCH_START_QUEUE,
  EXECUTE_JOB,
  EXECUTION_QUEUE,
  LimitExceededError,
  START_BATCH_JOB,
  type BatchItem,
  type BatchView,
  type ExecutionClient,
  type ExecutionClientOptions,
  type ExecutionOutcome,
  type ExecutionRequest,
} from "./index.js";
import { defineLifecycleCommands, finishExecution } from "./execution-lifecycle.js";

let redis: RedisHandle;
let prefix: string;
const closers: (() => Promise<void>)[] = [];
const logger = pino({ level: "silent" });
/** The jobs workers ran in this test, in the order they started: execution ids. */
let runs: string[];

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis.stop();
});

beforeEach(() => {
  prefix = uniquePrefix("batches");
  runs = [];
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function request(index: number, overrides: Partial<ExecutionRequest> = {}): ExecutionRequest {
  return {
    orgId: "acme",
    requestId: `req-${index}`,
    bookName: "latency",
    time: "2026-01-01T10:00:10Z",
    attributes: { service: `service-${index}` },
    liveRun: false,
    ...overrides,
  };
}

async function client(options: Partial<ExecutionClientOptions> = {}): Promise<ExecutionClient> {
  const started = createExecutionClient({ redisUrl: redis.url, prefix, logger, coalescing: { bucketMs: 60_000, reuseMs: 10_000 }, ...options });
  closers.push(() => started.close());
  await started.start();
  return started;
}

async function worker(execute: (job: ExecutionJob) => Promise<PlaybookExecutionResult>, concurrency = 20): Promise<void> {
  const starts = createBatchStarts({ redisUrl: redis.url, prefix, logger });
  const started = createExecutionWorker({
    redisUrl: redis.url,
    prefix,
    logger,
    concurrency,
    batchStarts: starts,
    handlers: [
      handleJob(START_BATCH_JOB, (job, { signal }) => starts.run(job, signal)),
      handleJob(EXECUTE_JOB, async (job, { jobId }) => {
        runs.push(jobId);
        return execute(job);
      }),
    ],
  });
  closers.push(() => started.close(5_000));
  await started.start();
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

function parsed(outcome: ExecutionOutcome | undefined): unknown {
  if (!(outcome instanceof JsonText)) throw new Error(`expected a result, got ${String(outcome)}`);
  return JSON.parse(outcome.text);
}

/** Reads the batch until `done` holds, without a clock: each read waits for the next finished job. */
async function readUntil(api: ExecutionClient, batchId: string, done: (view: BatchView) => boolean, limit = 1_000): Promise<BatchView> {
  for (;;) {
    const view = await api.batches.read("acme", batchId, { offset: 0, limit });
    if (view === undefined) throw new Error("batch not found");
    if (done(view)) return view;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("async batches", () => {
  it("runs 1,000 items enqueued in bulk and reads them back with progress, per item in order, a page at a time", async () => {
    const api = await client();
    const items: BatchItem[] = Array.from({ length: 1_000 }, (_, index) =>
      index === 500 ? { invalid: JsonText.of({ error: "body.inputList.500.time: bad time" }) } : { request: request(index) },
    );
    expect(await api.batches.start({ batchId: "b-1", orgId: "acme", items })).toEqual({ created: true });

    // Before any worker: nothing done, every valid item queued.
    const before = await api.batches.read("acme", "b-1", { offset: 498, limit: 4 });
    expect(before?.status).toBe("running");
    expect(before?.progress).toEqual({ total: 1_000, done: 1, failed: 1 });
    expect(before?.items.map((item) => [item.index, item.status])).toEqual([
      [498, "queued"],
      [499, "queued"],
      [500, "failed"],
      [501, "queued"],
    ]);
    expect(parsed(before?.items[2]?.outcome)).toEqual({ error: "body.inputList.500.time: bad time" });

    await worker(async (job) => ({ highlights: `ran for ${job.attributes.service}` }));
    const after = await readUntil(api, "b-1", (view) => view.status === "completed", 100);
    expect(after.progress).toEqual({ total: 1_000, done: 1_000, failed: 1 });
    expect(runs).toHaveLength(999);
    expect(after.items.map((item) => item.index)).toEqual(Array.from({ length: 100 }, (_, index) => index));
    expect(after.items.every((item) => item.status === "completed" && item.executionId === batchItemIds("b-1")(item.index))).toBe(true);
    expect(after.items.map((item) => parsed(item.outcome))).toEqual(after.items.map((item) => ({ highlights: `ran for service-${item.index}` })));
    const last = await api.batches.read("acme", "b-1", { offset: 990, limit: 100 });
    expect(last?.items.map((item) => item.index)).toEqual([990, 991, 992, 993, 994, 995, 996, 997, 998, 999]);
  }, 60_000);

  it("starts a batch once per id: a retry neither runs its items again nor replaces it", async () => {
    await worker(async () => ({ highlights: "ran" }));
    const api = await client();
    const items = [{ request: request(0) }, { request: request(1) }];
    expect(await api.batches.start({ batchId: "b-2", orgId: "acme", items })).toEqual({ created: true });
    await readUntil(api, "b-2", (view) => view.status === "completed");
    expect(await api.batches.start({ batchId: "b-2", orgId: "acme", items })).toEqual({ created: false });
    expect(runs).toHaveLength(2);
    // Batch ids are per organization: another's batch of the same id is its own.
    await expect(api.batches.start({ batchId: "b-2", orgId: "globex", items: [{ request: request(0, { orgId: "globex" }) }] })).resolves.toEqual({
      created: true,
    });
  });

  it("shows a batch only to its organization", async () => {
    const api = await client();
    await api.batches.start({ batchId: "b-3", orgId: "acme", items: [{ request: request(0) }] });
    expect(await api.batches.read("globex", "b-3", { offset: 0, limit: 10 })).toBeUndefined();
    expect(await api.batches.read("acme", "no-such-batch", { offset: 0, limit: 10 })).toBeUndefined();
    expect(await api.batches.read("acme", "b-3", { offset: 0, limit: 10 })).toMatchObject({ id: "b-3", progress: { total: 1 } });
  });

  it("coalesces items with each other and with a caller's own execution", async () => {
    const release = deferred();
    const started = deferred();
    await worker(async () => {
      started.resolve();
      await release.promise;
      return { highlights: "shared" };
    });
    const api = await client();
    const waiting = api.execute(request(7), 10_000);
    await started.promise;
    await api.batches.start({ batchId: "b-4", orgId: "acme", items: [{ request: request(7) }, { request: request(7) }, { request: request(8) }] });
    release.resolve();
    const own = await waiting;
    const view = await readUntil(api, "b-4", (batch) => batch.status === "completed");
    expect(view.items.map((item) => item.executionId)).toEqual([own.executionId, own.executionId, batchItemIds("b-4")(2)]);
    expect(runs).toHaveLength(2);
  });

  it("ends an item whose job was lost (a Redis restart) in an explicit error", async () => {
    const api = await client();
    const release = deferred();
    // One at a time, the first item held: the second stays queued while its job is taken away.
    await worker(async (job) => {
      if (job.attributes.service === "service-0") await release.promise;
      return { highlights: "ran" };
    }, 1);
    await api.batches.start({ batchId: "b-5", orgId: "acme", items: [{ request: request(0) }, { request: request(1) }] });
    // As a Redis restart that lost a write would leave it: the record pending, its job gone, a while ago.
    const lostId = batchItemIds("b-5")(1);
    const queue = new Queue(BATCH_EXECUTION_QUEUE, { connection: { url: redis.url }, prefix });
    const direct = new Redis(redis.url);
    try {
      while ((await queue.getJob(lostId)) === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
      await queue.remove(lostId);
      await direct.hset(executionKey(keySpace(prefix, redis.url), "acme", lostId), "createdAt", Date.now() - 60_000);
    } finally {
      await queue.close();
      await direct.quit();
    }
    release.resolve();
    await readUntil(api, "b-5", (batch) => batch.progress.done === 1);
    // Started, and no item finished, a while ago: the next read looks for lost items.
    const admin = new Redis(redis.url);
    await admin.hset(batchKey(keySpace(prefix, redis.url), "acme", "b-5"), "createdAt", Date.now() - 60_000, "lastDoneAt", Date.now() - 60_000);
    await admin.quit();
    const view = await readUntil(api, "b-5", (batch) => batch.status === "completed");
    expect(view.progress).toEqual({ total: 2, done: 2, failed: 1 });
    expect(view.items[1]).toMatchObject({ status: "failed" });
    expect(parsed(view.items[1]?.outcome)).toEqual({ error: "Execution result was lost" });
    expect(await api.read("acme", lostId)).toMatchObject({ status: "failed" });
    // A reply that comes after all loses to the failure, and the progress does not go back.
    const late = new Redis(redis.url);
    defineLifecycleCommands(late);
    try {
      const reply = encodeReply(lostId, { highlights: "late" });
      expect(await finishExecution(late, keySpace(prefix, redis.url), "acme", lostId, { reply, status: "completed", reusable: true })).toBe(-1);
    } finally {
      await late.quit();
    }
    expect((await api.batches.read("acme", "b-5", { offset: 0, limit: 0 }))?.progress).toEqual({ total: 2, done: 2, failed: 1 });
  });
});

describe("batch starts", () => {
  it("ends the items of a batch whose start was lost before it began them, and gives their places back", async () => {
    const api = await client();
    await api.batches.start({ batchId: "b-9", orgId: "acme", items: [{ request: request(0) }, { request: request(1) }], limit: { max: 10 } });
    const keys = keySpace(prefix, redis.url);
    const starts = new Queue(BATCH_START_QUEUE, { connection: { url: redis.url }, prefix });
    const admin = new Redis(redis.url);
    try {
      expect(await admin.zcard(laneKey(keys, "acme", "batch"))).toBe(2);
      // As a Redis that lost the write would leave it, a while ago: no worker will ever begin its items.
      await starts.remove("b-9");
      await admin.hset(batchKey(keys, "acme", "b-9"), "createdAt", Date.now() - 60_000);
      const view = await readUntil(api, "b-9", (batch) => batch.status === "completed");
      expect(view.progress).toEqual({ total: 2, done: 2, failed: 2 });
      expect(view.items.map((item) => parsed(item.outcome))).toEqual(Array(2).fill({ error: "Batch item was not started: the batch's start failed" }));
      expect(await admin.zcard(laneKey(keys, "acme", "batch"))).toBe(0);
    } finally {
      await starts.close();
      await admin.quit();
    }
  });
});

describe("lanes", () => {
  it("runs an interactive execution added after 200 queued batch items before nearly all of them", async () => {
    const api = await client();
    await api.batches.start({ batchId: "b-6", orgId: "acme", items: Array.from({ length: 200 }, (_, index) => ({ request: request(index) })) });
    const own = api.execute(request(1_000), 30_000);
    // The interactive job reaches the queue (its wait list: batch items are prioritized) before the one worker starts.
    const queue = new Queue(EXECUTION_QUEUE, { connection: { url: redis.url }, prefix });
    try {
      while ((await queue.getWaitingCount()) < 1) await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      await queue.close();
    }
    await worker(async () => ({ highlights: "ran" }), 1);
    const { executionId } = await own;
    await readUntil(api, "b-6", (batch) => batch.status === "completed");
    expect(runs).toHaveLength(201);
    // One worker, one job at a time: it may have taken a batch item or two before the interactive job came.
    expect(runs.indexOf(executionId)).toBeLessThan(5);
    // The batch kept its order.
    const items = runs.filter((id) => id !== executionId);
    expect(items).toEqual(Array.from({ length: 200 }, (_, index) => batchItemIds("b-6")(index)));
  });
  it("keeps room for interactive executions on a worker whose batch slots are all taken", async () => {
    const release = deferred();
    // 4 at once, of which 1 behind every other caller's work: the batch's items wait their turn in it.
    await worker(async (job) => {
      if (job.requestId !== "req-1000") await release.promise;
      return { highlights: "ran" };
    }, 4);
    const api = await client();
    await api.batches.start({ batchId: "b-10", orgId: "acme", items: Array.from({ length: 3 }, (_, index) => ({ request: request(index) })) });
    await readUntil(api, "b-10", (batch) => batch.items.some((item) => item.status === "running"));
    const own = await api.execute(request(1_000), 10_000);
    expect(parsed(own.outcome)).toEqual({ highlights: "ran" });
    const view = await readUntil(api, "b-10", () => true);
    expect(view.items.map((item) => item.status)).toEqual(["running", "queued", "queued"]);
    release.resolve();
    await readUntil(api, "b-10", (batch) => batch.status === "completed");
  });
});

describe("per-organization limits", () => {
  it("refuses executions past the organization's limit with a Retry-After, counting joiners as nothing, and admits again once they finish", async () => {
    const release = deferred();
    const bothRunning = deferred();
    await worker(async () => {
      if (runs.length === 2) bothRunning.resolve();
      await release.promise;
      return { highlights: "ran" };
    });
    const [first, second] = [await client({ instanceId: "api-1" }), await client({ instanceId: "api-2" })];
    const limit = { max: 2 };
    const running = [first.execute(request(0), 10_000, { limit }), second.execute(request(1), 10_000, { limit })];
    await bothRunning.promise;
    // Identical to one in flight: joins it, within the limit.
    const joiner = second.execute(request(0), 10_000, { limit });
    await expect(first.execute(request(2), 10_000, { limit })).rejects.toSatisfy(
      (error) => error instanceof LimitExceededError && error.lane === "interactive" && error.retryAfterSeconds >= 1,
    );
    // Another organization has its own count.
    const other = first.execute(request(2, { orgId: "globex" }), 10_000, { limit: { max: 2 } });
    release.resolve();
    await Promise.all([...running, joiner, other]);
    expect(runs).toHaveLength(3);
    await expect(first.execute(request(3), 10_000, { limit })).resolves.toMatchObject({ joined: false });
  });

  it("admits executions over the limit behind every other caller's work when asked to, never refusing them", async () => {
    const api = await client();
    const limit = { max: 1 };
    await api.submit([request(0)], { limit });
    await expect(api.submit([request(1)], { limit })).rejects.toThrow(LimitExceededError);
    // An alert webhook's: accepted, counted, and queued behind (a priority: BullMQ takes jobs without one first).
    const behind = await api.submit([request(2), request(3)], { limit: { ...limit, over: "behind" } });
    expect(behind.map((execution) => execution.joined)).toEqual([false, false]);
    const queue = new Queue(EXECUTION_QUEUE, { connection: { url: redis.url }, prefix });
    const behindQueue = new Queue(BATCH_EXECUTION_QUEUE, { connection: { url: redis.url }, prefix });
    try {
      expect(await queue.getWaitingCount()).toBe(1);
      const jobs = await Promise.all(behind.map((execution) => behindQueue.getJob(execution.executionId)));
      expect(jobs.map((job) => job?.name)).toEqual(["execute", "execute"]);
      // Read back from the lane its job is in.
      for (const execution of behind) expect(await api.read("acme", execution.executionId)).toMatchObject({ status: "queued" });
    } finally {
      await queue.close();
      await behindQueue.close();
    }
  });

  it("counts a batch's items against the queued-items limit, all or nothing", async () => {
    const api = await client();
    const limit = { max: 10 };
    const items = (from: number, count: number) => Array.from({ length: count }, (_, index) => ({ request: request(from + index) }));
    await api.batches.start({ batchId: "b-7", orgId: "acme", items: items(0, 8), limit });
    await expect(api.batches.start({ batchId: "b-8", orgId: "acme", items: items(100, 3), limit })).rejects.toThrow(LimitExceededError);
    expect(await api.batches.read("acme", "b-8", { offset: 0, limit: 1 })).toBeUndefined();
    // Interactive executions are counted apart.
    await worker(async () => ({ highlights: "ran" }));
    await api.execute(request(200), 10_000, { limit: { max: 1 } });
    await readUntil(api, "b-7", (batch) => batch.status === "completed");
    await expect(api.batches.start({ batchId: "b-8", orgId: "acme", items: items(100, 3), limit })).resolves.toEqual({ created: true });
  });
});

describe("batchItemIds", () => {
  it("names each place of a batch by its own UUID-shaped id, the same every time, and another batch's places otherwise", () => {
    const ids = Array.from({ length: 10_000 }, (_, index) => batchItemIds("b-7")(index));
    expect(new Set(ids).size).toBe(10_000);
    expect(ids.every((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id))).toBe(true);
    expect(batchItemIds("b-7")(42)).toBe(ids[42]);
    const other = Array.from({ length: 10_000 }, (_, index) => batchItemIds("b-8")(index));
    expect(other.some((id) => ids.includes(id))).toBe(false);
  });
});
