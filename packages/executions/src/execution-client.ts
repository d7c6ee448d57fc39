import { randomUUID } from "node:crypto";
import { decodeReply, encodeReply, errorMessage, JsonText, type DecodedReply, type ExecutionRequest, type MessageExecutionRequest, type PlaybookExecutionResult, type StartBatchJob } from "@pes/contracts";
import { Queue } from "bullmq";
import { Cluster } from "ioredis";
import type { Logger } from "pino";
import { enqueueExecutions, openExecutionQueues, queueOf, type ExecutionQueue, type ExecutionQueues } from "./execution-enqueue.js";
import { executionFingerprint } from "./execution-fingerprint.js";
import { START_BATCH_JOB } from "./execution-jobs.js";
import {
  beginExecutions,
  defineLifecycleCommands,
  finishExecution,
  readRecords,
  LimitExceededError,
  type Begun,
  type ExecutionOutcome,
  type LaneLimit,
  type StoredRecord,
} from "./execution-lifecycle.js";
import { createBatchStore, type Batches } from "./batch-store.js";
import { createIdempotencyKeys, type IdempotencyKeys } from "./idempotency-keys.js";
import {
  CONNECT_TIMEOUT_MS,
  closeConnection,
  createProducerConnection,
  createSubscriberConnection,
  describeRedisUrl,
  jobToAdd,
  keySpace,
  replyChannel,
  withTimeout,
  type RedisConnection,
} from "@pes/jobs";

export type { ExecutionRequest, MessageExecutionRequest } from "@pes/contracts";

export type { ExecutionOutcome } from "./execution-lifecycle.js";

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
/** How long a reply that came before its waiter was registered is kept for it. */
const EARLY_REPLY_MS = 10_000;
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
  /** The execution's organization: its records are below the organization's keys. */
  orgId: string;
}

type Request = ExecutionRequest | MessageExecutionRequest;

