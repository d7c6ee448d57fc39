// Execution records: identical requests share one execution (across API instances), results are read
// back by id and organization, and Idempotency-Keys name one execution. Real Redis, real BullMQ.
import { JsonText, type ExecutionJob, type PlaybookExecutionResult } from "@pes/contracts";
import { eventually, startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { executionKey, handleJob, keySpace } from "@pes/jobs";
import {
  createExecutionClient,
  createExecutionWorker,
  EXECUTE_JOB,
  EXECUTION_QUEUE,
  type ExecutionClient,
  type ExecutionClientOptions,
  type ExecutionOutcome,
  type ExecutionRequest,
} from "./index.js";

let redis: RedisHandle;
let prefix: string;
const closers: (() => Promise<void>)[] = [];
const logger = pino({ level: "silent" });
/** Every job a worker ran in this test, by execution id. */
let runs: string[];

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis.stop();
});

beforeEach(() => {
  prefix = uniquePrefix("records");
  runs = [];
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const coalescing = { bucketMs: 60_000, reuseMs: 60_000 };

function request(overrides: Partial<ExecutionRequest> = {}): ExecutionRequest {
  return {
    orgId: "acme",
    requestId: "req-1",
    bookName: "latency",
    time: "2026-01-01T10:00:10Z",
    attributes: { service: "checkout", env: "production" },
    liveRun: false,
    ...overrides,
  };
}

async function client(options: Partial<ExecutionClientOptions> = {}): Promise<ExecutionClient> {
  const started = createExecutionClient({ redisUrl: redis.url, prefix, logger, coalescing, ...options });
  closers.push(() => started.close());
  await started.start();
  return started;
}

async function worker(execute: (job: ExecutionJob) => Promise<PlaybookExecutionResult>): Promise<void> {
  const started = createExecutionWorker({
    redisUrl: redis.url,
    prefix,
    logger,
    concurrency: 20,
    handlers: [
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

/** Waits until `key` is gone from Redis (expired), polling: the reuse window is a TTL. */
async function untilGone(pattern: string): Promise<void> {
  const direct = new Redis(redis.url);
  try {
    while ((await direct.keys(pattern)).length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    await direct.quit();
  }
}

describe("coalescing", () => {
  it("runs identical concurrent requests from two API instances once; every caller gets the result and the id", async () => {
    const release = deferred();
    const started = deferred();
    await worker(async (job) => {
      started.resolve();
      await release.promise;
      return { highlights: `ran for ${job.attributes.service}` };
    });
    const [first, second] = [await client({ instanceId: "api-1" }), await client({ instanceId: "api-2" })];

    const leader = first.execute(request(), 10_000);
    await started.promise;
    // Attribute order does not matter; the caller's own request id and title do not either.
    const joiners = [
      second.execute(request({ requestId: "req-2", attributes: { env: "production", service: "checkout" } }), 10_000),
      second.execute(request({ requestId: "req-3", title: "High latency" }), 10_000),
      first.execute(request({ requestId: "req-4" }), 10_000),
    ];
    // Joiners are registered before the release: wait until the record lists both instances.
    await untilJoined(2);
    release.resolve();

    const answers = await Promise.all([leader, ...joiners]);
    expect(runs).toHaveLength(1);
    expect(new Set(answers.map((answer) => answer.executionId))).toEqual(new Set(runs));
    expect(answers.map((answer) => answer.joined)).toEqual([false, true, true, true]);
    for (const answer of answers) expect(parsed(answer.outcome)).toEqual({ highlights: "ran for checkout" });
  });

  it("gives a completed result to identical requests for the reuse window, then runs afresh", async () => {
    await worker(async () => ({ highlights: `run ${runs.length}` }));
    const api = await client({ coalescing: { bucketMs: 60_000, reuseMs: 300 } });

    const first = await api.execute(request(), 10_000);
    const reused = await api.execute(request({ requestId: "req-2" }), 10_000);
    expect(reused).toEqual({ ...first, joined: true });

    await untilGone(`${prefix}:org:acme:coalesce:*`);
    const fresh = await api.execute(request({ requestId: "req-3" }), 10_000);
    expect(fresh.executionId).not.toBe(first.executionId);
    expect(parsed(fresh.outcome)).toEqual({ highlights: "run 2" });
    expect(runs).toHaveLength(2);
  });

  it("runs an opted-out request on its own, and nobody joins it", async () => {
    await worker(async () => ({ highlights: "ran" }));
    const api = await client();

    const optedOut = await api.execute(request(), 10_000, { coalesce: false });
    const next = await api.execute(request(), 10_000);
    const again = await api.execute(request(), 10_000, { coalesce: false });
    expect(new Set([optedOut.executionId, next.executionId, again.executionId]).size).toBe(3);
    expect([optedOut.joined, next.joined, again.joined]).toEqual([false, false, false]);
    expect(runs).toHaveLength(3);
  });

  it("tells issue times apart by bucket: the same minute joins, the next minute does not", async () => {
    await worker(async (job) => ({ highlights: job.time }));
    const api = await client();

    const answers = await api.executeMany(
      [
        request({ time: "2026-01-01T10:00:00Z" }),
        request({ time: "2026-01-01T10:00:59.999Z" }),
        request({ time: "2026-01-01T10:01:00Z" }),
        request({ time: "2026-01-01T11:00:30+01:00" }),
      ],
      10_000,
    );
    // 11:00:30+01:00 is 10:00:30Z: the first minute's execution, whose issue time was 10:00:00.
    expect(answers.map(parsed)).toEqual([
      { highlights: "2026-01-01T10:00:00Z" },
      { highlights: "2026-01-01T10:00:00Z" },
      { highlights: "2026-01-01T10:01:00Z" },
      { highlights: "2026-01-01T10:00:00Z" },
    ]);
    expect(runs).toHaveLength(2);
  });

  it("keeps apart what changes the worker's side effects or the findings", async () => {
    await worker(async () => ({ highlights: "ran" }));
    const api = await client();

    await api.execute(request({ orgId: "globex" }), 10_000);
    await api.executeMany(
      [
        request(),
        request({ bookName: "errors" }),
        request({ attributes: { service: "search", env: "production" } }),
        request({ liveRun: true }),
        request({ channelId: "C1" }),
        request({ channelId: "C2" }),
        request({ channelId: "C1", batch: { id: "b-1", index: 0, total: 2 } }),
      ],
      10_000,
    );
    expect(runs).toHaveLength(8);
  });

  it("does not reuse a result that is an error: the next identical request tries again", async () => {
    await worker(async () => (runs.length === 1 ? { error: "Prometheus unreachable" } : { highlights: "ran" }));
    const api = await client();

    expect(parsed((await api.execute(request(), 10_000)).outcome)).toEqual({ error: "Prometheus unreachable" });
    const retried = await api.execute(request(), 10_000);
    expect(retried.joined).toBe(false);
    expect(parsed(retried.outcome)).toEqual({ highlights: "ran" });
  });

  it("never lets a caller who retries the moment an error arrives join the failed execution", async () => {
    // The error's reply and the release of its coalescing key are one step: no window between them,
    // however fast the retry. Each round fails once, and its retry must run afresh.
    await worker(async () => (runs.length % 2 === 1 ? { error: "Prometheus unreachable" } : { highlights: "ran" }));
    const api = await client();
    for (let round = 0; round < 40; round += 1) {
      const time = new Date(Date.UTC(2026, 0, 1, 10, round)).toISOString();
      expect(parsed((await api.execute(request({ time }), 10_000)).outcome)).toEqual({ error: "Prometheus unreachable" });
      const retried = await api.execute(request({ time }), 10_000);
      expect(retried.joined).toBe(false);
      expect(parsed(retried.outcome)).toEqual({ highlights: "ran" });
    }
  });

  it("tells every joined caller at once when the shared job fails for good", async () => {
    const started = deferred();
    const fail = deferred();
    await worker(async () => {
      started.resolve();
      await fail.promise;
      throw new Error("the engine crashed");
    });
    const [first, second] = [await client({ instanceId: "api-1" }), await client({ instanceId: "api-2" })];

    // Deadlines far beyond the test's: only the failure notice can answer them.
    const leader = first.execute(request(), 120_000);
    await started.promise;
    const joiner = second.execute(request(), 120_000);
    await untilJoined(2);
    fail.resolve();

    for (const answer of await Promise.all([leader, joiner])) {
      expect(parsed(answer.outcome)).toEqual({ error: "Execution failed: the engine crashed" });
    }
  });

  it("answers joiners when the first caller's deadline withdraws the job nobody took", async () => {
    const first = await client({ instanceId: "api-1" });
    const second = await client({ instanceId: "api-2" });

    // The leader's deadline leaves the joiner ample time to join on a loaded host (it joins in milliseconds).
    const leader = first.execute(request(), 1_500);
    // The leader must have created the execution first: started together, either call may get there first,
    // and a joiner that created it would wait for its own deadline (the leader, joined, withdraws nothing).
    await untilJoined(1);
    // A joiner with a long deadline hears of the withdrawal at once, not at its own deadline.
    const joiner = second.execute(request(), 120_000);
    const [led, joined] = await Promise.all([leader, joiner]);
    expect(parsed(led.outcome)).toEqual({ error: "Execution timed out after 1500 ms (still queued: no worker picked it up)" });
    expect(joined).toEqual({ ...led, joined: true });
    expect(runs).toEqual([]);
  }, 20_000);
});

/** Waits until some execution's record lists `count` waiting instances. */
async function untilJoined(count: number): Promise<void> {
  const direct = new Redis(redis.url);
  try {
    for (;;) {
      const keys = await direct.keys(`${prefix}:org:*:execution:*:waiters`);
      const sizes = await Promise.all(keys.map((key) => direct.scard(key)));
      if (sizes.some((size) => size >= count)) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    await direct.quit();
  }
}

describe("submitted executions", () => {
  it("are read back by their organization until completed, and by no other", async () => {
    const release = deferred();
    const started = deferred();
    await worker(async () => {
      started.resolve();
      await release.promise;
      return { highlights: "done" };
    });
    const api = await client();

    const [submitted] = await api.submit([request()]);
    if (submitted === undefined) throw new Error("nothing submitted");
    expect(submitted.joined).toBe(false);
    await started.promise;
    expect(await api.read("acme", submitted.executionId)).toMatchObject({ id: submitted.executionId, status: "running" });
    expect(await api.read("globex", submitted.executionId)).toBeUndefined();
    expect(await api.read("acme", "00000000-0000-4000-8000-000000000000")).toBeUndefined();

    // A synchronous caller joins the submitted execution and waits for its result.
    const waiting = api.execute(request(), 10_000);
    await untilJoined(1);
    release.resolve();
    expect(await waiting).toMatchObject({ executionId: submitted.executionId, joined: true });

    const done = await api.read("acme", submitted.executionId);
    expect(done).toMatchObject({ id: submitted.executionId, status: "completed" });
    expect(parsed(done?.outcome)).toEqual({ highlights: "done" });
    expect(done?.completedAt?.getTime()).toBeGreaterThanOrEqual(done?.createdAt.getTime() ?? Infinity);
  });

  it("are queued while no worker takes them, and failed once a job fails", async () => {
    const api = await client();
    const [submitted] = await api.submit([request()], { coalesce: false });
    expect(await api.read("acme", submitted?.executionId ?? "")).toMatchObject({ status: "queued" });

    await worker(async () => {
      throw new Error("no data source");
    });
    let view = await api.read("acme", submitted?.executionId ?? "");
    while (view?.status !== "failed") {
      await new Promise((resolve) => setTimeout(resolve, 20));
      view = await api.read("acme", submitted?.executionId ?? "");
    }
    expect(parsed(view.outcome)).toEqual({ error: "Execution failed: no data source" });
  });
});

describe("lost executions", () => {
  /** As a Redis restart that lost a write would leave an execution: its record pending, its job gone, a while ago. */
  async function loseJob(executionId: string): Promise<void> {
    const queue = new Queue(EXECUTION_QUEUE, { connection: { url: redis.url }, prefix });
    const direct = new Redis(redis.url);
    try {
      expect(await queue.remove(executionId)).toBe(1);
      await direct.hset(executionKey(keySpace(prefix, redis.url), "acme", executionId), "createdAt", Date.now() - 60_000);
    } finally {
      await queue.close();
      await direct.quit();
    }
  }

  it("are finished when a read finds them lost: an identical request then starts afresh", async () => {
    const api = await client();
    const [lost] = await api.submit([request()]);
    if (lost === undefined) throw new Error("nothing submitted");
    await loseJob(lost.executionId);

    const view = await api.read("acme", lost.executionId);
    expect(view).toMatchObject({ status: "failed" });
    expect(parsed(view?.outcome)).toEqual({ error: "Execution result was lost" });
    const [again] = await api.submit([request({ requestId: "req-2" })]);
    expect(again?.joined).toBe(false);
    expect(again?.executionId).not.toBe(lost.executionId);
  });

  it("are finished when a caller's deadline finds them lost: an identical request then starts afresh", async () => {
    const api = await client();
    const queue = new Queue(EXECUTION_QUEUE, { connection: { url: redis.url }, prefix });
    closers.push(() => queue.close());

    // A deadline far enough for the job to be taken away before it, on a loaded host too.
    const pending = api.execute(request(), 2_000);
    const [job] = await eventually(
      () => queue.getJobs("waiting"),
      (jobs) => jobs.length > 0,
    );
    await loseJob(job?.id ?? "");
    const answer = await pending;

    expect(parsed(answer.outcome)).toEqual({ error: "Execution result was lost" });
    // Before any read of it, which would finish it too.
    const [again] = await api.submit([request({ requestId: "req-2" })]);
    expect(again?.joined).toBe(false);
    expect(again?.executionId).not.toBe(answer.executionId);
  });
});

describe("idempotency keys", () => {
  it("name the first request's id; the same key with another request is a mismatch; keys are per organization", async () => {
    const api = await client();
    const key = { orgId: "acme", key: "retry-1", requestHash: "h1" };

    expect(await api.idempotencyKeys.claim(key, "id-1")).toEqual({ id: "id-1", first: true });
    expect(await api.idempotencyKeys.claim(key, "id-2")).toEqual({ id: "id-1", first: false });
    expect(await api.idempotencyKeys.claim({ ...key, requestHash: "h2" }, "id-3")).toEqual({ mismatch: true });
    expect(await api.idempotencyKeys.claim({ ...key, orgId: "globex" }, "id-4")).toEqual({ id: "id-4", first: true });

    await api.idempotencyKeys.bind(key, "id-5");
    expect(await api.idempotencyKeys.claim(key, "id-6")).toEqual({ id: "id-5", first: false });
  });

  it("make a retry with the claimed id join the execution, even after it completed", async () => {
    await worker(async () => ({ highlights: "once" }));
    const api = await client();
    const executionId = "6f1b7c7e-2c1a-4d7b-9a51-0c6f7e2b1d11";

    const first = await api.execute(request(), 10_000, { executionId, coalesce: false });
    const retry = await api.execute(request(), 10_000, { executionId, coalesce: false });
    expect(first).toMatchObject({ executionId, joined: false });
    expect(retry).toEqual({ ...first, joined: true });
    expect(runs).toEqual([executionId]);
  });
});
