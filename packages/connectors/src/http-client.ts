/** A response larger than this is refused rather than held in memory (undici's error UND_ERR_RES_EXCEEDED_MAX_SIZE). */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

export interface HttpRequestOptions {
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

export interface HttpAnswer {
  status: number;
  statusText: string;
  contentType: string | undefined;
  /**
   * The whole answer, as bytes: outside the JavaScript heap, so a connector can read a large answer in
   * parts (Prometheus, one series at a time) instead of holding its text and its objects at once.
   */
  body: Buffer;
}

/**
 * One data source's HTTP client: its own keep-alive pool, TLS settings and proxy, built once when the
 * worker starts (undici-http-client.ts). Connectors send every request through the client of their
 * data source.
 */
export interface HttpClient {
  /**
   * Sends one request and reads the whole answer. Rejects with undici's (or the network's) error,
   * whose `code` names what went wrong, or with the signal's reason once it aborts.
   */
  request(url: string, options: HttpRequestOptions): Promise<HttpAnswer>;
  /** Closes its connections; requests after this fail. */
  close(): Promise<void>;
}

/** An answer's text, as undici's `body.text()` reads it: UTF-8, a byte-order mark skipped. */
export function answerText(body: Buffer): string {
  return body.toString("utf8", hasByteOrderMark(body) ? 3 : 0);
}

/** Whether the bytes start with a UTF-8 byte-order mark. */
export function hasByteOrderMark(body: Buffer): boolean {
  return body.length > 2 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
}
