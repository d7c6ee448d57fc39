import { z } from "zod";
import { Attributes } from "./execution-input.js";
import { PlaybookExecutionResult } from "./execution-result.js";

/**
 * The payload of one execution job on the queue. The API has already authenticated the caller,
 * validated the input and resolved the playbook, its attributes and the issue time; the worker
 * re-validates it (a malformed job fails without retries) and runs it.
 */
export const ExecutionJob = z.strictObject({
  orgId: z.string().min(1),
  requestId: z.string().min(1),
  /** The API instance waiting for the reply: the worker publishes on that instance's reply channel. */
  replyTo: z.string().min(1),
  /** Epoch ms after which nobody waits for the result: a job picked up later is not run. */
  deadline: z.number().int().positive(),
  bookName: z.string().min(1),
  /** The issue time, resolved (explicit, from the message link, or the time of the request). */
  time: z.iso.datetime({ offset: true }),
  attributes: Attributes,
  title: z.string().optional(),
  details: z.string().optional(),
  messageLink: z.string().optional(),
  liveRun: z.boolean(),
  channelId: z.string().optional(),
});
export type ExecutionJob = z.infer<typeof ExecutionJob>;

/** What a worker publishes on the reply channel, and stores under the result key, for one job. */
export const ExecutionReply = z.object({
  jobId: z.string(),
  result: PlaybookExecutionResult,
});
export type ExecutionReply = z.infer<typeof ExecutionReply>;
