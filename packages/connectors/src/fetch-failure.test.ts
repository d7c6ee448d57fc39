import { describe, expect, it } from "vitest";
import { describeFetchFailure } from "./fetch-failure.js";

const live = new AbortController().signal;

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe("describeFetchFailure", () => {
  it("says the deadline passed, or that the request was cancelled", () => {
    expect(describeFetchFailure(new Error("aborted"), AbortSignal.abort(new DOMException("late", "TimeoutError")), "Prometheus")).toBe(
      "no answer from Prometheus before the deadline (timed out)",
    );
    expect(describeFetchFailure(new Error("aborted"), AbortSignal.abort(), "Prometheus")).toBe("the request to Prometheus was cancelled");
  });

  it("names a known network error code, found on the error or its cause", () => {
    expect(describeFetchFailure(withCode("connect ECONNREFUSED 127.0.0.1:1", "ECONNREFUSED"), live, "the data source")).toBe(
      "could not reach the data source (connection refused)",
    );
    const wrapped = new TypeError("fetch failed", { cause: withCode("getaddrinfo ENOTFOUND x", "ENOTFOUND") });
    expect(describeFetchFailure(wrapped, live, "Prometheus")).toBe("could not reach Prometheus (host not found)");
    expect(describeFetchFailure(withCode("odd", "EWEIRD"), live, "Prometheus")).toBe("could not reach Prometheus (EWEIRD)");
  });

  it("says the answer was too large, with the limit when given", () => {
    const tooLarge = withCode("Response content exceeded max size", "UND_ERR_RES_EXCEEDED_MAX_SIZE");
    expect(describeFetchFailure(tooLarge, live, "Prometheus", 32 * 1024 * 1024)).toBe("could not reach Prometheus (the answer is larger than 32 MiB)");
    expect(describeFetchFailure(tooLarge, live, "Prometheus")).toBe("could not reach Prometheus (the answer is too large)");
  });

  it("falls back to the cause's message, then the error's", () => {
    expect(describeFetchFailure(new TypeError("fetch failed", { cause: new Error("bad certificate") }), live, "Prometheus")).toBe(
      "could not reach Prometheus (bad certificate)",
    );
    expect(describeFetchFailure("boom", live, "Prometheus")).toBe("could not reach Prometheus (boom)");
  });
});
