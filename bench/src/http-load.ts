import autocannon from "autocannon";
import { summarizeLatencies, type LatencySummary } from "./stats.js";

export interface HttpLoadOptions {
  url: string;
  token: string;
  body: string;
  /** application/json unless stated. */
  contentType?: string;
  connections: number;
  /** Run for this long, or … */
  durationSeconds?: number;
  /** … until this many responses arrived. */
  amount?: number;
  /** Decides whether a 2xx body is a success; a `{error}` body is not. */
  isSuccess: (body: unknown) => boolean;
  timeoutSeconds?: number;
}

export interface HttpLoadResult {
  connections: number;
  elapsedMs: number;
  responses: number;
  /** 2xx responses whose body is a success. */
  successes: number;
  /** 2xx responses whose body is an error (e.g. `{error}`), counted as errors, never as successes. */
  errorBodies: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  connectionErrors: number;
  timeouts: number;
  /** Successful executions per second. */
  throughput: number;
  /** Latency of 2xx responses, exact (autocannon's own histogram rounds to whole milliseconds). */
  latency: LatencySummary;
  firstErrorBody: string | undefined;
}

/**
 * One autocannon run against a JSON POST endpoint. Latencies are taken from autocannon's per-response
 * event as floats, because its histogram stores whole milliseconds and scenario 1 lives below 3 ms.
 */
export function runHttpLoad(options: HttpLoadOptions): Promise<HttpLoadResult> {
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let successes = 0;
  let errorBodies = 0;
  let non2xx = 0;
  let firstErrorBody: string | undefined;
  // autocannon calls onResponse and then emits "response" synchronously for the same response, so
  // this flag tells the latency listener whether the response it times was a success.
  let lastWasSuccess = false;
  const onResponse = (status: number, body: string): void => {
    statusCodes[String(status)] = (statusCodes[String(status)] ?? 0) + 1;
    lastWasSuccess = false;
    if (status < 200 || status >= 300) {
      non2xx += 1;
      firstErrorBody ??= `${status} ${body.slice(0, 500)}`;
      return;
    }
    try {
      lastWasSuccess = options.isSuccess(JSON.parse(body));
    } catch {
      lastWasSuccess = false;
    }
    if (lastWasSuccess) successes += 1;
    else {
      errorBodies += 1;
      firstErrorBody ??= `${status} ${body.slice(0, 500)}`;
    }
  };
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        method: "POST",
        connections: options.connections,
        ...(options.amount === undefined ? { duration: options.durationSeconds ?? 10 } : { amount: options.amount }),
        headers: { authorization: `Bearer ${options.token}`, "content-type": options.contentType ?? "application/json" },
        body: options.body,
        timeout: options.timeoutSeconds ?? 30,
        requests: [{ onResponse }],
      },
      (error, result) => {
        if (error !== null) {
          reject(error);
          return;
        }
        const elapsedMs = performance.now() - started;
        resolve({
          connections: options.connections,
          elapsedMs,
          responses: successes + errorBodies + non2xx,
          successes,
          errorBodies,
          non2xx,
          statusCodes,
          connectionErrors: result.errors - result.timeouts,
          timeouts: result.timeouts,
          throughput: successes / (elapsedMs / 1000),
          latency: summarizeLatencies(latencies),
          firstErrorBody,
        });
      },
    );
    instance.on("response", (_client, _statusCode, _bytes, responseTimeMs) => {
      if (lastWasSuccess) latencies.push(responseTimeMs);
    });
  });
}
