import { z } from "zod";
import { WIRE_VERSION } from "./execution-job.js";
import { JsonText } from "./json-text.js";

/** The first line of a versioned reply. Fields a newer worker adds are ignored. */
const ReplyHeader = z.object({ v: z.number().int().positive(), jobId: z.string().min(1) });

/** A reply as the API reads it: `version` 0 is the unversioned format of before. */
export interface DecodedReply {
  jobId: string;
  version: number;
  result: JsonText;
}

/**
 * What a worker publishes on the reply channel, and stores under the result key, for one job, in the
 * newest format the job's sender reads: `{"v":1,"jobId":"…"}`, a newline, the result as JSON; or, for a
 * job from before formats were versioned (no `v`), that format: the job id, a newline, the result. The
 * API passes the JSON on to the caller without parsing it: a result is encoded once, by the worker.
 */
export function encodeReply(jobId: string, result: object, senderVersion: number | undefined): string {
  const json = JSON.stringify(result);
  if (senderVersion === undefined) return `${jobId}\n${json}`;
  return `${JSON.stringify({ v: Math.min(senderVersion, WIRE_VERSION), jobId })}\n${json}`;
}

/**
 * The job id, version and result of a reply in either format, or undefined when `text` is not one (no
 * id, or no JSON object). Only the framing is checked: the result goes to the caller as it is.
 */
export function decodeReply(text: string): DecodedReply | undefined {
  const newline = text.indexOf("\n");
  if (newline <= 0 || text.charAt(newline + 1) !== "{" || text.charAt(text.length - 1) !== "}") return undefined;
  const head = text.slice(0, newline);
  const result = new JsonText(text.slice(newline + 1));
  // A job id (a UUID the API chose) never starts with "{": this is the unversioned format.
  if (head.charAt(0) !== "{") return { jobId: head, version: 0, result };
  const header = ReplyHeader.safeParse(parseJson(head));
  return header.success ? { jobId: header.data.jobId, version: header.data.v, result } : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
