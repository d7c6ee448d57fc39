import { errorMessage } from "@pes/contracts";

/**
 * Plain words for why a request got no answer: the deadline, a cancellation, or the network error
 * code undici or the network puts on the error (or its `cause`). Never includes headers. The words
 * become a failed evidence's reason. `maxResponseBytes` is the response size limit the client set, to
 * say so when an answer exceeded it.
 */
export function describeFetchFailure(error: unknown, signal: AbortSignal, target: string, maxResponseBytes?: number): string {
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    return reason instanceof Error && reason.name === "TimeoutError"
      ? `no answer from ${target} before the deadline (timed out)`
      : `the request to ${target} was cancelled`;
  }
  const code = errorCode(error);
  const known: Record<string, string> = {
    ECONNREFUSED: "connection refused",
    ECONNRESET: "connection reset",
    ENOTFOUND: "host not found",
    EAI_AGAIN: "host name lookup failed",
    ETIMEDOUT: "connection timed out",
    EHOSTUNREACH: "host unreachable",
    UND_ERR_CONNECT_TIMEOUT: "connection timed out",
    UND_ERR_SOCKET: "connection closed unexpectedly",
    UND_ERR_HEADERS_TIMEOUT: "no response headers in time",
    UND_ERR_BODY_TIMEOUT: "the response body stalled",
    UND_ERR_RES_EXCEEDED_MAX_SIZE:
      maxResponseBytes === undefined ? "the answer is too large" : `the answer is larger than ${maxResponseBytes / 1024 / 1024} MiB`,
  };
  const words = code === undefined ? undefined : (known[code] ?? code);
  if (words !== undefined) return `could not reach ${target} (${words})`;
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined;
  const message = errorMessage(error);
  return `could not reach ${target} (${cause ?? message})`;
}

function errorCode(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth += 1) {
    if ("code" in current && typeof current.code === "string") return current.code;
  }
  return undefined;
}
