import type { ExecutionRequest, MessageExecutionRequest } from "@pes/contracts";
import type { Logger } from "pino";
import type { Batches } from "./batch-store.js";
import type { DeadlineJobState } from "./deadline-answer.js";
import type { ExecutionOutcome, LaneLimit } from "./execution-lifecycle.js";
import type { CoalescingSettings, SubmittedExecution } from "./execution-submission.js";
import type { IdempotencyKeys } from "./idempotency-keys.js";

export type { ExecutionRequest, MessageExecutionRequest } from "@pes/contracts";
export type { DeadlineJobState } from "./deadline-answer.js";
export type { ExecutionOutcome } from "./execution-lifecycle.js";
export type { CoalescingSettings, SubmittedExecution } from "./execution-submission.js";

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
  /** The teams it runs for (its request's `teams`); absent: none given. */
  teams?: string[];
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
   * `timeoutMs` has passed (about a second after at most, unless Redis stops answering while its job is
   * being withdrawn: then as long as that takes, up to the connection's command timeout, so that what the
   * caller is told is what became of the job). Throws QueueUnavailableError,
   * without waiting, when the job cannot be enqueued.
   */
  execute(
    request: ExecutionRequest | MessageExecutionRequest,
    timeoutMs: number,
    options?: ExecuteOptions & { executionId?: string; limit?: LaneLimit },
  ): Promise<ExecutionAnswer>;
  /** Like execute() for many requests, enqueued in one round trip per queue; outcomes in request order. */
  executeMany(requests: readonly (ExecutionRequest | MessageExecutionRequest)[], timeoutMs: number, options?: ExecuteManyOptions): Promise<ExecutionOutcome[]>;
  /**
   * Starts (or joins) executions nobody waits for: their results go to their records, for read(). Their
   * deadline is `options.timeoutMs` (default `submittedTimeoutMs`) away. Throws QueueUnavailableError
   * when they cannot be enqueued, LimitExceededError when they do not fit the organization's limit.
   */
  submit(requests: readonly (ExecutionRequest | MessageExecutionRequest)[], options?: SubmitOptions): Promise<SubmittedExecution[]>;
  /**
   * An execution of the organization, or undefined when it has none of that id (or it is past its retention).
   * One found lost (its job gone without a reply) is finished with that error as it is read.
   */
  read(orgId: string, executionId: string): Promise<ExecutionView | undefined>;
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
