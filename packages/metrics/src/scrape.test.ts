import { describe, expect, it } from "vitest";
import { scrapeAllowed } from "./scrape.js";

describe("scrapeAllowed", () => {
  it("lets any scrape in when no token is configured", () => {
    expect(scrapeAllowed(undefined, undefined)).toBe(true);
    expect(scrapeAllowed("Bearer whatever", undefined)).toBe(true);
  });

  it("wants the configured token as a bearer token when there is one", () => {
    const token = "s3cret-metrics-token";
    expect(scrapeAllowed(`Bearer ${token}`, token)).toBe(true);
    expect(scrapeAllowed(`bearer ${token}`, token)).toBe(true);
    expect(scrapeAllowed(undefined, token)).toBe(false);
    expect(scrapeAllowed("Bearer wrong", token)).toBe(false);
    expect(scrapeAllowed(`Bearer ${token}x`, token)).toBe(false);
    expect(scrapeAllowed(`Basic ${token}`, token)).toBe(false);
    expect(scrapeAllowed("Bearer ", token)).toBe(false);
  });
});
