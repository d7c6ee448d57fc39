import { BatchItemPostJob, ExecutionJob, MessageExecutionJob, PlaybookExecutionResult, RequestRefusal, StartBatchJob } from "@pes/contracts";
import type { AwaitedJobDeclaration, CatalogHandlers, JobCatalog, JobDeclaration } from "@pes/jobs";
import { z } from "zod";

/**
 * The one queue every execution goes through. Renaming it strands the jobs already in Redis under the
 * old name (nothing would ever process them): drain the old queue with a worker first.
 */
export const EXECUTION_QUEUE = "playbook-executions";

/**
 * Executions whose issue is a chat message the worker reads (a job without bookName): a queue of their
 * own, so that a worker that cannot read chat messages never takes one.
 */
export const MESSAGE_EXECUTION_QUEUE = "playbook-message-executions";

/**
 * Executions behind every other caller's work: an async batch's items, and alerts admitted over their
 * organization's limit. A queue of their own, so that each worker runs only a few of them at once
 * (WORKER_BATCH_CONCURRENCY, fewer while it is short of CPU: a background queue of the job runtime) and
 * keeps the rest of its room, and its CPU, for interactive executions.
 */
export const BATCH_EXECUTION_QUEUE = "playbook-batch-executions";

/** Posts to chat that nobody waits for (a batch item's reply in its batch's thread). */
export const CHAT_POST_QUEUE = "playbook-chat-posts";

/** Async batches accepted by the API, whose items a worker begins and enqueues. */
export const BATCH_START_QUEUE = "playbook-batch-starts";

/*
 * Rolling deploys: an API and workers one version apart run together, whichever is upgraded first.
 * - A job type's payload only gains optional fields between versions; a worker drops fields it does not
 *   know (its schema is not strict); replies carry `v` and are read tolerantly (encodeReply, decodeReply).
 * - A new job type gets a queue of its own: workers of the version before, which have no handler for
 *   it, never take its jobs. Such jobs wait for a worker of the new version; when the API is upgraded
 *   first, they wait until the first one starts (a caller whose deadline passes first gets the usual
 *   "timed out … (still queued)", and the job is withdrawn).
 */

/** One playbook execution, for a caller waiting on the API. */
export const EXECUTE_JOB = {
  name: "execute",
  queue: EXECUTION_QUEUE,
  batchLane: BATCH_EXECUTION_QUEUE,
  schema: ExecutionJob,
  reply: { schema: PlaybookExecutionResult, label: "execution" },
  // One attempt: the engine reports failures as results, and its caller's deadline leaves no time for a
  // retry. A job interrupted by a dying worker is still re-run by the stalled checker.
  options: { attempts: 1 },
} satisfies AwaitedJobDeclaration<ExecutionJob, PlaybookExecutionResult>;

/**
 * An execution whose issue is the chat message a link points at: the worker reads it, then runs as
 * `execute`. Its reply may refuse the request (a message that cannot be read or matches no playbook).
 */
export const EXECUTE_MESSAGE_JOB = {
  name: "execute-message",
  queue: MESSAGE_EXECUTION_QUEUE,
  batchLane: BATCH_EXECUTION_QUEUE,
  schema: MessageExecutionJob,
  reply: { schema: z.union([PlaybookExecutionResult, z.instanceof(RequestRefusal)]), label: "execution" },
  // As execute: the caller's deadline leaves no time for a retry.
  options: { attempts: 1 },
} satisfies AwaitedJobDeclaration<MessageExecutionJob, PlaybookExecutionResult | RequestRefusal>;

/** `execute` and `execute-message` as their producers add them to their batch lane, behind every other caller's work. */
export const BATCH_EXECUTE_JOB = inBatchLane(EXECUTE_JOB) satisfies AwaitedJobDeclaration<ExecutionJob, PlaybookExecutionResult>;
export const BATCH_EXECUTE_MESSAGE_JOB = inBatchLane(EXECUTE_MESSAGE_JOB) satisfies AwaitedJobDeclaration<
  MessageExecutionJob,
  PlaybookExecutionResult | RequestRefusal
>;

function inBatchLane<Job extends { queue: string; batchLane: string }>({ batchLane, ...job }: Job): Omit<Job, "batchLane"> & { queue: string } {
  return { ...job, queue: batchLane };
}

/**
 * An async batch's items begun and enqueued by a worker, a chunk at a time, after the API answered 202.
 * Retried from the chunk it stopped at (the batch's `begun`): beginning is create or join, and adding a
 * job that exists does nothing.
 */
export const START_BATCH_JOB = {
  name: "start-batch",
  queue: BATCH_START_QUEUE,
  background: true,
  schema: StartBatchJob,
  options: { attempts: 3, backoff: { type: "exponential", delayMs: 1_000 } },
} satisfies JobDeclaration<StartBatchJob>;

/** How long one attempt of a batch item's post may wait for the channel's pace. */
export const BATCH_ITEM_POST_WINDOW_MS = 15 * 60_000;

/**
 * A batch item's result posted as a reply in its batch's thread, after the caller has its answer. Posting
 * is idempotent (a record per item in Redis), so retries never post twice.
 */
export const POST_BATCH_ITEM_JOB = {
  name: "post-batch-item",
  queue: CHAT_POST_QUEUE,
  background: true,
  schema: BatchItemPostJob,
  options: { attempts: 4, backoff: { type: "exponential", delayMs: 5_000 }, attemptTimeoutMs: BATCH_ITEM_POST_WINDOW_MS + 60_000 },
} satisfies JobDeclaration<BatchItemPostJob>;

/**
 * Every job a worker runs, by name: the whole list, from which its handlers (CatalogHandlers: one for
 * each, or it does not compile), its queues and its metrics' job names all come. A new job type joins it.
 */
export const EXECUTION_JOBS = {
  execute: EXECUTE_JOB,
  "execute-message": EXECUTE_MESSAGE_JOB,
  "start-batch": START_BATCH_JOB,
  "post-batch-item": POST_BATCH_ITEM_JOB,
} satisfies JobCatalog;

/** A worker's handler for every job of EXECUTION_JOBS. */
export type ExecutionJobHandlers = CatalogHandlers<typeof EXECUTION_JOBS>;

const JOBS: readonly JobDeclaration[] = Object.values(EXECUTION_JOBS);

/** The queues of the jobs' batch lanes, whose concurrency is the worker's batch concurrency. */
export const BATCH_LANES: readonly string[] = [...new Set(JOBS.flatMap((job) => (job.batchLane === undefined ? [] : [job.batchLane])))];

/**
 * Every queue of the service's jobs, so that the dashboard and the depth metrics show them: the
 * interactive ones, then the batch lanes, then the background ones.
 */
export const SERVICE_QUEUES: readonly string[] = [
  ...new Set([
    ...JOBS.filter((job) => job.background !== true).map((job) => job.queue),
    ...BATCH_LANES,
    ...JOBS.filter((job) => job.background === true).map((job) => job.queue),
  ]),
];
