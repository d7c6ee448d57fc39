import { decodeReply, encodeReply, WIRE_VERSION, JsonText, RequestRefusal, type ExecutionJob, type PlaybookExecutionResult } from "@pes/contracts";
import { eventually, startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { pino, type Logger } from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { executionKey, executionWaitersKey, handleJob, keySpace, settlesWithin, type JobWorker, type JobWorkerOptions } from "@pes/jobs";
import {
  createExecutionClient,
  createExecutionWorker,
  type ExecutionOutcome,
  EXECUTE_JOB,
  EXECUTE_MESSAGE_JOB,
  EXECUTION_QUEUE,
  QueueUnavailableError,
  type ExecutionClient,
  type ExecutionRequest,
  type MessageExecutionRequest,
} from "./index.js";
import { beginExecutions, defineLifecycleCommands, finishExecution } from "./execution-lifecycle.js";

let redis: RedisHandle;
let prefix: string;
const closers: (() => Promise<void>)[] = [];
let logLines: { msg?: string; level?: number }[] = [];

/** A pino logger whose lines the tests can read (level info and up). */
const logger: Logger = pino({ level: "info" }, { write: (line: string) => void logLines.push(JSON.parse(line)) });

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis.stop();
});

beforeEach(() => {
  prefix = uniquePrefix("queue");
  logLines = [];
});

afterEach(async () => {
  // Last opened, first closed: clients before the Redis they talk to, and so on.
  for (const close of closers.splice(0).reverse()) await close();
});

function request(overrides: Partial<ExecutionRequest> = {}): ExecutionRequest {
  return {
    orgId: "acme",
    requestId: "req-1",
    bookName: "latency",
    time: "2026-01-01T10:00:00Z",
    attributes: { service: "checkout" },
    liveRun: false,
    ...overrides,
  };
}

/** The client, with its results parsed back from JSON so that tests compare objects. */
interface TestClient extends Omit<ExecutionClient, "execute" | "executeMany"> {
  execute(request: ExecutionRequest | MessageExecutionRequest, timeoutMs: number): Promise<PlaybookExecutionResult>;
  executeMany(requests: readonly ExecutionRequest[], timeoutMs: number): Promise<PlaybookExecutionResult[]>;
}

function parsed(result: ExecutionOutcome): PlaybookExecutionResult {
  if (!(result instanceof JsonText)) throw new Error(`expected a result, got a refusal: ${result.describe()}`);
  return JSON.parse(result.text) as PlaybookExecutionResult;
}

async function startClient(options: { redisUrl?: string; instanceId?: string } = {}): Promise<TestClient> {
  const client = createExecutionClient({ redisUrl: options.redisUrl ?? redis.url, prefix, logger, instanceId: options.instanceId });
  closers.push(() => client.close());
  await client.start();
  return {
    ...client,
    execute: async (request, timeoutMs) => parsed((await client.execute(request, timeoutMs)).outcome),
    executeMany: async (requests, timeoutMs) => (await client.executeMany(requests, timeoutMs)).map(parsed),
  };
}

/** The job runtime with a handler of the execute job only, whose handler the test gives. */
function executionWorker(
  options: Omit<JobWorkerOptions, "handlers"> & {
    execute: (job: ExecutionJob, signal: AbortSignal) => Promise<PlaybookExecutionResult>;
  },
): JobWorker {
  const { execute, ...rest } = options;
  return createExecutionWorker({ ...rest, handlers: [handleJob(EXECUTE_JOB, (job, { signal }) => execute(job, signal))] });
}

async function startWorker(
  execute: (job: ExecutionJob, signal: AbortSignal) => Promise<PlaybookExecutionResult>,
  options: { concurrency?: number } = {},
): Promise<JobWorker> {
  const worker = executionWorker({ redisUrl: redis.url, prefix, logger, concurrency: options.concurrency ?? 10, execute });
  closers.push(() => worker.close(5_000));
  await worker.start();
  return worker;
}

