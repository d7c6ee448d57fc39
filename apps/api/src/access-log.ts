import { performance } from "node:perf_hooks";
import type { Logger } from "@pes/logger";
import type { RequestHandler } from "express";
import { assignRequestId } from "./request-id.js";

/** Probes and scrapes every few seconds would drown the access log. */
const unlogged = new Set(["/healthz", "/readyz", "/metrics"]);

/**
 * Assigns the request id and, when the logger is at info or below, writes one line per request when
 * the response is finished: method, path, status, duration, id and peer; never a header, so never a
 * token. At warn and above it builds nothing per request (pino-http made a child logger each time).
 */
export function accessLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const requestId = assignRequestId(req, res);
    if (logger.isLevelEnabled("info") && !unlogged.has(req.path)) {
      const started = performance.now();
      res.once("finish", () => {
        const line = {
          requestId,
          method: req.method,
          url: req.originalUrl,
          status: res.statusCode,
          ms: Math.round((performance.now() - started) * 10) / 10,
          remoteAddress: req.socket.remoteAddress,
        };
        if (res.statusCode >= 500) logger.error(line, "request failed");
        else logger.info(line, "request completed");
      });
    }
    next();
  };
}
