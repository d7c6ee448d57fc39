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

/** What one autocannon run saw, its latencies not yet summarized: runs of one load can be pooled. */
export interface HttpLoadSample extends Omit<HttpLoadResult, "responses" | "throughput" | "latency"> {
  latencies: number[];
}

/** One autocannon run against a JSON POST endpoint, summarized. */
export async function runHttpLoad(options: HttpLoadOptions): Promise<HttpLoadResult> {
  return summarizeHttpLoad([await sampleHttpLoad(options)]);
}

/**
 * One result from several runs of the same load: counts and times added, latencies pooled. Scenario 1
 * measures each path in short slices interleaved with the others' (scenarios.ts).
 */
export function summarizeHttpLoad(samples: readonly HttpLoadSample[]): HttpLoadResult {
  const [first] = samples;
  if (first === undefined) throw new RangeError("summarizeHttpLoad of no samples");
  const sum = (count: (sample: HttpLoadSample) => number): number => samples.reduce((total, sample) => total + count(sample), 0);
  const statusCodes: Record<string, number> = {};
  for (const sample of samples) {
    for (const [status, count] of Object.entries(sample.statusCodes)) statusCodes[status] = (statusCodes[status] ?? 0) + count;
  }
  const successes = sum((sample) => sample.successes);
  const errorBodies = sum((sample) => sample.errorBodies);
  const non2xx = sum((sample) => sample.non2xx);
  const elapsedMs = sum((sample) => sample.elapsedMs);
  return {
    connections: first.connections,
    elapsedMs,
    responses: successes + errorBodies + non2xx,
    successes,
    errorBodies,
    non2xx,
    statusCodes,
    connectionErrors: sum((sample) => sample.connectionErrors),
    timeouts: sum((sample) => sample.timeouts),
    throughput: successes / (elapsedMs / 1000),
    latency: summarizeLatencies(samples.flatMap((sample) => sample.latencies)),
    firstErrorBody: samples.find((sample) => sample.firstErrorBody !== undefined)?.firstErrorBody,
  };
}

/**
 * One autocannon run against a JSON POST endpoint. Latencies are taken from autocannon's per-response
 * event as floats, because its histogram stores whole milliseconds and scenario 1 lives below 3 ms.
 */
export function sampleHttpLoad(options: HttpLoadOptions): Promise<HttpLoadSample> {
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
        resolve({
          connections: options.connections,
          elapsedMs: performance.now() - started,
          successes,
          errorBodies,
          non2xx,
          statusCodes,
          connectionErrors: result.errors - result.timeouts,
          timeouts: result.timeouts,
          firstErrorBody,
          latencies,
        });
      },
    );
    instance.on("response", (_client, _statusCode, _bytes, responseTimeMs) => {
      if (lastWasSuccess) latencies.push(responseTimeMs);
    });
  });
}
