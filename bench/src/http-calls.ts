import { Agent, request, type IncomingHttpHeaders } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

/** One answer, timed from the request's start (`startedAt`, performance.now()) to its body's last byte. */
export interface TimedReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  startedAt: number;
  latencyMs: number;
}

/**
 * A keep-alive HTTP client for the scenarios autocannon cannot express: each request its own body,
 * requests started on a schedule, or loops stopped by another event. No socket limit: a storm's
 * callers each hold a connection, as separate senders would.
 */
export function createHttpCaller(baseUrl: string, token: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  const base = new URL(baseUrl);

  function call(method: "GET" | "POST", path: string, options: { body?: string; headers?: Record<string, string> } = {}): Promise<TimedReply> {
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const req = request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          method,
          path,
          headers: {
            authorization: `Bearer ${token}`,
            ...(options.body === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(options.body) }),
            ...options.headers,
          },
          timeout: 120_000,
        },
        (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            body += chunk;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, startedAt: started, latencyMs: performance.now() - started }));
          res.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer within 120 s`)));
      req.on("error", reject);
      req.end(options.body);
    });
  }

  return {
    post: (path: string, body: string, headers?: Record<string, string>) => call("POST", path, { body, headers }),
    get: (path: string, headers?: Record<string, string>) => call("GET", path, { headers }),
    close: () => agent.destroy(),
  };
}
export type HttpCaller = ReturnType<typeof createHttpCaller>;

/**
 * Starts `count` calls evenly over `overMs` (call i at i × overMs / count), each without waiting for
 * the others, as a storm's independent senders would; resolves with every answer (or error) in order.
 */
export async function spreadCalls<T>(count: number, overMs: number, send: (index: number) => Promise<T>): Promise<PromiseSettledResult<T>[]> {
  const started = performance.now();
  const calls: Promise<T>[] = [];
  for (let index = 0; index < count; index += 1) {
    const due = (index * overMs) / count;
    const wait = due - (performance.now() - started);
    if (wait >= 1) await sleep(wait);
    calls.push(send(index));
  }
  return Promise.allSettled(calls);
}

/**
 * `connections` closed loops, each sending its next call when the previous answered, until `send`
 * returns undefined (the work is used up) or `stop()` says so. Resolves once every loop has ended.
 */
export async function closedLoops<T>(connections: number, send: () => Promise<T> | undefined, stop: () => boolean = () => false): Promise<T[]> {
  const answers: T[] = [];
  const loop = async (): Promise<void> => {
    while (!stop()) {
      const pending = send();
      if (pending === undefined) return;
      answers.push(await pending);
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  return answers;
}
