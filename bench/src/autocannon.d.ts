/**
 * The part of autocannon 9's programmatic API the harness uses (autocannon ships no types; the
 * shapes below are read from its lib/run.js, lib/httpClient.js and lib/aggregateResult.js).
 */
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  export interface AutocannonOptions {
    url: string;
    connections?: number;
    /** Seconds; ignored when `amount` is set. */
    duration?: number;
    amount?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Seconds before a request counts as a timeout. */
    timeout?: number;
    pipelining?: number;
    /** Requests each connection cycles through; fields left out come from the options above. */
    requests?: AutocannonRequest[];
  }

  export interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Called with every response's status and full body, before the `response` event. */
    onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
  }

  export interface AutocannonHistogram {
    average: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p99: number;
    total?: number;
  }

  export interface AutocannonResult {
    duration: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    "2xx": number;
    statusCodeStats: Record<string, { count: number }>;
    latency: AutocannonHistogram;
    requests: AutocannonHistogram & { sent: number };
  }

  export interface AutocannonInstance extends EventEmitter {
    stop(): void;
    /** `response` carries (client, statusCode, bytes, responseTimeMs) for every response. */
    on(event: "response", listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  function autocannon(
    options: AutocannonOptions,
    callback: (error: Error | null, result: AutocannonResult) => void,
  ): AutocannonInstance;
  export default autocannon;
}
