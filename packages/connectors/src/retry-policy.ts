/**
 * When a data source's HTTP client sends a request again. A busy or restarting data source (a 429 from a
 * rate limit, a 503 while a Prometheus replica restarts, a reset keep-alive connection) often answers a
 * moment later; an action has one deadline, so retries only spend what is left of it.
 */

/** Sends in all, the first included. */
export const MAX_ATTEMPTS = 4;
/** The first backoff; each next one doubles, up to MAX_BACKOFF_MS, then jitter takes up to half off. */
const BASE_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 4_000;
/** The longest single wait, even when Retry-After asks for more and no deadline is known. */
const MAX_WAIT_MS = 30_000;
/** A retry must leave at least this much before the deadline for its own request. */
const MIN_ATTEMPT_MS = 250;

/** Rate limited, or a gateway or the server itself saying it cannot answer now. */
const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);
/** The connection broke under the request: a reset, or a kept-alive socket the server had closed. */
const RETRYABLE_ERROR_CODES = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET"]);

/** Whether a request may be sent twice: only a read (GET, or a POST its caller marks idempotent). */
export function isIdempotent(method: string, idempotent: boolean | undefined): boolean {
  return method === "GET" || idempotent === true;
}

export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status);
}

/** Whether an error (or its cause) is a connection that broke, which a new connection may not. */
export function isRetryableError(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth += 1) {
    const code: unknown = Reflect.get(current, "code");
    if (typeof code === "string" && RETRYABLE_ERROR_CODES.has(code)) return true;
  }
  return false;
}

export interface RetryTiming {
  /** How many sends were made so far (1 after the first). */
  attempts: number;
  /** The Retry-After header of the answer, if it had one. */
  retryAfter?: string | undefined;
  now: number;
  /** When the request's signal aborts, if known (epoch ms). */
  deadline?: number | undefined;
  /** A number in [0, 1): Math.random in production. */
  random: number;
}

/**
 * How long to wait before the next send, or undefined when there is none: the attempts are spent, or
 * the wait (Retry-After when the answer gives one, else exponential backoff with jitter) would not leave
 * the next request time before the deadline. A Retry-After longer than that is not waited on: the
 * answer that asked for it is the result.
 */
export function retryDelay(timing: RetryTiming): number | undefined {
  const { attempts, now, deadline } = timing;
  if (attempts >= MAX_ATTEMPTS) return undefined;
  const asked = timing.retryAfter === undefined ? undefined : retryAfterMs(timing.retryAfter, now);
  const backoff = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** (attempts - 1));
  const wait = asked ?? backoff * (0.5 + timing.random / 2);
  if (wait > MAX_WAIT_MS) return undefined;
  if (deadline !== undefined && now + wait + MIN_ATTEMPT_MS > deadline) return undefined;
  return wait;
}

/**
 * A Retry-After value in ms (RFC 9110 §10.2.3): delay-seconds or an HTTP-date; undefined when it is
 * neither (then the backoff applies).
 */
export function retryAfterMs(value: string, now: number): number | undefined {
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  // An HTTP-date is an IMF-fixdate like "Wed, 21 Oct 2015 07:28:00 GMT": never a bare number.
  if (Number.isNaN(at) || !/[A-Za-z]/.test(text)) return undefined;
  return Math.max(0, at - now);
}
