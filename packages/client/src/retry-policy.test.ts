import { describe, expect, it } from "vitest";
import { backoffMs, isRetryableStatus, parseRetryAfter } from "./retry-policy.js";

describe("parseRetryAfter", () => {
  const now = Date.parse("2026-11-21T13:43:00Z");

  it("reads delay-seconds", () => {
    expect(parseRetryAfter("1", now)).toBe(1000);
    expect(parseRetryAfter(" 120 ", now)).toBe(120_000);
  });

  it("reads an HTTP-date as the time left until then, and a past date as now", () => {
    expect(parseRetryAfter("Sat, 21 Nov 2026 13:43:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Sat, 21 Nov 2026 13:00:00 GMT", now)).toBe(0);
  });

  it("ignores an absent or unreadable header", () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter("-5", now)).toBeUndefined();
  });
});

describe("the retry policy", () => {
  it("retries only the statuses that mean nothing was started", () => {
    expect([200, 400, 401, 403, 408, 413, 415, 429, 500, 502, 503, 504].filter(isRetryableStatus)).toEqual([429, 503]);
  });

  it("backs off between half and all of 0.5 s, 1 s, 2 s… capped at 8 s", () => {
    expect([1, 2, 3, 4, 5, 6, 10].map((retry) => backoffMs(retry, () => 0))).toEqual([250, 500, 1000, 2000, 4000, 4000, 4000]);
    expect([1, 2, 3, 4, 5, 6, 10].map((retry) => backoffMs(retry, () => 1))).toEqual([500, 1000, 2000, 4000, 8000, 8000, 8000]);
  });
});
