// The job runtime's seam: a job type other than executions, declared and handled here, runs through the
// same worker as the execute job, with the attempts, backoff and timeout its own declaration states.
import { JsonText } from "@pes/contracts";
import { eventually, startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { handleJob, jobToAdd, type JobHandlers, type JobContext, type JobDeclaration } from "@pes/jobs";
import { createExecutionClient, createExecutionWorker, EXECUTE_JOB } from "./index.js";

/** A side effect such as a chat post: nobody waits for it, and a failure is worth retrying later. */
const Notification = z.object({ channel: z.string().min(1), text: z.string() });
type Notification = z.infer<typeof Notification>;

const NOTIFY_JOB = {
  name: "notify",
  queue: "toy-notifications",
  schema: Notification,
  options: { attempts: 3, backoff: { type: "exponential", delayMs: 100 } },
} satisfies JobDeclaration<Notification>;

/** Another toy job whose attempts time out. */
const SLOW_NOTIFY_JOB = {
  name: "slow-notify",
  queue: "toy-notifications",
  schema: Notification,
  options: { attempts: 2, attemptTimeoutMs: 200 },
} satisfies JobDeclaration<Notification>;

let redis: RedisHandle;
let prefix: string;
const closers: (() => Promise<void>)[] = [];
let logLines: { msg?: string; err?: { message?: string } }[] = [];
const logger = pino({ level: "info" }, { write: (line: string) => void logLines.push(JSON.parse(line)) });

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis.stop();
});

beforeEach(() => {
  prefix = uniquePrefix("job-worker");
  logLines = [];
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

interface Run {
  payload: Notification;
  attempt: number;
  at: number;
}

async function startWorker(handlers: JobHandlers): Promise<void> {
  const worker = createExecutionWorker({ redisUrl: redis.url, prefix, logger, concurrency: 2, handlers });
  closers.push(() => worker.close(5_000));
  await worker.start();
}

function notificationQueue(): Queue<Notification> {
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queue = new Queue<Notification>(NOTIFY_JOB.queue, { connection, prefix });
  closers.push(async () => {
    await queue.close();
    await connection.quit();
  });
  return queue;
}

/** Adds a job as a producer does: with the options its declaration states. */
async function add(queue: Queue<Notification>, declaration: JobDeclaration<Notification>, payload: Notification): Promise<string> {
  const { name, data, opts } = jobToAdd(declaration, payload);
  const job = await queue.add(name, data, opts);
  if (job.id === undefined) throw new Error("BullMQ gave the job no id");
  return job.id;
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("job worker over its handlers", () => {
  it("runs a second job type beside executions, retrying it with its own attempts and backoff", async () => {
    const runs: Run[] = [];
    const delivered = deferred();
    const notify = async (payload: Notification, { attempt }: JobContext) => {
      runs.push({ payload, attempt, at: Date.now() });
      // Fails twice, as a chat API that is briefly down would, then goes through.
      if (attempt < 3) throw new Error(`chat API answered 503 (attempt ${attempt})`);
      delivered.resolve();
    };
    await startWorker([handleJob(EXECUTE_JOB, async (job) => ({ highlights: `ran ${job.bookName}` })), handleJob(NOTIFY_JOB, notify)]);
    const queue = notificationQueue();

    const jobId = await add(queue, NOTIFY_JOB, { channel: "C042", text: "p99 latency is up" });
    await delivered.promise;

    expect(runs.map(({ attempt }) => attempt)).toEqual([1, 2, 3]);
    expect(runs.map(({ payload }) => payload)).toEqual(Array(3).fill({ channel: "C042", text: "p99 latency is up" }));
    // Exponential backoff from 100 ms: at least 100 ms before the first retry, 200 ms before the second.
    const [first, second, third] = runs.map(({ at }) => at);
    expect((second ?? 0) - (first ?? 0)).toBeGreaterThanOrEqual(100);
    expect((third ?? 0) - (second ?? 0)).toBeGreaterThanOrEqual(200);
    expect(logLines.filter((line) => line.msg === "job attempt failed; retrying")).toHaveLength(2);
    expect(logLines.some((line) => line.msg === "job failed")).toBe(false);
    // Completed, hence removed as declared: it did not end up failed.
    expect(
      await eventually(
        () => queue.getJobState(jobId),
        (state) => state !== "active",
      ),
    ).toBe("unknown");

    // The same worker still runs executions, and replies to their callers.
    const client = createExecutionClient({ redisUrl: redis.url, prefix, logger });
    closers.push(() => client.close());
    await client.start();
    const { outcome: result } = await client.execute(
      { orgId: "acme", requestId: "req-1", bookName: "latency", time: "2026-01-01T10:00:00Z", attributes: {}, liveRun: false },
      10_000,
    );
    expect(JSON.parse(result instanceof JsonText ? result.text : result.describe())).toEqual({ highlights: "ran latency" });
  });

  it("fails a malformed job of a retried type at once, without retrying it", async () => {
    let calls = 0;
    await startWorker([
      handleJob(NOTIFY_JOB, async () => {
        calls += 1;
      }),
    ]);
    const queue = notificationQueue();

    const jobId = await add(queue, NOTIFY_JOB, { channel: "", text: "no channel" });
    const state = await eventually(
      () => queue.getJobState(jobId),
      (current) => current === "failed",
    );

    expect(state).toBe("failed");
    const job = await queue.getJob(jobId);
    expect(job?.failedReason).toMatch(/^malformed notify job: channel: /);
    expect(job?.attemptsMade).toBe(1);
    expect(calls).toBe(0);
  });

  it("stops an attempt at its declared timeout (its signal aborts) and retries it", async () => {
    const runs: { attempt: number; reason?: unknown }[] = [];
    const delivered = deferred();
    await startWorker([
      handleJob(SLOW_NOTIFY_JOB, async (_payload, { attempt, signal }) => {
        if (attempt === 1) {
          // A chat API that never answers: the attempt ends when its signal aborts.
          const reason = await new Promise((resolve) => signal.addEventListener("abort", () => resolve(signal.reason), { once: true }));
          runs.push({ attempt, reason });
          throw new Error("request aborted");
        }
        runs.push({ attempt });
        delivered.resolve();
      }),
    ]);
    const queue = notificationQueue();

    await add(queue, SLOW_NOTIFY_JOB, { channel: "C042", text: "slow" });
    await delivered.promise;

    expect(runs.map(({ attempt }) => attempt)).toEqual([1, 2]);
    expect(runs[0]?.reason).toMatchObject({ name: "TimeoutError" });
    const retried = logLines.find((line) => line.msg === "job attempt failed; retrying");
    expect(retried?.err).toMatchObject({ message: "slow-notify attempt timed out after 200 ms" });
  });
});
