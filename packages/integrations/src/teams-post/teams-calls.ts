import { setTimeout as sleep } from "node:timers/promises";
import { Client, GraphError, HTTPMessageHandler, type Context, type Middleware, type MiddlewareOptions } from "@microsoft/microsoft-graph-client";
import type { CallBounds } from "../delivery/call-bounds.js";

export interface TeamsPostClientOptions {
  /** The directory (tenant) ID or domain. */
  tenantId: string;
  /** The app registration's application (client) ID. */
  clientId: string;
  /** The app's client secret, resolved from the organization's secret reference. */
  clientSecret: string;
  /** The service account's refresh token, resolved from the organization's secret reference. */
  refreshToken: string;
  /** Graph's base URL with its version: `https://graph.microsoft.com/v1.0/` by default. */
  graphUrl?: string;
  /** The token service's base URL: `https://login.microsoftonline.com/` by default. */
  loginUrl?: string;
  /** How long one HTTP request may take before it is abandoned (and counted as "may have happened"). */
  requestTimeoutMs?: number;
}

/** A Graph client that posts as the organization's service account, and what a call needs to run it. */
export interface TeamsPostClient {
  graph: Client;
  /** The Graph base URL requests go to, without its trailing slash (`https://graph.microsoft.com/v1.0`). */
  baseUrl: string;
  requestTimeoutMs: number;
  /** Forgets the access token (Graph answered 401): the next call redeems the refresh token again. */
  forgetAccessToken(): void;
}

export const GRAPH_URL = "https://graph.microsoft.com/v1.0/";
export const LOGIN_URL = "https://login.microsoftonline.com/";
const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
/** An access token is renewed this long before it expires, so that no request carries one that expires on the way. */
const EXPIRY_MARGIN_MS = 5 * 60_000;

/**
 * A `Client` of `@microsoft/microsoft-graph-client` with a middleware chain of its own: a bearer token
 * from the service account's refresh token (OAuth 2.0 refresh-token grant of a confidential client, at
 * `<loginUrl><tenant>/oauth2/v2.0/token`), then the client's stock HTTP handler. No retry handler: the
 * posting functions decide whether a 429's Retry-After still fits the caller's deadline, and tell the
 * channel's pacer. The stock authentication handler is not used because it only signs requests to https
 * hosts; `graphUrl` is ours to choose (a loopback fake in tests), so every request is signed.
 */
export function createTeamsPostClient(options: TeamsPostClientOptions): TeamsPostClient {
  const tokens = createTokenSource(options);
  const auth = new BearerMiddleware(tokens.get);
  auth.setNext(new HTTPMessageHandler());
  const baseUrl = trimSlash(options.graphUrl ?? GRAPH_URL);
  const graph = Client.initWithMiddleware({ middleware: auth, baseUrl, defaultVersion: "" });
  return { graph, baseUrl, requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, forgetAccessToken: tokens.forget };
}

/** Why a Teams call failed, and whether it certainly did nothing (`certain`) or may have taken effect. */
export class TeamsCallError extends Error {
  constructor(
    message: string,
    readonly certain: boolean,
    /** Graph's HTTP status, when it answered. */
    readonly status?: number,
  ) {
    super(message);
    this.name = "TeamsCallError";
  }
}

/** At most this many tries of one call when Graph keeps answering 429 with a short Retry-After. */
const MAX_RATE_LIMITED_TRIES = 5;

/**
 * Runs one Graph request (`request(signal)`), honouring 429 `Retry-After` while the wait fits before the
 * deadline (and telling `onRateLimited`, so that other posters to the channel hold off too). Any failure
 * is a `TeamsCallError` whose message names Graph's error code or the transport problem, never a secret.
 */
