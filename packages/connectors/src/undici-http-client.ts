import { STATUS_CODES } from "node:http";
import { X509Certificate } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { createSecureContext } from "node:tls";
import { Agent, ProxyAgent, request, type Dispatcher } from "undici";
import type { DataSourceBase, DataSourceConnection } from "./connector.js";
import type { DataSourceSecrets } from "./data-source-secrets.js";
import { MAX_RESPONSE_BYTES, type HttpAnswer, type HttpClient, type HttpRequestOptions } from "./http-client.js";
import { isIdempotent, isRetryableError, isRetryableStatus, retryDelay } from "./retry-policy.js";
import { createSharedFetches } from "./shared-fetches.js";
import { errorMessage } from "@pes/contracts";

/** TLS settings with their PEM texts read, as undici's connector takes them. */
export interface ResolvedTls {
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized: boolean;
}

/**
 * An HTTP client with its own keep-alive pool. undici's `request` (the client under Node's own fetch,
 * without fetch's web-stream layer): measured here at about a quarter of fetch's CPU per request, which
 * is most of a worker's own work per action. undici enforces the size cap itself, from Content-Length
 * and while the body streams. With `proxy`, every connection is a CONNECT tunnel through it (TLS, when
 * the data source's URL is https, runs inside the tunnel with `tls`). Idempotent requests are retried
 * within their deadline (retry-policy.ts).
 */
export function createHttpClient(options: { tls?: ResolvedTls; proxy?: string } = {}): HttpClient {
  const settings = {
    keepAliveTimeout: 30_000,
    maxResponseSize: MAX_RESPONSE_BYTES,
    // A data source that never answers must not hold a socket past the action's deadline: the signal
    // aborts the request; these only bound a connection that is merely slow.
    headersTimeout: 60_000,
    bodyTimeout: 60_000,
  };
  const tls = options.tls ?? { rejectUnauthorized: true };
  const dispatcher: Dispatcher =
    options.proxy === undefined ? new Agent({ ...settings, connect: tls }) : new ProxyAgent({ ...settings, uri: options.proxy, requestTls: tls });
  const send = async (url: string, { method, headers, body, signal }: HttpRequestOptions): Promise<HttpAnswer & { retryAfter: string | undefined }> => {
    const response = await request(url, { method, headers, body: body ?? null, signal, dispatcher });
    const bytes = await response.body.bytes();
    return {
      status: response.statusCode,
      statusText: STATUS_CODES[response.statusCode] ?? "",
      contentType: firstHeader(response.headers["content-type"]),
      body: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      retryAfter: firstHeader(response.headers["retry-after"]),
    };
  };
  return {
    async request(url, options) {
      const retryable = isIdempotent(options.method, options.idempotent);
      for (let attempts = 1; ; attempts += 1) {
        let wait: number | undefined;
        try {
          const { retryAfter, ...answer } = await send(url, options);
          if (!retryable || !isRetryableStatus(answer.status)) return answer;
          wait = retryDelay({ attempts, retryAfter, now: Date.now(), deadline: options.deadline, random: Math.random() });
          if (wait === undefined) return answer;
        } catch (error) {
          if (!retryable || options.signal.aborted || !isRetryableError(error)) throw error;
          wait = retryDelay({ attempts, now: Date.now(), deadline: options.deadline, random: Math.random() });
          if (wait === undefined) throw error;
        }
        try {
          await delay(wait, undefined, { signal: options.signal });
        } catch (error) {
          // Rejects with the signal's reason if the deadline comes first, as a request would.
          throw options.signal.aborted ? options.signal.reason : error;
        }
      }
    },
    close: () => dispatcher.close(),
  };
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * A data source's connection, built once at start: its HTTP client with its TLS settings (PEMs from its
 * resolved secrets) and proxy, its secrets, and its fetches in flight (identical ones shared).
 * @throws Error saying which TLS setting is unusable (a PEM that does not parse, a key that does not fit its
 *   certificate): better at start than on every action.
 */
export function connectDataSource(dataSource: DataSourceBase, secrets: DataSourceSecrets): DataSourceConnection {
  const tls = resolveTls(dataSource, secrets);
  const http = createHttpClient({ ...(tls === undefined ? {} : { tls }), ...(dataSource.proxy === undefined ? {} : { proxy: dataSource.proxy }) });
  return { secrets, http, shared: createSharedFetches() };
}

function resolveTls(dataSource: DataSourceBase, secrets: DataSourceSecrets): ResolvedTls | undefined {
  const options = dataSource.tls;
  if (options === undefined) return undefined;
  const tls: ResolvedTls = { rejectUnauthorized: !options.insecureSkipVerify };
  if (options.ca !== undefined) tls.ca = secrets.value(options.ca);
  if (options.cert !== undefined) tls.cert = secrets.value(options.cert);
  if (options.key !== undefined) tls.key = secrets.value(options.key);
  try {
    // createSecureContext skips a CA that does not parse (every connection would then fail): check each.
    if (tls.ca !== undefined) checkCertificates("ca", tls.ca);
    if (tls.cert !== undefined) checkCertificates("cert", tls.cert);
    createSecureContext(tls);
  } catch (error) {
    throw new Error(`unusable tls settings: ${errorMessage(error)}`);
  }
  return tls;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** Throws unless `pem` holds at least one certificate and every one of them parses. */
function checkCertificates(field: string, pem: string): void {
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new Error(`${field} holds no PEM certificate`);
  blocks.forEach((block, index) => {
    try {
      new X509Certificate(block);
    } catch (error) {
      throw new Error(`${field}: certificate ${index + 1} does not parse (${errorMessage(error)})`);
    }
  });
}
