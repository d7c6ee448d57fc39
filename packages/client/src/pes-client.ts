import { setTimeout as delay } from "node:timers/promises";
import {
  AuditPage,
  BatchExecutionResult,
  ConfirmedExecutions,
  ExecutionFeedback,
  BatchStatus,
  EvidenceBundle,
  ExecutionStatus,
  PlaybookExecutionResult,
  PlaybookList,
  SimilarExecutions,
  type AuditListQuery,
  type BatchExecutionInput,
  type FeedbackInput,
  type PlaybookExecutionInput,
} from "@pes/contracts";
import { EventSourceParserStream } from "eventsource-parser/stream";
import type { z } from "zod";
import { followBatchResults, type BatchItemResult, type BatchResultsOptions } from "./batch-results.js";
import { ApiError, InvalidResponseError, TimeoutError, UnreachableError } from "./client-errors.js";
import { backoffMs, DEFAULT_RETRY, isRetryableStatus, parseRetryAfter, type RetryOptions } from "./retry-policy.js";

/**
 * Longer than the API's own execution deadline (EXECUTION_TIMEOUT_MS, 120 s by default), after which it
 * answers 200 with `{ error }`: the caller should get that answer, not a timeout of its own.
 */
export const DEFAULT_TIMEOUT_MS = 180_000;

