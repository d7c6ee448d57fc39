import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { scrapeAllowed, sendMetrics, type WorkerMetrics } from "@pes/metrics";
import { errorMessage } from "@pes/contracts";

export interface WorkerHttpDeps {
  metrics: Pick<WorkerMetrics, "registry">;
  /** The bearer token `/metrics` wants (METRICS_TOKEN); none: anyone who reaches it may scrape. */
  metricsToken: string | undefined;
  /** Whether the worker takes jobs now: Redis reachable, workers running, not shutting down. */
  isReady: () => boolean;
}

/**
 * The worker's own small listener, for its container and its scraper: `GET /healthz` (the process
 * answers), `GET /readyz` (it takes jobs; 503 before Redis is reachable and from the moment shutdown
 * begins) and `GET /metrics`. Plain node:http: three fixed paths need no framework.
 */
export function createWorkerHttpServer(deps: WorkerHttpDeps): Server {
  return createServer((req, res) => {
    handle(req, res, deps).catch(() => {
      if (!res.headersSent) json(res, 500, { error: "Internal server error" });
      else res.destroy();
    });
  });
}

/**
 * Starts `server` listening on WORKER_HTTP_HOST:WORKER_HTTP_PORT; resolves with the port (the one picked
 * for 0). Rejects with an Error of one line for the operator, naming the setting to change: a port in use
 * is most often a second worker on the same host, which needs a port of its own.
 */
export async function listenWorkerHttp(server: Server, where: { port: number; host: string }): Promise<number> {
  server.listen(where.port, where.host);
  try {
    await once(server, "listening");
  } catch (error) {
    const code = error instanceof Error && "code" in error ? error.code : undefined;
    if (code === "EADDRINUSE") {
      throw new Error(
        `WORKER_HTTP_PORT=${where.port} is in use on ${where.host} (another worker on this host?): give each worker on a host its own WORKER_HTTP_PORT, or 0 for a free one`,
      );
    }
    throw new Error(`The worker's HTTP listener (WORKER_HTTP_PORT=${where.port}, WORKER_HTTP_HOST=${where.host}) could not start: ${errorMessage(error)}`);
  }
  const address = server.address();
  return typeof address === "object" && address !== null ? address.port : where.port;
}

async function handle(req: IncomingMessage, res: ServerResponse, deps: WorkerHttpDeps): Promise<void> {
  const path = (req.url ?? "/").split("?", 1)[0];
  if (req.method !== "GET" && req.method !== "HEAD") {
    json(res, 405, { error: "Only GET is served here" }, { Allow: "GET, HEAD" });
    return;
  }
  switch (path) {
    case "/healthz":
      json(res, 200, { status: "ok" });
      return;
    case "/readyz":
      if (deps.isReady()) json(res, 200, { status: "ok" });
      else json(res, 503, { error: "Not ready: not taking jobs (Redis unreachable, starting or shutting down)" });
      return;
    case "/metrics":
      if (!scrapeAllowed(req.headers.authorization, deps.metricsToken)) {
        json(res, 401, { error: "Metrics need the scrape token" }, { "WWW-Authenticate": "Bearer" });
        return;
      }
      await sendMetrics(res, deps.metrics.registry);
      return;
    default:
      json(res, 404, { error: `No route for ${req.method} ${path}` });
  }
}

function json(res: ServerResponse, status: number, body: object, headers: Readonly<Record<string, string>> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-store",
    ...headers,
  });
  res.end(text);
}
