import { z } from "zod";
import { ResolvedAttributes } from "./execution-input.js";
import { PlaybookExecutionResult } from "./execution-result.js";
import { issueTime } from "./issue-time.js";
import { OwnerTeams } from "./team-names.js";

/**
 * The version of the job and reply formats this build writes (`v` in both). An API and workers one
 * version apart run together during a rolling deploy: a format's next version only adds fields, which a
 * reader of the version before ignores (job schemas are not strict; reply headers are read tolerantly).
 */
export const WIRE_VERSION = 1;

/**
 * The fields of every job a caller waits for: where to reply, until when, and which reply format the
 * caller reads. Unknown fields (a newer API's) are dropped, not refused.
 */
export const WaitingCaller = z.object({
  /** The wire version of the API that sent the job. */
  v: z.number().int().positive(),
  /** The API instance waiting for the reply: the worker publishes on that instance's reply channel. */
  replyTo: z.string().min(1),
  /** Epoch ms after which nobody waits for the result: the job is not started later, and stops then. */
  deadline: z.number().int().positive(),
});
export type WaitingCaller = z.infer<typeof WaitingCaller>;

/**
 * Where an item of a batch stands in it: posts to a channel go in one thread per batch and channel, a
 * reply per item. `index` is the item's position in `inputList`, `total` its length.
 */
export const BatchPosition = z.object({
  /** Unique per batch request (not the caller's request id, which a caller may reuse). */
  id: z.string().min(1),
  index: z.number().int().nonnegative(),
  total: z.number().int().positive(),
  /**
   * The batch's caller waits for every item (a synchronous batch): an item's reply is posted in the
   * thread before the item is answered, so that its `enrichmentLink` opens that reply. Otherwise (an
   * async batch, or an API of the version before) the reply follows and the link opens the thread.
   */
  callerWaits: z.boolean().optional(),
});
export type BatchPosition = z.infer<typeof BatchPosition>;

/**
 * The payload of one execution job on the queue. The API has already authenticated the caller,
 * validated the input and resolved the playbook, its attributes and the issue time; the worker
 * re-validates it (a malformed job fails without retries) and runs it.
 */
export const ExecutionJob = WaitingCaller.extend({
  orgId: z.string().min(1),
  requestId: z.string().min(1),
  bookName: z.string().min(1),
  /** The issue time, resolved (explicit, from the message link, or the time of the request), in UTC. */
  time: issueTime("time"),
  attributes: ResolvedAttributes,
  title: z.string().optional(),
  details: z.string().optional(),
  messageLink: z.string().optional(),
  liveRun: z.boolean(),
  channelId: z.string().optional(),
  /**
   * The W3C trace context of the API's enqueue span, when tracing is on: the worker's spans join the
   * request's trace. Optional: a worker that predates it drops it like any unknown field.
   */
  traceparent: z.string().optional(),
  batch: BatchPosition.optional(),
  /**
   * The teams of the organization it runs for (the caller's teams the playbook allows; team-access.ts in
   * the configuration): its evidence bundle records them. Absent from an API that predates teams.
   */
  teams: OwnerTeams.optional(),
});
export type ExecutionJob = z.infer<typeof ExecutionJob>;

/**
 * An execution whose issue is the chat message `messageLink` points at. The API has checked the link
 * (host, shape, time) and `bookName`; the worker reads the message with the organization's Slack token,
 * identifies the playbook from it when `bookName` is absent, takes its attributes, details and time, and
 * refuses (a 400 on `messageLink`) a message it cannot read or use.
 */
export const MessageExecutionJob = WaitingCaller.extend({
  orgId: z.string().min(1),
  requestId: z.string().min(1),
  messageLink: z.string().min(1),
  bookName: z.string().min(1).optional(),
  liveRun: z.boolean(),
  channelId: z.string().optional(),
  batch: BatchPosition.optional(),
  /** As ExecutionJob's: the W3C trace context of the API's enqueue span, when tracing is on. */
  traceparent: z.string().optional(),
  /**
   * The teams it runs for, as ExecutionJob's. Without `bookName`, the worker identifies the playbook only
   * among those that run for exactly these teams (open to every team, or allowing all of them), so that
   * what it finds is never seen by a team its playbook does not allow.
   */
  teams: OwnerTeams.optional(),
});
export type MessageExecutionJob = z.infer<typeof MessageExecutionJob>;

/**
 * Posts one batch item's result as a reply in its batch's thread, after the caller has its answer: a
 * batch of 100 for one channel takes about 100 s to post at Slack's pace, longer than a caller waits.
 */
export const BatchItemPostJob = z.object({
  v: z.number().int().positive().optional(),
  orgId: z.string().min(1),
  channelId: z.string().min(1),
  /** The batch thread's root message. */
  rootTs: z.string().min(1),
  batch: BatchPosition,
  title: z.string().optional(),
  result: PlaybookExecutionResult,
});
export type BatchItemPostJob = z.infer<typeof BatchItemPostJob>;

/** What the API asks of an execution: its job without what the execution client adds (where to reply, until when, the version, the trace). */
export const ExecutionRequest = ExecutionJob.omit({ v: true, replyTo: true, deadline: true, traceparent: true });
export type ExecutionRequest = z.infer<typeof ExecutionRequest>;

/** Likewise for an execution whose issue is a chat message (`execute-message`). */
export const MessageExecutionRequest = MessageExecutionJob.omit({ v: true, replyTo: true, deadline: true, traceparent: true }).extend({
  kind: z.literal("message"),
});
export type MessageExecutionRequest = z.infer<typeof MessageExecutionRequest>;

/**
 * An async batch to start (`start-batch`): its items as the API resolved them, each with the execution id
 * it proposes and, when it may share, its coalescing fingerprint; an invalid input is its `{ error }`.
 * A worker begins and enqueues the items a chunk at a time, so that the API answers 202 at once.
 */
export const StartBatchJob = z.object({
  v: z.number().int().positive(),
  orgId: z.string().min(1),
  batchId: z.string().min(1),
  /** The API instance that accepted the batch (its items' jobs name it, as every execution job names an API). */
  replyTo: z.string().min(1),
  /** Until when the items may wait and run (epoch ms). */
  deadline: z.number().int().positive(),
  /** How long an item's record lives until it finishes, and is kept after (ms). */
  ttlMs: z.number().int().positive(),
  retainMs: z.number().int().positive(),
  /** How long a completed item's result serves identical requests (ms); 0: not at all. */
  reuseMs: z.number().int().nonnegative(),
  items: z.array(
    z.union([
      z.object({
        index: z.number().int().nonnegative(),
        candidateId: z.string().min(1),
        fingerprint: z.string().min(1).optional(),
        request: z.union([ExecutionRequest, MessageExecutionRequest]),
      }),
      z.object({ index: z.number().int().nonnegative(), invalid: z.string().min(2) }),
    ]),
  ),
});
export type StartBatchJob = z.infer<typeof StartBatchJob>;