/** A Queue of our own to look at what BullMQ holds. */
function inspectQueue(): Queue {
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queue = new Queue(EXECUTION_QUEUE, { connection, prefix });
  closers.push(async () => {
    await queue.close();
    await connection.quit();
  });
  return queue;
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("execution queue", () => {
  it("round-trips one execution to a worker and back", async () => {
    const seen: ExecutionJob[] = [];
    await startWorker(async (job) => {
      seen.push(job);
      return { highlights: `ran ${job.bookName} for ${job.attributes.service}` };
    });
    const client = await startClient({ instanceId: "api-1" });

    const result = await client.execute(request(), 10_000);

    expect(result).toEqual({ highlights: "ran latency for checkout" });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ ...request(), replyTo: "api-1" });
    expect(seen[0]?.deadline).toBeGreaterThan(Date.now());
    // The job hash goes once BullMQ completes the job (just after the reply): the reply lives in the result key.
    const queue = inspectQueue();
    const counts = await eventually(
      () => queue.getJobCounts("completed", "failed", "waiting", "active"),
      (current) => current.active === 0,
    );
    expect(counts).toEqual({ completed: 0, failed: 0, waiting: 0, active: 0 });
  });

  it("keeps many executions in flight and answers each with its own result", async () => {
    await startWorker(async (job) => ({ highlights: job.requestId }), { concurrency: 50 });
    const client = await startClient();

    const ids = Array.from({ length: 300 }, (_, i) => `req-${i}`);
    const results = await Promise.all(ids.map((requestId) => client.execute(request({ requestId }), 20_000)));

    expect(results.map((result) => result.highlights)).toEqual(ids);
  });

  it("answers executeMany in request order even when later items finish first", async () => {
    const count = 20;
    await startWorker(
      async (job) => {
        const index = Number(job.requestId);
        // Later items finish first.
        await new Promise((resolve) => setTimeout(resolve, (count - index) * 5));
        return { highlights: `item ${index}` };
      },
      { concurrency: count },
    );
    const client = await startClient();

    const results = await client.executeMany(
      Array.from({ length: count }, (_, i) => request({ requestId: String(i) })),
      20_000,
    );

    expect(results.map((result) => result.highlights)).toEqual(Array.from({ length: count }, (_, i) => `item ${i}`));
  });

  it("sends message-link executions to their own queue and brings back a worker's refusal", async () => {
    const seen: string[] = [];
    const worker = createExecutionWorker({
      redisUrl: redis.url,
      prefix,
      logger,
      concurrency: 5,
      handlers: [
        handleJob(EXECUTE_JOB, async (job) => {
          seen.push(`execute ${job.bookName}`);
          return { highlights: "resolved" };
        }),
        handleJob(EXECUTE_MESSAGE_JOB, async (job) => {
          seen.push(`execute-message ${job.messageLink}`);
          return job.messageLink.endsWith("/p1700000000000200")
            ? new RequestRefusal([{ path: ["messageLink"], message: "message 1700000000.000200 was not found in channel C1" }])
            : { highlights: "from the message" };
        }),
      ],
    });
    closers.push(() => worker.close(5_000));
    await worker.start();
    const client = createExecutionClient({ redisUrl: redis.url, prefix, logger });
    closers.push(() => client.close());
    await client.start();
    const link = (ts: string) =>
      ({ kind: "message", orgId: "acme", requestId: "req-m", messageLink: `https://acme.slack.com/archives/C1/p${ts}`, liveRun: false }) as const;

    const [resolved, found, refused] = await client.executeMany([request(), link("1700000000000100"), link("1700000000000200")], 10_000);

    expect(resolved && parsed(resolved)).toEqual({ highlights: "resolved" });
    expect(found && parsed(found)).toEqual({ highlights: "from the message" });
    expect(refused).toBeInstanceOf(RequestRefusal);
    expect(refused instanceof RequestRefusal && refused.issues).toEqual([
      { path: ["messageLink"], message: "message 1700000000.000200 was not found in channel C1" },
    ]);
    expect(seen.sort()).toEqual([
      "execute latency",
      "execute-message https://acme.slack.com/archives/C1/p1700000000000100",
      "execute-message https://acme.slack.com/archives/C1/p1700000000000200",
    ]);
  });

  it("leaves message-link executions to workers that handle them: one of the version before never takes one", async () => {
    // A worker of the version before: the execute job only, whose payload requires bookName and time.
    await startWorker(async () => ({ highlights: "resolved" }));
    const client = await startClient();
    const byLink = {
      kind: "message",
      orgId: "acme",
      requestId: "req-m",
      messageLink: "https://acme.slack.com/archives/C1/p1700000000000100",
      liveRun: false,
    } as const;

    const outcome = await client.execute(byLink, 500);

    expect(outcome).toEqual({ error: "Execution timed out after 500 ms (still queued: no worker picked it up)" });
    expect(await inspectQueue().count()).toBe(0);
  });

  it("gives each item of executeMany its own outcome", async () => {
    await startWorker(async (job) => (job.bookName === "broken" ? { error: "Playbook failed" } : { highlights: "ok" }));
    const client = await startClient();

    const results = await client.executeMany([request(), request({ bookName: "broken" }), request()], 10_000);

    expect(results).toEqual([{ highlights: "ok" }, { error: "Playbook failed" }, { highlights: "ok" }]);
  });

  it("answers an explicit timeout when no worker picks the job up, and removes the job", async () => {
    const client = await startClient();
    const queue = inspectQueue();

    const result = await client.execute(request(), 300);

    expect(result).toEqual({ error: "Execution timed out after 300 ms (still queued: no worker picked it up)" });
    expect(await queue.getJobCounts("waiting", "active", "delayed", "prioritized")).toEqual({
      waiting: 0,
      active: 0,
      delayed: 0,
      prioritized: 0,
    });
  });

  it("answers 'still running' at the deadline of a job a worker is running", async () => {
    const release = deferred();
    const started = deferred();
    await startWorker(async () => {
      started.resolve();
      await release.promise;
      return { highlights: "late" };
    });
    const client = await startClient();

    const pending = client.execute(request(), 500);
    await started.promise;
    const result = await pending;
    release.resolve();

    expect(result).toEqual({ error: "Execution timed out after 500 ms (still running)" });
  });

  it("fails a malformed job without retry and tells its caller at once", async () => {
    let calls = 0;
    await startWorker(async () => {
      calls += 1;
      return { highlights: "should not run" };
    });
    const client = await startClient();
    const queue = inspectQueue();

    // A type-correct but invalid payload: `time` must be an ISO 8601 date-time.
    const result = await client.execute(request({ time: "yesterday" }), 60_000);

    expect(result.error).toMatch(/^Execution failed: malformed execution job: time: /);
    expect(calls).toBe(0);
    // BullMQ marks the job failed right after the worker replied.
    const [failed] = await eventually(
      () => queue.getJobs("failed"),
      (jobs) => jobs.length > 0,
    );
    expect(failed?.failedReason).toMatch(/^malformed execution job/);
    expect(failed?.attemptsMade).toBe(1);
  });

  it("does not run a job that reaches a worker after its deadline", async () => {
    // As a job re-queued after its caller gave up would: its deadline is already behind it.
    const stale: ExecutionJob = { ...request(), v: WIRE_VERSION, replyTo: "api-gone", deadline: Date.now() - 1_000 };
    const listener = new Redis(redis.url);
    closers.push(async () => void (await listener.quit()));
    const replied = deferred<string>();
    listener.on("message", (_channel: string, message: string) => replied.resolve(message));
    await listener.subscribe(`${prefix}:reply:api-gone`);
    await beginRecord(stale, "stale-1");
    await inspectQueue().add("execute", stale, { jobId: "stale-1", removeOnComplete: true });
    let calls = 0;
    await startWorker(async () => {
      calls += 1;
      return { highlights: "ran" };
    });

    const reply = decodeReply(await replied.promise);
    expect(reply?.jobId).toBe("stale-1");
    expect(reply && parsed(reply.result)).toEqual({
      error: "Execution timed out: its deadline passed before a worker could start it",
    });
    expect(calls).toBe(0);
  });

  it("keeps the first reply of a job that runs again (its worker died after replying)", async () => {
    const first = encodeReply("rerun-1", { highlights: "first run" });
    const job: ExecutionJob = { ...request(), v: WIRE_VERSION, replyTo: "api-gone", deadline: Date.now() + 60_000 };
    await beginRecord(job, "rerun-1");
    const admin = new Redis(redis.url);
    closers.push(async () => void (await admin.quit()));
    defineLifecycleCommands(admin);
    await finishExecution(admin, keySpace(prefix, redis.url), job.orgId, "rerun-1", { reply: first, status: "completed", reusable: true });
    const queue = inspectQueue();
    await queue.add("execute", job, { jobId: "rerun-1" });
    const ran = deferred();
    await startWorker(async () => {
      ran.resolve();
      return { highlights: "second run" };
    });

    await ran.promise;
    await eventually(
      () => queue.getJobState("rerun-1"),
      (state) => state === "completed",
    );
    expect(await admin.hget(executionKey(keySpace(prefix, redis.url), job.orgId, "rerun-1"), "result")).toBe(first);
  });

  it("still delivers a reply published while the client's subscriber was disconnected", async () => {
    const release = deferred();
    const started = deferred();
    await startWorker(async () => {
      started.resolve();
      await release.promise;
      return { highlights: "published into the void" };
    });
    const instanceId = `api-${prefix}`;
    const client = await startClient({ instanceId });
    const admin = new Redis(redis.url);
    closers.push(async () => void (await admin.quit()));

    const pending = client.execute(request(), 60_000);
    await started.promise;
    // Drop the subscriber; ioredis waits ≥ 100 ms before reconnecting, the worker replies within that gap.
    const clients = String(await admin.client("LIST"));
    const line = clients.split("\n").find((entry) => entry.includes(`name=pes:subscriber:${instanceId}`));
    const id = /\bid=(\d+)/.exec(line ?? "")?.[1];
    expect(id).toBeDefined();
    await admin.client("KILL", "ID", id ?? "");
    release.resolve();

    expect(await pending).toEqual({ highlights: "published into the void" });
    expect(logLines.some((entry) => entry.msg === "collected replies published while the reply channel was down")).toBe(true);
  });

  it("reads the record at the deadline when the reply never arrived", async () => {
    const client = await startClient({ instanceId: "api-listening" });
    const queue = inspectQueue();
    const admin = new Redis(redis.url);
    closers.push(async () => void (await admin.quit()));

    const pending = client.execute(request(), 1_500);
    // Forget who waits for the queued job: its reply is stored in its record and published to nobody.
    const [job] = await waitForJobs(queue);
    await admin.del(executionWaitersKey(keySpace(prefix, redis.url), "acme", job?.id ?? ""));
    await startWorker(async () => ({ highlights: "from the record" }));

    expect(await pending).toEqual({ highlights: "from the record" });
  });

  it("leaves a job alone once its caller was told that its state could not be read", async () => {
    const paused = await startRedis({ spawn: true });
    closers.push(() => paused.stop());
    const client = createExecutionClient({ redisUrl: paused.url, prefix, logger });
    closers.push(() => client.close());
    await client.start();
    const connection = new Redis(paused.url, { maxRetriesPerRequest: null });
    const queue = new Queue(EXECUTION_QUEUE, { connection, prefix });
    closers.push(async () => {
      await queue.close();
      await connection.quit();
    });

    const pending = client.execute(request(), 1_000);
    const [job] = await waitForJobs(queue);
    // Redis answers nobody from before the deadline until well after the look-up at the deadline gave up.
    await connection.client("PAUSE", 4_000, "ALL");
    const answer = await pending;
    expect(parsed(answer.outcome)).toEqual({ error: "Execution timed out after 1000 ms; its state could not be read: Redis unreachable" });
    // Answered after the commands of the look-up, which Redis took first: the look-up goes on from here.
    await connection.ping();
    const worker = executionWorker({ redisUrl: paused.url, prefix, logger, concurrency: 1, execute: async () => ({ highlights: "too late to run" }) });
    closers.push(() => worker.close(5_000));
    await worker.start();

    // Nobody withdrew the job: a worker takes it, finds its deadline passed, and says so in its record.
    const view = await eventually(
      () => client.read("acme", job?.id ?? ""),
      (read) => read?.status === "completed" || read?.status === "failed",
    );
    expect(view?.outcome && parsed(view.outcome)).toEqual({ error: "Execution timed out: its deadline passed before a worker could start it" });
  });

  it("closes a worker only after its active job finished", async () => {
    const release = deferred();
    const started = deferred();
    const worker = executionWorker({
      redisUrl: redis.url,
      prefix,
      logger,
      concurrency: 1,
      execute: async () => {
        started.resolve();
        await release.promise;
        return { highlights: "finished during shutdown" };
      },
    });
    await worker.start();
    const client = await startClient();

    const pending = client.execute(request(), 20_000);
    await started.promise;
    const closing = worker.close(10_000);

    expect(await settlesWithin(closing, 300)).toBe(false);
    release.resolve();
    expect(await pending).toEqual({ highlights: "finished during shutdown" });
    await closing;
  });

  it("at the shutdown deadline interrupts the active job and hands it to another worker", async () => {
    const firstStarted = deferred();
    let firstSawAbort = false;
    const first = executionWorker({
      redisUrl: redis.url,
      prefix,
      logger,
      concurrency: 1,
      execute: async (_job, signal) => {
        firstStarted.resolve();
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        firstSawAbort = true;
        return { error: "partial: aborted" };
      },
    });
    await first.start();
    const client = await startClient();

    const pending = client.execute(request(), 20_000);
    await firstStarted.promise;
    await first.close(400);
    await startWorker(async () => ({ highlights: "completed by the second worker" }));

    expect(await pending).toEqual({ highlights: "completed by the second worker" });
    expect(firstSawAbort).toBe(true);
  });

  it("answers waiting callers when the client closes", async () => {
    const client = createExecutionClient({ redisUrl: redis.url, prefix, logger });
    await client.start();

    const pending = client.execute(request(), 60_000);
    await waitForJobs(inspectQueue());
    await client.close();

    expect(parsed((await pending).outcome)).toEqual({ error: "Service is shutting down" });
    await expect(client.execute(request(), 1_000)).rejects.toBeInstanceOf(QueueUnavailableError);
  });

  it("throws QueueUnavailableError at once when Redis goes away, and reports not ready", async () => {
    const doomed = await startRedis({ spawn: true });
    closers.push(() => doomed.stop());
    const client = await startClient({ redisUrl: doomed.url });
    expect(await client.isReady()).toBe(true);

    await doomed.stop();

    await expect(client.execute(request(), 60_000)).rejects.toBeInstanceOf(QueueUnavailableError);
    expect(await client.isReady()).toBe(false);
  });

  it("fails start() with QueueUnavailableError when Redis cannot be reached", async () => {
    const doomed = await startRedis({ spawn: true });
    const url = doomed.url;
    await doomed.stop();
    const client = createExecutionClient({ redisUrl: url, prefix, logger });
    closers.push(() => client.close());

    await expect(client.start()).rejects.toBeInstanceOf(QueueUnavailableError);
    await expect(client.execute(request(), 60_000)).rejects.toBeInstanceOf(QueueUnavailableError);
    expect(await client.isReady()).toBe(false);
  });

  it("survives a Redis crash while the job runs: the caller still gets the result", async () => {
    const durable = await startRedis({ spawn: true, appendOnly: true });
    closers.push(() => durable.stop());
    const release = deferred();
    const started = deferred();
    const worker = executionWorker({
      redisUrl: durable.url,
      prefix,
      logger,
      concurrency: 1,
      execute: async () => {
        started.resolve();
        await release.promise;
        return { highlights: "after the crash" };
      },
    });
    closers.push(() => worker.close(5_000));
    await worker.start();
    const client = await startClient({ redisUrl: durable.url });

    const pending = client.execute(request(), 30_000);
    await started.promise;
    await durable.restart({ crash: true });
    release.resolve();

    expect(await pending).toEqual({ highlights: "after the crash" });
  });

  it("keeps a worker waiting for an unreachable Redis until close() stops it", async () => {
    const doomed = await startRedis({ spawn: true });
    const url = doomed.url;
    await doomed.stop();
    const worker = executionWorker({ redisUrl: url, prefix, logger, concurrency: 1, execute: async () => ({}) });

    const starting = worker.start();
    await worker.close(1_000);

    await expect(starting).rejects.toThrow("closed before Redis was reachable");
  });

  it("answers with an explicit error, not a hang, when Redis dies while a caller waits", async () => {
    const doomed = await startRedis({ spawn: true });
    closers.push(() => doomed.stop());
    const started = deferred();
    const worker = executionWorker({
      redisUrl: doomed.url,
      prefix,
      logger,
      concurrency: 1,
      execute: async (_job, signal) => {
        started.resolve();
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        return { error: "aborted" };
      },
    });
    closers.push(() => worker.close(1_000));
    await worker.start();
    const client = await startClient({ redisUrl: doomed.url });

    const pending = client.execute(request(), 1_000);
    await started.promise;
    await doomed.stop();

    expect(await pending).toEqual({
      error: "Execution timed out after 1000 ms; its state could not be read: Redis unreachable",
    });
  });
});

