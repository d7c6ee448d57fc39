/** A response larger than this is refused rather than held in memory (undici's error UND_ERR_RES_EXCEEDED_MAX_SIZE). */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

export interface HttpRequestOptions {
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  /**
   * A POST that only reads (a query API: Prometheus, Elasticsearch `_search`), so sending it twice is
   * harmless: it is retried like a GET. Any other POST is sent once.
   */
  idempotent?: boolean;
  /**
   * When `signal` aborts (the action's deadline, epoch ms), if known: a retry whose wait would end past
   * it is not made, and the answer that prompted it is returned instead. The runner sets it.
   */
  deadline?: number;
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
   * Sends one request and reads the whole answer. An idempotent request (GET, or a POST marked so) is
   * sent again on 429/502/503/504 or a connection reset, after a backoff or the answer's Retry-After,
   * while the deadline leaves time (see retry-policy.ts); the last answer is what it gives. Rejects with
   * undici's (or the network's) error, whose `code` names what went wrong, or with the signal's reason
   * once it aborts.
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