export async function callTeams<T>(
  client: TeamsPostClient,
  request: (graph: Client, probe: TransportProbe) => Promise<T>,
  bounds: CallBounds,
  onRateLimited?: (retryAfterMs: number) => Promise<void>,
): Promise<T> {
  for (let tries = 1; ; tries += 1) {
    if (bounds.signal?.aborted) throw new TeamsCallError("stopped before calling Microsoft Graph", true);
    const probe = new TransportProbe(AbortSignal.any([AbortSignal.timeout(client.requestTimeoutMs), ...(bounds.signal === undefined ? [] : [bounds.signal])]));
    try {
      return await request(client.graph, probe);
    } catch (error) {
      const failure = classify(error, probe);
      if (failure.status === 401) client.forgetAccessToken();
      if (failure.status !== 429 || !(error instanceof GraphError)) throw failure;
      const waitMs = retryAfterMs(error);
      if (tries >= MAX_RATE_LIMITED_TRIES || Date.now() + waitMs > bounds.deadline) {
        throw new TeamsCallError(
          `Microsoft Graph throttled the call (Retry-After ${Math.ceil(waitMs / 1000)} s) and the deadline leaves no time to wait`,
          true,
          429,
        );
      }
      await onRateLimited?.(waitMs);
      try {
        await sleep(waitMs, undefined, bounds.signal === undefined ? {} : { signal: bounds.signal });
      } catch {
        throw new TeamsCallError("stopped while waiting out Microsoft Graph's throttling", true);
      }
    }
  }
}

/**
 * Carries a request's abort signal to the fetch, and brings back the transport error a failed fetch
 * threw (the client's own error keeps only its name): passed with `.middlewareOptions([probe])`.
 */
export class TransportProbe implements MiddlewareOptions {
  error: unknown;
  constructor(readonly signal: AbortSignal) {}
}

class BearerMiddleware implements Middleware {
  private next: Middleware | undefined;
  constructor(private readonly token: (signal: AbortSignal | undefined) => Promise<string>) {}

  async execute(context: Context): Promise<void> {
    const probe = context.middlewareControl?.getMiddlewareOptions(TransportProbe);
    const signal = probe instanceof TransportProbe ? probe.signal : undefined;
    const options = context.options ?? {};
    context.options = options;
    if (signal !== undefined) options.signal = signal;
    try {
      const bearer = `Bearer ${await this.token(signal)}`;
      if (options.headers instanceof Headers) options.headers.set("Authorization", bearer);
      else options.headers = { ...(options.headers as Record<string, string> | undefined), Authorization: bearer };
      if (this.next === undefined) throw new Error("no HTTP handler after the bearer middleware");
      await this.next.execute(context);
    } catch (error) {
      if (probe instanceof TransportProbe) probe.error = error;
      throw error;
    }
  }

  setNext(next: Middleware): void {
    this.next = next;
  }
}

/** Connection errors that mean the request never reached Graph. */
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
/** A Graph error code (`NotFound`, `Forbidden`): the only part of an error answer repeated in reasons. */
const GRAPH_ERROR_CODE = /^[A-Za-z][A-Za-z0-9_.]{0,63}$/;

function classify(error: unknown, probe: TransportProbe): TeamsCallError {
  if (probe.error instanceof TeamsCallError) return probe.error;
  if (error instanceof TeamsCallError) return error;
  if (error instanceof GraphError && error.statusCode > 0) {
    const status = error.statusCode;
    // Only Graph's error code is repeated: its message could quote the request.
    const code = typeof error.code === "string" && GRAPH_ERROR_CODE.test(error.code) ? ` ${error.code}` : "";
    return new TeamsCallError(`Microsoft Graph answered HTTP ${status}${code}`, status >= 400 && status < 500 && status !== 408, status);
  }
  const transport = probe.error ?? error;
  const name = transport instanceof Error ? transport.name : "";
  if (name === "TimeoutError" || name === "AbortError") {
    return probe.signal.reason instanceof Error && probe.signal.reason.name !== "TimeoutError"
      ? new TeamsCallError("stopped before Microsoft Graph answered", false)
      : new TeamsCallError("Microsoft Graph did not answer in time", false);
  }
  const code = errorCode(transport instanceof Error ? transport.cause : undefined) ?? errorCode(transport);
  if (code !== undefined && NOT_SENT_CODES.has(code)) return new TeamsCallError(`Microsoft Graph unreachable (${code})`, true);
  return new TeamsCallError(`the request to Microsoft Graph failed${code === undefined ? "" : ` (${code})`}`, false);
}

