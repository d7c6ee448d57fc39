/**
 * When a call is tried again. Only 429 and 503 are retried, for every call including the executions:
 * the API answers both when it enqueued nothing (an organization limit or the instance's load shedding
 * refused it, the queue or the identity provider unreachable), so a retry does not run an investigation twice. (One narrow exception: an
 * enqueue whose Redis command times out is a 503 although Redis may still have added the job.) Any
 * other status, and a connection that broke after the request was sent, may mean the execution
 * started: never retried, except for a request under an Idempotency-Key (an async batch submitted with
 * one), which the API answers with the same batch however often it is sent.
 */
export interface RetryOptions {
  /** Attempts per call, the first included (default 4); 1 turns retries off. */
  attempts?: number;
  /**
   * Most time spent waiting between attempts over one call (default 30 000 ms). A `Retry-After` that
   * does not fit in what is left ends the call with the API's error at once rather than after the wait.
   */
  maxWaitMs?: number;
}

export const DEFAULT_RETRY: Required<RetryOptions> = { attempts: 4, maxWaitMs: 30_000 };

const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/** True for the statuses that mean nothing was started and the caller may come back. */
export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status);
}

/**
 * A `Retry-After` header (RFC 9110 §10.2.3: delay-seconds or an HTTP-date) in milliseconds from `now`,
 * or undefined when absent or unreadable. A date in the past means "now".
 */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP-date names its month (`Sun, 06 Nov 1994 08:49:37 GMT`); Date.parse alone would take "-5" as a year.
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 8_000;

/**
 * The wait before retry number `retry` (1 for the first) when the API did not say how long: 0.5 s,
 * 1 s, 2 s… up to 8 s, each between half and all of that, so that callers refused together (a 503
 * during a Redis restart) do not all come back in the same millisecond.
 */
export function backoffMs(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (retry - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