describe("per-job cancellation", () => {
  it("stops a job when its caller's deadline passes, leaves the others running, and takes the next job", async () => {
    const aborted = new Map<string, unknown>();
    const started = new Map<string, () => void>();
    const release = deferred();
    const whenStarted = (requestId: string) => new Promise<void>((resolve) => started.set(requestId, resolve));
    await startWorker(
      async (job, signal) => {
        started.get(job.requestId)?.();
        if (job.requestId === "next") return { highlights: "next job ran" };
        // Like a data source that holds every query: only the job's signal ends the wait.
        const reason = await Promise.race([
          new Promise((resolve) => signal.addEventListener("abort", () => resolve(signal.reason), { once: true })),
          release.promise.then(() => undefined),
        ]);
        if (reason !== undefined) aborted.set(job.requestId, reason);
        return { highlights: `${job.requestId} finished` };
      },
      { concurrency: 2 },
    );
    const client = await startClient();
    const queue = inspectQueue();

    const longStarted = whenStarted("long");
    const long = client.execute(request({ requestId: "long" }), 30_000);
    await longStarted;
    const short = await client.execute(request({ requestId: "short" }), 500);
    expect(short.error).toMatch(/timed out/);
    await eventually(
      async () => aborted.has("short"),
      (seen) => seen,
    );
    // Its slot is free again: the next job runs while the long one still waits.
    expect(await client.execute(request({ requestId: "next" }), 30_000)).toEqual({ highlights: "next job ran" });
    release.resolve();

    expect(await long).toEqual({ highlights: "long finished" });
    expect(aborted.get("short")).toMatchObject({ name: "TimeoutError" });
    expect(aborted.has("long")).toBe(false);
    // Ended at its deadline, not failed and not run again.
    expect(await queue.getJobCounts("failed", "waiting", "delayed")).toEqual({ failed: 0, waiting: 0, delayed: 0 });
  });
});

