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
  text: string;
}

/**
 * One data source's HTTP client: its own keep-alive pool, TLS settings and proxy, built once when the
 * worker starts (undici-http-client.ts). Connectors send every request through the client of their
 * data source.
 */
export interface HttpClient {
  /**
   * Sends one request and reads the whole answer as text. Rejects with undici's (or the network's) error,
   * whose `code` names what went wrong, or with the signal's reason once it aborts.
   */
  request(url: string, options: HttpRequestOptions): Promise<HttpAnswer>;
  /** Closes its connections; requests after this fail. */
  close(): Promise<void>;
}
