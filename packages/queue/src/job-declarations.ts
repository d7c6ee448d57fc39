import {
  BatchItemPostJob,
  ExecutionJob,
  MessageExecutionJob,
  PlaybookExecutionResult,
  RequestRefusal,
  type WaitingCaller,
} from "@pes/contracts";
import type { JobsOptions } from "bullmq";
import { z } from "zod";
import { CHAT_POST_QUEUE, EXECUTION_QUEUE, MESSAGE_EXECUTION_QUEUE } from "./queue-names.js";

/** How a job type is run: declared once, read by the producer (attempts, backoff) and the worker (timeout). */
export interface JobOptions {
  /**
   * Runs before the job fails for good (1: no retry). A worker that dies mid-run does not use one up:
   * BullMQ's stalled checker runs the job again regardless (once).
   */
  attempts: number;
  /** Wait before each retry: `fixed` waits `delayMs` each time, `exponential` `delayMs` × 2^(retry − 1). */
  backoff?: { type: "fixed" | "exponential"; delayMs: number };
  /** Each run's signal aborts after this long, and the run counts as a failed attempt. */
  attemptTimeoutMs?: number;
}

/**
 * A job type as both sides see it: the API (or a worker) that adds it and the worker that runs it.
 * Its handler lives in the worker's catalog (`handleJob`).
 */
export interface JobDeclaration<Payload = unknown> {
  /** BullMQ's job name: workers pick the handler by it. Renaming one strands the jobs already queued. */
  readonly name: string;
  /**
   * The queue it goes through. A new job type gets a queue of its own, so that workers of the previous
   * version, which have no handler for it, never take its jobs during a rolling deploy.
   */
  readonly queue: string;
  /** Parses `job.data` in the worker: a payload it refuses fails the job without retry. */
  readonly schema: z.ZodType<Payload>;
  readonly options: JobOptions;
}

/**
 * A job a caller waits for (its payload says where to reply and until when): the handler's value is the
 * reply, and whatever fails the job, or its deadline passing, is replied as `{ error }`.
 */
export interface AwaitedJobDeclaration<Payload extends WaitingCaller = WaitingCaller, Reply extends object = object>
  extends JobDeclaration<Payload> {
  readonly reply: {
    /** The reply's shape. Not parsed on the way back: the API passes the worker's JSON on as it is. */
    readonly schema: z.ZodType<Reply>;
    /** What the caller calls the job in errors: "Execution failed: …". */
    readonly label: string;
  };
}

/*
 * Rolling deploys: an API and workers one version apart run together, whichever is upgraded first.
 * - A job type's payload only gains optional fields between versions; a worker drops fields it does not
 *   know (its schema is not strict) and answers in the reply format of the job's version (encodeReply).
 * - A new job type gets a queue of its own: workers of the version before, which have no handler for
 *   it, never take its jobs. Such jobs wait for a worker of the new version; when the API is upgraded
 *   first, they wait until the first one starts (a caller whose deadline passes first gets the usual
 *   "timed out … (still queued)", and the job is withdrawn). `execute-message` (a message link, with or
 *   without bookName) and `post-batch-item` came in wire version 2: upgrade the workers first to serve
 *   message links without a pause.
 */

/** One playbook execution, for a caller waiting on the API. */
export const EXECUTE_JOB = {
  name: "execute",
  queue: EXECUTION_QUEUE,
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
  schema: MessageExecutionJob,
  reply: { schema: z.union([PlaybookExecutionResult, z.instanceof(RequestRefusal)]), label: "execution" },
  // As execute: the caller's deadline leaves no time for a retry.
  options: { attempts: 1 },
} satisfies AwaitedJobDeclaration<MessageExecutionJob, PlaybookExecutionResult | RequestRefusal>;

/** How long one attempt of a batch item's post may wait for the channel's pace. */
export const BATCH_ITEM_POST_WINDOW_MS = 15 * 60_000;

/**
 * A batch item's result posted as a reply in its batch's thread, after the caller has its answer. Posting
 * is idempotent (a record per item in Redis), so retries never post twice.
 */
export const POST_BATCH_ITEM_JOB = {
  name: "post-batch-item",
  queue: CHAT_POST_QUEUE,
  schema: BatchItemPostJob,
  options: { attempts: 4, backoff: { type: "exponential", delayMs: 5_000 }, attemptTimeoutMs: BATCH_ITEM_POST_WINDOW_MS + 60_000 },
} satisfies JobDeclaration<BatchItemPostJob>;

/** Every job type declared here: a new one joins this list, so that the queue dashboard shows its queue. */
export const JOB_DECLARATIONS: readonly Pick<JobDeclaration, "name" | "queue">[] = [EXECUTE_JOB, EXECUTE_MESSAGE_JOB, POST_BATCH_ITEM_JOB];

/**
 * The job hash goes as soon as the job completes (a reply lives in its own result key). A failed job
 * stays an hour so that a caller past its deadline (and an operator) can read why it failed.
 */
const RETENTION = { removeOnComplete: true, removeOnFail: { age: 3_600 } } satisfies JobsOptions;

/**
 * A job of `declaration` as BullMQ's `Queue.add` (name, data, opts) and `addBulk` take it, with the
 * declaration's attempts and backoff. The payload is typed, not parsed: the worker parses it.
 */
export function jobToAdd<Payload>(
  declaration: JobDeclaration<Payload>,
  data: Payload,
  jobId?: string,
): { name: string; data: Payload; opts: JobsOptions } {
  const { attempts, backoff } = declaration.options;
  return {
    name: declaration.name,
    data,
    opts: {
      ...RETENTION,
      attempts,
      ...(backoff === undefined ? {} : { backoff: { type: backoff.type, delay: backoff.delayMs } }),
      ...(jobId === undefined ? {} : { jobId }),
    },
  };
}
