import { ErrorResponse, ValidationError } from "@pes/contracts";
import { z } from "zod";
import { type AppErrorCode, httpStatusOf } from "../errors.js";

/** A response header a route may send, as the OpenAPI document shows it. */
export interface HeaderDeclaration {
  description: string;
  schema: z.ZodType;
}

/** One answer of a route: what it means, the schema of its JSON body, the headers it may carry. */
export interface ResponseDeclaration {
  description: string;
  /** A contract schema with `.meta({ id })` is shown as a reference to its component. */
  body?: z.ZodType;
  /** When the answer is an image instead of JSON: its media types, by `Accept`. */
  images?: readonly string[];
  /** When the answer may instead be a stream of server-sent events (`Accept: text/event-stream`): what its events are. */
  eventStream?: string;
  headers?: Readonly<Record<string, HeaderDeclaration>>;
}

/** HTTP status → answer. */
export type Responses = Readonly<Record<number, ResponseDeclaration>>;

// The API asks for 1 s (load shedding), an organization's backlog estimate (at most an hour), or 5 s
// (identity provider); the bound keeps z.int()'s 2^53 out of the document.
const retryAfter = { "Retry-After": { description: "Seconds to wait.", schema: z.int().min(1).max(3_600) } };

/** What each failure the API answers on purpose means to a caller; the status comes from errors.ts' table. */
const failureAnswers = {
  validation: {
    description: "The body breaks the input rules: a list of issues with paths starting at body, or a string when it is not JSON.",
    body: ValidationError,
  },
  unauthenticated: { description: "Missing, malformed, expired or otherwise invalid bearer token.", body: ErrorResponse },
  forbidden: {
    description: "Client ID is not configured for the organization (the API is not enabled for it, or not for this client).",
    body: ErrorResponse,
  },
  not_found: { description: "No such route.", body: ErrorResponse },
  conflict: { description: "The object is not in a state that allows it.", body: ErrorResponse },
  payload_too_large: { description: "Request body larger than the configured limit.", body: ErrorResponse },
  unsupported_media_type: { description: "Content-Type is not application/json.", body: ErrorResponse },
  unprocessable: { description: "The Idempotency-Key was used with another request (another body or path).", body: ErrorResponse },
  // 429 always says when to come back; 503 does when the identity provider's keys cannot be had.
  too_many_requests: {
    description:
      "Too many executions in flight (the organization's, across every API instance, or this instance's), or too many of the " +
      "organization's batch items queued; retry after the Retry-After seconds, estimated from the organization's backlog and pace.",
    body: ErrorResponse,
    headers: retryAfter,
  },
  internal: { description: "Internal server error; details are only in the service's logs.", body: ErrorResponse },
  service_unavailable: {
    description: "A dependency (the job queue or the identity provider's keys) cannot be reached.",
    body: ErrorResponse,
    headers: retryAfter,
  },
} satisfies Record<AppErrorCode, ResponseDeclaration>;

/** The `{ error }` answers of these AppError codes, under their statuses. */
export function failures(...codes: readonly AppErrorCode[]): Responses {
  return Object.fromEntries(codes.map((code) => [httpStatusOf(code), failureAnswers[code]]));
}
