import { envInteger as integer, parseEnvironment, sharedEnvFields } from "@pes/config";
import { DEFAULT_BATCH_MAX_ITEMS } from "@pes/contracts";
import { DEV_AUDIENCE, DEV_ISSUER } from "@pes/dev-issuer";
import { z } from "zod";
import type { QueueDashboardSettings } from "./admin/queue-dashboard.js";

export { EnvError } from "@pes/config";

/**
 * Every environment variable the API reads, parsed once at start. Empty values count as unset.
 * When AUTH_DEV_ISSUER is false (the default) the three AUTH_* identity-provider settings are required.
 */
export const ApiEnvSchema = z
  .object({
    PORT: integer(0, 65_535).default(8080),
    HOST: z.string().min(1).default("0.0.0.0"),
    ...sharedEnvFields,
    EXECUTION_TIMEOUT_MS: integer(1, 3_600_000).default(120_000),
    COALESCE_BUCKET_SECONDS: integer(0, 86_400).default(60),
    COALESCE_REUSE_SECONDS: integer(0, 86_400).default(10),
    BATCH_MAX_ITEMS: integer(1, 10_000).default(DEFAULT_BATCH_MAX_ITEMS),
    ASYNC_BATCH_MAX_ITEMS: integer(1, 1_000_000).default(10_000),
    ASYNC_BATCH_TIMEOUT_SECONDS: integer(1, 7 * 86_400).default(3_600),
    ASYNC_BATCH_BODY_LIMIT: z
      .string()
      .regex(/^\d+(\.\d+)?\s*(b|kb|mb)?$/i, 'must be a size such as "16mb", "512kb" or "65536"')
      .default("16mb"),
    ORG_EXECUTIONS_IN_FLIGHT: integer(1, 1_000_000).default(2_000),
    ORG_ITEMS_QUEUED: integer(1, 10_000_000).default(20_000),
    BODY_LIMIT: z
      .string()
      .regex(/^\d+(\.\d+)?\s*(b|kb|mb)?$/i, 'must be a size such as "1mb", "512kb" or "65536"')
      .default("1mb"),
    MAX_IN_FLIGHT: integer(1, 1_000_000).default(2000),
    METRICS_QUEUE_CACHE_MS: integer(0, 600_000).default(5_000),
    SHUTDOWN_DRAIN_MS: integer(0, 3_600_000).default(5_000),
    HTTP_HEADERS_TIMEOUT_MS: integer(1, 3_600_000).default(10_000),
    HTTP_REQUEST_TIMEOUT_MS: integer(1, 3_600_000).default(30_000),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: integer(1, 3_600_000).default(65_000),
    AUTH_DEV_ISSUER: z.stringbool({ error: 'must be "true" or "false"' }).default(false),
    AUTH_JWKS_URL: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
    AUTH_ISSUER: z.string().min(1).optional(),
    AUTH_AUDIENCE: z.string().min(1).optional(),
    AUTH_ORG_CLAIM: z.string().min(1).default("org_id"),
    AUTH_JWKS_TIMEOUT_MS: integer(1, 60_000).default(3000),
    ADMIN_DASHBOARD: z.stringbool({ error: 'must be "true" or "false"' }).default(false),
    ADMIN_DASHBOARD_READ_ONLY: z.stringbool({ error: 'must be "true" or "false"' }).default(true),
    ADMIN_SCOPE: z.string().regex(/^\S+$/, "must be one scope or role, without spaces").default("pes:admin"),
    ADMIN_USER: z.string().regex(/^[^:\s]+$/, "must be a user name without ':' or spaces").default("admin"),
    ADMIN_PASSWORD: z.string().min(16, "must be at least 16 characters").optional(),
  })
  .superRefine((env, ctx) => {
    if (!env.AUTH_DEV_ISSUER) {
      for (const name of ["AUTH_JWKS_URL", "AUTH_ISSUER", "AUTH_AUDIENCE"] as const) {
        if (env[name] === undefined) {
          ctx.addIssue({ code: "custom", path: [name], message: "is required unless AUTH_DEV_ISSUER=true" });
        }
      }
    } else if (env.AUTH_JWKS_URL === undefined && env.PORT === 0) {
      ctx.addIssue({
        code: "custom",
        path: ["AUTH_JWKS_URL"],
        message: "is required with AUTH_DEV_ISSUER=true and PORT=0 (the API's own JWKS address is unknown)",
      });
    }
    if (env.HTTP_HEADERS_TIMEOUT_MS > env.HTTP_REQUEST_TIMEOUT_MS) {
      ctx.addIssue({ code: "custom", path: ["HTTP_HEADERS_TIMEOUT_MS"], message: "must not exceed HTTP_REQUEST_TIMEOUT_MS" });
    }
    if (env.COALESCE_REUSE_SECONDS > env.EXECUTION_RETENTION_SECONDS) {
      ctx.addIssue({ code: "custom", path: ["COALESCE_REUSE_SECONDS"], message: "must not exceed EXECUTION_RETENTION_SECONDS" });
    }
    if (env.BATCH_MAX_ITEMS > env.MAX_IN_FLIGHT) {
      ctx.addIssue({ code: "custom", path: ["BATCH_MAX_ITEMS"], message: "must not exceed MAX_IN_FLIGHT" });
    }
  });

