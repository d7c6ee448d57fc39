import { DEV_AUDIENCE, DEV_ISSUER } from "@pes/dev-issuer";
import { describe, expect, it } from "vitest";
import { EnvError, parseEnv } from "./env.js";

/** What a deployment must always set: its identity provider and its configuration. */
const idp = {
  CONFIG_DIR: "/config",
  AUTH_JWKS_URL: "https://idp.test/.well-known/jwks.json",
  AUTH_ISSUER: "https://idp.test/",
  AUTH_AUDIENCE: "pes",
};

describe("parseEnv", () => {
  it("applies the defaults", () => {
    expect(parseEnv(idp)).toEqual({
      port: 8080,
      host: "0.0.0.0",
      redisUrl: "redis://127.0.0.1:6379",
      queuePrefix: "pes",
      configDir: "/config",
      executionTimeoutMs: 120_000,
      executionRetentionMs: 3_600_000,
      coalescing: { bucketMs: 60_000, reuseMs: 10_000 },
      batchMaxItems: 100,
      asyncBatch: { maxItems: 10_000, timeoutMs: 3_600_000, bodyLimit: "16mb" },
      organizationLimits: { executionsInFlight: 2_000, itemsQueued: 20_000 },
      bodyLimit: "1mb",
      maxInFlight: 2000,
      http: { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 65_000 },
      auth: {
        devIssuer: false,
        jwksUrl: idp.AUTH_JWKS_URL,
        issuer: idp.AUTH_ISSUER,
        audience: idp.AUTH_AUDIENCE,
        orgClaim: "org_id",
        teamsClaim: "teams",
        orgAdminScope: "pes:org-admin",
        jwksTimeoutMs: 3000,
        devKeyDir: expect.stringMatching(/\.dev-issuer$/),
      },
      allowedChatHosts: [],
      logLevel: "info",
      shutdownDrainMs: 5_000,
      shutdownTimeoutMs: 25_000,
      metricsToken: undefined,
      metricsQueueCacheMs: 5_000,
    });
  });

  it("reads and coerces every variable", () => {
    const env = parseEnv({
      ...idp,
      PORT: "9000",
      HOST: "127.0.0.1",
      REDIS_URL: "rediss://redis.internal:6380",
      QUEUE_PREFIX: "pes-test",
      CONFIG_DIR: "/etc/pes",
      EXECUTION_TIMEOUT_MS: "30000",
      EXECUTION_RETENTION_SECONDS: "600",
      COALESCE_BUCKET_SECONDS: "300",
      COALESCE_REUSE_SECONDS: "30",
      BATCH_MAX_ITEMS: "500",
      BODY_LIMIT: "256kb",
      MAX_IN_FLIGHT: "5000",
      HTTP_HEADERS_TIMEOUT_MS: "5000",
      HTTP_REQUEST_TIMEOUT_MS: "20000",
      HTTP_KEEP_ALIVE_TIMEOUT_MS: "75000",
      AUTH_ORG_CLAIM: "tenant",
      AUTH_JWKS_TIMEOUT_MS: "500",
      CHAT_ALLOWED_HOSTS: " chat.acme.test, Mattermost.acme.test ,",
      LOG_LEVEL: "debug",
      SHUTDOWN_DRAIN_MS: "0",
      SHUTDOWN_TIMEOUT_MS: "1000",
      METRICS_TOKEN: "a-scraper-token-of-32-characters",
      METRICS_QUEUE_CACHE_MS: "1000",
    });
    expect(env).toMatchObject({
      port: 9000,
      host: "127.0.0.1",
      redisUrl: "rediss://redis.internal:6380",
      queuePrefix: "pes-test",
      configDir: "/etc/pes",
      executionTimeoutMs: 30_000,
      executionRetentionMs: 600_000,
      coalescing: { bucketMs: 300_000, reuseMs: 30_000 },
      batchMaxItems: 500,
      bodyLimit: "256kb",
      maxInFlight: 5000,
      http: { headersTimeoutMs: 5000, requestTimeoutMs: 20_000, keepAliveTimeoutMs: 75_000 },
      auth: { orgClaim: "tenant", jwksTimeoutMs: 500 },
      allowedChatHosts: ["chat.acme.test", "mattermost.acme.test"],
      logLevel: "debug",
      shutdownDrainMs: 0,
      shutdownTimeoutMs: 1000,
      metricsToken: "a-scraper-token-of-32-characters",
      metricsQueueCacheMs: 1000,
    });
  });

  it("requires CONFIG_DIR, even with the development issuer", () => {
    expect(() => parseEnv({ AUTH_DEV_ISSUER: "true" })).toThrow(/CONFIG_DIR: is required/);
  });

  it("requires the identity provider settings unless the dev issuer is on, naming each", () => {
    expect(() => parseEnv({})).toThrow(EnvError);
    try {
      parseEnv({ CONFIG_DIR: "/config", AUTH_ISSUER: "https://idp.test/", AUTH_JWKS_URL: "" });
    } catch (error) {
      expect(String(error)).toContain("AUTH_JWKS_URL: is required unless AUTH_DEV_ISSUER=true");
      expect(String(error)).toContain("AUTH_AUDIENCE: is required");
      expect(String(error)).not.toContain("AUTH_ISSUER:");
    }
    expect.assertions(4);
  });

  it("defaults to the development issuer and the API's own JWKS when switched on", () => {
    expect(parseEnv({ AUTH_DEV_ISSUER: "true", PORT: "8123", CONFIG_DIR: "/config" }).auth).toEqual({
      devIssuer: true,
      jwksUrl: "http://127.0.0.1:8123/.well-known/jwks.json",
      issuer: DEV_ISSUER,
      audience: DEV_AUDIENCE,
      orgClaim: "org_id",
      teamsClaim: "teams",
      orgAdminScope: "pes:org-admin",
      jwksTimeoutMs: 3000,
      devKeyDir: expect.stringMatching(/\.dev-issuer$/),
    });
    expect(parseEnv({ AUTH_DEV_ISSUER: "true", CONFIG_DIR: "/config", DEV_ISSUER_DIR: "/keys" }).auth.devKeyDir).toBe("/keys");
  });

  it("takes a user and password out of AUTH_JWKS_URL, as Basic credentials, the URL left without them", () => {
    const auth = parseEnv({ ...idp, AUTH_JWKS_URL: "https://pes-api:s3cret%20p%40ss%3Aword@idp.test/.well-known/jwks.json" }).auth;
    expect(auth.jwksUrl).toBe("https://idp.test/.well-known/jwks.json");
    expect(auth.jwksBasicAuth).toEqual({ user: "pes-api", password: "s3cret p@ss:word" });
    // A user alone is a user with an empty password, as curl reads it.
    expect(parseEnv({ ...idp, AUTH_JWKS_URL: "https://pes-api@idp.test/jwks" }).auth).toMatchObject({
      jwksUrl: "https://idp.test/jwks",
      jwksBasicAuth: { user: "pes-api", password: "" },
    });
    expect(parseEnv(idp).auth.jwksBasicAuth).toBeUndefined();
  });

  it("refuses credentials in AUTH_JWKS_URL that cannot be Basic credentials, never quoting them", () => {
    for (const url of ["https://pes%3Aapi:pw@idp.test/jwks", "https://pes:s3cret%zz@idp.test/jwks"]) {
      let message = "";
      try {
        parseEnv({ ...idp, AUTH_JWKS_URL: url });
      } catch (error) {
        message = String(error);
      }
      expect(message).toMatch(/AUTH_JWKS_URL: /);
      expect(message).not.toMatch(/s3cret|pes%3Aapi|pes:api/);
    }
  });

  it("takes a Redis Cluster's nodes as REDIS_URL", () => {
    const url = "rediss+cluster://pes:s3cret@10.0.0.1:6379,[::1]:7000,redis-2.internal:6379/";
    expect(parseEnv({ ...idp, REDIS_URL: url }).redisUrl).toBe(url);
  });

  it("is off unless explicitly switched on", () => {
    expect(parseEnv(idp).auth.devIssuer).toBe(false);
    expect(parseEnv({ ...idp, AUTH_DEV_ISSUER: "false" }).auth.devIssuer).toBe(false);
  });

  it.each([
    ["PORT", "http"],
    ["REDIS_URL", "http://127.0.0.1:6379"],
    ["REDIS_URL", "redis+cluster://10.0.0.1:6379,10.0.0.2/"],
    ["REDIS_URL", "redis+cluster://10.0.0.1:6379/0"],
    ["EXECUTION_TIMEOUT_MS", "-1"],
    ["EXECUTION_RETENTION_SECONDS", "0"],
    ["COALESCE_BUCKET_SECONDS", "-1"],
    ["COALESCE_REUSE_SECONDS", "1.5"],
    ["BODY_LIMIT", "lots"],
    ["MAX_IN_FLIGHT", "1.5"],
    ["HTTP_REQUEST_TIMEOUT_MS", "0"],
    ["AUTH_DEV_ISSUER", "maybe"],
    ["AUTH_JWKS_URL", "file:///etc/passwd"],
    ["AUTH_JWKS_TIMEOUT_MS", "0"],
    ["LOG_LEVEL", "loud"],
    ["QUEUE_PREFIX", "has space"],
    ["METRICS_TOKEN", "short"],
  ])("stops on a bad %s, naming it", (name, value) => {
    expect(() => parseEnv({ ...idp, [name]: value })).toThrow(new RegExp(`^Invalid environment:\\n  ${name}: `));
  });

  it("turns coalescing off with a bucket of 0, and refuses a reuse window past the retention", () => {
    expect(parseEnv({ ...idp, COALESCE_BUCKET_SECONDS: "0" }).coalescing).toBeUndefined();
    expect(() => parseEnv({ ...idp, EXECUTION_RETENTION_SECONDS: "60", COALESCE_REUSE_SECONDS: "120" })).toThrow(
      "COALESCE_REUSE_SECONDS: must not exceed EXECUTION_RETENTION_SECONDS",
    );
  });

  it("refuses a headers timeout above the request timeout (Node would refuse it at start)", () => {
    expect(() => parseEnv({ ...idp, HTTP_HEADERS_TIMEOUT_MS: "40000" })).toThrow("HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS");
  });

  it("leaves the queue dashboard off unless ADMIN_DASHBOARD=true; then read-only, for pes:admin, Basic with a password", () => {
    expect(parseEnv(idp).adminDashboard).toBeUndefined();
    expect(parseEnv({ ...idp, ADMIN_PASSWORD: "sixteen-chars-ok" }).adminDashboard).toBeUndefined();
    expect(parseEnv({ ...idp, ADMIN_DASHBOARD: "true" }).adminDashboard).toEqual({ scope: "pes:admin", basic: undefined, readOnly: true });
    expect(
      parseEnv({
        ...idp,
        ADMIN_DASHBOARD: "true",
        ADMIN_DASHBOARD_READ_ONLY: "false",
        ADMIN_SCOPE: "queues.admin",
        ADMIN_USER: "ops",
        ADMIN_PASSWORD: "sixteen-chars-ok",
      }).adminDashboard,
    ).toEqual({ scope: "queues.admin", basic: { user: "ops", password: "sixteen-chars-ok" }, readOnly: false });
  });

  it.each([
    ["ADMIN_DASHBOARD", "yes please"],
    ["ADMIN_SCOPE", "two scopes"],
    ["ADMIN_USER", "ops:1"],
    ["ADMIN_PASSWORD", "hunter2"],
  ])("stops on a bad %s, naming it but never echoing it", (name, value) => {
    expect(() => parseEnv({ ...idp, ADMIN_DASHBOARD: "true", [name]: value })).toThrow(new RegExp(`^Invalid environment:\\n  ${name}: `));
    expect(() => parseEnv({ ...idp, ADMIN_DASHBOARD: "true", [name]: value })).not.toThrow(value);
  });

  it("refuses a batch limit above MAX_IN_FLIGHT", () => {
    expect(() => parseEnv({ ...idp, BATCH_MAX_ITEMS: "300", MAX_IN_FLIGHT: "200" })).toThrow("BATCH_MAX_ITEMS: must not exceed MAX_IN_FLIGHT");
  });
});
