import { randomUUID } from "node:crypto";
import {
  decodeReply,
  encodeReply,
  JsonText,
  WIRE_VERSION,
  type DecodedReply,
  type ExecutionJob,
  type MessageExecutionJob,
  type PlaybookExecutionResult,
  type RequestRefusal,
} from "@pes/contracts";
import { Queue } from "bullmq";
import { Cluster, type ChainableCommander } from "ioredis";
import type { Logger } from "pino";
import { EXECUTE_JOB, EXECUTE_MESSAGE_JOB, jobToAdd } from "./job-declarations.js";
import { executionFingerprint } from "./execution-fingerprint.js";
import {
  createOrJoin,
  defineRecordCommands,
  finishExecution,
  parseJoin,
  parseRecord,
  readRecordCommand,
  type StoredRecord,
} from "./execution-records.js";
import { createBatchStore, defineBatchCommands, type Batches } from "./batch-store.js";
import { createIdempotencyKeys, type IdempotencyKeys } from "./idempotency-keys.js";
import { admit, LimitExceededError, unadmit, type Lane, type LaneLimit } from "./org-limits.js";
import { startEnqueueSpan } from "./job-trace-context.js";
import { coalesceKey, executionKey, keySpace, replyChannel, resultKey } from "./queue-names.js";
import {
  CONNECT_TIMEOUT_MS,
  closeConnection,
  createProducerConnection,
  createSubscriberConnection,
  describeRedisUrl,
  execTogether,
  withTimeout,
  type RedisConnection,
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

/** Which execution a request went to: one it started, or one it `joined` (identical, or the same Idempotency-Key). */
export interface SubmittedExecution {
  executionId: string;
  joined: boolean;
}

/** An execution a caller waited for: which one, and what it gave. */
export interface ExecutionAnswer extends SubmittedExecution {
  outcome: ExecutionOutcome;
}

export interface ExecuteOptions {
  /** False: start an execution of its own, neither joining nor joinable (`Cache-Control: no-cache`). Default true. */
  coalesce?: boolean;
}

export interface ExecuteManyOptions extends ExecuteOptions {
  /**
   * Ids chosen beforehand, one per request (an Idempotency-Key's): a request whose id names an existing
   * execution of the organization joins it. Undefined (or an undefined entry): a new id.
   */
  executionIds?: readonly (string | undefined)[];
  /**
   * The organization's limit on the lane: the executions these requests start (not those they join)
   * must fit, or the call throws LimitExceededError and starts nothing. None: no limit.
   */
  limit?: LaneLimit;
}

export interface SubmitOptions extends ExecuteManyOptions {
  /** `batch` for an async batch's items: workers take every `interactive` execution first. Default `interactive`. */
  lane?: Lane;
  /** Until when the executions may wait and run, from now. Default `submittedTimeoutMs`. */
  timeoutMs?: number;
}

/** An execution as a caller reads it back: `GET /playbook/execution/{id}`. */
export interface ExecutionView {
  id: string;
  status: "queued" | "running" | "completed" | "failed";
  createdAt: Date;
  completedAt?: Date;
  /** Once it finished: its result (for `failed`, `{ error }`), or the worker's refusal of the request. */
  outcome?: ExecutionOutcome;
}

/** The API side of the queue: enqueue executions, wait for their replies, read them back. */
export interface ExecutionClient {
  /**
   * Connects and subscribes to this instance's reply channel. Rejects with QueueUnavailableError when
   * Redis cannot be reached within a few seconds; the connections keep retrying in the background
   * either way, and isReady() turns true once Redis is back.
   */
  start(): Promise<void>;
  /**
   * Runs one execution (or joins an identical one) and resolves with its id and outcome: its result as
   * JSON (a PlaybookExecutionResult, as the worker encoded it), the worker's refusal, or `{ error }` once
   * `timeoutMs` has passed (never later than about a second after). Throws QueueUnavailableError,
   * without waiting, when the job cannot be enqueued.
   */
  execute(
    request: ExecutionRequest | MessageExecutionRequest,
    timeoutMs: number,
    options?: ExecuteOptions & { executionId?: string; limit?: LaneLimit },
  ): Promise<ExecutionAnswer>;
  /** Like execute() for many requests, enqueued in one round trip per queue; outcomes in request order. */
  executeMany(
    requests: readonly (ExecutionRequest | MessageExecutionRequest)[],
    timeoutMs: number,
    options?: ExecuteManyOptions,
  ): Promise<ExecutionOutcome[]>;
  /**
   * Starts (or joins) executions nobody waits for: their results go to their records, for read(). Their
   * deadline is `options.timeoutMs` (default `submittedTimeoutMs`) away. Throws QueueUnavailableError
   * when they cannot be enqueued, LimitExceededError when they do not fit the organization's limit.
   */
  submit(requests: readonly (ExecutionRequest | MessageExecutionRequest)[], options?: SubmitOptions): Promise<SubmittedExecution[]>;
  /** An execution of the organization, or undefined when it has none of that id (or it is past its retention). */
  read(executionId: string, orgId: string): Promise<ExecutionView | undefined>;
  /** Idempotency-Keys, scoped per organization, kept as long as executions. */
  readonly idempotencyKeys: IdempotencyKeys;
  /** Async batches: started in bulk in the batch lane, read back with their progress. */
  readonly batches: Batches;
  /** True when a job could be enqueued and its reply received right now. */
  isReady(): Promise<boolean>;
  /** Stops waiting (pending callers get `{ error: "Service is shutting down" }`) and closes the connections. */
  close(): Promise<void>;
}

/**
 * BullMQ's priority of an async batch's items. Any priority puts a job behind every job without one
 * (BullMQ's wait list is drained first), so that the `interactive` lane always goes first; within the
 * batch lane jobs keep their order (BullMQ orders equal priorities first in, first out).
 */
const BATCH_LANE_PRIORITY = 1;

/** The queue cannot take a job now (Redis unreachable or the client not started): the API answers 503. */
export class QueueUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "QueueUnavailableError";
  }
}

