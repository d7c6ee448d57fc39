import { scrapeAllowed, sendMetrics, type ApiMetrics } from "@pes/metrics";
import type { Request, RequestHandler } from "express";
import { AppError } from "./errors.js";

/** nginx's status for a caller that closed the connection before the answer: not what the route answered. */
const CALLER_GONE = 499;

/**
 * Times every request to the end of its response and records it by method, route pattern and status.
 * Listens on `close`, which also fires when the caller hangs up first (an execution can take a minute).
 */
export function httpMetrics(metrics: Pick<ApiMetrics, "observeHttpRequest">): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    res.once("close", () => {
      const status = res.writableFinished ? res.statusCode : CALLER_GONE;
      metrics.observeHttpRequest(req.method, routeOf(req), status, (performance.now() - started) / 1_000);
    });
    next();
  };
}

/**
 * The pattern of the route that took the request (`/playbook/execution`), never its URL: a URL holds
 * whatever a caller typed, and each distinct one would be a series of its own. Under a mounted router
 * the mount path comes first; mount paths here are fixed (a parameter in one would put its values in
 * the label). Requests no route took share one label.
 */
function routeOf(req: Request): string {
  const route: unknown = req.route;
  if (typeof route === "object" && route !== null && "path" in route && typeof route.path === "string") return req.baseUrl + route.path;
  return "unmatched";
}

/**
 * `GET /metrics` in Prometheus' text format. Meant for a scraper on the operator's network, not for
 * callers: with METRICS_TOKEN set it wants that token as a bearer token, else it is open to whoever
 * reaches it.
 */
export function metricsEndpoint(metrics: Pick<ApiMetrics, "registry">, token: string | undefined): RequestHandler {
  return async (req, res) => {
    if (!scrapeAllowed(req.headers.authorization, token)) throw new AppError("unauthenticated", "Metrics need the scrape token");
    await sendMetrics(res, metrics.registry);
  };
}
