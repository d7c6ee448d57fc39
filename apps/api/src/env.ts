import { envInteger as integer, parseEnvironment, sharedEnvFields } from "@pes/config";
import { DEFAULT_BATCH_MAX_ITEMS } from "@pes/contracts";
import { DEV_AUDIENCE, DEV_ISSUER, defaultDevKeyDir } from "@pes/dev-issuer";
import { z } from "zod";

export { EnvError } from "@pes/config";

/**
 * Every environment variable the API reads, parsed once at start. Empty values count as unset. Each
 * variable's description is its documentation: docs/configuration.md is generated from this schema.
 */
export const ApiEnvSchema = z
  .object({
    PORT: integer(0, 65_535).default(8080).describe("Where the API listens (`0`: a free port)."),
    HOST: z.string().min(1).default("0.0.0.0").describe("The address the API listens on."),
    ...sharedEnvFields,
    EXECUTION_TIMEOUT_MS: integer(1, 3_600_000).default(120_000).describe('How long a caller waits for an execution before `200 {"error":"…timed out…"}`.'),
    COALESCE_BUCKET_SECONDS: integer(0, 86_400)
      .default(60)
      .describe("Identical requests whose issue times fall in one bucket of this length share one execution; `0` turns coalescing off."),
    COALESCE_REUSE_SECONDS: integer(0, 86_400)
      .default(10)
      .describe("How long a completed result is still given to identical newcomers (at most `EXECUTION_RETENTION_SECONDS`)."),
    BATCH_MAX_ITEMS: integer(1, 10_000).default(DEFAULT_BATCH_MAX_ITEMS).describe("The largest synchronous batch (at most `MAX_IN_FLIGHT`)."),
    ASYNC_BATCH_MAX_ITEMS: integer(1, 1_000_000).default(10_000).describe("The largest batch with `Prefer: respond-async`."),
    ASYNC_BATCH_TIMEOUT_SECONDS: integer(1, 7 * 86_400)
      .default(3_600)
      .describe("How long an async batch's items may wait and run; the batch is kept this long plus `EXECUTION_RETENTION_SECONDS`."),
    ASYNC_BATCH_BODY_LIMIT: z
      .string()
      .regex(/^\d+(\.\d+)?\s*(b|kb|mb)?$/i, 'must be a size such as "16mb", "512kb" or "65536"')
      .default("16mb")
      .describe("The largest batch request body (413 above)."),
    ORG_EXECUTIONS_IN_FLIGHT: integer(1, 1_000_000)
      .default(2_000)
      .describe("An organization's executions in flight across all API replicas, unless its file sets `limits.executionsInFlight` (429 above)."),
    ORG_ITEMS_QUEUED: integer(1, 10_000_000)
      .default(20_000)
      .describe("An organization's async batch items queued or running, unless its file sets `limits.itemsQueued` (429 above)."),
    BODY_LIMIT: z
      .string()
      .regex(/^\d+(\.\d+)?\s*(b|kb|mb)?$/i, 'must be a size such as "1mb", "512kb" or "65536"')
      .default("1mb")
      .describe("The largest request body (413 above)."),
    MAX_IN_FLIGHT: integer(1, 1_000_000).default(2000).describe("Executions (batch items count) one API instance waits for at once (429 above)."),
    METRICS_QUEUE_CACHE_MS: integer(0, 600_000).default(5_000).describe("How long one reading of the queues' depth serves every scrape of `/metrics`."),
    SHUTDOWN_DRAIN_MS: integer(0, 3_600_000)
      .default(5_000)
      .describe("After SIGTERM, how long the API keeps serving with `/readyz` answering 503 before it stops accepting (not on SIGINT)."),
    HTTP_HEADERS_TIMEOUT_MS: integer(1, 3_600_000)
      .default(10_000)
      .describe("A client must send a request's headers within this (from its first byte, or from connecting): else 408 and the socket is closed."),
    HTTP_REQUEST_TIMEOUT_MS: integer(1, 3_600_000)
      .default(30_000)
      .describe("…and the whole request, body included, within this; waiting for the execution is not counted."),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: integer(1, 3_600_000)
      .default(65_000)
      .describe("How long an idle keep-alive connection stays open: longer than the usual load balancer's idle timeout (60 s), so the balancer closes first."),
    AUTH_DEV_ISSUER: z
      .stringbool({ error: 'must be "true" or "false"' })
      .default(false)
      .describe("`true` serves a development JWKS at `/.well-known/jwks.json` and defaults the three `AUTH_*` settings to it; never in production."),
    DEV_ISSUER_DIR: z
      .string()
      .min(1)
      .optional()
      .describe("Where the development issuer's key lives (read by the API and `npm run token`); unset: `.dev-issuer` at the repository's root."),
    AUTH_JWKS_URL: z
      .url({ protocol: /^https?$/, error: "must be an http(s) URL" })
      .transform(jwksEndpoint)
      .optional()
      .describe(
        "The identity provider's JWKS. Required unless `AUTH_DEV_ISSUER=true`. A `user:password@` in it is sent as HTTP Basic credentials (percent-encoded as in any URL) and never logged.",
      ),
    AUTH_ISSUER: z.string().min(1).optional().describe("The `iss` a token must carry. Required unless `AUTH_DEV_ISSUER=true`."),
    AUTH_AUDIENCE: z.string().min(1).optional().describe("The `aud` a token must carry. Required unless `AUTH_DEV_ISSUER=true`."),
    AUTH_ORG_CLAIM: z.string().min(1).default("org_id").describe("The token claim that names the organization."),
    AUTH_TEAMS_CLAIM: z
      .string()
      .min(1)
      .default("teams")
      .describe("The token claim that names the caller's teams inside its organization: a string, space-separated, or an array of strings."),
    AUTH_ORG_ADMIN_SCOPE: z
      .string()
      .regex(/^\S+$/, "must be one scope or role, without spaces")
      .default("pes:org-admin")
      .describe("What a token's `scope`, `scp` or `roles` must grant for its caller to be an admin of its organization."),
    AUTH_JWKS_TIMEOUT_MS: integer(1, 60_000)
      .default(3000)
      .describe("Deadline of one JWKS fetch, headers and body (answers over 256 KiB or 100 keys are refused); past it the caller gets 503 with `Retry-After`."),
    ADMIN_DASHBOARD: z.stringbool({ error: 'must be "true" or "false"' }).default(false).describe("`true` serves the queue dashboard at `/admin/queues`."),
    ADMIN_DASHBOARD_READ_ONLY: z
      .stringbool({ error: 'must be "true" or "false"' })
      .default(true)
      .describe("`false` lets admins retry, remove, pause and empty from the dashboard."),
    ADMIN_SCOPE: z
      .string()
      .regex(/^\S+$/, "must be one scope or role, without spaces")
      .default("pes:admin")
      .describe("What a token's `scope`, `scp` or `roles` must grant to open the dashboard."),
    ADMIN_USER: z
      .string()
      .regex(/^[^:\s]+$/, "must be a user name without ':' or spaces")
      .default("admin")
      .describe("With `ADMIN_PASSWORD`, the HTTP Basic user that opens the dashboard too, for a browser."),
    ADMIN_PASSWORD: z.string().min(16, "must be at least 16 characters").optional().describe("The HTTP Basic password of `ADMIN_USER` (a secret)."),
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

/** The API's settings, as parseEnv gives them. */
export type ApiEnv = ReturnType<typeof parseEnv>;

/**
 * AUTH_JWKS_URL split into the URL to fetch and its user and password, if any: fetch() refuses a URL
 * that holds credentials, and a URL is logged where a password must never be. They become Basic
 * credentials (RFC 7617: a user without `:`), percent-decoded as curl does; the issue never quotes them.
 */
function jwksEndpoint(raw: string, ctx: z.RefinementCtx): { url: string; basicAuth?: { user: string; password: string } } {
  const url = new URL(raw);
  if (url.username === "" && url.password === "") return { url: raw };
  let user: string;
  let password: string;
  try {
    user = decodeURIComponent(url.username);
    password = decodeURIComponent(url.password);
  } catch {
    ctx.addIssue({ code: "custom", message: "its user or password is not valid percent-encoding (write a % in them as %25)" });
    return z.NEVER;
  }
  if (user.includes(":")) {
    ctx.addIssue({ code: "custom", message: "its user cannot contain ':' (Basic credentials split user and password at the first ':')" });
    return z.NEVER;
  }
  url.username = "";
  url.password = "";
  return { url: url.href, basicAuth: { user, password } };
}

/** Parses the environment once; throws EnvError naming each bad or missing variable. */
export function parseEnv(source: NodeJS.ProcessEnv = process.env) {
  const env = parseEnvironment(ApiEnvSchema, source);
  return {
    port: env.PORT,
    host: env.HOST,
    redisUrl: env.REDIS_URL,
    queuePrefix: env.QUEUE_PREFIX,
    configDir: env.CONFIG_DIR,
    executionTimeoutMs: env.EXECUTION_TIMEOUT_MS,
    executionRetentionMs: env.EXECUTION_RETENTION_SECONDS * 1_000,
    coalescing: env.COALESCE_BUCKET_SECONDS === 0 ? undefined : { bucketMs: env.COALESCE_BUCKET_SECONDS * 1_000, reuseMs: env.COALESCE_REUSE_SECONDS * 1_000 },
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
      // Without the user and password AUTH_JWKS_URL may hold: safe to log. Those are a secret, never logged.
      jwksUrl: env.AUTH_JWKS_URL?.url ?? `http://127.0.0.1:${env.PORT}/.well-known/jwks.json`,
      ...(env.AUTH_JWKS_URL?.basicAuth === undefined ? {} : { jwksBasicAuth: env.AUTH_JWKS_URL.basicAuth }),
      issuer: env.AUTH_ISSUER ?? DEV_ISSUER,
      audience: env.AUTH_AUDIENCE ?? DEV_AUDIENCE,
      orgClaim: env.AUTH_ORG_CLAIM,
      teamsClaim: env.AUTH_TEAMS_CLAIM,
      orgAdminScope: env.AUTH_ORG_ADMIN_SCOPE,
      jwksTimeoutMs: env.AUTH_JWKS_TIMEOUT_MS,
      devKeyDir: defaultDevKeyDir({ DEV_ISSUER_DIR: env.DEV_ISSUER_DIR }),
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