/** Identical requests share one execution (see executionFingerprint). */
export interface CoalescingSettings {
  /** Issue times in one bucket of this length are the same issue (COALESCE_BUCKET_SECONDS). */
  bucketMs: number;
  /** How long a completed execution's result is still given to newcomers (COALESCE_REUSE_SECONDS). */
  reuseMs: number;
}

export interface ExecutionClientOptions {
  redisUrl: string;
  /** QUEUE_PREFIX: of the queues, records, result keys and reply channels (see keySpace). */
  prefix: string;
  logger: Logger;
  /** Identifies this API instance's reply channel; a fresh UUID by default. */
  instanceId?: string;
  /** How long a finished execution's record (and an Idempotency-Key) is kept (EXECUTION_RETENTION_SECONDS). Default 1 h. */
  retentionMs?: number;
  /** Absent: every request runs an execution of its own. Must not reuse longer than `retentionMs`. */
  coalescing?: CoalescingSettings;
  /** The deadline of submitted executions, which nobody waits for (EXECUTION_TIMEOUT_MS). Default 2 min. */
  submittedTimeoutMs?: number;
  /** The deadline of an async batch's items (ASYNC_BATCH_TIMEOUT_SECONDS). Default 1 h. */
  batchTimeoutMs?: number;
  /**
   * Told each time a caller's deadline comes without a reply, with the state its job was then found in.
   * For metrics: it must be quick and must not throw.
   */
  onReplyTimeout?: (jobState: DeadlineJobState) => void;
  /** Told of each request that joined an execution rather than starting one. Quick, must not throw. */
  onJoined?: () => void;
}

/**
 * Where a job was found when its caller's deadline came without a reply: `completed` (its result was
 * stored but the message never arrived), still `queued` (and removed), `active`, `failed`, `unknown`
 * (gone without a result) or `unreadable` (Redis did not answer the look-up).
 */
export type DeadlineJobState = "completed" | "queued" | "active" | "failed" | "unknown" | "unreadable";

/** How long the look-up at a deadline may take before the caller is told Redis is unreachable. */
const STATE_READ_TIMEOUT_MS = 1_000;
const DEFAULT_RETENTION_MS = 3_600_000;
const DEFAULT_SUBMITTED_TIMEOUT_MS = 120_000;
const DEFAULT_BATCH_TIMEOUT_MS = 3_600_000;
/** A result key (of a job without a record) outlives its caller's deadline by this much, as the worker's do. */
const RESULT_KEY_TTL_MS = 60_000;
/**
 * A pending execution without a job for this long was never enqueued (its enqueue failed after its
 * record was created) or its job is gone: read() reports it lost rather than queued forever.
 */
