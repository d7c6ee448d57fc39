import { setTimeout as sleep } from "node:timers/promises";
import { MessageLinkError, parseMessageLink, type MessageLink } from "@pes/playbooks";
import { LogLevel, WebAPIHTTPError, WebAPIPlatformError, WebAPIRateLimitedError, WebAPIRequestError, WebClient, type WebAPICallResult } from "@slack/web-api";
import { z } from "zod";
import { SlackMessage } from "./slack-message.js";

/** Slack's own Web API; GovSlack and tests configure another (`slackApiUrl`). */
export const DEFAULT_SLACK_API_URL = "https://slack.com/api/";

/** How the service reaches one organization's Slack workspace. */
export interface SlackConnection {
  /** The organization's bot token (`xoxb-…`), resolved from its secret reference. Never logged or returned. */
  token: string;
  /** The Web API base URL, up to and including `/api/`. Default: DEFAULT_SLACK_API_URL. */
  slackApiUrl?: string;
}

/** How long a read from Slack may take. */
export interface SlackCallBounds {
  /** When the caller stops waiting (epoch ms): no request and no `Retry-After` wait goes past it. */
  deadline: number;
  /** Stops the read at once (the job's own signal, shutdown). */
  signal?: AbortSignal;
}

/** Which message to read: a channel and the message's `ts`, with its thread's `ts` for a reply. */
export interface SlackMessageRef {
  channelId: string;
  ts: string;
  threadTs?: string;
}

/**
 * What reading a message gave.
 * - `found`: the message.
 * - `cannot_resolve`: Slack answered, and the link does not lead to a message the app can read (not in
 *   the channel, no such channel, thread or message): the caller's link is at fault, a 400 on `messageLink`.
 * - `slack_unavailable`: Slack could not be used (network failure, HTTP 5xx, the deadline, a rate limit
 *   that outlasts the deadline, or Slack refusing the app's token or scopes): not the caller's fault.
 * `reason` is a sentence for the caller; `slackError` Slack's error code when it gave one.
 */
export type SlackMessageFetch =
  | { outcome: "found"; message: SlackMessage }
  | { outcome: "cannot_resolve"; reason: string; slackError?: string }
  | { outcome: "slack_unavailable"; reason: string; slackError?: string };

/** What reading a message link gave: as SlackMessageFetch, plus a link refused before any request. */
export type LinkedMessageFetch =
  | { outcome: "found"; link: MessageLink; message: SlackMessage }
  | { outcome: "invalid_link"; reason: string }
  | { outcome: "cannot_resolve"; link: MessageLink; reason: string; slackError?: string }
  | { outcome: "slack_unavailable"; link: MessageLink; reason: string; slackError?: string };

export interface FetchLinkedMessageOptions extends SlackCallBounds {
  connection: SlackConnection;
  /** Hosts accepted in links besides `*.slack.com`: the organization's configured workspace hosts. */
  allowedHosts: readonly string[];
  /** The time of the request (parseMessageLink refuses a link more than a day after it). */
  now: Date;
}

/**
 * Reads the message a Slack permalink points at. The link is checked first (parseMessageLink: https,
 * `*.slack.com` or a configured host, no user info or port, a permalink path); a refused link is never
 * fetched.
 */
export async function fetchLinkedMessage(link: string, options: FetchLinkedMessageOptions): Promise<LinkedMessageFetch> {
  let parsed: MessageLink;
  try {
    parsed = parseMessageLink(link, options.allowedHosts, options.now);
  } catch (error) {
    if (error instanceof MessageLinkError) return { outcome: "invalid_link", reason: error.message };
    throw error;
  }
  const ref: SlackMessageRef = { channelId: parsed.channelId, ts: parsed.ts };
  if (parsed.threadTs !== undefined) ref.threadTs = parsed.threadTs;
  const bounds: SlackCallBounds = { deadline: options.deadline };
  if (options.signal !== undefined) bounds.signal = options.signal;
  const fetched = await fetchSlackMessage(ref, options.connection, bounds);
  return { ...fetched, link: parsed };
}

const MAX_TIMER_MS = 2 ** 31 - 1;
/** At most this many requests for one message: each 429 costs one, and the deadline bounds the waits. */
const MAX_ATTEMPTS = 4;

