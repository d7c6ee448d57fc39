import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

const acceptable = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The caller's X-Request-Id when it is safe to echo and log, else a fresh UUID; also set on the response.
 * Used as pino-http's genReqId so the log line, the job and the answer share the id.
 */
export function assignRequestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers["x-request-id"];
  const id = typeof incoming === "string" && acceptable.test(incoming) ? incoming : randomUUID();
  res.setHeader("X-Request-Id", id);
  return id;
}

/** The id assigned to this request (pino-http stores it as `req.id`). */
export function requestIdOf(req: IncomingMessage): string {
  return typeof req.id === "string" ? req.id : String(req.id);
}