function retryAfterMs(error: GraphError): number {
  const header = error.headers?.get("retry-after");
  const seconds = header === null || header === undefined ? Number.NaN : Number(header);
  // Graph's throttling guidance: without Retry-After, back off; a few seconds fits a channel's pace.
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 5_000;
}

function errorCode(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || !("code" in value)) return undefined;
  return typeof value.code === "string" ? value.code : undefined;
}

/** An OAuth error code (`invalid_grant`) or AADSTS number: the only parts of a token error repeated. */
const OAUTH_ERROR_CODE = /^[a-z_]{1,64}$/;

/**
 * Access tokens for Graph from the service account's refresh token, one at a time per process, kept
 * until shortly before they expire. Microsoft rotates refresh tokens: each grant returns a new one, which
 * this process uses from then on; the configured one stays valid (it is not revoked by use), so a restart
 * starts from it again. Scope `<graph>/.default`: the delegated permissions the account consented to.
 */
function createTokenSource(options: TeamsPostClientOptions): { get(signal: AbortSignal | undefined): Promise<string>; forget(): void } {
  const loginUrl = options.loginUrl ?? LOGIN_URL;
  const endpoint = `${loginUrl.endsWith("/") ? loginUrl : `${loginUrl}/`}${encodeURIComponent(options.tenantId)}/oauth2/v2.0/token`;
  const scope = `${new URL(options.graphUrl ?? GRAPH_URL).origin}/.default offline_access`;
  let refreshToken = options.refreshToken;
  let current: { token: string; until: number } | undefined;
  let pending: Promise<string> | undefined;

  const redeem = async (signal: AbortSignal | undefined): Promise<string> => {
    const timeout = AbortSignal.timeout(options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
    let response: Response;
    try {
      response = await fetch(endpoint, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          client_id: options.clientId,
          client_secret: options.clientSecret,
          grant_type: "refresh_token",
          refresh_token: refreshToken,
          scope,
        }),
        signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]),
      });
    } catch (error) {
      const code = errorCode(error instanceof Error ? error.cause : undefined);
      throw new TeamsCallError(`the Microsoft token service could not be reached${code === undefined ? "" : ` (${code})`}`, true);
    }
    const body: unknown = await response.json().catch(() => undefined);
    const field = (name: string) => (typeof body === "object" && body !== null && name in body ? (body as Record<string, unknown>)[name] : undefined);
    const accessToken = field("access_token");
    if (!response.ok || typeof accessToken !== "string") {
      const error = field("error");
      const code = typeof error === "string" && OAUTH_ERROR_CODE.test(error) ? error : `HTTP ${response.status}`;
      const aadsts = /AADSTS\d{4,8}/.exec(String(field("error_description") ?? ""))?.[0];
      const hint =
        code === "invalid_grant"
          ? ": sign the service account in again and replace teams.refreshToken"
          : code === "invalid_client"
            ? ": check teams.clientSecret"
            : "";
      throw new TeamsCallError(
        `the Microsoft token service refused the service account's token (${code}${aadsts === undefined ? "" : ` ${aadsts}`})${hint}`,
        true,
      );
    }
    const rotated = field("refresh_token");
    if (typeof rotated === "string" && rotated !== "") refreshToken = rotated;
    const expiresIn = Number(field("expires_in"));
    const lifetimeMs = (Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 3_600) * 1000;
    current = { token: accessToken, until: Date.now() + Math.max(lifetimeMs - EXPIRY_MARGIN_MS, lifetimeMs / 2) };
    return accessToken;
  };

  return {
    get(signal) {
      if (current !== undefined && Date.now() < current.until) return Promise.resolve(current.token);
      pending ??= redeem(signal).finally(() => {
        pending = undefined;
      });
      return pending;
    },
    forget() {
      current = undefined;
    },
  };
}

function trimSlash(url: string): string {
  return url.endsWith("/") ? url.slice(0, -1) : url;
}
