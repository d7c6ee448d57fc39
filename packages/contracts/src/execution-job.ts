import { z } from "zod";
import { ResolvedAttributes } from "./execution-input.js";
import type { PlaybookExecutionResult } from "./execution-result.js";
import { JsonText } from "./json-text.js";

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
  attributes: ResolvedAttributes,
  title: z.string().optional(),
  details: z.string().optional(),
  messageLink: z.string().optional(),
  liveRun: z.boolean(),
  channelId: z.string().optional(),
});
export type ExecutionJob = z.infer<typeof ExecutionJob>;

/**
 * What a worker publishes on the reply channel, and stores under the result key, for one job: the job id
 * (a UUID the API chose), a newline, the result as JSON. The API passes the JSON on to the caller without
 * parsing it: a result is encoded once, by the worker.
 */
export function encodeReply(jobId: string, result: PlaybookExecutionResult): string {
  return `${jobId}\n${JSON.stringify(result)}`;
}

/** The job id and result of a reply, or undefined when `text` is not one (no id, or no JSON object). */
export function decodeReply(text: string): { jobId: string; result: JsonText } | undefined {
  const newline = text.indexOf("\n");
  if (newline <= 0 || text.charAt(newline + 1) !== "{" || text.charAt(text.length - 1) !== "}") return undefined;
  return { jobId: text.slice(0, newline), result: new JsonText(text.slice(newline + 1)) };
}
