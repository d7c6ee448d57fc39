import { z } from "zod";

/** A whole number from an environment string, within bounds. */
export const envInteger = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** The variables every process of the service reads, with the same meaning and defaults everywhere. */
export const sharedEnvFields = {
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: "must be a redis:// or rediss:// URL" }).default("redis://127.0.0.1:6379"),
  /** API and workers must agree on it: it prefixes the queue, the reply channels and the result keys. */
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_-]{1,64}$/, "must be 1-64 letters, digits, ':', '_' or '-'")
    .default("pes"),
  /**
   * Required: a service that silently ran the shipped example would answer for organizations nobody
   * configured. The quickstart and the tests name their own; `config/example` is there for a trial.
   */
  CONFIG_DIR: z.string({ error: "is required: the folder holding organizations/ and playbooks/ (config/example for a trial)" }).min(1),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /**
   * Chat hosts accepted in message links besides `*.slack.com` and the organization's own
   * (`slack.allowedHosts`), comma-separated: the API checks links with them, the worker again before it
   * reads a message.
   */
  CHAT_ALLOWED_HOSTS: z
    .string()
    .default("")
    .transform((list) =>
      list
        .split(",")
        .map((host) => host.trim().toLowerCase())
        .filter((host) => host !== ""),
    ),
  /** How long in-flight work may go on after SIGTERM. */
  SHUTDOWN_TIMEOUT_MS: envInteger(0, 3_600_000).default(25_000),
  /** When set, `GET /metrics` (API and workers) wants it as a bearer token; unset, anyone who can reach it may scrape. */
  METRICS_TOKEN: z.string().min(16, "must be at least 16 characters (e.g. openssl rand -hex 32)").optional(),
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
