import { setTimeout as delay } from "node:timers/promises";
import {
  BatchExecutionResult,
  EvidenceBundle,
  PlaybookExecutionResult,
  PlaybookList,
  type BatchExecutionInput,
  type PlaybookExecutionInput,
} from "@pes/contracts";
import type { z } from "zod";
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
  /**
   * `POST /playbook/execution/batch`: one result per input, in order. The API refuses more than its
   * BATCH_MAX_ITEMS (100 by default) inputs in one request: see runBatchInChunks for any number.
   */
  runBatch(request: BatchRequest, options?: CallOptions): Promise<BatchExecutionResult>;
  /** `GET /playbook/execution/{id}/evidence`: the evidence bundle kept for an execution of the organization. */
  readEvidence(executionId: string, options?: CallOptions): Promise<EvidenceBundle>;
  // The asynchronous reads (`GET /playbook/execution/{id}`, a batch's progress) belong here once the
  // API serves them; each is one more `call()` with the contract's schema for its answer.
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

  async function call<T>(
    method: "GET" | "POST",
    path: string,
    body: unknown,
    schema: z.ZodType<T>,
    callOptions: CallOptions = {},
  ): Promise<{ status: number; value: T }> {
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
      const init: RequestInit = { method, headers: await headers(text !== undefined), signal };
      if (text !== undefined) init.body = text;
      let response: Response;
      let payload: unknown;
      try {
        response = await fetchImpl(url, init);
        payload = await readBody(response);
      } catch (error) {
        throw failure(error);
      }
      if (response.ok) {
        const parsed = schema.safeParse(payload);
        if (!parsed.success) throw new InvalidResponseError(response.status, payload, firstIssue(parsed.error));
        return { status: response.status, value: parsed.data };
      }

      const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), Date.now());
      const error = new ApiError(response.status, payload, response.headers.get("x-request-id") ?? undefined, retryAfterMs);
      if (!isRetryableStatus(response.status) || attempt >= retry.attempts) throw error;
      const wait = retryAfterMs ?? backoffMs(attempt);
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

  return {
    async listPlaybooks(callOptions) {
      return (await call("GET", "playbook", undefined, PlaybookList, callOptions)).value;
    },
    async run(input, callOptions) {
      return (await call("POST", "playbook/execution", input, PlaybookExecutionResult, callOptions)).value;
    },
    async readEvidence(executionId, callOptions) {
      return (await call("GET", `playbook/execution/${encodeURIComponent(executionId)}/evidence`, undefined, EvidenceBundle, callOptions)).value;
    },
    async runBatch(request, callOptions) {
      const { status, value } = await call("POST", "playbook/execution/batch", request, BatchExecutionResult, callOptions);
      if (value.length !== request.inputList.length) {
        throw new InvalidResponseError(status, value, `${value.length} results for ${request.inputList.length} inputs`);
      }
      return value;
    },
  };
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
  if (text === "") return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value;
  } catch {
    return text;
  }
}

function firstIssue(error: z.ZodError): string {
  const [issue] = error.issues;
  if (issue === undefined) return "does not match the contract";
  const where = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
  return `${where}${issue.message}`;
}
