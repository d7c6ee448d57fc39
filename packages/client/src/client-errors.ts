import { ErrorResponse, ValidationError, type ValidationIssue } from "@pes/contracts";

/**
 * Every failure a client call throws, told apart by `kind` (or `instanceof`):
 * - `http`: the API answered with a status other than 2xx ({@link ApiError});
 * - `response`: a 2xx whose body is not what the contract says ({@link InvalidResponseError});
 * - `unreachable`: no answer at all: refused, reset, DNS ({@link UnreachableError});
 * - `timeout`: the call's own deadline passed, retries included ({@link TimeoutError}).
 * An abort through the caller's own AbortSignal rejects with that signal's reason, as `fetch` does.
 */
export type ClientError = ApiError | InvalidResponseError | UnreachableError | TimeoutError;

/** The API answered with an error status. `body` is its JSON (or its text, when it was not JSON). */
export class ApiError extends Error {
  override name = "ApiError";
  readonly kind = "http";

  constructor(
    readonly status: number,
    readonly body: unknown,
    /** The API's `X-Request-Id`, which its logs are keyed by. */
    readonly requestId: string | undefined,
    /** How long the API asked the caller to wait (`Retry-After`), when it said so. */
    readonly retryAfterMs: number | undefined,
  ) {
    super(`HTTP ${status}: ${describeBody(body)}`);
  }

  /** The validation issues of a 400 (path and message each), or an empty list for any other body. */
  get issues(): readonly ValidationIssue[] {
    const parsed = ValidationError.safeParse(this.body);
    return parsed.success && Array.isArray(parsed.data.error) ? parsed.data.error : [];
  }
}

/** A 2xx answer whose body does not match the contract: a proxy's page, or an API of another version. */
export class InvalidResponseError extends Error {
  override name = "InvalidResponseError";
  readonly kind = "response";

  constructor(
    readonly status: number,
    readonly body: unknown,
    reason: string,
  ) {
    super(`HTTP ${status} with an unexpected body: ${reason}`);
  }
}

/** The API could not be reached, or the connection broke before the answer was read. */
export class UnreachableError extends Error {
  override name = "UnreachableError";
  readonly kind = "unreachable";

  constructor(url: string, cause: unknown) {
    super(`${url} is unreachable: ${causeMessage(cause)}`, { cause });
  }
}

/** The call's deadline (`timeoutMs`, covering every attempt and wait) passed before an answer. */
export class TimeoutError extends Error {
  override name = "TimeoutError";
  readonly kind = "timeout";

  constructor(
    url: string,
    readonly timeoutMs: number,
  ) {
    super(`${url} gave no answer within ${timeoutMs} ms`);
  }
}

/** True for the errors a client call throws on purpose (not for an abort by the caller, nor for a bug). */
export function isClientError(error: unknown): error is ClientError {
  return error instanceof ApiError || error instanceof InvalidResponseError || error instanceof UnreachableError || error instanceof TimeoutError;
}

const MAX_DESCRIBED_CHARS = 300;

function describeBody(body: unknown): string {
  const validation = ValidationError.safeParse(body);
  if (validation.success && Array.isArray(validation.data.error)) {
    return validation.data.error.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ");
  }
  const plain = ErrorResponse.safeParse(body);
  if (plain.success) return plain.data.error;
  const text = typeof body === "string" ? body : (JSON.stringify(body) ?? "");
  return text.length > MAX_DESCRIBED_CHARS ? `${text.slice(0, MAX_DESCRIBED_CHARS)}…` : text || "(empty body)";
}

/** undici's "fetch failed" says nothing: the reason (ECONNREFUSED, ENOTFOUND…) is in its cause. */
function causeMessage(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = cause.cause;
  if (inner instanceof Error) {
    const code = Reflect.get(inner, "code");
    return typeof code === "string" ? `${code} (${inner.message})` : inner.message;
  }
  return cause.message;
}