describe("rolling deploy: an API and workers one version apart", () => {
  /** Listens on an API instance's reply channel as that API would, returning the raw replies. */
  async function listen(instanceId: string): Promise<{ next(): Promise<string> }> {
    const listener = new Redis(redis.url);
    closers.push(async () => void (await listener.quit()));
    const messages: string[] = [];
    const waiting: ((message: string) => void)[] = [];
    listener.on("message", (_channel: string, message: string) => {
      const waiter = waiting.shift();
      if (waiter === undefined) messages.push(message);
      else waiter(message);
    });
    await listener.subscribe(`${prefix}:reply:${instanceId}`);
    return {
      next: () => {
        const message = messages.shift();
        return message === undefined ? new Promise((resolve) => waiting.push(resolve)) : Promise.resolve(message);
      },
    };
  }

  it("a worker runs a job from an API of the next version (an unknown field) and answers in a format it reads", async () => {
    const seen: ExecutionJob[] = [];
    await startWorker(async (job) => {
      seen.push(job);
      return { highlights: "ran" };
    });
    const replies = await listen("api-next");
    const job = { ...request(), v: WIRE_VERSION + 1, replyTo: "api-next", deadline: Date.now() + 60_000 };
    await beginRecord(job, "next-1");
    await inspectQueue().add("execute", { ...job, lane: "interactive", coalesceKey: "k-1" }, { jobId: "next-1" });

    const reply = decodeReply(await replies.next());
    expect(reply).toMatchObject({ jobId: "next-1", version: WIRE_VERSION });
    expect(reply && parsed(reply.result)).toEqual({ highlights: "ran" });
    // The unknown fields were dropped, the known ones kept.
    expect(seen).toEqual([job]);
  });
});

/**
 * Begins an execution's record as an API instance `job.replyTo` would, so that a job added by hand is
 * answered on that instance's reply channel.
 */
async function beginRecord(job: ExecutionJob, jobId: string): Promise<void> {
  const connection = new Redis(redis.url);
  defineLifecycleCommands(connection);
  try {
    await beginExecutions(
      connection,
      keySpace(prefix, redis.url),
      {
        orgId: job.orgId,
        lane: "interactive",
        deadline: job.deadline,
        ttlMs: 60_000,
        retainMs: 60_000,
        reuseMs: 0,
        waiterChannel: `${prefix}:reply:${job.replyTo}`,
      },
      [{ candidateId: jobId, queue: EXECUTION_QUEUE }],
    );
  } finally {
    await connection.quit();
  }
}

/** Waits (bounded) until the queue holds at least one waiting job and returns the waiting jobs. */
function waitForJobs(queue: Queue) {
  return eventually(
    () => queue.getJobs("waiting"),
    (jobs) => jobs.length > 0,
  );
}