/** Slack's error codes that mean the link leads nowhere the app can read (docs.slack.dev, each method's errors). */
const CANNOT_RESOLVE_CODES: ReadonlySet<string> = new Set([
  "not_in_channel",
  "channel_not_found",
  "thread_not_found",
  "message_not_found",
  "invalid_ts_latest",
  "invalid_ts_oldest",
]);
/** Codes meaning the organization's token cannot be used: its configuration, not the caller's link. */
const TOKEN_CODES: ReadonlySet<string> = new Set([
  "not_authed",
  "invalid_auth",
  "account_inactive",
  "token_revoked",
  "token_expired",
  "no_permission",
  "ekm_access_denied",
  "team_access_not_granted",
]);
/** A Slack error code; anything else in `error` (an HTML page read as text) is not repeated. */
const SLACK_ERROR_CODE = /^[a-z][a-z0-9_]{0,63}$/;

/** The part of a history or replies answer read here; each message is then read leniently on its own. */
const MessagesAnswer = z.object({ messages: z.array(z.unknown()).optional().catch(undefined) });

/**
 * Reads one message with the bot token through `@slack/web-api`:
 * - a top-level message: `conversations.history` with `latest = oldest = ts`, `inclusive`, `limit 1`;
 * - a thread reply: `conversations.replies` with `ts = thread_ts` and the same bounds, keeping the entry
 *   whose `ts` matches. Its limit is 2: the thread's parent may come first whatever the bounds.
 *
 * A `429` is waited out for its `Retry-After` when the wait ends before the deadline, then asked again;
 * otherwise the answer is `slack_unavailable` at once. The SDK's own retries are off (`retries: 0`) and
 * rate-limited calls are handed back (`rejectRateLimitedCalls`): its built-in handling sleeps for the
 * whole `Retry-After` whatever the caller's deadline, and retries for about 30 minutes by default.
 * Every request carries a signal that aborts at the deadline or with `bounds.signal`.
 */
export async function fetchSlackMessage(ref: SlackMessageRef, connection: SlackConnection, bounds: SlackCallBounds): Promise<SlackMessageFetch> {
  const topLevel = ref.threadTs === undefined || ref.threadTs === ref.ts;
  const method = topLevel ? "conversations.history" : "conversations.replies";
  const args: Record<string, unknown> = { channel: ref.channelId, latest: ref.ts, oldest: ref.ts, inclusive: true };
  if (topLevel) args.limit = 1;
  else Object.assign(args, { ts: ref.threadTs, limit: 2 });

  const answer = await callSlack(method, args, connection, bounds);
  if (!answer.ok) {
    if (answer.code === undefined) return { outcome: "slack_unavailable", reason: answer.reason };
    return CANNOT_RESOLVE_CODES.has(answer.code)
      ? { outcome: "cannot_resolve", reason: cannotResolveReason(answer.code, ref), slackError: answer.code }
      : { outcome: "slack_unavailable", reason: answer.reason, slackError: answer.code };
  }
  const messages = MessagesAnswer.parse(answer.result).messages ?? [];
  for (const entry of messages) {
    const message = SlackMessage.safeParse(entry);
    if (message.success && message.data.ts === ref.ts) return { outcome: "found", message: message.data };
  }
  // conversations.history has no message_not_found: a ts that names no message gives an empty list.
  return { outcome: "cannot_resolve", reason: `message ${ref.ts} was not found in channel ${ref.channelId}` };
}

type CallAnswer = { ok: true; result: WebAPICallResult } | { ok: false; reason: string; code?: string };

