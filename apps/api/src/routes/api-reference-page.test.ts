import request from "supertest";
import { describe, expect, it } from "vitest";
import { testApp } from "../testing/fixtures.js";

// No request here carries a token, so the verifier never fetches this address.
const { app } = testApp({ jwksUrl: "http://127.0.0.1:9/jwks.json" });

describe("GET /docs", () => {
  it("serves the reference page without a token, under a strict Content-Security-Policy", async () => {
    const response = await request(app).get("/docs");
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toBe("text/html; charset=utf-8");
    const policy = response.headers["content-security-policy"];
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("connect-src 'self'");
    expect(policy).not.toMatch(/https?:/);
    expect(response.text).toContain('<redoc spec-url="/openapi.json">');
    expect(response.text).toContain('<script src="/docs/redoc.standalone.js">');
    // Nothing the page loads comes from another host.
    expect(response.text).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it("serves the Redoc bundle the build copied, with no CDN address left in it", async () => {
    const response = await request(app).get("/docs/redoc.standalone.js");
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(response.headers["cache-control"]).toBe("public, max-age=3600");
    expect(response.text.length).toBeGreaterThan(500_000);
    expect(response.text).toContain("Redoc");
    expect(response.text).not.toContain("cdn.redoc.ly");
  });
});
