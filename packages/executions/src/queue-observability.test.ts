// What the queue tells an operator: how each job run ended, which callers were answered at their
// deadline and where their job was, whether a worker takes jobs, and how deep the queue is.
import { JsonText, WIRE_VERSION, type ExecutionJob, type PlaybookExecutionResult } from "@pes/contracts";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createQueueInspector, executionWaitersKey, handleJob, keySpace, jobToAdd, type JobDeclaration, type JobOutcome, type JobWorker } from "@pes/jobs";
import { createExecutionClient, createExecutionWorker, EXECUTE_JOB, EXECUTION_QUEUE, type DeadlineJobState, type ExecutionRequest } from "./index.js";

let redis: RedisHandle;
let prefix: string;
const closers: (() => Promise<void>)[] = [];
const logger = pino({ level: "silent" });

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis.stop();
});

beforeEach(() => {
  prefix = uniquePrefix("queue-observability");
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const request: ExecutionRequest = {
  orgId: "acme",
  requestId: "req-observed",
  bookName: "latency",
  time: "2026-01-01T10:00:00Z",
  attributes: { service: "checkout" },
  liveRun: false,
};

/** Job runs as onJobFinished reports them, with a way to wait for the n-th. */
function jobReports() {
  const reports: { jobName: string; outcome: JobOutcome; seconds: number }[] = [];
  const waiters = new Set<() => void>();
  return {
    reports,
    onJobFinished(jobName: string, outcome: JobOutcome, seconds: number) {
      reports.push({ jobName, outcome, seconds });
      for (const waiter of waiters) waiter();
    },
    until(count: number): Promise<void> {
      return new Promise((resolve) => {
        const check = () => {
          if (reports.length < count) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      });
    },
  };
}

function executionWorker(
  execute: (job: ExecutionJob, signal: AbortSignal) => Promise<PlaybookExecutionResult>,
  onJobFinished?: (jobName: string, outcome: JobOutcome, seconds: number) => void,
  redisUrl = redis.url,
): JobWorker {
  const worker = createExecutionWorker({
    redisUrl,
    prefix,
    logger,
    concurrency: 4,
    handlers: [handleJob(EXECUTE_JOB, (job, { signal }) => execute(job, signal))],
    onJobFinished,
  });
  closers.push(() => worker.close(2_000));
  return worker;
}

async function client(onReplyTimeout?: (jobState: DeadlineJobState) => void, instanceId?: string) {
  const started = createExecutionClient({ redisUrl: redis.url, prefix, logger, onReplyTimeout, instanceId });
  closers.push(() => started.close());
  await started.start();
  return started;
}

function producerQueue(name = EXECUTION_QUEUE): Queue {
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection, prefix });
  closers.push(async () => {
    await queue.close();
    await connection.quit();
  });
  return queue;
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("onJobFinished", () => {
  it("reports each execution as a result, an error or a timeout, with its duration", async () => {
    const seen = jobReports();
    await executionWorker(async (job, signal) => {
      if (job.requestId === "fails") return { error: "Unknown playbook" };
      if (job.requestId === "slow") await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      return { highlights: "ok" };
    }, seen.onJobFinished).start();
    const api = await client();

    await api.execute(request, 10_000);
    await api.execute({ ...request, requestId: "fails" }, 10_000);
    await api.execute({ ...request, requestId: "slow" }, 300);
    await seen.until(3);

    expect(seen.reports.map(({ jobName, outcome }) => [jobName, outcome])).toEqual([
      ["execute", "result"],
      ["execute", "error"],
      ["execute", "timeout"],
    ]);
    for (const { seconds } of seen.reports) expect(seconds).toBeGreaterThanOrEqual(0);
  });

  it("reports a malformed job as an error", async () => {
    const seen = jobReports();
    await executionWorker(async () => ({ highlights: "never" }), seen.onJobFinished).start();
    const api = await client();

    await api.execute({ ...request, time: "yesterday" }, 10_000);
    await seen.until(1);

    expect(seen.reports[0]?.outcome).toBe("error");
  });

  it("reports a job cut off by shutdown as interrupted", async () => {
    const seen = jobReports();
    const started = deferred();
    const worker = executionWorker(async (_job, signal) => {
      started.resolve();
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      return { error: "partial" };
    }, seen.onJobFinished);
    await worker.start();
    const api = await client();

    void api.execute(request, 30_000);
    await started.promise;
    await worker.close(400);

    expect(seen.reports.map(({ outcome }) => outcome)).toEqual(["interrupted"]);
  });

  it("reports an attempt stopped at its declared timeout as a timeout, and its retry as a result", async () => {
    const SLOW_JOB = {
      name: "slow-side-effect",
      queue: "toy-side-effects",
      schema: z.object({ n: z.number() }),
      options: { attempts: 2, attemptTimeoutMs: 200 },
    } satisfies JobDeclaration<{ n: number }>;
    const seen = jobReports();
    const worker = createExecutionWorker({
      redisUrl: redis.url,
      prefix,
      logger,
      concurrency: 1,
      onJobFinished: seen.onJobFinished,
      handlers: [
        handleJob(SLOW_JOB, async (_payload, { attempt, signal }) => {
          if (attempt === 1) {
            await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
            throw new Error("aborted");
          }
        }),
      ],
    });
    closers.push(() => worker.close(2_000));
    await worker.start();
    const { name, data, opts } = jobToAdd(SLOW_JOB, { n: 1 });

    await producerQueue(SLOW_JOB.queue).add(name, data, opts);
    await seen.until(2);

    expect(seen.reports.map(({ jobName, outcome }) => [jobName, outcome])).toEqual([
      ["slow-side-effect", "timeout"],
      ["slow-side-effect", "result"],
    ]);
  });
});

describe("onReplyTimeout", () => {
  it("says a caller's job was still queued when no worker took it", async () => {
    const states: DeadlineJobState[] = [];
    const api = await client((state) => states.push(state));

    await api.execute(request, 200);

    expect(states).toEqual(["queued"]);
  });

  it("says a caller's job was active when its worker ran past the deadline", async () => {
    const release = deferred();
    const started = deferred();
    await executionWorker(async () => {
      started.resolve();
      await release.promise;
      return { highlights: "late" };
    }).start();
    const states: DeadlineJobState[] = [];
    const api = await client((state) => states.push(state));

    const pending = api.execute(request, 400);
    await started.promise;
    await pending;
    release.resolve();

    expect(states).toEqual(["active"]);
  });

  it("says completed when the result was stored but its message never came", async () => {
    const states: DeadlineJobState[] = [];
    const api = await client((state) => states.push(state), "api-listening");
    const queue = producerQueue();

    const pending = api.execute(request, 1_500);
    // Forget the instance waiting for the execution: the reply goes only to the execution's record.
    let [job] = await queue.getWaiting();
    while (job === undefined) [job] = await queue.getWaiting();
    const direct = new Redis(redis.url);
    await direct.del(executionWaitersKey(keySpace(prefix, redis.url), "acme", job.id ?? ""));
    await direct.quit();
    await executionWorker(async () => ({ highlights: "from the record" })).start();

    const { outcome } = await pending;
    expect(outcome).toBeInstanceOf(JsonText);
    expect(outcome instanceof JsonText ? JSON.parse(outcome.text) : outcome).toEqual({ highlights: "from the record" });
    expect(states).toEqual(["completed"]);
  });

  it("is not called when the reply comes in time", async () => {
    await executionWorker(async () => ({ highlights: "ok" })).start();
    const states: DeadlineJobState[] = [];
    const api = await client((state) => states.push(state));

    await api.execute(request, 10_000);

    expect(states).toEqual([]);
  });
});

describe("JobWorker.isReady", () => {
  it("is true once started, and false from the moment close() is called", async () => {
    const worker = executionWorker(async () => ({ highlights: "ok" }));
    expect(worker.isReady()).toBe(false);

    await worker.start();
    expect(worker.isReady()).toBe(true);

    const closing = worker.close(1_000);
    expect(worker.isReady()).toBe(false);
    await closing;
  });

  it("is false while Redis is gone", async () => {
    const doomed = await startRedis({ spawn: true });
    closers.push(() => doomed.stop());
    const worker = executionWorker(async () => ({ highlights: "ok" }), undefined, doomed.url);
    await worker.start();
    expect(worker.isReady()).toBe(true);

    await doomed.stop();

    // The connection notices the closed socket on its own schedule: wait for it (bounded).
    for (let attempt = 0; attempt < 200 && worker.isReady(); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(worker.isReady()).toBe(false);
  });
});

describe("createQueueInspector", () => {
  it("counts the jobs by state and ages the oldest waiting one", async () => {
    const queue = producerQueue();
    const { name, data, opts } = jobToAdd(EXECUTE_JOB, { ...request, v: WIRE_VERSION, replyTo: "nobody", deadline: Date.now() + 60_000 });
    // Added a minute ago (BullMQ takes the creation time as an option), then one added now: the age is
    // the older one's.
    await queue.add(name, data, { ...opts, timestamp: Date.now() - 60_000 });
    await queue.add(name, data, opts);
    await queue.add(name, data, { ...opts, delay: 60_000 });
    const inspector = createQueueInspector({ redisUrl: redis.url, prefix, logger, queues: [EXECUTION_QUEUE] });
    closers.push(() => inspector.close());

    const [reading, ...others] = await inspector.read();

    expect(others).toEqual([]);
    expect(reading?.queue).toBe(EXECUTION_QUEUE);
    expect(reading?.counts).toEqual({ waiting: 2, prioritized: 0, active: 0, delayed: 1, failed: 0 });
    expect(reading?.oldestWaitingAgeSeconds).toBeGreaterThanOrEqual(60);
    expect(reading?.oldestWaitingAgeSeconds).toBeLessThan(600);
  });

  it("reads an empty queue as zeros", async () => {
    const inspector = createQueueInspector({ redisUrl: redis.url, prefix, logger, queues: [EXECUTION_QUEUE] });
    closers.push(() => inspector.close());

    expect(await inspector.read()).toEqual([
      { queue: EXECUTION_QUEUE, counts: { waiting: 0, prioritized: 0, active: 0, delayed: 0, failed: 0 }, oldestWaitingAgeSeconds: 0 },
    ]);
  });

  it("rejects, rather than hangs, when Redis cannot be reached", async () => {
    const doomed = await startRedis({ spawn: true });
    const url = doomed.url;
    await doomed.stop();
    const inspector = createQueueInspector({ redisUrl: url, prefix, logger, queues: [EXECUTION_QUEUE] });
    closers.push(() => inspector.close());

    await expect(inspector.read()).rejects.toThrow();
  });
});
