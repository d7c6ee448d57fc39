import { envInteger as integer, parseEnvironment, sharedEnvFields } from "@pes/config";
import { DEFAULT_LINK_LIFETIME_SECONDS } from "@pes/signed-links";
import { z } from "zod";

export { EnvError } from "@pes/config";

/**
 * Every environment variable the worker reads, parsed once at start. Empty values count as unset. Each
 * variable's description is its documentation: docs/configuration.md is generated from this schema.
 */
export const WorkerEnvSchema = z
  .object({
    ...sharedEnvFields,
    WORKER_CONCURRENCY: integer(1, 10_000).default(50).describe("Executions one worker process runs at once."),
    WORKER_BATCH_CONCURRENCY: integer(1, 10_000)
      .optional()
      .describe(
        "Of those, executions behind every other caller's work (async batch items, alerts over their organization's limit) " +
          "one worker process runs at most at once, so that room stays free for interactive executions; unset: a quarter of `WORKER_CONCURRENCY`. " +
          "While interactive executions run and the process is short of CPU, it runs fewer of them, down to one.",
      ),
    ACTION_TIMEOUT_MS: integer(1, 3_600_000).default(15_000).describe("Deadline of one action (data-source query)."),
    MAX_CONCURRENT_ACTIONS: integer(1, 10_000)
      .default(32)
      .describe("Actions one worker process runs at once, across its executions (a data source's `maxConcurrentQueries` bounds it across all workers)."),
    WORKER_LOCK_DURATION_MS: integer(1_000, 3_600_000)
      .default(30_000)
      .describe("How long a job's lock lives without renewal: a crashed worker's execution is run again after about this long."),
    WORKER_STALLED_INTERVAL_MS: integer(1_000, 3_600_000)
      .default(30_000)
      .describe("How often a worker looks for executions whose lock expired and puts them back in the queue."),
    WORKER_HTTP_PORT: integer(0, 65_535)
      .default(9464)
      .describe(
        "The worker's own listener: `/metrics`, `/healthz`, `/readyz` (9464 is Prometheus' usual exporter port; `0`: a free port, logged). Give each worker on one host its own.",
      ),
    WORKER_HTTP_HOST: z.string().min(1).default("0.0.0.0").describe("The address of that listener."),
    SLACK_POST_INTERVAL_MS: integer(0, 60_000)
      .default(1_000)
      .describe("Time between two posts to one Slack channel, across all workers (Slack allows about one per second)."),
    TEAMS_POST_INTERVAL_MS: integer(0, 60_000)
      .default(1_000)
      .describe(
        "Time between two posts to one Microsoft Teams channel, across all workers (Graph allows 4 requests a second per app on a channel, 3,000 messages a day).",
      ),
    LLM_BASE_URL: z
      .url({ protocol: /^https?$/, error: "must be an http(s) URL such as https://api.openai.com/v1" })
      .optional()
      .describe(
        "An OpenAI-compatible chat-completions API (`https://api.openai.com/v1`, a local vLLM or Ollama `…/v1`) for one optional pass over the findings; with `LLM_MODEL`, or neither.",
      ),
    LLM_MODEL: z.string().min(1).optional().describe("The model of that pass."),
    LLM_API_KEY: z.string().optional().describe("Sent as `Authorization: Bearer …` to `LLM_BASE_URL` only, never logged (a secret)."),
    LLM_TIMEOUT_MS: integer(100, 600_000).default(10_000).describe("How long the pass may take before the deterministic text is used."),
    PUBLIC_URL: z
      .url({ protocol: /^https?$/, error: "must be an http(s) URL such as https://pes.example.com" })
      .optional()
      .describe(
        "Where people reach the API (`https://pes.example.com`): results link charts and pages under it. Unset: chart links are paths on the API, and no page is linked.",
      ),
    LINK_LIFETIME_SECONDS: integer(60, 366 * 86_400)
      .default(DEFAULT_LINK_LIFETIME_SECONDS)
      .describe("How long a signed link to an execution's page or chart image is valid from when the worker writes it."),
    AUDIT_RETENTION_DAYS: integer(1, 3_650)
      .default(365)
      .describe(
        "How long the audit trail keeps an execution's record (a stream per organization, trimmed by age as records are appended, whole nodes at a time: a few may stay a little longer).",
      ),
    AUDIT_LOG_FILE: z
      .string()
      .min(1)
      .optional()
      .describe("A file the worker also appends each audit record to, one JSON line each, for a log pipeline (created when missing; never truncated)."),
  })
  .refine((env) => (env.LLM_BASE_URL === undefined) === (env.LLM_MODEL === undefined), {
    message: "LLM_BASE_URL and LLM_MODEL go together: set both to use a language model, or neither",
    path: ["LLM_MODEL"],
  });

/** The worker's settings, as parseWorkerEnv gives them. */
export type WorkerEnv = ReturnType<typeof parseWorkerEnv>;

/** Parses the environment once; throws EnvError naming each bad variable. */
export function parseWorkerEnv(source: NodeJS.ProcessEnv = process.env) {
  const env = parseEnvironment(WorkerEnvSchema, source);
  return {
    redisUrl: env.REDIS_URL,
    queuePrefix: env.QUEUE_PREFIX,
    configDir: env.CONFIG_DIR,
    concurrency: env.WORKER_CONCURRENCY,
    batchConcurrency: env.WORKER_BATCH_CONCURRENCY ?? Math.ceil(env.WORKER_CONCURRENCY / 4),
    actionTimeoutMs: env.ACTION_TIMEOUT_MS,
    maxConcurrentActions: env.MAX_CONCURRENT_ACTIONS,
    lockDurationMs: env.WORKER_LOCK_DURATION_MS,
    stalledIntervalMs: env.WORKER_STALLED_INTERVAL_MS,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    logLevel: env.LOG_LEVEL,
    http: { port: env.WORKER_HTTP_PORT, host: env.WORKER_HTTP_HOST },
    metricsToken: env.METRICS_TOKEN,
    slackPostIntervalMs: env.SLACK_POST_INTERVAL_MS,
    teamsPostIntervalMs: env.TEAMS_POST_INTERVAL_MS,
    allowedChatHosts: env.CHAT_ALLOWED_HOSTS,
    executionRetentionMs: env.EXECUTION_RETENTION_SECONDS * 1_000,
    /** Results' chart links are absolute under PUBLIC_URL; undefined: they are paths on the API. */
    publicUrl: env.PUBLIC_URL,
    /**
     * How links to pages and chart images are signed (they are under `publicUrl`): undefined unless both
     * LINK_SIGNING_SECRET and PUBLIC_URL are set.
     */
    linkSigning:
      env.LINK_SIGNING_SECRET === undefined || env.PUBLIC_URL === undefined
        ? undefined
        : { secret: env.LINK_SIGNING_SECRET, lifetimeSeconds: env.LINK_LIFETIME_SECONDS },
    /** How long audit records are kept (days), and the file they are appended to as JSON lines, if any. */
    audit: { retentionDays: env.AUDIT_RETENTION_DAYS, logFile: env.AUDIT_LOG_FILE },
    languageModel:
      env.LLM_BASE_URL === undefined || env.LLM_MODEL === undefined
        ? undefined
        : {
            baseUrl: env.LLM_BASE_URL,
            model: env.LLM_MODEL,
            timeoutMs: env.LLM_TIMEOUT_MS,
            ...(env.LLM_API_KEY === undefined ? {} : { apiKey: env.LLM_API_KEY }),
          },
  };
}