/** Identity-provider settings after defaults: with the dev issuer on, the API verifies against its own JWKS. */
export interface AuthSettings {
  devIssuer: boolean;
  jwksUrl: string;
  issuer: string;
  audience: string;
  orgClaim: string;
  /** Overall deadline of one JWKS fetch; past it the caller gets 503 with Retry-After. */
  jwksTimeoutMs: number;
}

/** How long the HTTP server waits on a slow client (Node's server options of the same names). */
export interface HttpTimeouts {
  /** From the first byte of a request (or the connection) to the end of its headers; then 408. */
  headersTimeoutMs: number;
  /** From the first byte of a request to the end of its body; then 408. The response may take longer. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open between requests. */
  keepAliveTimeoutMs: number;
}

export interface ApiEnv {
  port: number;
  host: string;
  redisUrl: string;
  queuePrefix: string;
  configDir: string;
  executionTimeoutMs: number;
  /** How long a finished execution (and an Idempotency-Key) is kept for reading back. */
  executionRetentionMs: number;
  /** Identical requests share one execution; undefined (COALESCE_BUCKET_SECONDS=0): never. */
  coalescing: { bucketMs: number; reuseMs: number } | undefined;
  batchMaxItems: number;
  /** Async batches (`Prefer: respond-async`): their longest inputList, and how long their items may wait and run. */
  asyncBatch: { maxItems: number; timeoutMs: number; bodyLimit: string };
  /** The limits of an organization that sets none of its own (`limits` in its file). */
  organizationLimits: { executionsInFlight: number; itemsQueued: number };
  bodyLimit: string;
  maxInFlight: number;
  http: HttpTimeouts;
  auth: AuthSettings;
  allowedChatHosts: readonly string[];
  /** The queue dashboard at /admin/queues; undefined unless ADMIN_DASHBOARD=true. */
  adminDashboard: QueueDashboardSettings | undefined;
  logLevel: string;
  /** How long the API keeps serving after SIGTERM, /readyz answering 503, before it stops accepting. */
  shutdownDrainMs: number;
  /** How long in-flight requests may run on once the API stops accepting, before the execution client is closed. */
  shutdownTimeoutMs: number;
  /** The bearer token `GET /metrics` wants (METRICS_TOKEN); none: anyone who reaches it may scrape. */
  metricsToken: string | undefined;
  /** How long one reading of the queue's depth serves every scrape (METRICS_QUEUE_CACHE_MS). */
  metricsQueueCacheMs: number;
  /** LINK_SIGNING_SECRET: checks the signed links of executions' pages; undefined: no page is served. */
  linkSigningSecret: string | undefined;
}

/** Parses the environment once; throws EnvError naming each bad or missing variable. */
export function parseEnv(source: NodeJS.ProcessEnv = process.env): ApiEnv {
  const env = parseEnvironment(ApiEnvSchema, source);
  return {
    port: env.PORT,
    host: env.HOST,
    redisUrl: env.REDIS_URL,
    queuePrefix: env.QUEUE_PREFIX,
    configDir: env.CONFIG_DIR,
    executionTimeoutMs: env.EXECUTION_TIMEOUT_MS,
    executionRetentionMs: env.EXECUTION_RETENTION_SECONDS * 1_000,
    coalescing:
      env.COALESCE_BUCKET_SECONDS === 0 ? undefined : { bucketMs: env.COALESCE_BUCKET_SECONDS * 1_000, reuseMs: env.COALESCE_REUSE_SECONDS * 1_000 },
    batchMaxItems: env.BATCH_MAX_ITEMS,
    asyncBatch: { maxItems: env.ASYNC_BATCH_MAX_ITEMS, timeoutMs: env.ASYNC_BATCH_TIMEOUT_SECONDS * 1_000, bodyLimit: env.ASYNC_BATCH_BODY_LIMIT },
    organizationLimits: { executionsInFlight: env.ORG_EXECUTIONS_IN_FLIGHT, itemsQueued: env.ORG_ITEMS_QUEUED },
    bodyLimit: env.BODY_LIMIT,
    maxInFlight: env.MAX_IN_FLIGHT,
    http: {
      headersTimeoutMs: env.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: env.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    },
    auth: {
      devIssuer: env.AUTH_DEV_ISSUER,
      jwksUrl: env.AUTH_JWKS_URL ?? `http://127.0.0.1:${env.PORT}/.well-known/jwks.json`,
      issuer: env.AUTH_ISSUER ?? DEV_ISSUER,
      audience: env.AUTH_AUDIENCE ?? DEV_AUDIENCE,
      orgClaim: env.AUTH_ORG_CLAIM,
      jwksTimeoutMs: env.AUTH_JWKS_TIMEOUT_MS,
    },
    allowedChatHosts: env.CHAT_ALLOWED_HOSTS,
    adminDashboard: env.ADMIN_DASHBOARD
      ? {
          scope: env.ADMIN_SCOPE,
          basic: env.ADMIN_PASSWORD === undefined ? undefined : { user: env.ADMIN_USER, password: env.ADMIN_PASSWORD },
          readOnly: env.ADMIN_DASHBOARD_READ_ONLY,
        }
      : undefined,
    logLevel: env.LOG_LEVEL,
    shutdownDrainMs: env.SHUTDOWN_DRAIN_MS,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    metricsToken: env.METRICS_TOKEN,
    metricsQueueCacheMs: env.METRICS_QUEUE_CACHE_MS,
    linkSigningSecret: env.LINK_SIGNING_SECRET,
  };
}
