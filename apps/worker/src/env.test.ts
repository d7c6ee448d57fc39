import { describe, expect, it } from "vitest";
import { EnvError, parseWorkerEnv } from "./env.js";

describe("parseWorkerEnv", () => {
  it("applies the documented defaults", () => {
    expect(parseWorkerEnv({ CONFIG_DIR: "/config" })).toEqual({
      redisUrl: "redis://127.0.0.1:6379",
      queuePrefix: "pes",
      configDir: "/config",
      concurrency: 50,
      batchConcurrency: 13,
      actionTimeoutMs: 15_000,
      maxConcurrentActions: 32,
      lockDurationMs: 30_000,
      stalledIntervalMs: 30_000,
      shutdownTimeoutMs: 25_000,
      logLevel: "info",
      http: { port: 9464, host: "0.0.0.0" },
      metricsToken: undefined,
      slackPostIntervalMs: 1_000,
      teamsPostIntervalMs: 1_000,
      allowedChatHosts: [],
      languageModel: undefined,
      executionRetentionMs: 3_600_000,
      publicUrl: undefined,
      linkSigning: undefined,
      audit: { retentionDays: 365, logFile: undefined },
    });
  });

  it("reads the audit trail's retention and file, and refuses a retention out of range", () => {
    expect(parseWorkerEnv({ CONFIG_DIR: "/config", AUDIT_RETENTION_DAYS: "30", AUDIT_LOG_FILE: "/var/log/pes/audit.jsonl" }).audit).toEqual({
      retentionDays: 30,
      logFile: "/var/log/pes/audit.jsonl",
    });
    expect(() => parseWorkerEnv({ CONFIG_DIR: "/config", AUDIT_RETENTION_DAYS: "0" })).toThrow(EnvError);
  });

  it("signs links only with both LINK_SIGNING_SECRET and PUBLIC_URL, for LINK_LIFETIME_SECONDS (7 days by default)", () => {
    const secret = "a-link-signing-secret-of-32-chars!!";
    expect(parseWorkerEnv({ CONFIG_DIR: "/config", PUBLIC_URL: "https://pes.example.com" })).toMatchObject({
      publicUrl: "https://pes.example.com",
      linkSigning: undefined,
    });
    expect(parseWorkerEnv({ CONFIG_DIR: "/config", LINK_SIGNING_SECRET: secret }).linkSigning).toBeUndefined();
    expect(parseWorkerEnv({ CONFIG_DIR: "/config", LINK_SIGNING_SECRET: secret, PUBLIC_URL: "https://pes.example.com" })).toMatchObject({
      publicUrl: "https://pes.example.com",
      linkSigning: { secret, lifetimeSeconds: 7 * 86_400 },
    });
    expect(
      parseWorkerEnv({ CONFIG_DIR: "/config", LINK_SIGNING_SECRET: secret, PUBLIC_URL: "https://x.example", LINK_LIFETIME_SECONDS: "3600" }).linkSigning
        ?.lifetimeSeconds,
    ).toBe(3_600);
    const parse = (env: Record<string, string>) => () => parseWorkerEnv({ CONFIG_DIR: "/config", ...env });
    expect(parse({ LINK_SIGNING_SECRET: "short-secret" })).toThrow(/LINK_SIGNING_SECRET: must be at least 32 characters/);
    expect(parse({ LINK_SIGNING_SECRET: "short-secret" })).not.toThrow(/short-secret/);
    expect(parse({ PUBLIC_URL: "pes.example.com" })).toThrow(/PUBLIC_URL: must be an http\(s\) URL/);
    expect(parse({ LINK_LIFETIME_SECONDS: "10" })).toThrow(/LINK_LIFETIME_SECONDS/);
  });

  it("reads the extra chat hosts as the API does: comma-separated, trimmed, lower-cased", () => {
    expect(parseWorkerEnv({ CONFIG_DIR: "/config", CHAT_ALLOWED_HOSTS: " chat.acme.test, Slack.ACME.example ," }).allowedChatHosts).toEqual([
      "chat.acme.test",
      "slack.acme.example",
    ]);
  });

  it("coerces numbers and treats empty values as unset", () => {
    const env = parseWorkerEnv({ CONFIG_DIR: "/config", WORKER_CONCURRENCY: "8", WORKER_LOCK_DURATION_MS: "2000", QUEUE_PREFIX: "", LOG_LEVEL: "debug" });
    expect(env).toMatchObject({ concurrency: 8, batchConcurrency: 2, lockDurationMs: 2_000, queuePrefix: "pes", logLevel: "debug" });
    expect(parseWorkerEnv({ CONFIG_DIR: "/config", WORKER_BATCH_CONCURRENCY: "5" }).batchConcurrency).toBe(5);
  });

  it("names every bad variable", () => {
    const parse = () => parseWorkerEnv({ WORKER_CONCURRENCY: "0", REDIS_URL: "http://localhost:6379", SHUTDOWN_TIMEOUT_MS: "soon" });
    expect(parse).toThrow(EnvError);
    expect(parse).toThrow(/WORKER_CONCURRENCY/);
    expect(parse).toThrow(/REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL, or redis\+cluster:/);
    expect(parse).toThrow(/SHUTDOWN_TIMEOUT_MS/);
  });

  it("reads the HTTP listener's address and the metrics token", () => {
    const env = parseWorkerEnv({
      CONFIG_DIR: "/config",
      WORKER_HTTP_PORT: "0",
      WORKER_HTTP_HOST: "127.0.0.1",
      METRICS_TOKEN: "a-scraper-token-of-32-characters",
    });
    expect(env).toMatchObject({ http: { port: 0, host: "127.0.0.1" }, metricsToken: "a-scraper-token-of-32-characters" });
    expect(() => parseWorkerEnv({ CONFIG_DIR: "/config", WORKER_HTTP_PORT: "65536" })).toThrow(/WORKER_HTTP_PORT/);
    expect(() => parseWorkerEnv({ CONFIG_DIR: "/config", METRICS_TOKEN: "short" })).toThrow(/METRICS_TOKEN: must be at least 16 characters/);
  });

  it("requires CONFIG_DIR: a worker never runs the shipped example by accident", () => {
    expect(() => parseWorkerEnv({})).toThrow(/CONFIG_DIR: is required/);
  });

  it("reads the language model's settings, both or none of its base URL and model, without echoing the key", () => {
    expect(parseWorkerEnv({ CONFIG_DIR: "/config" }).languageModel).toBeUndefined();
    expect(
      parseWorkerEnv({ CONFIG_DIR: "/config", LLM_BASE_URL: "http://127.0.0.1:8000/v1", LLM_MODEL: "small", LLM_API_KEY: "sk-secret" }).languageModel,
    ).toEqual({
      baseUrl: "http://127.0.0.1:8000/v1",
      model: "small",
      apiKey: "sk-secret",
      timeoutMs: 10_000,
    });
    const parse = (env: Record<string, string>) => () => parseWorkerEnv({ CONFIG_DIR: "/config", LLM_API_KEY: "sk-secret", ...env });
    expect(parse({ LLM_BASE_URL: "http://127.0.0.1:8000/v1" })).toThrow(/LLM_MODEL: LLM_BASE_URL and LLM_MODEL go together/);
    expect(parse({ LLM_BASE_URL: "ftp://x", LLM_MODEL: "m" })).toThrow(/LLM_BASE_URL: must be an http\(s\) URL/);
    expect(parse({ LLM_BASE_URL: "ftp://x", LLM_MODEL: "m", LLM_TIMEOUT_MS: "0" })).toThrow(/LLM_TIMEOUT_MS/);
    expect(parse({ LLM_MODEL: "m" })).not.toThrow(/sk-secret/);
  });
});