const LOST_AFTER_MS = 10_000;

interface Waiter {
  resolve(result: ExecutionOutcome): void;
  timer: NodeJS.Timeout;
  /** The queue of its job, for the state look-up at its deadline. */
  queue: ExecutionQueue;
  /** True for the caller that created the execution: at its deadline it withdraws a job still queued. */
  created: boolean;
  /** The execution's organization (its limits). */
  orgId: string;
}

type ExecutionQueue = Queue<ExecutionJob | MessageExecutionJob, void>;

/** One request on its way: the execution it goes to, and whether this call created it. */
interface Entry {
  request: ExecutionRequest | MessageExecutionRequest;
  id: string;
  coalesceKey?: string;
  created: boolean;
}

/**
 * Builds the API side of the execution queue. Every execution has a record in Redis (status, result,
 * the reply channels of the instances waiting for it), created or joined in one script; identical
 * requests find the execution to join under a coalescing key. Each instance listens on its own reply
 * channel; workers store each reply in the execution's record and publish it to every waiting
 * instance, and the client reads the record when a reply may have been missed (subscriber reconnect,
 * deadline). Nothing connects before start().
 */
export function createExecutionClient(options: ExecutionClientOptions): ExecutionClient {
  const { redisUrl } = options;
  const keys = keySpace(options.prefix, redisUrl);
  const instanceId = options.instanceId ?? randomUUID();
  const channel = replyChannel(keys, instanceId);
  const logger = options.logger.child({ component: "execution-client", instanceId });
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  const submittedTimeoutMs = options.submittedTimeoutMs ?? DEFAULT_SUBMITTED_TIMEOUT_MS;
  const { coalescing } = options;
  if (coalescing !== undefined && coalescing.reuseMs > retentionMs) throw new RangeError("coalescing.reuseMs must not exceed retentionMs");
  /** The callers waiting on this instance, by execution: several when they joined one execution. */
  const waiters = new Map<string, Set<Waiter>>();

  let producer: RedisConnection | undefined;
  /** Records, coalescing and idempotency keys: a connection without BullMQ's scripts (see defineRecordCommands). */
  let records: RedisConnection | undefined;
  let subscriber: RedisConnection | undefined;
  /** One per job type's queue: `execute` and `execute-message`. */
  let queues: { execute: ExecutionQueue; message: ExecutionQueue } | undefined;
  let subscribed = false;
  let subscriptionEpoch = 0;
  let closed = false;

  const batchTimeoutMs = options.batchTimeoutMs ?? DEFAULT_BATCH_TIMEOUT_MS;
  const readyRecords = () => {
    if (records === undefined || !connectionsReady()) throw new QueueUnavailableError("Redis is unreachable");
    return records;
  };
  // A key outlives what it names: an execution, or a batch (kept for its deadline and the retention after).
  const idempotencyKeys = createIdempotencyKeys(readyRecords, keys, retentionMs + Math.max(submittedTimeoutMs, batchTimeoutMs));
  const batches = createBatchStore({
    records: readyRecords,
    keys,
    submit: (requests, submitOptions) => begin(requests, submitOptions.timeoutMs ?? submittedTimeoutMs, { ...submitOptions, wait: false }).then(({ submitted }) => submitted),
    jobKey: (queue, jobId) => [queues?.execute, queues?.message].find((candidate) => candidate?.name === queue)?.toKey(jobId),
    timeoutMs: batchTimeoutMs,
    retentionMs,
  });

  /** Answers every caller waiting for the execution. */
  function settle(executionId: string, result: ExecutionOutcome): void {
    const waiting = waiters.get(executionId);
    if (waiting === undefined) return;
    waiters.delete(executionId);
    for (const waiter of waiting) {
      clearTimeout(waiter.timer);
      waiter.resolve(result);
    }
  }

  /** Takes one caller off its execution's waiters; false when it was answered already. */
  function stopWaiting(executionId: string, waiter: Waiter): boolean {
    const waiting = waiters.get(executionId);
    if (waiting === undefined || !waiting.delete(waiter)) return false;
    if (waiting.size === 0) waiters.delete(executionId);
    return true;
  }

  /**
   * Reply text (published or stored) → the result it carries, for the job it names. Only the framing is
   * checked: the JSON comes from our own workers, through our own Redis, and goes to the caller as is.
   */
  function parseReply(text: string): DecodedReply | undefined {
    const reply = decodeReply(text);
    if (reply === undefined) logger.error({ reply: text.slice(0, 200) }, "malformed reply on the reply channel or in a record");
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
    await sweepStoredReplies();
  }

  /** Queues the reads of an execution's stored reply: its record's, and the result key of a job without one. */
  function readStoredReply(pipeline: ChainableCommander, executionId: string): void {
    pipeline.hget(executionKey(keys, executionId), "result");
    pipeline.get(resultKey(keys, executionId));
  }

  /** The reply read by readStoredReply, at `index` (its first answer) of a pipeline's answers. */
  function storedReplyAt(answers: [Error | null, unknown][], index: number): DecodedReply | undefined {
    for (const [error, text] of answers.slice(index, index + 2)) {
      if (error !== null) throw error;
      if (typeof text === "string") return parseReply(text);
    }
    return undefined;
  }

  async function sweepStoredReplies(): Promise<void> {
    const executionIds = [...waiters.keys()];
    if (executionIds.length === 0 || records === undefined) return;
    let answers: [Error | null, unknown][];
    try {
      answers = await execTogether(records, executionIds.map((executionId) => (pipeline: ChainableCommander) => readStoredReply(pipeline, executionId)));
    } catch (error) {
      // The deadline check reads the record again: nothing is lost, only later.
      logger.warn({ err: errorMessage(error) }, "could not sweep stored replies after resubscribing");
      return;
    }
    let found = 0;
    let unreadable: unknown;
    executionIds.forEach((executionId, index) => {
      // Each on its own: on a cluster, the records on a node being replaced cannot be read yet, the others can.
      try {
        const reply = storedReplyAt(answers, 2 * index);
        if (reply === undefined) return;
        found += 1;
        settle(executionId, reply.result);
      } catch (error) {
        unreadable ??= error;
      }
    });
    if (found > 0) logger.info({ found, pending: executionIds.length }, "collected replies published while the reply channel was down");
    if (unreadable !== undefined) logger.warn({ err: errorMessage(unreadable) }, "could not sweep every stored reply after resubscribing");
  }

  function connectionsReady(): boolean {
    return !closed && producer?.status === "ready" && records?.status === "ready" && subscriber?.status === "ready" && subscribed;
  }

  const readinessListeners = new Set<() => void>();
  function notifyReadiness(): void {
    for (const listener of readinessListeners) listener();
  }

  /** Waits until the connections are up and the channel is subscribed, or `ms` passed. */
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

  /** What to answer a caller once it waits no longer and no reply arrived. Bounded in time. */
  async function outcomeAfterDeadline(executionId: string, waiter: Waiter, timeoutMs: number): Promise<ExecutionOutcome> {
    const timedOut = `Execution timed out after ${timeoutMs} ms`;
    try {
      const { answer, jobState } = await withTimeout(readOutcome(executionId, waiter, timedOut), STATE_READ_TIMEOUT_MS, "reading the job state");
      options.onReplyTimeout?.(jobState);
      return answer;
    } catch (error) {
      logger.warn({ executionId, err: errorMessage(error) }, "could not read the state of a job past its deadline");
      options.onReplyTimeout?.("unreadable");
      return errorResult(`${timedOut}; its state could not be read: Redis unreachable`);
    }
  }

  async function storedReply(executionId: string): Promise<ExecutionOutcome | undefined> {
    if (records === undefined) throw new Error("client not started");
    return storedReplyAt(await execTogether(records, [(pipeline) => readStoredReply(pipeline, executionId)]), 0)?.result;
  }

  /** The stored result, or the error that says what became of the job; and the state it was found in. */
  async function readOutcome(executionId: string, waiter: Waiter, timedOut: string): Promise<{ answer: ExecutionOutcome; jobState: DeadlineJobState }> {
    const stored = await storedReply(executionId);
    if (stored !== undefined) return { answer: stored, jobState: "completed" };
    const { queue } = waiter;
    const state = await queue.getJobState(executionId);
    switch (state) {
      case "waiting":
      case "delayed":
      case "prioritized":
      case "waiting-children": {
        const stillQueued = { error: `${timedOut} (still queued: no worker picked it up)` };
        // Its joiners came later, with deadlines of their own: only its first caller's ends the job's.
        if (!waiter.created) return { answer: JsonText.of(stillQueued), jobState: "queued" };
        // Remove it so that it never runs for nobody; 0 means a worker locked it in the meantime.
        if ((await queue.remove(executionId)) !== 1) return { answer: errorResult(`${timedOut} (still running)`), jobState: "active" };
        await withdrawn(executionId, stillQueued, waiter.orgId);
        return { answer: JsonText.of(stillQueued), jobState: "queued" };
      }
      case "active":
        return { answer: errorResult(`${timedOut} (still running)`), jobState: "active" };
      case "failed": {
        const job = await queue.getJob(executionId);
        return { answer: errorResult(`Execution failed: ${job?.failedReason ?? "unknown reason"}`), jobState: "failed" };
      }
      case "completed":
      case "unknown": {
        // It may have completed (and its job hash been removed) between the two reads above.
        const late = await storedReply(executionId);
        return late === undefined ? { answer: errorResult("Execution result was lost"), jobState: "unknown" } : { answer: late, jobState: "completed" };
      }
    }
  }

  /** A job withdrawn at its deadline: its record says why, and its joiners are told now. */
  async function withdrawn(executionId: string, result: PlaybookExecutionResult, orgId: string): Promise<void> {
    if (records === undefined) return;
    await finishExecution(records, keys, executionId, {
      reply: encodeReply(executionId, result, WIRE_VERSION),
      status: "failed",
      reusable: false,
      legacy: { resultTtlMs: RESULT_KEY_TTL_MS, channel },
      orgId,
    });
  }

  function assertCanEnqueue(): { queues: { execute: ExecutionQueue; message: ExecutionQueue }; records: RedisConnection } {
    if (closed) throw new QueueUnavailableError("Service is shutting down");
    if (producer === undefined || records === undefined || queues === undefined) throw new QueueUnavailableError("Execution client not started");
    if (!connectionsReady()) throw new QueueUnavailableError("Redis is unreachable");
    return { queues, records };
  }

  /** Registers a waiter before its execution's record is joined, so that even an instant reply finds it. */
  function waitFor(entry: Entry, queue: ExecutionQueue, timeoutMs: number): { waiter: Waiter; result: Promise<ExecutionOutcome> } {
    let waiter!: Waiter;
    const result = new Promise<ExecutionOutcome>((resolve) => {
      const timer = setTimeout(() => {
        // From its deadline on, the look-up answers this caller: a reply it publishes itself (withdrawing a
        // job still queued tells the joiners) must not answer it first, before the look-up has reported.
        if (!stopWaiting(entry.id, waiter)) return;
        void outcomeAfterDeadline(entry.id, waiter, timeoutMs).then(resolve);
      }, timeoutMs);
      waiter = { resolve, timer, queue, created: false, orgId: entry.request.orgId };
    });
    const waiting = waiters.get(entry.id) ?? new Set<Waiter>();
    waiting.add(waiter);
    waiters.set(entry.id, waiting);
    return { waiter, result };
  }

  function forget(registered: readonly { id: string; waiter: Waiter }[]): void {
    for (const { id, waiter } of registered) {
      clearTimeout(waiter.timer);
      const waiting = waiters.get(id);
      waiting?.delete(waiter);
      if (waiting?.size === 0) waiters.delete(id);
    }
  }

  /**
   * The job of a request, with the options its declaration states (attempts, retention), its queue, and
   * its producer span (a child of the HTTP request's): the job carries its trace context.
   */
  function toJob(entry: Entry, deadline: number, lane: Lane, target: { execute: ExecutionQueue; message: ExecutionQueue }) {
    const { request, id: jobId } = entry;
    // BullMQ takes jobs without a priority (its wait list) before any prioritized one: the lanes.
    const priority = lane === "batch" ? { priority: BATCH_LANE_PRIORITY } : {};
    const declaration = "kind" in request ? EXECUTE_MESSAGE_JOB : EXECUTE_JOB;
    const span = startEnqueueSpan(declaration.queue, jobId, request.requestId);
    const caller = {
      v: WIRE_VERSION,
      replyTo: instanceId,
      deadline,
      ...(span.traceparent === undefined ? {} : { traceparent: span.traceparent }),
    };
    if ("kind" in request) {
      const { kind: _kind, ...payload } = request;
      const job = jobToAdd(EXECUTE_MESSAGE_JOB, { ...caller, ...payload }, jobId);
      return { queue: target.message, span, job: { ...job, opts: { ...job.opts, ...priority }, jobId } };
    }
    const job = jobToAdd(EXECUTE_JOB, { ...caller, ...request }, jobId);
    return { queue: target.execute, span, job: { ...job, opts: { ...job.opts, ...priority }, jobId } };
  }

  function queueOf(request: ExecutionRequest | MessageExecutionRequest, target: { execute: ExecutionQueue; message: ExecutionQueue }): ExecutionQueue {
    return "kind" in request ? target.message : target.execute;
  }

  /**
   * Sends requests on their way: each to the execution its coalescing key (or given id) names, else to a
   * new one; creates or joins each execution's record (registering this instance's reply channel when
   * `wait`), then enqueues the jobs of the executions it created. Only the executions it is about to
   * start are admitted against the organization's limit (a request joining another is no new load).
   * Resolves once they are enqueued, with each request's execution and, when `wait`, its outcome to come.
   */
  async function begin(
    requests: readonly (ExecutionRequest | MessageExecutionRequest)[],
    timeoutMs: number,
    settings: SubmitOptions & { wait: boolean },
  ): Promise<{ submitted: SubmittedExecution[]; results: Promise<ExecutionOutcome>[] }> {
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new RangeError(`timeoutMs must be a positive number, got ${timeoutMs}`);
    const target = assertCanEnqueue();
    if (requests.length === 0) return { submitted: [], results: [] };
    const now = Date.now();
    const deadline = now + Math.ceil(timeoutMs);
    const lane = settings.lane ?? "interactive";
    const coalesce = settings.coalesce === false ? undefined : coalescing;
    const entries: Entry[] = requests.map((request, index) => ({
      request,
      id: settings.executionIds?.[index] ?? randomUUID(),
      created: false,
      ...(coalesce === undefined ? {} : { coalesceKey: coalesceKey(keys, executionFingerprint(request, coalesce.bucketMs, now)) }),
    }));
    const registered: { id: string; waiter: Waiter }[] = [];
    const results: Promise<ExecutionOutcome>[] = [];
    let jobs: ReturnType<typeof toJob>[] = [];
    /** The executions admitted against the organization's limit: those this call is about to start. */
    let admitted: string[] = [];
    try {
      // Identical requests: the first one's id goes under their coalescing key; the others read it.
      const keyed = entries.filter((entry) => entry.coalesceKey !== undefined);
      const joining = new Set<Entry>();
      if (coalesce !== undefined && keyed.length > 0) {
        const ttlMs = Math.ceil(timeoutMs + coalesce.reuseMs);
        const claims = keyed.map((entry) => (pipeline: ChainableCommander) => pipeline.set(entry.coalesceKey ?? "", entry.id, "PX", ttlMs, "NX", "GET"));
        answersOf(await execTogether(target.records, claims)).forEach((existing, index) => {
          const entry = keyed[index];
          if (entry === undefined || typeof existing !== "string") return;
          entry.id = existing;
          joining.add(entry);
        });
      }
      if (settings.limit !== undefined) {
        const fresh = [...new Set(entries.filter((entry) => !joining.has(entry)).map((entry) => entry.id))];
        try {
          await admit(target.records, keys, lane, settings.limit, fresh, deadline);
        } catch (error) {
          // Nobody should join executions that will not start: free the coalescing keys this call set.
          const releases = keyed
            .filter((entry) => !joining.has(entry))
            .map((entry) => (pipeline: ChainableCommander) => pipeline.releaseCoalesceKey(entry.coalesceKey ?? "", entry.id, 0));
          await execTogether(target.records, releases).catch(() => undefined);
          throw error;
        }
        admitted = fresh;
      }
      if (settings.wait) {
        for (const entry of entries) {
          const { waiter, result } = waitFor(entry, queueOf(entry.request, target.queues), timeoutMs);
          registered.push({ id: entry.id, waiter });
          results.push(result);
        }
      }
      const createOrJoins = entries.map((entry) => (pipeline: ChainableCommander) => {
        const record = {
          orgId: entry.request.orgId,
          createdAt: now,
          queue: queueOf(entry.request, target.queues).name,
          ...(entry.coalesceKey === undefined ? {} : { coalesceKey: entry.coalesceKey }),
          reuseMs: coalesce?.reuseMs ?? 0,
          // A batch item outlives its batch's record (kept for its deadline and the retention after).
          retainMs: lane === "batch" ? timeoutMs + retentionMs : retentionMs,
          ttlMs: timeoutMs + retentionMs,
        };
        createOrJoin(pipeline, keys, entry.id, record, settings.wait ? channel : undefined);
      });
      const joins = answersOf(await execTogether(target.records, createOrJoins)).map((answer, index) => parseJoin(answer, entries[index]?.id ?? ""));
      // Admitted, but its execution had finished already (an Idempotency-Key's retry): nothing to count.
      const finished = entries.filter((_entry, index) => joins[index]?.created === false && joins[index]?.status !== "pending");
      if (settings.limit !== undefined && finished.length > 0) {
        await unadmit(target.records, keys, lane, settings.limit.orgId, finished.map((entry) => entry.id));
      }
      joins.forEach((join, index) => {
        const entry = entries[index];
        if (entry === undefined) return;
        if (join.created) {
          entry.created = true;
          const own = registered[index];
          if (own !== undefined) own.waiter.created = true;
          return;
        }
        options.onJoined?.();
        // Joined one that finished (within its reuse window, or an Idempotency-Key's): its reply is here.
        const reply = join.reply === undefined ? undefined : parseReply(join.reply);
        if (reply !== undefined) settle(entry.id, reply.result);
      });
      jobs = entries.filter((entry) => entry.created).map((entry) => toJob(entry, deadline, lane, target.queues));
      // One job: one script call. Many: addBulk per queue, one MULTI round trip however many jobs (a MULTI
      // on this connection copies every script BullMQ defined on it, which costs more than the job itself).
      await Promise.all(
        [target.queues.execute, target.queues.message].map(async (queue) => {
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
      if (closed) return { submitted: entries.map(({ id, created }) => ({ executionId: id, joined: !created })), results };
      forget(registered);
      if (error instanceof LimitExceededError) throw error;
      // Not started after all (or started, and then its worker settles it): either way no longer counted.
      if (settings.limit !== undefined) await unadmit(target.records, keys, lane, settings.limit.orgId, admitted).catch(() => undefined);
      // A record created here stays pending: its joiners learn at their deadline that its job is lost,
      // and a retry with the same Idempotency-Key finds the job if it was enqueued after all.
      throw new QueueUnavailableError(`Could not enqueue: ${errorMessage(error)}`, { cause: error });
    }
    return { submitted: entries.map(({ id, created }) => ({ executionId: id, joined: !created })), results };
  }

  async function executeMany(
    requests: readonly (ExecutionRequest | MessageExecutionRequest)[],
    timeoutMs: number,
    executeOptions: ExecuteManyOptions = {},
  ): Promise<ExecutionOutcome[]> {
    const { results } = await begin(requests, timeoutMs, { ...executeOptions, wait: true });
    return Promise.all(results);
  }

  /** A record as a caller reads it: `pending` is `queued` or `running` as BullMQ knows it. */
  async function view(executionId: string, record: StoredRecord): Promise<ExecutionView> {
    const base = { id: executionId, createdAt: new Date(record.createdAt) };
    if (record.status !== "pending") {
      const outcome = record.reply === undefined ? undefined : parseReply(record.reply)?.result;
      return {
        ...base,
        status: record.status,
        ...(record.completedAt === undefined ? {} : { completedAt: new Date(record.completedAt) }),
        outcome: outcome ?? errorResult("Execution result was unreadable"),
      };
    }
    const queue = [queues?.execute, queues?.message].find((candidate) => candidate?.name === record.queue);
    const state = queue === undefined ? "unknown" : await queue.getJobState(executionId);
    switch (state) {
      case "active":
        return { ...base, status: "running" };
      case "failed": {
        const job = await queue?.getJob(executionId);
        return { ...base, status: "failed", outcome: errorResult(`Execution failed: ${job?.failedReason ?? "unknown reason"}`) };
      }
      case "completed":
      case "unknown": {
        // Its reply may have been stored (and its job removed) since the record was read.
        const again = await readRecord(executionId);
        if (again !== undefined && again.status !== "pending") return view(executionId, again);
        if (Date.now() - record.createdAt < LOST_AFTER_MS) return { ...base, status: "queued" };
        return { ...base, status: "failed", outcome: errorResult("Execution result was lost") };
      }
      default:
        return { ...base, status: "queued" };
    }
  }

  async function readRecord(executionId: string): Promise<StoredRecord | undefined> {
    if (records === undefined || !connectionsReady()) throw new QueueUnavailableError("Redis is unreachable");
    return parseRecord(answersOf(await execTogether(records, [(pipeline) => readRecordCommand(pipeline, keys, executionId)]))[0]);
  }

  return {
    async start() {
      if (producer !== undefined) throw new Error("execution client already started");
      producer = createProducerConnection(redisUrl, logger);
      records = createProducerConnection(redisUrl, logger, "pes:records");
      defineRecordCommands(records);
      defineBatchCommands(records);
      subscriber = createSubscriberConnection(redisUrl, instanceId, logger);
      records.on("ready", () => {
        notifyReadiness();
        // After a Redis restart the subscriber may have resubscribed first, when its sweep could not read.
        if (subscribed) void sweepStoredReplies();
      });
      producer.on("ready", notifyReadiness);
      subscriber.on("message", onMessage);
      subscriber.on("ready", () => void onSubscriberReady());
      subscriber.on("close", () => {
        subscribed = false;
      });
      // On a cluster, ioredis moves the subscription to another node by itself when its node goes, and
      // says nothing: the replies published in between are swept once the client sees a node gone.
      if (subscriber instanceof Cluster) subscriber.on("-node", () => void sweepStoredReplies());
      // Failed first attempts are retried by ioredis; readiness is awaited below, bounded.
      for (const connection of [producer, records, subscriber]) connection.connect().catch(() => {});
      const connection = producer;
      const queueNamed = (name: string): ExecutionQueue => {
        const queue: ExecutionQueue = new Queue(name, { connection, prefix: keys.bullPrefix });
        queue.on("error", (error) => logger.warn({ queue: name, err: error.message }, "queue error"));
        return queue;
      };
      queues = { execute: queueNamed(EXECUTE_JOB.queue), message: queueNamed(EXECUTE_MESSAGE_JOB.queue) };
      if (!(await waitUntilConnected(CONNECT_TIMEOUT_MS * 2))) {
        throw new QueueUnavailableError(`Redis at ${describeRedisUrl(redisUrl)} is unreachable; still retrying`);
      }
      logger.info({ channel }, "execution client ready");
    },

    async execute(request, timeoutMs, executeOptions = {}) {
      const { executionId, ...rest } = executeOptions;
      const { submitted, results } = await begin([request], timeoutMs, {
        ...rest,
        ...(executionId === undefined ? {} : { executionIds: [executionId] }),
        wait: true,
      });
      const [started] = submitted;
      const [result] = results;
      if (started === undefined || result === undefined) throw new Error("no execution for one request");
      return { ...started, outcome: await result };
    },

    executeMany,

    async submit(requests, submitOptions = {}) {
      return (await begin(requests, submitOptions.timeoutMs ?? submittedTimeoutMs, { ...submitOptions, wait: false })).submitted;
    },

    async read(executionId, orgId) {
      const record = await readRecord(executionId);
      return record === undefined || record.orgId !== orgId ? undefined : view(executionId, record);
    },

    idempotencyKeys,
    batches,

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
      for (const executionId of [...waiters.keys()]) settle(executionId, shuttingDown);
      try {
        if (queues !== undefined) await withTimeout(Promise.all([queues.execute.close(), queues.message.close()]), 2_000, "closing the queues");
      } catch (error) {
        logger.warn({ err: errorMessage(error) }, "queues did not close cleanly");
      }
      await Promise.all([producer, records, subscriber].map((connection) => connection && closeConnection(connection)));
    },
  };
}

/** A pipeline's answers, throwing the first error (the whole step then fails, as one command would). */
function answersOf(answers: [Error | null, unknown][]): unknown[] {
  return answers.map(([error, value]) => {
    if (error !== null) throw error;
    return value;
  });
}

/** A result that is only `{ error }`, as the caller receives it. */
function errorResult(message: string): JsonText {
  return JsonText.of({ error: message } satisfies PlaybookExecutionResult);
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
