import { AsyncLocalStorage } from "node:async_hooks";
import diagnostics from "node:diagnostics_channel";
import type { AuditSentRequest } from "@pes/contracts";

/** A service the audit trail names the requests to: every request to its origin counts. */
export interface OutboundDestination {
  service: string;
  /** `https://slack.com`: scheme, host and port. */
  origin: string;
}

interface Recording {
  destinations: readonly OutboundDestination[];
  sent: AuditSentRequest[];
}

/** The recording of the execution whose code is running: set for the duration of `recordOutbound`. */
const current = new AsyncLocalStorage<Recording>();
/** A recorded request's entry, by undici's request object, while its body goes out and its answer comes. */
const entries = new WeakMap<object, AuditSentRequest>();
/** The recorded requests whose body is a stream: counted chunk by chunk. */
const streamed = new WeakSet<object>();
let subscribed = false;

/**
 * Runs `run` (one execution) while recording into `sent` each HTTP request it makes to one of
 * `destinations`: the service, the method, the URL without its query string or credentials, the bytes
 * of the body sent and the status answered. Requests are seen where they leave the process, on undici's
 * diagnostics channels, which every HTTP client of the worker goes through (fetch, the Slack and Graph
 * clients, undici's `request`), and attributed to the execution by its async context: a retry, a chart
 * upload or a token refresh is listed as it happened, and nothing a module forgot to report is missing.
 * `sent` is the caller's, so what a run that throws sent is still there.
 */
export function recordOutbound<T>(destinations: readonly OutboundDestination[], sent: AuditSentRequest[], run: () => Promise<T>): Promise<T> {
  subscribeOnce();
  return current.run({ destinations, sent }, run);
}

function subscribeOnce(): void {
  if (subscribed) return;
  subscribed = true;
  diagnostics.subscribe("undici:request:create", (message) => {
    const recording = current.getStore();
    if (recording === undefined) return;
    const request = requestOf(message);
    if (request === undefined) return;
    const { raw, origin, path, method } = request;
    let url: URL;
    try {
      url = new URL(path, origin);
    } catch {
      return;
    }
    const destination = recording.destinations.find((candidate) => candidate.origin === url.origin);
    if (destination === undefined) return;
    // Origin and path only: a query string or credentials never go in the record.
    // A body of known length (fetch's, a buffer) is counted now; a stream as its chunks go out.
    const known = knownLength(raw);
    const entry: AuditSentRequest = { service: destination.service, method, url: `${url.origin}${url.pathname}`, bytes: known ?? 0 };
    recording.sent.push(entry);
    entries.set(raw, entry);
    if (known === undefined) streamed.add(raw);
  });
  diagnostics.subscribe("undici:request:bodyChunkSent", (message) => {
    const entry = entryOf(message);
    if (entry === undefined || !streamed.has((message as { request: object }).request)) return;
    const chunk = typeof message === "object" && message !== null && "chunk" in message ? message.chunk : undefined;
    if (typeof chunk === "string") entry.bytes += Buffer.byteLength(chunk);
    else if (chunk instanceof Uint8Array) entry.bytes += chunk.byteLength;
  });
  diagnostics.subscribe("undici:request:headers", (message) => {
    const entry = entryOf(message);
    const response = typeof message === "object" && message !== null && "response" in message ? message.response : undefined;
    if (entry === undefined || typeof response !== "object" || response === null || !("statusCode" in response)) return;
    if (typeof response.statusCode === "number") entry.status = response.statusCode;
  });
}

/** The length of a request's body when known before it is sent: `contentLength` (fetch sets it), or a string's or buffer's. */
function knownLength(request: object): number | undefined {
  const contentLength = "contentLength" in request ? request.contentLength : undefined;
  if (typeof contentLength === "number") return contentLength;
  const body = "body" in request ? request.body : undefined;
  if (body === null || body === undefined) return 0;
  if (typeof body === "string") return Buffer.byteLength(body);
  if (body instanceof Uint8Array) return body.byteLength;
  return undefined;
}

/** The fields of undici's request object (its diagnostics message's `request`), and the object itself. */
function requestOf(message: unknown): { raw: object; origin: string; path: string; method: string } | undefined {
  if (typeof message !== "object" || message === null || !("request" in message)) return undefined;
  const { request } = message;
  if (typeof request !== "object" || request === null) return undefined;
  if (!("origin" in request) || !("path" in request) || !("method" in request)) return undefined;
  const { origin, path, method } = request;
  if (typeof path !== "string" || typeof method !== "string") return undefined;
  // undici keeps `origin` as a string or a URL.
  const originText = typeof origin === "string" ? origin : origin instanceof URL ? origin.origin : undefined;
  return originText === undefined ? undefined : { raw: request, origin: originText, path, method };
}

function entryOf(message: unknown): AuditSentRequest | undefined {
  if (typeof message !== "object" || message === null || !("request" in message)) return undefined;
  const { request } = message;
  return typeof request === "object" && request !== null ? entries.get(request) : undefined;
}
