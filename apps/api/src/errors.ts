import { STATUS_CODES } from "node:http";
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
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  too_many_requests: 429,
  internal: 500,
  service_unavailable: 503,
} as const;

export type AppErrorCode = keyof typeof statusByCode;

const codeByStatus = new Map<number, AppErrorCode>(Object.entries(statusByCode).map(([code, status]) => [status, code as AppErrorCode]));

/** The HTTP status of an error code. */
export function httpStatusOf(code: AppErrorCode): number {
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
 * The AppError a library's client error stands for, or undefined when `error` is not one. Express's
 * router and body-parser mark the caller's mistakes with a 4xx `status` (http-errors' convention): the
 * router a path parameter that is not valid percent-encoding (a URIError), body-parser what it refuses.
 * Their messages echo the caller's bytes and name the library's internals, so only the status is kept,
 * as the code of the table with that status (400 for a 4xx the table does not have).
 */
function clientErrorOf(error: unknown): AppError | undefined {
  if (!(error instanceof Error)) return undefined;
  const status: unknown = Reflect.get(error, "status") ?? Reflect.get(error, "statusCode");
  if (typeof status !== "number" || status < 400 || status > 499) return undefined;
  if (error instanceof URIError) return new AppError("validation", "Malformed URL: the path is not valid percent-encoding");
  const code = codeByStatus.get(status) ?? "validation";
  return new AppError(code, STATUS_CODES[httpStatusOf(code)] ?? "Bad Request");
}

/**
 * The single error middleware. AppErrors become their status and detail, and so do the client errors
 * libraries mark with a 4xx status; anything else is a bug: logged with the request id, answered with a
 * generic 500 that leaks nothing.
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
    const known = error instanceof AppError ? error : clientErrorOf(error);
    if (known !== undefined) {
      // RFC 6750: a 401 names the scheme the caller should use.
      const headers = known.code === "unauthenticated" ? { "WWW-Authenticate": "Bearer", ...known.headers } : known.headers;
      sendJson(res, httpStatusOf(known.code), { error: known.detail }, headers);
      return;
    }
    logger.error({ err: error, requestId }, "unhandled error");
    sendJson(res, 500, { error: "Internal server error" });
  };
}
