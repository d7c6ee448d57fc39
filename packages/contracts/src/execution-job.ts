import { z } from "zod";
import { ResolvedAttributes } from "./execution-input.js";

/**
 * The version of the job and reply formats this build writes (`v` in both). An API and workers one
 * version apart run together during a rolling deploy: a job's next version only adds fields (which a
 * worker of the version before drops), a worker answers each job in the reply format of the job's
 * version (see encodeReply, which must keep writing the previous version's format), and an API reads its
 * own reply format and the previous one (decodeReply).
 */
export const WIRE_VERSION = 1;

/**
 * The fields of every job a caller waits for: where to reply, until when, and which reply format the
 * caller reads. Unknown fields (a newer API's) are dropped, not refused.
 */
export const WaitingCaller = z.object({
  /** The wire version of the API that sent the job; absent in jobs sent before formats were versioned. */
  v: z.number().int().positive().optional(),
  /** The API instance waiting for the reply: the worker publishes on that instance's reply channel. */
  replyTo: z.string().min(1),
  /** Epoch ms after which nobody waits for the result: the job is not started later, and stops then. */
  deadline: z.number().int().positive(),
});
export type WaitingCaller = z.infer<typeof WaitingCaller>;

/**
 * The payload of one execution job on the queue. The API has already authenticated the caller,
 * validated the input and resolved the playbook, its attributes and the issue time; the worker
 * re-validates it (a malformed job fails without retries) and runs it.
 */
export const ExecutionJob = WaitingCaller.extend({
  orgId: z.string().min(1),
  requestId: z.string().min(1),
  bookName: z.string().min(1),
  /** The issue time, resolved (explicit, from the message link, or the time of the request). */
  time: z.iso.datetime({ offset: true }),
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
});
export type ExecutionJob = z.infer<typeof ExecutionJob>;
