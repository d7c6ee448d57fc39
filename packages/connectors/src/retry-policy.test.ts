import { describe, expect, it } from "vitest";
import { isIdempotent, isRetryableError, MAX_ATTEMPTS, retryAfterMs, retryDelay } from "./retry-policy.js";

const now = Date.parse("2026-11-20T14:00:00Z");

describe("retryDelay", () => {
  it("backs off exponentially, with jitter taking up to half off", () => {
    expect(retryDelay({ attempts: 1, now, random: 0.999_999 })).toBeCloseTo(200);
    expect(retryDelay({ attempts: 1, now, random: 0 })).toBe(100);
    expect(retryDelay({ attempts: 2, now, random: 0 })).toBe(200);
    expect(retryDelay({ attempts: 3, now, random: 0 })).toBe(400);
  });

  it("stops once the attempts are spent", () => {
    expect(retryDelay({ attempts: MAX_ATTEMPTS, now, random: 0 })).toBeUndefined();
  });

  it("waits what Retry-After asks when the deadline leaves time for it and a request", () => {
    expect(retryDelay({ attempts: 1, retryAfter: "2", now, deadline: now + 10_000, random: 0 })).toBe(2_000);
    expect(retryDelay({ attempts: 1, retryAfter: "Fri, 20 Nov 2026 14:00:03 GMT", now, random: 0 })).toBe(3_000);
    expect(retryDelay({ attempts: 1, retryAfter: "10", now, deadline: now + 10_000, random: 0 })).toBeUndefined();
    expect(retryDelay({ attempts: 1, now, deadline: now + 300, random: 0 })).toBeUndefined();
  });

  it("never waits longer than 30 s, deadline or not", () => {
    expect(retryDelay({ attempts: 1, retryAfter: "31", now, random: 0 })).toBeUndefined();
  });

  it("falls back to the backoff on a Retry-After it cannot read", () => {
    expect(retryAfterMs("soon", now)).toBeUndefined();
    expect(retryAfterMs("-5", now)).toBeUndefined();
    expect(retryAfterMs("Fri, 20 Nov 2026 13:00:00 GMT", now)).toBe(0);
    expect(retryDelay({ attempts: 1, retryAfter: "soon", now, random: 0 })).toBe(100);
  });
});

describe("what is retried", () => {
  it("only reads: GET, or a POST marked idempotent", () => {
    expect(isIdempotent("GET", undefined)).toBe(true);
    expect(isIdempotent("POST", undefined)).toBe(false);
    expect(isIdempotent("POST", true)).toBe(true);
  });

  it("connection resets, found on the error or its cause; not a refused connection", () => {
    expect(isRetryableError(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }))).toBe(true);
    expect(isRetryableError(new TypeError("fetch failed", { cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }) }))).toBe(true);
    expect(isRetryableError(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }))).toBe(false);
    expect(isRetryableError("ECONNRESET")).toBe(false);
  });
});
