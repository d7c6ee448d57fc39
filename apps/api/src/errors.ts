import type { ErrorRequestHandler, RequestHandler } from "express";
import type { ValidationIssue } from "@pes/contracts";
import type { Logger } from "@pes/logger";
import { sendJson } from "./json-response.js";
import { requestIdOf } from "./request-id.js";

/** Every failure the API answers on purpose, and its HTTP status: the one table. */
const statusByCode = {
  validation: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  too_many_requests: 429,
  internal: 500,
  service_unavailable: 503,
} as const;

export type AppErrorCode = keyof typeof statusByCode;

/** The HTTP status of an error code. */
export function statusOf(code: AppErrorCode): number {
  return statusByCode[code];
}

/**
 * A failure with a known answer: `{ error: detail }` with the status of `code`. `detail` is the message
 * sent to the caller (or, for validation, the issue list), so it must never carry secrets or internals.
 */
export class AppError extends Error {
  override name = "AppError";

  constructor(
    readonly code: AppErrorCode,
    readonly detail: string | readonly ValidationIssue[],
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(typeof detail === "string" ? detail : detail.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; "));
  }
}

/** The answer for any path no route declares. */
export const notFound: RequestHandler = (req) => {
  throw new AppError("not_found", `No route for ${req.method} ${req.path}`);
};

/**
 * The single error middleware. AppErrors become their status and detail; anything else is a bug: logged
 * with the request id, answered with a generic 500 that leaks nothing.
 */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const requestId = requestIdOf(req);
    if (res.headersSent) {
      // The answer is already on the wire: all that is left is to say so and drop the connection.
      logger.error({ err: error, requestId }, "error after the response was sent");
      res.destroy();
      return;
    }
    if (error instanceof AppError) {
      // RFC 6750: a 401 names the scheme the caller should use.
      const headers = error.code === "unauthenticated" ? { "WWW-Authenticate": "Bearer", ...error.headers } : error.headers;
      sendJson(res, statusOf(error.code), { error: error.detail }, headers);
      return;
    }
    logger.error({ err: error, requestId }, "unhandled error");
    sendJson(res, 500, { error: "Internal server error" });
  };
}
