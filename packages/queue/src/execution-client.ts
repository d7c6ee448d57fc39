import { randomUUID } from "node:crypto";
import {
  decodeReply,
  JsonText,
  WIRE_VERSION,
  type DecodedReply,
  type ExecutionJob,
  type MessageExecutionJob,
  type PlaybookExecutionResult,
  type RequestRefusal,
} from "@pes/contracts";
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import { EXECUTE_JOB, EXECUTE_MESSAGE_JOB, jobToAdd } from "./job-declarations.js";
import { startEnqueueSpan } from "./job-trace-context.js";
import { replyChannel, resultKey } from "./queue-names.js";
import {
  CONNECT_TIMEOUT_MS,
  closeConnection,
  createProducerConnection,
  createSubscriberConnection,
  describeRedisUrl,
  withTimeout,
} from "./redis-connections.js";

/** What the API enqueues; the client adds the wire version, where to reply and until when anybody waits. */
export type ExecutionRequest = Omit<ExecutionJob, "v" | "replyTo" | "deadline" | "traceparent">;

/** An execution whose issue is a chat message the worker reads (`execute-message`). */
export type MessageExecutionRequest = Omit<MessageExecutionJob, "v" | "replyTo" | "deadline" | "traceparent"> & { kind: "message" };

/**
 * What an execution gave: the result as JSON (a PlaybookExecutionResult, as the worker encoded it), or
 * the worker's refusal of the request (a 400 on what only it could check).
 */
export type ExecutionOutcome = JsonText | RequestRefusal;

/** The API side of the queue: enqueue executions and wait for their replies. */
export interface ExecutionClient {
  /**
   * Connects and subscribes to this instance's reply channel. Rejects with QueueUnavailableError when
   * Redis cannot be reached within a few seconds; the connections keep retrying in the background
   * either way, and isReady() turns true once Redis is back.
   */
  start(): Promise<void>;
  /**
   * Runs one execution and resolves with its outcome: its result as JSON (a PlaybookExecutionResult, as
   * the worker encoded it), the worker's refusal, or `{ error }` once `timeoutMs` has passed (never later
   * than about a second after). Throws QueueUnavailableError, without waiting, when the job cannot be
   * enqueued.
   */
  execute(request: ExecutionRequest | MessageExecutionRequest, timeoutMs: number): Promise<ExecutionOutcome>;
  /** Like execute() for many requests, enqueued in one round trip per queue; outcomes in request order. */
  executeMany(requests: readonly (ExecutionRequest | MessageExecutionRequest)[], timeoutMs: number): Promise<ExecutionOutcome[]>;
  /** True when a job could be enqueued and its reply received right now. */
  isReady(): Promise<boolean>;
  /** Stops waiting (pending callers get `{ error: "Service is shutting down" }`) and closes the connections. */
  close(): Promise<void>;
}

/** The queue cannot take a job now (Redis unreachable or the client not started): the API answers 503. */
export class QueueUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "QueueUnavailableError";
  }
}

export interface ExecutionClientOptions {
  redisUrl: string;
  /** BullMQ's key prefix, also used for the result keys and reply channels. */
  prefix: string;
  logger: Logger;
  /** Identifies this API instance's reply channel; a fresh UUID by default. */
  instanceId?: string;
  /**
   * Told each time a caller's deadline comes without a reply, with the state its job was then found in.
   * For metrics: it must be quick and must not throw.
   */
  onReplyTimeout?: (jobState: DeadlineJobState) => void;
}

/**
 * Where a job was found when its caller's deadline came without a reply: `completed` (its result was
 * stored but the message never arrived), still `queued` (and removed), `active`, `failed`, `unknown`
 * (gone without a result) or `unreadable` (Redis did not answer the look-up).
 */
export type DeadlineJobState = "completed" | "queued" | "active" | "failed" | "unknown" | "unreadable";

/** How long the look-up at a deadline may take before the caller is told Redis is unreachable. */
const STATE_READ_TIMEOUT_MS = 1_000;

interface Waiter {
  resolve(result: ExecutionOutcome): void;
  timer: NodeJS.Timeout;
}

type ExecutionQueue = Queue<ExecutionJob | MessageExecutionJob, void>;

