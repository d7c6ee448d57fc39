import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

/** How many points a range answer holds: a small constant series, enough for the engine to analyze. */
const RANGE_POINTS = 30;

export interface StubDataSource {
  /** Listens on 127.0.0.1:`port` (0 = any); resolves with the bound port. */
  start(port: number): Promise<number>;
  stop(): Promise<void>;
  /** Query requests answered so far (`GET /stats` reports it too). */
  requestCount(): number;
}

/**
 * A Prometheus HTTP API stand-in for the benchmark: `GET|POST /api/v1/query_range` answers a matrix and
 * `/api/v1/query` a vector, in Prometheus's wire format, each after `delayMs`. It stands for the
 * customer's data source, so its cost must stay negligible and constant: no storage, no PromQL.
 */
export function createStubDataSource(options: { delayMs: number }): StubDataSource {
  let served = 0;
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://stub");
    if (url.pathname === "/stats") {
      sendJson(response, 200, { requests: served });
      return;
    }
    const kind = url.pathname === "/api/v1/query_range" ? "range" : url.pathname === "/api/v1/query" ? "instant" : undefined;
    if (kind === undefined) {
      sendJson(response, 404, { status: "error", errorType: "not_found", error: "not found" });
      return;
    }
    readParams(request, url)
      .then((params) => {
        served += 1;
        const body = kind === "range" ? matrixAnswer(params) : vectorAnswer(params);
        if (options.delayMs > 0) setTimeout(() => sendJson(response, 200, body), options.delayMs);
        else sendJson(response, 200, body);
      })
      .catch(() => sendJson(response, 400, { status: "error", errorType: "bad_data", error: "unreadable body" }));
  });
  server.keepAliveTimeout = 60_000;
  return {
    start(port) {
      return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, "127.0.0.1", () => {
          const address = server.address();
          resolve(typeof address === "object" && address !== null ? address.port : port);
        });
      });
    },
    stop() {
      return new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
    requestCount: () => served,
  };
}

/** Query parameters from the URL and, for POST, from the form-encoded body (Prometheus accepts both). */
async function readParams(request: IncomingMessage, url: URL): Promise<URLSearchParams> {
  const params = new URLSearchParams(url.searchParams);
  if (request.method !== "POST") return params;
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  for (const [key, value] of new URLSearchParams(Buffer.concat(chunks).toString("utf8"))) params.set(key, value);
  return params;
}

/** Prometheus time: Unix seconds (possibly fractional) or RFC 3339. */
function parseTime(value: string | null, fallback: number): number {
  if (value === null || value === "") return fallback;
  const asNumber = Number(value);
  if (Number.isFinite(asNumber)) return asNumber;
  const asDate = Date.parse(value);
  return Number.isNaN(asDate) ? fallback : asDate / 1000;
}

const METRIC = { __name__: "up", job: "bench", instance: "stub:9090" };

function matrixAnswer(params: URLSearchParams): unknown {
  const now = Date.now() / 1000;
  const end = parseTime(params.get("end"), now);
  const start = Math.min(parseTime(params.get("start"), end - 3600), end);
  const step = Math.max((end - start) / (RANGE_POINTS - 1), 1);
  const values: [number, string][] = [];
  for (let t = start; t <= end + 1e-9 && values.length < RANGE_POINTS; t += step) values.push([t, "1"]);
  return { status: "success", data: { resultType: "matrix", result: [{ metric: METRIC, values }] } };
}

function vectorAnswer(params: URLSearchParams): unknown {
  const time = parseTime(params.get("time"), Date.now() / 1000);
  return { status: "success", data: { resultType: "vector", result: [{ metric: METRIC, value: [time, "1"] }] } };
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  response.end(text);
}