/**
 * Builds the API side of the execution queue. Every execution has a record in Redis (status, result,
 * the reply channels of the instances waiting for it, the batches counting on it), begun and finished
 * each in one script (execution-lifecycle.ts): identical requests join one execution, the organization's
 * limit admits the new ones, and a finished error is never joined. Each instance listens on its own
 * reply channel; workers store each reply in the execution's record and publish it to every waiting
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
  /**
   * Replies that arrived before their waiter was registered: the reply channel is registered in the
   * same script that begins the execution, and its reply may beat the script's answer here.
   */
  const early = new Map<string, { outcome: ExecutionOutcome; at: number }>();

  let producer: RedisConnection | undefined;
  /** Records, coalescing and idempotency keys: a connection without BullMQ's scripts (see defineLifecycleCommands). */
  let records: RedisConnection | undefined;
  let subscriber: RedisConnection | undefined;
  /** One per job type's queue: `execute` and `execute-message`. */
  let queues: ExecutionQueues | undefined;
  /** Where accepted async batches wait for a worker to begin their items (START_BATCH_JOB). */
  let starts: Queue<StartBatchJob> | undefined;
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
    replyTo: instanceId,
    fingerprint: (request) => (coalescing === undefined ? undefined : executionFingerprint(request, coalescing.bucketMs, Date.now())),
    reuseMs: coalescing?.reuseMs ?? 0,
    addStart: async (job) => {
      if (starts === undefined) throw new QueueUnavailableError("Execution client not started");
      const { name, data, opts } = jobToAdd(START_BATCH_JOB, job, job.batchId);
      await starts.add(name, data, opts);
    },
    startState: async (batchId) => {
      const state = await starts?.getJobState(batchId);
      return state === "active" ? "active" : state === "waiting" || state === "prioritized" || state === "delayed" ? "waiting" : "gone";
    },
    jobKey: (queue, jobId) => [queues?.execute, queues?.message, queues?.behind].find((candidate) => candidate?.name === queue)?.toKey(jobId),
    timeoutMs: batchTimeoutMs,
    retentionMs,
  });

  /** Answers every caller waiting for the execution; a reply nobody waits for yet is kept a while for them. */
  function settle(executionId: string, result: ExecutionOutcome): void {
    const waiting = waiters.get(executionId);
    if (waiting === undefined) {
      keepEarly(executionId, result);
      return;
    }
    waiters.delete(executionId);
    for (const waiter of waiting) {
      clearTimeout(waiter.timer);
      waiter.resolve(result);
    }
  }

  function keepEarly(executionId: string, outcome: ExecutionOutcome): void {
    const now = Date.now();
    // Oldest first (a Map keeps insertion order): drop those nobody came for.
    for (const [id, reply] of early) {
      if (now - reply.at < EARLY_REPLY_MS) break;
      early.delete(id);
    }
    early.set(executionId, { outcome, at: now });
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

  /** The executions waited for here, by organization (whose keys share a slot: one read each). */
  function waitedByOrganization(): Map<string, string[]> {
    const byOrg = new Map<string, string[]>();
    for (const [executionId, waiting] of waiters) {
      const [first] = waiting;
      if (first === undefined) continue;
      const ids = byOrg.get(first.orgId) ?? [];
      ids.push(executionId);
      byOrg.set(first.orgId, ids);
    }
    return byOrg;
  }

  async function sweepStoredReplies(): Promise<void> {
    if (waiters.size === 0 || records === undefined) return;
    const connection = records;
    let found = 0;
    let unreadable: unknown;
    // Each organization on its own: on a cluster, the records on a node being replaced cannot be read yet, the others can.
    await Promise.all(
      [...waitedByOrganization()].map(async ([orgId, executionIds]) => {
        try {
          const stored = await readRecords(connection, keys, orgId, executionIds);
          stored.forEach((record, index) => {
            const reply = record?.reply === undefined ? undefined : parseReply(record.reply);
            const executionId = executionIds[index];
            if (reply === undefined || executionId === undefined) return;
            found += 1;
            settle(executionId, reply.result);
          });
        } catch (error) {
          unreadable ??= error;
        }
      }),
    );
    if (found > 0) logger.info({ found }, "collected replies published while the reply channel was down");
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

  async function storedReply(orgId: string, executionId: string): Promise<ExecutionOutcome | undefined> {
    if (records === undefined) throw new Error("client not started");
    const [record] = await readRecords(records, keys, orgId, [executionId]);
    return record?.reply === undefined ? undefined : parseReply(record.reply)?.result;
  }

  /** The stored result, or the error that says what became of the job; and the state it was found in. */
  async function readOutcome(executionId: string, waiter: Waiter, timedOut: string): Promise<{ answer: ExecutionOutcome; jobState: DeadlineJobState }> {
    const stored = await storedReply(waiter.orgId, executionId);
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
        await finish(waiter.orgId, executionId, stillQueued);
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
        const late = await storedReply(waiter.orgId, executionId);
        return late === undefined ? { answer: errorResult("Execution result was lost"), jobState: "unknown" } : { answer: late, jobState: "completed" };
      }
    }
  }

  /** An execution that will not run (withdrawn at its deadline, or never enqueued): its record says why, and its joiners are told now. */
  async function finish(orgId: string, executionId: string, result: PlaybookExecutionResult): Promise<void> {
    if (records === undefined) return;
    await finishExecution(records, keys, orgId, executionId, { reply: encodeReply(executionId, result), status: "failed", reusable: false });
  }

  function assertCanEnqueue(): { queues: ExecutionQueues; records: RedisConnection } {
    if (closed) throw new QueueUnavailableError("Service is shutting down");
    if (producer === undefined || records === undefined || queues === undefined) throw new QueueUnavailableError("Execution client not started");
    if (!connectionsReady()) throw new QueueUnavailableError("Redis is unreachable");
    return { queues, records };
  }

  /** Waits for an execution's reply (or takes the one that came first), until `timeoutMs`. */
  function waitFor(executionId: string, orgId: string, queue: ExecutionQueue, created: boolean, timeoutMs: number): Promise<ExecutionOutcome> {
    const first = early.get(executionId);
    if (first !== undefined) {
      early.delete(executionId);
      return Promise.resolve(first.outcome);
    }
    return new Promise<ExecutionOutcome>((resolve) => {
      const waiter: Waiter = {
        resolve,
        queue,
        created,
        orgId,
        timer: setTimeout(() => {
          // From its deadline on, the look-up answers this caller: a reply it publishes itself (withdrawing a
          // job still queued tells the joiners) must not answer it first, before the look-up has reported.
          if (!stopWaiting(executionId, waiter)) return;
          void outcomeAfterDeadline(executionId, waiter, timeoutMs).then(resolve);
        }, timeoutMs),
      };
      const waiting = waiters.get(executionId) ?? new Set<Waiter>();
      waiting.add(waiter);
      waiters.set(executionId, waiting);
    });
  }

  /**
   * Sends requests of one organization on their way: begins their executions (begin-executions.lua:
   * join or create, admit against the limit, register this instance's reply channel when `wait`) in one
   * round trip, then enqueues the jobs of the executions it created. Resolves once they are enqueued,
   * with each request's execution and, when `wait`, its outcome to come.
   */
  async function begin(
    requests: readonly Request[],
    timeoutMs: number,
    settings: SubmitOptions & { wait: boolean },
  ): Promise<{ submitted: SubmittedExecution[]; results: Promise<ExecutionOutcome>[] }> {
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new RangeError(`timeoutMs must be a positive number, got ${timeoutMs}`);
    const target = assertCanEnqueue();
    const [first] = requests;
    if (first === undefined) return { submitted: [], results: [] };
    const { orgId } = first;
    if (requests.some((request) => request.orgId !== orgId)) throw new RangeError("requests of one call must be of one organization");
    const now = Date.now();
    const deadline = now + Math.ceil(timeoutMs);
    const coalesce = settings.coalesce === false ? undefined : coalescing;
    const answer = await beginExecutions(
      target.records,
      keys,
      {
        orgId,
        lane: "interactive",
        deadline,
        ttlMs: timeoutMs + retentionMs,
        retainMs: retentionMs,
        reuseMs: coalesce?.reuseMs ?? 0,
        ...(settings.limit === undefined ? {} : { limit: settings.limit }),
        ...(settings.wait ? { waiterChannel: channel } : {}),
        ...(settings.limit?.over === "behind" ? { behindQueue: target.queues.behind.name } : {}),
      },
      requests.map((request, k) => ({
        candidateId: settings.executionIds?.[k] ?? randomUUID(),
        queue: queueOf(request, target.queues).name,
        ...(coalesce === undefined ? {} : { fingerprint: executionFingerprint(request, coalesce.bucketMs, now) }),
      })),
    ).catch((error: unknown) => {
      throw error instanceof LimitExceededError ? error : unavailable(error);
    });
    await enqueue(requests, answer.executions, deadline, answer.behind, orgId, target.queues);
    const submitted: SubmittedExecution[] = [];
    const results: Promise<ExecutionOutcome>[] = [];
    answer.executions.forEach((begun, k) => {
      const request = requests[k];
      if (request === undefined) return;
      const created = begun.state === "created";
      if (!created) options.onJoined?.();
      submitted.push({ executionId: begun.executionId, joined: !created });
      if (settings.wait) results.push(outcomeOf(begun, orgId, queueOf(request, target.queues, answer.behind), timeoutMs));
    });
    return { submitted, results };
  }

  /** The outcome a waiting caller gets: the stored reply of one that had finished, else the one to come. */
  function outcomeOf(begun: Begun, orgId: string, queue: ExecutionQueue, timeoutMs: number): Promise<ExecutionOutcome> {
    if (begun.state === "completed" || begun.state === "failed") {
      return Promise.resolve(parseReply(begun.reply)?.result ?? errorResult("Execution result was unreadable"));
    }
    return waitFor(begun.executionId, orgId, queue, begun.state === "created", timeoutMs);
  }

  /**
   * Enqueues the jobs of the executions a call created. When that fails, the executions are finished with
   * the error, so that their joiners are told and an identical request starts afresh.
   */
  async function enqueue(part: readonly Request[], begun: readonly Begun[], deadline: number, behind: boolean, orgId: string, target: ExecutionQueues): Promise<void> {
    const created = begun.flatMap((execution, k) => {
      const request = part[k];
      return execution.state === "created" && request !== undefined ? [{ request, executionId: execution.executionId }] : [];
    });
    if (created.length === 0) return;
    try {
      await enqueueExecutions(target, created, { replyTo: instanceId, deadline, behind });
    } catch (error) {
      const notEnqueued = { error: `Execution could not be enqueued: ${errorMessage(error)}` };
      await Promise.all(created.map(({ executionId }) => finish(orgId, executionId, notEnqueued))).catch(() => undefined);
      throw unavailable(error);
    }
  }

  function unavailable(error: unknown): QueueUnavailableError {
    return new QueueUnavailableError(closed ? "Service is shutting down" : `Could not enqueue: ${errorMessage(error)}`, { cause: error });
  }

  async function executeMany(requests: readonly Request[], timeoutMs: number, executeOptions: ExecuteManyOptions = {}): Promise<ExecutionOutcome[]> {
    const { results } = await begin(requests, timeoutMs, { ...executeOptions, wait: true });
    return Promise.all(results);
  }

  /** A record as a caller reads it: `pending` is `queued` or `running` as BullMQ knows it. */
  async function view(orgId: string, executionId: string, record: StoredRecord): Promise<ExecutionView> {
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
    const queue = [queues?.execute, queues?.message, queues?.behind].find((candidate) => candidate?.name === record.queue);
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
        const [again] = await readRecords(readyRecords(), keys, orgId, [executionId]);
        if (again !== undefined && again.status !== "pending") return view(orgId, executionId, again);
        if (Date.now() - record.createdAt < LOST_AFTER_MS) return { ...base, status: "queued" };
        return { ...base, status: "failed", outcome: errorResult("Execution result was lost") };
      }
      default:
        return { ...base, status: "queued" };
    }
  }

  return {
    async start() {
      if (producer !== undefined) throw new Error("execution client already started");
      producer = createProducerConnection(redisUrl, logger);
      records = createProducerConnection(redisUrl, logger, "pes:records");
      defineLifecycleCommands(records);
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
      queues = openExecutionQueues(producer, { redisUrl, prefix: options.prefix, logger });
      starts = new Queue<StartBatchJob>(START_BATCH_JOB.queue, { connection: producer, prefix: keys.bullPrefix });
      starts.on("error", (error) => logger.warn({ queue: START_BATCH_JOB.queue, err: error.message }, "queue error"));
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
      const [record] = await readRecords(readyRecords(), keys, orgId, [executionId]);
      return record === undefined ? undefined : view(orgId, executionId, record);
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
      early.clear();
      try {
        if (queues !== undefined) await withTimeout(Promise.all([queues.execute.close(), queues.message.close(), queues.behind.close(), starts?.close()]), 2_000, "closing the queues");
      } catch (error) {
        logger.warn({ err: errorMessage(error) }, "queues did not close cleanly");
      }
      await Promise.all([producer, records, subscriber].map((connection) => connection && closeConnection(connection)));
    },
  };
}

/** A result that is only `{ error }`, as the caller receives it. */
function errorResult(message: string): JsonText {
  return JsonText.of({ error: message } satisfies PlaybookExecutionResult);
}

