import { z } from "zod";

/** A whole number from an environment string, within bounds. */
export const envInteger = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** A cluster's seed nodes: `host:port` (an IPv6 host in brackets), comma-separated. */
const CLUSTER_URL =
  /^rediss?\+cluster:\/\/(?:[^@/]*@)?(?:(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5})(?:,(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5})*\/?$/;

function isRedisUrl(value: string): boolean {
  if (CLUSTER_URL.test(value)) return true;
  return URL.canParse(value) && /^rediss?:$/.test(new URL(value).protocol);
}

/**
 * The variables every process of the service reads, with the same meaning and defaults everywhere. Each
 * description is the variable's documentation (docs/configuration.md is generated from the schemas).
 */
export const sharedEnvFields = {
  REDIS_URL: z
    .string()
    .refine(isRedisUrl, "must be a redis:// or rediss:// URL, or redis+cluster://host:port,host:port/ for a Redis Cluster")
    .default("redis://127.0.0.1:6379")
    .describe(
      "One Redis (`redis://`, `rediss://` with TLS), or a Redis Cluster: `redis+cluster://[user:password@]host:port,host:port/` " +
        "(`rediss+cluster://` with TLS), any of its nodes as seeds. It must run with `maxmemory-policy noeviction`.",
    ),
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_-]{1,64}$/, "must be 1-64 letters, digits, ':', '_' or '-'")
    .default("pes")
    .describe("Prefixes the queues, the reply channels and the result keys: the API and the workers must agree on it."),
  // Required: a service that silently ran the shipped example would answer for organizations nobody configured.
  CONFIG_DIR: z
    .string({ error: "is required: the folder holding organizations/ and playbooks/ (config/example for a trial)" })
    .min(1)
    .describe("The folder holding `organizations/` and `playbooks/` (`config/example` for a trial)."),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info").describe("The pino log level."),
  CHAT_ALLOWED_HOSTS: z
    .string()
    .default("")
    .transform((list) =>
      list
        .split(",")
        .map((host) => host.trim().toLowerCase())
        .filter((host) => host !== ""),
    )
    .describe(
      "Chat hosts accepted in message links besides `*.slack.com` and each organization's own (`slack.allowedHosts`), " +
        "comma-separated: the API checks links with them, the workers again before they read a message. Set the same on both.",
    ),
  SHUTDOWN_TIMEOUT_MS: envInteger(0, 3_600_000)
    .default(25_000)
    .describe("After SIGTERM, how long in-flight work may go on (a worker then hands its active executions back to the queue)."),
  METRICS_TOKEN: z
    .string()
    .min(16, "must be at least 16 characters (e.g. openssl rand -hex 32)")
    .optional()
    .describe("When set, `GET /metrics` wants it as `Authorization: Bearer …`; unset, anyone who can reach it may scrape (a secret)."),
  EXECUTION_RETENTION_SECONDS: envInteger(1, 30 * 86_400)
    .default(3_600)
    .describe(
      "How long a finished execution is kept: its record, read back by `GET /playbook/execution/{id}` (an `Idempotency-Key` is " +
        "remembered as long), and its charts' data, which the workers write. The API and the workers must agree on it.",
    ),
  LINK_SIGNING_SECRET: z
    .string()
    .min(32, "must be at least 32 characters (e.g. openssl rand -hex 32)")
    .optional()
    .describe(
      "Signs the links to executions' pages and chart images that browsers and chat cards open without a token (HMAC-SHA256): " +
        "the workers sign, the API checks, so both need the same. Unset: no such links, and the API serves no page (a secret).",
    ),
};

/** A bad environment; the message names every offending variable. */
export class EnvError extends Error {
  override name = "EnvError";
}

/**
 * Parses the environment once with `schema`. An empty value (`FOO=` in a compose file) counts as unset,
 * so defaults apply.
 * @throws EnvError naming each bad or missing variable, never its value.
 */
export function parseEnvironment<Schema extends z.ZodType>(schema: Schema, source: NodeJS.ProcessEnv): z.output<Schema> {
  const present = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== undefined && value !== ""));
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".") || "(environment)"}: ${issue.message}`);
    throw new EnvError(`Invalid environment:\n${lines.join("\n")}`);
  }
  return parsed.data;
}
