import type { JobsOptions } from "bullmq";
import type { z } from "zod";

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
 * Its handler is one of the worker's job handlers (`handleJob`).
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
  /**
   * Background work nobody waits for: its queue gives way to the others' while the worker process is short
   * of CPU (governBackgroundSlots).
   */
  readonly background?: boolean;
  /**
   * The batch lane: a second queue its jobs also come from, behind every caller's own work (background,
   * with a concurrency of its own). Its producer adds them there instead of to `queue`.
   */
  readonly batchLane?: string;
}

/** The payload of a job a caller waits for: until when (epoch ms) it waits. */
export interface AwaitedPayload {
  deadline: number;
}

/**
 * A job a caller waits for (its payload says until when): the handler's value is the reply, and whatever
 * fails the job, or its deadline passing, is replied as `{ error }` (through the worker's JobReplies).
 */
export interface AwaitedJobDeclaration<Payload extends AwaitedPayload = AwaitedPayload, Reply extends object = object> extends JobDeclaration<Payload> {
  readonly reply: {
    /** The reply's shape. Not parsed on the way back: the API passes the worker's JSON on as it is. */
    readonly schema: z.ZodType<Reply>;
    /** What the caller calls the job in errors: "Execution failed: …". */
    readonly label: string;
  };
}

/**
 * The job hash goes as soon as the job completes (a reply, when it has one, is kept by JobReplies). A failed job
 * stays an hour so that a caller past its deadline (and an operator) can read why it failed.
 */
const RETENTION = { removeOnComplete: true, removeOnFail: { age: 3_600 } } satisfies JobsOptions;

/**
 * A job of `declaration` as BullMQ's `Queue.add` (name, data, opts) and `addBulk` take it, with the
 * declaration's attempts and backoff. The payload is typed, not parsed: the worker parses it.
 */
export function jobToAdd<Payload>(declaration: JobDeclaration<Payload>, data: Payload, jobId?: string): { name: string; data: Payload; opts: JobsOptions } {
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
