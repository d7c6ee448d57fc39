import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { trace } from "@opentelemetry/api";
import { SpanAttributes } from "@pes/tracing";
import { z } from "zod";

const acceptable = /^[A-Za-z0-9._-]{1,128}$/;
/** An X-Request-Id the API echoes and logs as it is (any other is replaced), for the OpenAPI document. */
export const RequestIdHeader = z.string().regex(acceptable);
const ids = new WeakMap<IncomingMessage, string>();

/**
 * Gives the request its id: the caller's X-Request-Id when it is safe to echo and log, else a fresh
 * UUID. Set on the response, so the log line, the job and the answer share it.
 */
export function assignRequestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers["x-request-id"];
  const id = typeof incoming === "string" && acceptable.test(incoming) ? incoming : randomUUID();
  ids.set(req, id);
  res.setHeader("X-Request-Id", id);
  // On the request's server span when tracing is on (the HTTP instrumentation's); a no-op otherwise.
  trace.getActiveSpan()?.setAttribute(SpanAttributes.requestId, id);
  return id;
}

/** The id assigned to this request (assigned first thing by the access log). */
export function requestIdOf(req: IncomingMessage): string {
  return ids.get(req) ?? "unassigned";
}
