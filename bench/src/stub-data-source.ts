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
  // Lean on purpose (no URL object, no async iteration, answers written as text): in the benchmark this
  // process shares the two cores with the service, and every microsecond it spends is taken from it.
  const server: Server = createServer((request, response) => {
    const [path = "/", search = ""] = (request.url ?? "/").split("?", 2);
    if (path === "/stats") {
      sendJson(response, 200, JSON.stringify({ requests: served }));
      return;
    }
    const kind = path === "/api/v1/query_range" ? "range" : path === "/api/v1/query" ? "instant" : undefined;
    if (kind === undefined) {
      sendJson(response, 404, NOT_FOUND);
      return;
    }
    readParams(request, search, (params) => {
      if (params === undefined) {
        sendJson(response, 400, UNREADABLE);
        return;
      }
      served += 1;
      const body = kind === "range" ? matrixAnswer(params) : vectorAnswer(params);
      if (options.delayMs > 0) setTimeout(() => sendJson(response, 200, body), options.delayMs);
      else sendJson(response, 200, body);
    });
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
function readParams(request: IncomingMessage, search: string, done: (params: URLSearchParams | undefined) => void): void {
  if (request.method !== "POST") {
    done(new URLSearchParams(search));
    return;
  }
  let body = "";
  request.setEncoding("utf8");
  request.on("data", (chunk: string) => {
    body += chunk;
  });
  request.on("end", () => {
    const params = new URLSearchParams(search);
    for (const [key, value] of new URLSearchParams(body)) params.set(key, value);
    done(params);
  });
  request.on("error", () => done(undefined));
}

/** Prometheus time: Unix seconds (possibly fractional) or RFC 3339. */
function parseTime(value: string | null, fallback: number): number {
  if (value === null || value === "") return fallback;
  const asNumber = Number(value);
  if (Number.isFinite(asNumber)) return asNumber;
  const asDate = Date.parse(value);
  return Number.isNaN(asDate) ? fallback : asDate / 1000;
}

const METRIC = JSON.stringify({ __name__: "up", job: "bench", instance: "stub:9090" });
const NOT_FOUND = JSON.stringify({ status: "error", errorType: "not_found", error: "not found" });
const UNREADABLE = JSON.stringify({ status: "error", errorType: "bad_data", error: "unreadable body" });

/** A query naming this series answers a rise: flat, then four times higher over the last quarter of the range (a symptom). */
export const RISING_SERIES = "bench_rising";

function matrixAnswer(params: URLSearchParams): string {
  const now = Date.now() / 1000;
  const end = parseTime(params.get("end"), now);
  const start = Math.min(parseTime(params.get("start"), end - 3600), end);
  const step = Math.max((end - start) / (RANGE_POINTS - 1), 1);
  const rising = params.get("query")?.includes(RISING_SERIES) === true;
  let values = "";
  let count = 0;
  for (let t = start; t <= end + 1e-9 && count < RANGE_POINTS; t += step, count += 1) {
    const value = rising && t >= end - (end - start) / 4 ? "4" : "1";
    values += `${count === 0 ? "" : ","}[${t},"${value}"]`;
  }
  return `{"status":"success","data":{"resultType":"matrix","result":[{"metric":${METRIC},"values":[${values}]}]}}`;
}

function vectorAnswer(params: URLSearchParams): string {
  const time = parseTime(params.get("time"), Date.now() / 1000);
  return `{"status":"success","data":{"resultType":"vector","result":[{"metric":${METRIC},"value":[${time},"1"]}]}}`;
}

function sendJson(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  response.end(text);
}
