import { STATUS_CODES } from "node:http";
import { Agent, request } from "undici";

/**
 * The one HTTP client of the connectors. undici's `request` (the client under Node's own fetch, without
 * fetch's web-stream layer) on a keep-alive agent: measured here at about a quarter of fetch's CPU per
 * request, which is most of a worker's own work per action.
 */
const agent = new Agent({
  keepAliveTimeout: 30_000,
  // A data source that never answers must not hold a socket past the action's deadline: the signal
  // aborts the request; these only bound a connection that is merely slow.
  headersTimeout: 60_000,
  bodyTimeout: 60_000,
});

/** A response larger than this is refused rather than held in memory. */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

export interface HttpAnswer {
  status: number;
  statusText: string;
  contentType: string | undefined;
  text: string;
}

/** Thrown when a response body exceeds MAX_RESPONSE_BYTES. */
export class ResponseTooLargeError extends Error {
  readonly code = "RESPONSE_TOO_LARGE";
  constructor() {
    super(`the answer is larger than ${MAX_RESPONSE_BYTES / 1024 / 1024} MiB`);
    this.name = "ResponseTooLargeError";
  }
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
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_RESPONSE_BYTES) {
      response.body.destroy();
      throw new ResponseTooLargeError();
    }
    chunks.push(buffer);
  }
  const contentType = response.headers["content-type"];
  return {
    status: response.statusCode,
    statusText: STATUS_CODES[response.statusCode] ?? "",
    contentType: Array.isArray(contentType) ? contentType[0] : contentType,
    text: Buffer.concat(chunks, size).toString("utf8"),
  };
}
