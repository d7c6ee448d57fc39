import { setTimeout as sleep } from "node:timers/promises";
import { LogLevel, WebAPIHTTPError, WebAPIPlatformError, WebAPIRateLimitedError, WebAPIRequestError, WebClient } from "@slack/web-api";
import type { CallBounds } from "../delivery/call-bounds.js";

export interface SlackPostClientOptions {
  /** The bot token (`xoxb-…`), resolved from the organization's secret reference. */
  token: string;
  /** The Web API base URL: Slack's by default; GovSlack's, or a local fake in tests. */
  apiUrl?: string;
  /** How long one HTTP request may take before it is abandoned (and counted as "may have happened"). */
  requestTimeoutMs?: number;
}

export const SLACK_API_URL = "https://slack.com/api/";
const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/**
 * A `WebClient` as the posting functions expect it: no retries of its own and rate-limited calls
 * rejected, so that they decide whether a `Retry-After` still fits the caller's deadline (the client's
 * default waits it out, however long, and retries for up to 30 minutes). Its own logging is reduced to
 * errors: outcomes are reported by the caller.
 */
export function createSlackPostClient(options: SlackPostClientOptions): WebClient {
  return new WebClient(options.token, {
    slackApiUrl: options.apiUrl ?? SLACK_API_URL,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    logLevel: LogLevel.ERROR,
  });
}

/** Why a Slack call failed, and whether it certainly did nothing (`certain`) or may have taken effect. */
export class SlackCallError extends Error {
  constructor(
    message: string,
    readonly certain: boolean,
  ) {
    super(message);
    this.name = "SlackCallError";
  }
}

/** At most this many tries of one call when Slack keeps answering 429 with a short Retry-After. */
const MAX_RATE_LIMITED_TRIES = 5;

/**
 * Runs one Web API call, honouring 429 `Retry-After` while the wait fits before the deadline (and telling
 * `onRateLimited`, so that other posters to the channel hold off too). Any failure is a `SlackCallError`
 * whose message names Slack's error code or the transport problem, never the token.
 */
export async function callSlack<T>(call: () => Promise<T>, bounds: CallBounds, onRateLimited?: (retryAfterMs: number) => Promise<void>): Promise<T> {
  for (let tries = 1; ; tries += 1) {
    if (bounds.signal?.aborted) throw new SlackCallError("stopped before calling Slack", true);
    try {
      return await untilAborted(call(), bounds.signal);
    } catch (error) {
      if (!(error instanceof WebAPIRateLimitedError)) throw classify(error);
      const waitMs = error.retryAfter * 1000;
      if (tries >= MAX_RATE_LIMITED_TRIES || Date.now() + waitMs > bounds.deadline) {
        throw new SlackCallError(`Slack rate-limited the call (Retry-After ${error.retryAfter} s) and the deadline leaves no time to wait`, true);
      }
      await onRateLimited?.(waitMs);
      try {
        await sleep(waitMs, undefined, bounds.signal === undefined ? {} : { signal: bounds.signal });
      } catch {
        throw new SlackCallError("stopped while waiting out Slack's rate limit", true);
      }
    }
  }
}

/** Rejects as soon as `signal` aborts (the request itself ends at the client's timeout). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new SlackCallError("stopped before Slack answered", false));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** A Slack error code (`not_in_channel`): the only part of an `{ok:false,error}` answer repeated in reasons. */
const SLACK_ERROR_CODE = /^[a-z][a-z0-9_]{0,63}$/;

/** Connection errors that mean the request never reached Slack. */
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
]);

function classify(error: unknown): SlackCallError {
  if (error instanceof SlackCallError) return error;
  if (error instanceof WebAPIPlatformError) {
    // Only an error code is repeated: whatever else came back (a proxy's page quoting the request's
    // Authorization header) could carry the token into a result.
    const code = typeof error.data.error === "string" && SLACK_ERROR_CODE.test(error.data.error) ? error.data.error : "an error that is no Slack error code";
    return new SlackCallError(`Slack answered ${code}`, true);
  }
  if (error instanceof WebAPIHTTPError) {
    const status = error.statusCode;
    return new SlackCallError(`Slack answered HTTP ${status}`, status >= 400 && status < 500 && status !== 408);
  }
  if (error instanceof WebAPIRequestError) {
    const original = error.original;
    if (original.name === "TimeoutError" || original.name === "AbortError") {
      return new SlackCallError("Slack did not answer in time", false);
    }
    const code = errorCode(original.cause) ?? errorCode(original);
    if (code !== undefined && NOT_SENT_CODES.has(code)) return new SlackCallError(`Slack unreachable (${code})`, true);
    return new SlackCallError(`the request to Slack failed${code === undefined ? "" : ` (${code})`}`, false);
  }
  return new SlackCallError(`the call to Slack failed: ${error instanceof Error ? error.name : "unknown error"}`, false);
}

function errorCode(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || !("code" in value)) return undefined;
  return typeof value.code === "string" ? value.code : undefined;
}
