import { describe, expect, it } from "vitest";
import { isValidAt, VerifiedTokenCache, type VerifiedToken } from "./verified-token-cache.js";

const at = (seconds: number) => seconds * 1000;
const token = (expiresAt: number, notBefore?: number): VerifiedToken => ({
  orgId: "acme",
  clientId: "ci",
  expiresAt,
  notBefore,
  scopes: [],
  subject: undefined,
  teams: [],
});

describe("isValidAt", () => {
  it("applies the clock tolerance to exp and nbf like jsonwebtoken", () => {
    expect(isValidAt(token(1000), at(1029), 30)).toBe(true);
    expect(isValidAt(token(1000), at(1030), 30)).toBe(false);
    expect(isValidAt(token(2000, 1100), at(1070), 30)).toBe(true);
    expect(isValidAt(token(2000, 1100), at(1069), 30)).toBe(false);
  });
});

describe("VerifiedTokenCache", () => {
  const cache = () => new VerifiedTokenCache({ maxEntries: 2, maxAgeMs: 60_000, clockToleranceSeconds: 0 });

  it("returns a cached token while it is valid, then drops it", () => {
    const subject = cache();
    subject.set("a", token(1000), at(950));
    expect(subject.get("a", at(999))).toMatchObject({ orgId: "acme" });
    expect(subject.get("a", at(1000))).toBeUndefined();
    expect(subject.size).toBe(0);
  });

  it("does not answer a token before its nbf", () => {
    const subject = cache();
    subject.set("a", token(2000, 1000), at(900));
    expect(subject.get("a", at(950))).toBeUndefined();
  });

  it("drops an entry after maxAge even if the token is still valid", () => {
    const subject = cache();
    subject.set("a", token(10_000), at(1000));
    expect(subject.get("a", at(1059))).toBeDefined();
    expect(subject.get("a", at(1060))).toBeUndefined();
  });

  it("stays within maxEntries, evicting the oldest", () => {
    const subject = cache();
    subject.set("a", token(10_000), at(1000));
    subject.set("b", token(10_000), at(1000));
    subject.set("c", token(10_000), at(1000));
    expect(subject.size).toBe(2);
    expect(subject.get("a", at(1001))).toBeUndefined();
    expect(subject.get("b", at(1001))).toBeDefined();
    expect(subject.get("c", at(1001))).toBeDefined();
  });
});