/**
 * Builds the API side of the execution queue. Each instance listens on its own reply channel; workers
 * publish each reply there and also store it under a result key, which the client reads when a reply
 * may have been missed (subscriber reconnect, deadline). Nothing connects before start().
 */
export function createExecutionClient(options: ExecutionClientOptions): ExecutionClient {
  const { redisUrl, prefix } = options;
  const instanceId = options.instanceId ?? randomUUID();
  const channel = replyChannel(prefix, instanceId);
  const logger = options.logger.child({ component: "execution-client", instanceId });
  const waiters = new Map<string, Waiter>();

  let producer: Redis | undefined;
  let subscriber: Redis | undefined;
  /** One per job type's queue: `execute` and `execute-message`. */
  let queues: { execute: ExecutionQueue; message: ExecutionQueue } | undefined;
  let subscribed = false;
  let subscriptionEpoch = 0;
  let closed = false;

  function settle(jobId: string, result: ExecutionOutcome): void {
    const waiter = waiters.get(jobId);
    if (waiter === undefined) return;
    waiters.delete(jobId);
    clearTimeout(waiter.timer);
    waiter.resolve(result);
  }

  /**
   * Reply text (published or stored) → the result it carries, for the job it names. Only the framing is
   * checked: the JSON comes from our own workers, through our own Redis, and goes to the caller as is.
   */
  function parseReply(text: string): DecodedReply | undefined {
    const reply = decodeReply(text);
    if (reply === undefined) logger.error({ reply: text.slice(0, 200) }, "malformed reply on the reply channel or in a result key");
    return reply;
  }

  function onMessage(receivedChannel: string, message: string): void {
    if (receivedChannel !== channel) return;
    const reply = parseReply(message);
    if (reply !== undefined) settle(reply.jobId, reply.result);
  }

  /** (Re)subscribes on every `ready`, then collects the replies published while the channel was down. */
  async function onSubscriberReady(): Promise<void> {
    const epoch = ++subscriptionEpoch;
    try {
      await subscriber?.subscribe(channel);
    } catch (error) {
      logger.warn({ err: errorMessage(error) }, "could not subscribe to the reply channel; retrying on reconnect");
      return;
    }
    if (epoch !== subscriptionEpoch || subscriber?.status !== "ready") return;
    subscribed = true;
    notifyReadiness();
    await sweepResultKeys();
  }

  async function sweepResultKeys(): Promise<void> {
    const jobIds = [...waiters.keys()];
    if (jobIds.length === 0 || producer === undefined) return;
    try {
      const stored = await producer.mget(jobIds.map((jobId) => resultKey(prefix, jobId)));
      let found = 0;
      for (const text of stored) {
        if (text === null) continue;
        const reply = parseReply(text);
        if (reply !== undefined) {
          found += 1;
          settle(reply.jobId, reply.result);
        }
      }
      if (found > 0) logger.info({ found, pending: jobIds.length }, "collected replies published while the reply channel was down");
    } catch (error) {
      // The deadline check reads the result key again: nothing is lost, only later.
      logger.warn({ err: errorMessage(error) }, "could not sweep result keys after resubscribing");
    }
  }

  function connectionsReady(): boolean {
    return !closed && producer?.status === "ready" && subscriber?.status === "ready" && subscribed;
  }

  const readinessListeners = new Set<() => void>();
  function notifyReadiness(): void {
    for (const listener of readinessListeners) listener();
  }

  /** Waits until both connections are up and the channel is subscribed, or `ms` passed. */
  function waitUntilConnected(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (ready: boolean) => {
        clearTimeout(timer);
        readinessListeners.delete(check);
        resolve(ready);
      };
      const check = () => {
        if (connectionsReady()) done(true);
      };
      const timer = setTimeout(() => done(connectionsReady()), ms);
      readinessListeners.add(check);
      check();
    });
  }

  /** What to answer once nobody waits any longer and no reply arrived. Bounded in time. */
  async function outcomeAfterDeadline(jobId: string, queue: ExecutionQueue, timeoutMs: number): Promise<ExecutionOutcome> {
    const timedOut = `Execution timed out after ${timeoutMs} ms`;
    try {
      const { answer, jobState } = await withTimeout(readOutcome(jobId, queue, timedOut), STATE_READ_TIMEOUT_MS, "reading the job state");
      options.onReplyTimeout?.(jobState);
      return answer;
    } catch (error) {
      logger.warn({ jobId, err: errorMessage(error) }, "could not read the state of a job past its deadline");
      options.onReplyTimeout?.("unreadable");
      return errorResult(`${timedOut}; its state could not be read: Redis unreachable`);
    }
  }

  /** The stored result, or the error that says what became of the job; and the state it was found in. */
  async function readOutcome(jobId: string, queue: ExecutionQueue, timedOut: string): Promise<{ answer: ExecutionOutcome; jobState: DeadlineJobState }> {
    if (producer === undefined) throw new Error("client not started");
    const readResult = async () => {
      const stored = await producer?.get(resultKey(prefix, jobId));
      return stored === null || stored === undefined ? undefined : parseReply(stored)?.result;
    };
    const stored = await readResult();
    if (stored !== undefined) return { answer: stored, jobState: "completed" };
    const state = await queue.getJobState(jobId);
    switch (state) {
      case "waiting":
      case "delayed":
      case "prioritized":
      case "waiting-children": {
        // Remove it so that it never runs for nobody; 0 means a worker locked it in the meantime.
        const removed = await queue.remove(jobId);
        return removed === 1
          ? { answer: errorResult(`${timedOut} (still queued: no worker picked it up)`), jobState: "queued" }
          : { answer: errorResult(`${timedOut} (still running)`), jobState: "active" };
      }
      case "active":
        return { answer: errorResult(`${timedOut} (still running)`), jobState: "active" };
      case "failed": {
        const job = await queue.getJob(jobId);
        return { answer: errorResult(`Execution failed: ${job?.failedReason ?? "unknown reason"}`), jobState: "failed" };
      }
      case "completed":
      case "unknown": {
        // It may have completed (and its job hash been removed) between the two reads above.
        const late = await readResult();
        return late === undefined ? { answer: errorResult("Execution result was lost"), jobState: "unknown" } : { answer: late, jobState: "completed" };
      }
    }
  }

  function assertCanEnqueue(): { execute: ExecutionQueue; message: ExecutionQueue } {
    if (closed) throw new QueueUnavailableError("Service is shutting down");
    if (producer === undefined || queues === undefined) throw new QueueUnavailableError("Execution client not started");
    if (!connectionsReady()) throw new QueueUnavailableError("Redis is unreachable");
    return queues;
  }

  /** Registers the waiter before the job exists, so that even an instant reply finds it. */
  function waitFor(jobId: string, queue: ExecutionQueue, timeoutMs: number): Promise<ExecutionOutcome> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        void outcomeAfterDeadline(jobId, queue, timeoutMs).then((result) => settle(jobId, result));
      }, timeoutMs);
      waiters.set(jobId, { resolve, timer });
    });
  }

  function forget(jobIds: readonly string[]): void {
    for (const jobId of jobIds) {
      const waiter = waiters.get(jobId);
      if (waiter !== undefined) clearTimeout(waiter.timer);
      waiters.delete(jobId);
    }
  }

  /**
   * The job of a request, with the options its declaration states (attempts, retention), its queue, and
   * its producer span (a child of the HTTP request's): the job carries its trace context.
   */
  function toJob(
    request: ExecutionRequest | MessageExecutionRequest,
    timeoutMs: number,
    target: { execute: ExecutionQueue; message: ExecutionQueue },
  ) {
    const jobId = randomUUID();
    const declaration = "kind" in request ? EXECUTE_MESSAGE_JOB : EXECUTE_JOB;
    const span = startEnqueueSpan(declaration.queue, jobId, request.requestId);
    const caller = {
      v: WIRE_VERSION,
      replyTo: instanceId,
      deadline: Date.now() + Math.ceil(timeoutMs),
      ...(span.traceparent === undefined ? {} : { traceparent: span.traceparent }),
    };
    if ("kind" in request) {
      const { kind: _kind, ...payload } = request;
      return { queue: target.message, span, job: { ...jobToAdd(EXECUTE_MESSAGE_JOB, { ...caller, ...payload }, jobId), jobId } };
    }
    return { queue: target.execute, span, job: { ...jobToAdd(EXECUTE_JOB, { ...caller, ...request }, jobId), jobId } };
  }

  async function executeMany(
    requests: readonly (ExecutionRequest | MessageExecutionRequest)[],
    timeoutMs: number,
  ): Promise<ExecutionOutcome[]> {
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new RangeError(`timeoutMs must be a positive number, got ${timeoutMs}`);
    const target = assertCanEnqueue();
    if (requests.length === 0) return [];
    const jobs = requests.map((request) => toJob(request, timeoutMs, target));
    const jobIds = jobs.map(({ job }) => job.jobId);
    const results = jobs.map(({ job, queue }) => waitFor(job.jobId, queue, timeoutMs));
    try {
      // One job: one script call. Many: addBulk per queue, one MULTI round trip however many jobs (a MULTI
      // on this connection copies every script BullMQ defined on it, which costs more than the job itself).
      await Promise.all(
        [target.execute, target.message].map(async (queue) => {
          const own = jobs.filter((entry) => entry.queue === queue).map((entry) => entry.job);
          const [single] = own;
          if (own.length === 1 && single !== undefined) await queue.add(single.name, single.data, single.opts);
          else if (own.length > 1) await queue.addBulk(own);
        }),
      );
      for (const { span } of jobs) span.end();
    } catch (error) {
      for (const { span } of jobs) span.end(error);
      // Closed mid-enqueue: the waiters already hold "Service is shutting down".
      if (closed) return Promise.all(results);
      forget(jobIds);
      throw new QueueUnavailableError(`Could not enqueue: ${errorMessage(error)}`, { cause: error });
    }
    return Promise.all(results);
  }

  return {
    async start() {
      if (producer !== undefined) throw new Error("execution client already started");
      producer = createProducerConnection(redisUrl, logger);
      subscriber = createSubscriberConnection(redisUrl, instanceId, logger);
      producer.on("ready", () => {
        notifyReadiness();
        // After a Redis restart the subscriber may have resubscribed first, when its sweep could not read.
        if (subscribed) void sweepResultKeys();
      });
      subscriber.on("message", onMessage);
      subscriber.on("ready", () => void onSubscriberReady());
      subscriber.on("close", () => {
        subscribed = false;
      });
      // Failed first attempts are retried by ioredis; readiness is awaited below, bounded.
      producer.connect().catch(() => {});
      subscriber.connect().catch(() => {});
      const connection = producer;
      const queueOf = (name: string): ExecutionQueue => {
        const queue: ExecutionQueue = new Queue(name, { connection, prefix });
        queue.on("error", (error) => logger.warn({ queue: name, err: error.message }, "queue error"));
        return queue;
      };
      queues = { execute: queueOf(EXECUTE_JOB.queue), message: queueOf(EXECUTE_MESSAGE_JOB.queue) };
      if (!(await waitUntilConnected(CONNECT_TIMEOUT_MS * 2))) {
        throw new QueueUnavailableError(`Redis at ${describeRedisUrl(redisUrl)} is unreachable; still retrying`);
      }
      logger.info({ channel }, "execution client ready");
    },

    async execute(request, timeoutMs) {
      const [result] = await executeMany([request], timeoutMs);
      if (result === undefined) throw new Error("executeMany returned no result for one request");
      return result;
    },

    executeMany,

    async isReady() {
      if (!connectionsReady() || producer === undefined) return false;
      try {
        await withTimeout(producer.ping(), STATE_READ_TIMEOUT_MS, "PING");
        return true;
      } catch {
        return false;
      }
    },

    async close() {
      if (closed) return;
      closed = true;
      const shuttingDown = errorResult("Service is shutting down");
      for (const jobId of [...waiters.keys()]) settle(jobId, shuttingDown);
      try {
        if (queues !== undefined) await withTimeout(Promise.all([queues.execute.close(), queues.message.close()]), 2_000, "closing the queues");
      } catch (error) {
        logger.warn({ err: errorMessage(error) }, "queues did not close cleanly");
      }
      await Promise.all([producer, subscriber].map((connection) => connection && closeConnection(connection)));
    },
  };
}

/** A result that is only `{ error }`, as the caller receives it. */
function errorResult(message: string): JsonText {
  return JsonText.of({ error: message } satisfies PlaybookExecutionResult);
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