export interface ClientOptions {
  /** Where the API is, e.g. `http://localhost:8080`; a path prefix (`https://gw.example/pes`) is kept. */
  baseUrl: string;
  /**
   * The bearer token, or a function giving one. The function is called before every attempt, so a
   * long pipeline can hand out a fresh token when the last one expires.
   */
  token?: string | (() => string | Promise<string>);
  /** Deadline of one call, its retries and their waits included (default {@link DEFAULT_TIMEOUT_MS}). */
  timeoutMs?: number;
  retry?: RetryOptions;
  /** A `fetch` of your own (a proxy dispatcher, instrumentation); the global one by default. */
  fetch?: typeof globalThis.fetch;
  /** How the client waits between attempts; tests replace it to see the waits without spending them. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** Per call: your own cancellation, and a deadline other than the client's. */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** How a batch is submitted asynchronously. */
export interface SubmitBatchOptions extends CallOptions {
  /**
   * Sent as `Idempotency-Key`: the same key with the same request, within the API's retention time,
   * gives the same batch instead of starting another, so a re-run resumes it. With a key, a connection
   * that broke after the request was sent is retried too (without one it is not: the batch may have started).
   */
  idempotencyKey?: string;
}

/** Which items of a batch a read returns: from `offset` (default 0), at most `limit` (default 100, at most 1,000). */
export interface BatchPageOptions extends CallOptions {
  offset?: number;
  limit?: number;
}

/** One event stream of a batch's progress. */
export interface BatchEventsOptions {
  signal?: AbortSignal;
  /**
   * The stream is given up (a {@link TimeoutError}) after this long without a byte: an event, or the
   * keep-alive comment the API sends every 15 s of quiet. Default {@link DEFAULT_STREAM_IDLE_MS}.
   */
  idleTimeoutMs?: number;
}

/** Three of the API's keep-alive intervals: a stream this quiet is a connection that died without a word. */
export const DEFAULT_STREAM_IDLE_MS = 45_000;

/** The filters and page of `GET /audit` (its query parameters). */
export type AuditFilters = Partial<AuditListQuery>;

/** The batch envelope with typed items (the API validates each item on its own, hence `unknown` there). */
export type BatchRequest = Omit<BatchExecutionInput, "inputList"> & { inputList: readonly PlaybookExecutionInput[] };

/**
 * The Playbook Execution Service over HTTP. Every method resolves with the API's answer as the contract
 * types it, or rejects with a {@link ClientError}; an execution that ran and failed is still a result,
 * carrying `error` (the API answers it with a 200).
 */
export interface PesClient {
  /** `GET /playbook`: the playbooks of the token's organization. */
  listPlaybooks(options?: CallOptions): Promise<PlaybookList>;
  /** `POST /playbook/execution`: runs one investigation and waits for its result. */
  run(input: PlaybookExecutionInput, options?: CallOptions): Promise<PlaybookExecutionResult>;
  /** `POST /playbook/execution`, as {@link PesClient.run}: the result with the id of its execution (`X-Execution-Id`). */
  execute(input: PlaybookExecutionInput, options?: CallOptions): Promise<{ executionId: string; result: PlaybookExecutionResult }>;
  /** `GET /playbook/execution/{id}`: an execution of the organization, its result once it completed. */
  readExecution(executionId: string, options?: CallOptions): Promise<ExecutionStatus>;
  /**
   * `POST /playbook/execution/batch`: one result per input, in order. The API refuses more than its
   * BATCH_MAX_ITEMS (100 by default) inputs in one request: see runBatchInChunks for any number.
   */
  runBatch(request: BatchRequest, options?: CallOptions): Promise<BatchExecutionResult>;
  /** `GET /playbook/execution/{id}/evidence`: the evidence bundle kept for an execution of the organization. */
  readEvidence(executionId: string, options?: CallOptions): Promise<EvidenceBundle>;
  /** `GET /playbook/execution/{id}/similar`: the past executions most like it, recalled now (seen before: to verify). */
  findSimilar(executionId: string, options?: CallOptions): Promise<SimilarExecutions>;
  /** `POST /playbook/execution/{id}/feedback`: says whether its verdict named the right cause; answers its feedback, this answer current. */
  giveFeedback(executionId: string, input: FeedbackInput, options?: CallOptions): Promise<ExecutionFeedback>;
  /** `GET /playbook/execution/{id}/feedback`: its current answer and every answer given. */
  readFeedback(executionId: string, options?: CallOptions): Promise<ExecutionFeedback>;
  /** `GET /playbook/feedback`: one page of the organization's confirmed executions, oldest answer first. */
  listConfirmed(page?: { since?: string; offset?: number; limit?: number }, options?: CallOptions): Promise<ConfirmedExecutions>;
  /** `GET /audit`: a page of the organization's audit trail, newest first (an admin's token only). */
  readAudit(filters?: AuditFilters, options?: CallOptions): Promise<AuditPage>;
  /**
   * `POST /playbook/execution/batch` with `Prefer: respond-async`: the API accepts up to its
   * ASYNC_BATCH_MAX_ITEMS (10,000 by default) inputs and answers at once with the batch's id and
   * progress (no items yet). Read the results with {@link PesClient.batchResults}.
   */
  submitBatch(request: BatchRequest, options?: SubmitBatchOptions): Promise<BatchStatus>;
  /** `GET /playbook/execution/batch/{id}`: the batch's progress, and one page of its items in input order. */
  readBatch(batchId: string, options?: BatchPageOptions): Promise<BatchStatus>;
  /**
   * `GET /playbook/execution/batch/{id}` as server-sent events: the batch's progress (a BatchStatus
   * without items) at once and at each change, the last one `completed`, then the end. One connection,
   * not resumed when it breaks (it throws): {@link PesClient.batchResults} reconnects.
   */
  batchEvents(batchId: string, options?: BatchEventsOptions): AsyncGenerator<BatchStatus, void, undefined>;
  /**
   * Every result of a batch, in input order from `options.from`, each as soon as it and every item
   * before it finished: the progress stream says when to read the next page. A dropped connection
   * (the stream or a read) is reconnected after a growing wait, up to `reconnectAttempts` failures in
   * a row; then the iteration ends with the last error, and a caller resumes with `from` where it stopped.
   */
  batchResults(batchId: string, options?: BatchResultsOptions): AsyncGenerator<BatchItemResult, void, undefined>;
}

/** Builds a client. Nothing is sent until a method is called. */
export function createClient(options: ClientOptions): PesClient {
  const base = baseUrlOf(options.baseUrl);
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const sleep = options.sleep ?? ((ms: number, signal: AbortSignal) => delay(ms, undefined, { signal }));
  const retry = { ...DEFAULT_RETRY, ...options.retry };
  const defaultTimeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  async function headers(hasBody: boolean): Promise<Record<string, string>> {
    const result: Record<string, string> = { accept: "application/json" };
    if (hasBody) result["content-type"] = "application/json";
    const token = typeof options.token === "function" ? await options.token() : options.token;
    if (token !== undefined) result.authorization = `Bearer ${token}`;
    return result;
  }

  /**
   * One call, retried as retry-policy.ts says. `idempotent`: the request may be sent again after a
   * connection that broke once it was sent (reads, and a POST under an Idempotency-Key).
   */
  async function call<T>(
    method: "GET" | "POST",
    path: string,
    body: unknown,
    schema: z.ZodType<T>,
    callOptions: CallOptions = {},
    how: { headers?: Record<string, string>; idempotent?: boolean } = {},
  ): Promise<{ status: number; value: T; headers: Headers }> {
    const url = new URL(path, base).toString();
    const timeoutMs = callOptions.timeoutMs ?? defaultTimeoutMs;
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = callOptions.signal === undefined ? deadline : AbortSignal.any([callOptions.signal, deadline]);
    const startedAt = Date.now();
    const text = body === undefined ? undefined : JSON.stringify(body);

    // What a rejected fetch, body read or wait means: the caller's abort, our deadline, or no API.
    const failure = (error: unknown): unknown => {
      if (callOptions.signal?.aborted === true) return callOptions.signal.reason;
      if (deadline.aborted) return new TimeoutError(url, timeoutMs);
      return new UnreachableError(url, error);
    };

    let waited = 0;
    for (let attempt = 1; ; attempt += 1) {
      const init: RequestInit = { method, headers: { ...(await headers(text !== undefined)), ...how.headers }, signal };
      if (text !== undefined) init.body = text;
      let error: unknown;
      let wait: number;
      try {
        const response = await fetchImpl(url, init);
        const payload = await readBody(response);
        if (response.ok) {
          const parsed = schema.safeParse(payload);
          if (!parsed.success) throw new InvalidResponseError(response.status, payload, firstIssue(parsed.error));
          return { status: response.status, value: parsed.data, headers: response.headers };
        }
        const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), Date.now());
        error = new ApiError(response.status, payload, response.headers.get("x-request-id") ?? undefined, retryAfterMs);
        if (!isRetryableStatus(response.status)) throw error;
        wait = retryAfterMs ?? backoffMs(attempt);
      } catch (thrown) {
        if (thrown instanceof ApiError || thrown instanceof InvalidResponseError) throw thrown;
        error = failure(thrown);
        if (!(how.idempotent === true && error instanceof UnreachableError)) throw error;
        wait = backoffMs(attempt);
      }
      if (attempt >= retry.attempts) throw error;
      const left = timeoutMs - (Date.now() - startedAt);
      // Waiting past either bound would only end in a timeout: the API's own answer says more.
      if (waited + wait > retry.maxWaitMs || wait >= left) throw error;
      try {
        await sleep(wait, signal);
      } catch (sleepError) {
        throw failure(sleepError);
      }
      waited += wait;
    }
  }

  /** One event stream of a batch, its events checked against the contract. */
  async function* batchEvents(batchId: string, eventOptions: BatchEventsOptions = {}): AsyncGenerator<BatchStatus, void, undefined> {
    const url = new URL(`${BATCH_PATH}/${encodeURIComponent(batchId)}`, base).toString();
    const idleMs = eventOptions.idleTimeoutMs ?? DEFAULT_STREAM_IDLE_MS;
    const own = new AbortController();
    const signal = eventOptions.signal === undefined ? own.signal : AbortSignal.any([eventOptions.signal, own.signal]);
    let idle: NodeJS.Timeout | undefined;
    let idled = false;
    const quiet = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        idled = true;
        own.abort();
      }, idleMs);
    };
    const failure = (error: unknown): unknown => {
      if (eventOptions.signal?.aborted === true) return eventOptions.signal.reason;
      if (idled) return new TimeoutError(url, idleMs);
      return new UnreachableError(url, error);
    };
    quiet();
    try {
      let response: Response;
      try {
        response = await fetchImpl(url, { headers: { ...(await headers(false)), accept: "text/event-stream" }, signal });
      } catch (error) {
        throw failure(error);
      }
      if (!response.ok || response.body === null) {
        let payload: unknown;
        try {
          payload = await readBody(response);
        } catch (error) {
          throw failure(error);
        }
        if (response.ok) throw new InvalidResponseError(response.status, payload, "no event stream");
        const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), Date.now());
        throw new ApiError(response.status, payload, response.headers.get("x-request-id") ?? undefined, retryAfterMs);
      }
      const events = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream({ onComment: quiet }));
      try {
        for await (const event of events) {
          quiet();
          if (event.event === "error") {
            // The API lost its Redis while streaming: what a read would have answered with a 503.
            throw new ApiError(503, parseJson(event.data), response.headers.get("x-request-id") ?? undefined, undefined);
          }
          if (event.event !== "progress" && event.event !== "completed") continue;
          const json = parseJson(event.data);
          const parsed = BatchStatus.safeParse(json);
          if (!parsed.success) throw new InvalidResponseError(response.status, json, `event ${event.event}: ${firstIssue(parsed.error)}`);
          yield parsed.data;
        }
      } catch (error) {
        if (error instanceof ApiError || error instanceof InvalidResponseError) throw error;
        throw failure(error);
      }
    } finally {
      clearTimeout(idle);
      // Whether it ended, failed or the caller stopped iterating: the connection goes.
      own.abort();
    }
  }

  const client: PesClient = {
    async listPlaybooks(callOptions) {
      return (await call("GET", "playbook", undefined, PlaybookList, callOptions)).value;
    },
    async run(input, callOptions) {
      return (await call("POST", "playbook/execution", input, PlaybookExecutionResult, callOptions)).value;
    },
    async execute(input, callOptions) {
      const { status, value, headers } = await call("POST", "playbook/execution", input, PlaybookExecutionResult, callOptions);
      const executionId = headers.get("x-execution-id");
      if (executionId === null) throw new InvalidResponseError(status, value, "no X-Execution-Id header");
      return { executionId, result: value };
    },
    async readExecution(executionId, callOptions) {
      return (await call("GET", `playbook/execution/${encodeURIComponent(executionId)}`, undefined, ExecutionStatus, callOptions)).value;
    },
    async readEvidence(executionId, callOptions) {
      return (await call("GET", `playbook/execution/${encodeURIComponent(executionId)}/evidence`, undefined, EvidenceBundle, callOptions)).value;
    },
    async findSimilar(executionId, callOptions) {
      return (await call("GET", `playbook/execution/${encodeURIComponent(executionId)}/similar`, undefined, SimilarExecutions, callOptions)).value;
    },
    async giveFeedback(executionId, input, callOptions) {
      return (await call("POST", `playbook/execution/${encodeURIComponent(executionId)}/feedback`, input, ExecutionFeedback, callOptions)).value;
    },
    async readFeedback(executionId, callOptions) {
      return (await call("GET", `playbook/execution/${encodeURIComponent(executionId)}/feedback`, undefined, ExecutionFeedback, callOptions)).value;
    },
    async listConfirmed({ since, offset, limit } = {}, callOptions = {}) {
      const query = new URLSearchParams();
      if (since !== undefined) query.set("since", since);
      if (offset !== undefined) query.set("offset", String(offset));
      if (limit !== undefined) query.set("limit", String(limit));
      return (await call("GET", `playbook/feedback${query.size > 0 ? `?${query}` : ""}`, undefined, ConfirmedExecutions, callOptions)).value;
    },
    async readAudit(filters = {}, callOptions) {
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries(filters)) if (value !== undefined) query.set(name, String(value));
      return (await call("GET", `audit${query.size > 0 ? `?${query}` : ""}`, undefined, AuditPage, callOptions)).value;
    },
    async runBatch(request, callOptions) {
      const { status, value } = await call("POST", BATCH_PATH, request, BatchExecutionResult, callOptions);
      if (value.length !== request.inputList.length) {
        throw new InvalidResponseError(status, value, `${value.length} results for ${request.inputList.length} inputs`);
      }
      return value;
    },
    async submitBatch(request, { idempotencyKey, ...callOptions } = {}) {
      const headers: Record<string, string> = { prefer: "respond-async" };
      if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey;
      const { status, value } = await call("POST", BATCH_PATH, request, BatchStatus, callOptions, { headers, idempotent: idempotencyKey !== undefined });
      if (status !== 202) throw new InvalidResponseError(status, value, `expected 202 Accepted for an async batch`);
      return value;
    },
    async readBatch(batchId, { offset, limit, ...callOptions } = {}) {
      const query = new URLSearchParams();
      if (offset !== undefined) query.set("offset", String(offset));
      if (limit !== undefined) query.set("limit", String(limit));
      const path = `${BATCH_PATH}/${encodeURIComponent(batchId)}${query.size > 0 ? `?${query}` : ""}`;
      return (await call("GET", path, undefined, BatchStatus, callOptions)).value;
    },
    batchEvents,
    batchResults: (batchId, resultOptions) => followBatchResults(client, batchId, { sleep, ...resultOptions }),
  };
  return client;
}

const BATCH_PATH = "playbook/execution/batch";

/** JSON when it parses, else the text (a proxy's HTML error page, an event's data). */
function parseJson(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    return value;
  } catch {
    return text;
  }
}

/** The base URL as a directory, so that relative paths keep its path prefix. */
function baseUrlOf(baseUrl: string): URL {
  const url = new URL(baseUrl);
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`baseUrl must be an http(s) URL, got ${url.protocol}`);
  }
  if (!url.pathname.endsWith("/")) url.pathname += "/";
  return url;
}

/** JSON when it parses, else the text (a proxy's HTML error page), else undefined for no body. */
async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  return text === "" ? undefined : parseJson(text);
}

function firstIssue(error: z.ZodError): string {
  const [issue] = error.issues;
  if (issue === undefined) return "does not match the contract";
  const where = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
  return `${where}${issue.message}`;
}
