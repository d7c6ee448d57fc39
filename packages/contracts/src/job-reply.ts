import { z } from "zod";
import { ValidationIssue } from "./errors.js";
import { WIRE_VERSION } from "./execution-job.js";
import { JsonText } from "./json-text.js";

/**
 * The first line of a reply. `status` is 400 when the worker refused the request; absent, the body is
 * the result. Fields a newer worker adds are ignored.
 */
const ReplyHeader = z.object({ v: z.number().int().positive(), jobId: z.string().min(1), status: z.literal(400).optional() });

/** The body of a refusal: the issues, their paths relative to the request body (`["messageLink"]`). */
const RefusalBody = z.object({ error: z.array(ValidationIssue).min(1) });

/**
 * A request a worker refuses, for what only it can check (the message a link points at): the API answers
 * 400 with these issues, each path relative to the request body, as resolveExecution's are.
 */
export class RequestRefusal {
  constructor(readonly issues: readonly ValidationIssue[]) {
    if (issues.length === 0) throw new Error("a refusal needs at least one issue");
  }

  /** The issues in one line, as a batch item's `{ error }` reads: `messageLink: …; bookName: …`. */
  describe(): string {
    return describeIssues(this.issues);
  }
}

/** One line for issues: `time: message; attributes.host: message`. */
export function describeIssues(issues: readonly ValidationIssue[]): string {
  return issues.map((issue) => (issue.path.length === 0 ? issue.message : `${issue.path.join(".")}: ${issue.message}`)).join("; ");
}

/** A reply as the API reads it. */
export interface DecodedReply {
  jobId: string;
  version: number;
  /** The result as the worker encoded it, or the worker's refusal of the request. */
  result: JsonText | RequestRefusal;
}

/**
 * What a worker publishes on the reply channel, and stores in the execution's record, for one job:
 * `{"v":1,"jobId":"…"}`, a newline, the result as JSON (a refusal: `"status":400` in the header and
 * `{"error":[issues]}`). The API passes a result's JSON on to the caller without parsing it: a result is
 * encoded once, by the worker.
 */
export function encodeReply(jobId: string, result: object): string {
  if (result instanceof RequestRefusal) return `${JSON.stringify({ v: WIRE_VERSION, jobId, status: 400 })}\n${JSON.stringify({ error: result.issues })}`;
  return `${JSON.stringify({ v: WIRE_VERSION, jobId })}\n${JSON.stringify(result)}`;
}

/**
 * The job id, version and result of a reply, or undefined when `text` is not one (no header, no JSON
 * object, a refusal without issues). Read tolerantly: a newer version's header fields are ignored. Only
 * the framing of a result is checked: it goes to the caller as it is; a refusal's issues are parsed.
 */
export function decodeReply(text: string): DecodedReply | undefined {
  const newline = text.indexOf("\n");
  if (newline <= 0 || text.charAt(0) !== "{" || text.charAt(newline + 1) !== "{" || text.charAt(text.length - 1) !== "}") return undefined;
  const header = ReplyHeader.safeParse(parseJson(text.slice(0, newline)));
  if (!header.success) return undefined;
  const body = text.slice(newline + 1);
  const { jobId, v: version, status } = header.data;
  if (status === undefined) return { jobId, version, result: new JsonText(body) };
  const refusal = RefusalBody.safeParse(parseJson(body));
  return refusal.success ? { jobId, version, result: new RequestRefusal(refusal.data.error) } : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
