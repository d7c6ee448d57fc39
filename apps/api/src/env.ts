import { fileURLToPath } from "node:url";
import { DEV_AUDIENCE, DEV_ISSUER } from "@pes/dev-issuer";
import { DEFAULT_BATCH_MAX_ITEMS } from "@pes/contracts";
import { z } from "zod";

/** `<repo>/config/example`, from this file's location (`apps/api/{src,dist}/`), whatever the working directory. */
const defaultConfigDir = fileURLToPath(new URL("../../../config/example", import.meta.url));

const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/**
 * Every environment variable the API reads, parsed once at start. Empty values count as unset.
 * When AUTH_DEV_ISSUER is false (the default) the three AUTH_* identity-provider settings are required.
 */
export const ApiEnvSchema = z
  .object({
    PORT: integer(0, 65_535).default(8080),
    HOST: z.string().min(1).default("0.0.0.0"),
    REDIS_URL: z.url({ protocol: /^rediss?$/, error: "must be a redis:// or rediss:// URL" }).default("redis://127.0.0.1:6379"),
    QUEUE_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9:_-]{1,64}$/, "must be 1-64 letters, digits, ':', '_' or '-'")
      .default("pes"),
    CONFIG_DIR: z.string().min(1).default(defaultConfigDir),
    EXECUTION_TIMEOUT_MS: integer(1, 3_600_000).default(120_000),
    BATCH_MAX_ITEMS: integer(1, 10_000).default(DEFAULT_BATCH_MAX_ITEMS),
    BODY_LIMIT: z
      .string()
      .regex(/^\d+(\.\d+)?\s*(b|kb|mb)?$/i, 'must be a size such as "1mb", "512kb" or "65536"')
      .default("1mb"),
    MAX_IN_FLIGHT: integer(1, 1_000_000).default(2000),
    AUTH_DEV_ISSUER: z.stringbool({ error: 'must be "true" or "false"' }).default(false),
    AUTH_JWKS_URL: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
    AUTH_ISSUER: z.string().min(1).optional(),
    AUTH_AUDIENCE: z.string().min(1).optional(),
    AUTH_ORG_CLAIM: z.string().min(1).default("org_id"),
    CHAT_ALLOWED_HOSTS: z
      .string()
      .default("")
      .transform((list) =>
        list
          .split(",")
          .map((host) => host.trim().toLowerCase())
          .filter((host) => host !== ""),
      ),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    SHUTDOWN_TIMEOUT_MS: integer(0, 3_600_000).default(25_000),
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
}

export interface ApiEnv {
  port: number;
  host: string;
  redisUrl: string;
  queuePrefix: string;
  configDir: string;
  executionTimeoutMs: number;
  batchMaxItems: number;
  bodyLimit: string;
  maxInFlight: number;
  auth: AuthSettings;
  allowedChatHosts: readonly string[];
  logLevel: string;
  /** How long in-flight requests may run on after SIGTERM before the execution client is closed. */
  shutdownTimeoutMs: number;
}

/** A bad environment; the message names every offending variable. */
export class EnvError extends Error {
  override name = "EnvError";
}

/** Parses the environment once; throws EnvError naming each bad or missing variable. */
export function parseEnv(source: NodeJS.ProcessEnv = process.env): ApiEnv {
  // An empty value (`FOO=` in a compose file) means "not set", so defaults apply.
  const present = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== undefined && value !== ""));
  const parsed = ApiEnvSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".") || "(environment)"}: ${issue.message}`);
    throw new EnvError(`Invalid environment:\n${lines.join("\n")}`);
  }
  const env = parsed.data;
  return {
    port: env.PORT,
    host: env.HOST,
    redisUrl: env.REDIS_URL,
    queuePrefix: env.QUEUE_PREFIX,
    configDir: env.CONFIG_DIR,
    executionTimeoutMs: env.EXECUTION_TIMEOUT_MS,
    batchMaxItems: env.BATCH_MAX_ITEMS,
    bodyLimit: env.BODY_LIMIT,
    maxInFlight: env.MAX_IN_FLIGHT,
    auth: {
      devIssuer: env.AUTH_DEV_ISSUER,
      jwksUrl: env.AUTH_JWKS_URL ?? `http://127.0.0.1:${env.PORT}/.well-known/jwks.json`,
      issuer: env.AUTH_ISSUER ?? DEV_ISSUER,
      audience: env.AUTH_AUDIENCE ?? DEV_AUDIENCE,
      orgClaim: env.AUTH_ORG_CLAIM,
    },
    allowedChatHosts: env.CHAT_ALLOWED_HOSTS,
    logLevel: env.LOG_LEVEL,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
  };
}