async function callSlack(method: string, args: Record<string, unknown>, connection: SlackConnection, bounds: SlackCallBounds): Promise<CallAnswer> {
  for (let attempt = 1; ; attempt++) {
    const remaining = bounds.deadline - Date.now();
    if (remaining <= 0) return { ok: false, reason: "Slack did not answer before the deadline" };
    // A timer holds at most 2^31-1 ms (~24 days): a later or infinite deadline waits that long at most.
    const timeout = AbortSignal.timeout(Math.min(Math.ceil(remaining), MAX_TIMER_MS));
    const signal = bounds.signal === undefined ? timeout : AbortSignal.any([bounds.signal, timeout]);
    try {
      return { ok: true, result: await clientFor(connection, signal).apiCall(method, args) };
    } catch (error) {
      if (!(error instanceof WebAPIRateLimitedError)) return failure(error, method, bounds.signal);
      const waitMs = Math.max(0, error.retryAfter) * 1000;
      if (attempt >= MAX_ATTEMPTS || Date.now() + waitMs >= bounds.deadline) {
        return {
          ok: false,
          reason: `Slack rate-limited ${method} and asked to retry in ${error.retryAfter} s, past the deadline`,
          code: "ratelimited",
        };
      }
      try {
        await sleep(waitMs, undefined, { signal });
      } catch {
        return stopped(bounds.signal);
      }
    }
  }
}

/**
 * A client for one request: its `fetch` carries the request's signal, which the SDK cannot take per call
 * (its `timeout` option is one fixed duration). Building one is cheap: no connection is opened.
 */
function clientFor(connection: SlackConnection, signal: AbortSignal): WebClient {
  return new WebClient(connection.token, {
    slackApiUrl: connection.slackApiUrl ?? DEFAULT_SLACK_API_URL,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    // Only the base URL is ever called, whatever a method name says.
    allowAbsoluteUrls: false,
    // Outcomes carry the reasons; the SDK's console logger would only repeat them, unstructured.
    logLevel: LogLevel.ERROR,
    fetch: (url, init) => fetch(url, { ...init, signal: init?.signal === undefined ? signal : AbortSignal.any([init.signal, signal]) }),
  });
}

/** Says why a request failed, from the SDK's typed errors; nothing of the request (its token) is repeated. */
function failure(error: unknown, method: string, callerSignal: AbortSignal | undefined): CallAnswer {
  if (error instanceof WebAPIPlatformError) {
    const code = typeof error.data.error === "string" && SLACK_ERROR_CODE.test(error.data.error) ? error.data.error : undefined;
    if (code === undefined) return { ok: false, reason: `Slack answered ${method} with something other than its Web API's JSON` };
    if (TOKEN_CODES.has(code)) return { ok: false, reason: `Slack refused the organization's bot token (${code})`, code };
    if (code === "missing_scope") {
      return { ok: false, reason: "the Slack app lacks a scope to read messages (channels:history, groups:history)", code };
    }
    return { ok: false, reason: `Slack answered ${method} with error ${code}`, code };
  }
  if (error instanceof WebAPIHTTPError) return { ok: false, reason: `Slack answered ${method} with HTTP ${error.statusCode}` };
  if (error instanceof WebAPIRequestError) {
    if (isAbort(error.original)) return stopped(callerSignal);
    return { ok: false, reason: `Slack could not be reached (${networkCode(error.original)})` };
  }
  // The SDK's plain errors: a 429 without a usable Retry-After, or something unforeseen.
  return { ok: false, reason: `Slack could not be used for ${method}` };
}

function stopped(callerSignal: AbortSignal | undefined): CallAnswer {
  return callerSignal?.aborted === true
    ? { ok: false, reason: "reading the message from Slack was cancelled" }
    : { ok: false, reason: "Slack did not answer before the deadline" };
}

function isAbort(error: Error): boolean {
  return error.name === "AbortError" || error.name === "TimeoutError";
}

/** The network's error code (`ECONNREFUSED`, `UND_ERR_SOCKET`…) behind fetch's "fetch failed". */
function networkCode(error: Error): string {
  const cause: unknown = error.cause;
  if (typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string" && /^[A-Z_]{2,40}$/.test(cause.code)) {
    return cause.code;
  }
  return "network error";
}

function cannotResolveReason(code: string, ref: SlackMessageRef): string {
  switch (code) {
    case "not_in_channel":
      return `the Slack app is not a member of channel ${ref.channelId}: invite it to the channel to read the message`;
    case "channel_not_found":
      return `channel ${ref.channelId} was not found, or the Slack app cannot see it (a private channel needs the app invited)`;
    case "thread_not_found":
      return `thread ${ref.threadTs ?? ref.ts} was not found in channel ${ref.channelId}`;
    case "message_not_found":
      return `message ${ref.ts} was not found in channel ${ref.channelId}`;
    default:
      return `Slack refused the link's timestamp (${code})`;
  }
}
