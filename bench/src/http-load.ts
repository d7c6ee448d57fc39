import autocannon from "autocannon";
import { summarizeLatencies, type LatencySummary } from "./stats.js";

export interface HttpLoadOptions {
  url: string;
  token: string;
  body: string;
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
  let errorBodies = 0;
  let firstErrorBody: string | undefined;
  const verifyBody = (body: string): boolean => {
    let ok = false;
    try {
      ok = options.isSuccess(JSON.parse(body));
    } catch {
      ok = false;
    }
    if (!ok) {
      errorBodies += 1;
      firstErrorBody ??= body.slice(0, 500);
    }
    return ok;
  };
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        method: "POST",
        connections: options.connections,
        ...(options.amount === undefined ? { duration: options.durationSeconds ?? 10 } : { amount: options.amount }),
        headers: { authorization: `Bearer ${options.token}`, "content-type": "application/json" },
        body: options.body,
        timeout: options.timeoutSeconds ?? 30,
        verifyBody,
      },
      (error, result) => {
        if (error !== null) {
          reject(error);
          return;
        }
        const elapsedMs = performance.now() - started;
        const ok2xx = result["2xx"];
        const statusCodes: Record<string, number> = {};
        for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count;
        // Non-2xx bodies also fail verification; count them once, as non-2xx.
        const successes = Math.max(0, ok2xx - Math.max(0, errorBodies - result.non2xx));
        resolve({
          connections: options.connections,
          elapsedMs,
          responses: ok2xx + result.non2xx,
          successes,
          errorBodies: ok2xx - successes,
          non2xx: result.non2xx,
          statusCodes,
          connectionErrors: result.errors - result.timeouts,
          timeouts: result.timeouts,
          throughput: successes / (elapsedMs / 1000),
          latency: summarizeLatencies(latencies),
          firstErrorBody,
        });
      },
    );
    instance.on("response", (_client, statusCode, _bytes, responseTimeMs) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTimeMs);
    });
  });
}
