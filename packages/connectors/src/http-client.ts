import { STATUS_CODES } from "node:http";
import { Agent, request } from "undici";

/** A response larger than this is refused rather than held in memory (undici's error UND_ERR_RES_EXCEEDED_MAX_SIZE). */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/**
 * The one HTTP client of the connectors. undici's `request` (the client under Node's own fetch, without
 * fetch's web-stream layer) on a keep-alive agent: measured here at about a quarter of fetch's CPU per
 * request, which is most of a worker's own work per action. undici enforces the size cap itself, from
 * Content-Length and while the body streams.
 */
const agent = new Agent({
  keepAliveTimeout: 30_000,
  maxResponseSize: MAX_RESPONSE_BYTES,
  // A data source that never answers must not hold a socket past the action's deadline: the signal
  // aborts the request; these only bound a connection that is merely slow.
  headersTimeout: 60_000,
  bodyTimeout: 60_000,
});

export interface HttpAnswer {
  status: number;
  statusText: string;
  contentType: string | undefined;
  text: string;
}

/**
 * Sends one request and reads the whole answer as text. Rejects with undici's (or the network's) error,
 * whose `code` names what went wrong, or with the signal's reason once it aborts.
 */
export async function sendHttpRequest(
  url: string,
  options: { method: "GET" | "POST"; headers: Record<string, string>; body?: string; signal: AbortSignal },
): Promise<HttpAnswer> {
  const response = await request(url, {
    method: options.method,
    headers: options.headers,
    body: options.body ?? null,
    signal: options.signal,
    dispatcher: agent,
  });
  const text = await response.body.text();
  const contentType = response.headers["content-type"];
  return {
    status: response.statusCode,
    statusText: STATUS_CODES[response.statusCode] ?? "",
    contentType: Array.isArray(contentType) ? contentType[0] : contentType,
    text,
  };
}
