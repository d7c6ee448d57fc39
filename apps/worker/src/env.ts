import { envInteger as integer, parseEnvironment, sharedEnvFields } from "@pes/config";
import type { LanguageModelOptions } from "@pes/engine";
import { DEFAULT_LINK_LIFETIME_SECONDS, type LinkSettings } from "@pes/signed-links";
import { z } from "zod";

export { EnvError } from "@pes/config";

/** Every environment variable the worker reads, parsed once at start. Empty values count as unset. */
export const WorkerEnvSchema = z.object({
  ...sharedEnvFields,
  WORKER_CONCURRENCY: integer(1, 10_000).default(50),
  /** Executions behind every other caller's work (async batch items, alerts over their organization's limit) at once; unset: a quarter of WORKER_CONCURRENCY. */
  WORKER_BATCH_CONCURRENCY: integer(1, 10_000).optional(),
  ACTION_TIMEOUT_MS: integer(1, 3_600_000).default(15_000),
  MAX_CONCURRENT_ACTIONS: integer(1, 10_000).default(32),
  WORKER_LOCK_DURATION_MS: integer(1_000, 3_600_000).default(30_000),
  WORKER_STALLED_INTERVAL_MS: integer(1_000, 3_600_000).default(30_000),
  /** The worker's own small HTTP listener: /metrics, /healthz, /readyz. 9464 is Prometheus' usual exporter port; 0 picks a free one. */
  WORKER_HTTP_PORT: integer(0, 65_535).default(9464),
  WORKER_HTTP_HOST: z.string().min(1).default("0.0.0.0"),
  /** Spacing of the posts to one Slack channel, across all workers: Slack allows about one per second. */
  SLACK_POST_INTERVAL_MS: integer(0, 60_000).default(1_000),
  /** An OpenAI-compatible chat-completions API for one optional pass over the findings; unset: none. */
  LLM_BASE_URL: z.url({ protocol: /^https?$/, error: "must be an http(s) URL such as https://api.openai.com/v1" }).optional(),
  LLM_MODEL: z.string().min(1).optional(),
  /** A secret: sent to LLM_BASE_URL only, never logged. */
  LLM_API_KEY: z.string().optional(),
  /** How long the pass may take before the deterministic text is used. */
  LLM_TIMEOUT_MS: integer(100, 600_000).default(10_000),
  /** Where people reach the API (`https://pes.example.com`): results link charts and pages under it. */
  PUBLIC_URL: z.url({ protocol: /^https?$/, error: "must be an http(s) URL such as https://pes.example.com" }).optional(),
  /** How long a signed link to an execution's page or chart image is valid from when the worker writes it. */
  LINK_LIFETIME_SECONDS: integer(60, 366 * 86_400).default(DEFAULT_LINK_LIFETIME_SECONDS),
}).refine((env) => (env.LLM_BASE_URL === undefined) === (env.LLM_MODEL === undefined), {
  message: "LLM_BASE_URL and LLM_MODEL go together: set both to use a language model, or neither",
  path: ["LLM_MODEL"],
});

export interface WorkerEnv {
  redisUrl: string;
  queuePrefix: string;
  configDir: string;
  /** Jobs one worker process runs at once. */
  concurrency: number;
  /** Of those, at most this many behind every other caller's work (WORKER_BATCH_CONCURRENCY). */
  batchConcurrency: number;
  /** Deadline of each data-source action. */
  actionTimeoutMs: number;
  /** Data-source actions this worker process runs at once, across all its jobs. */
  maxConcurrentActions: number;
  /** A dead worker's job is re-run after its lock expires (this long) and a stalled check runs. */
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** How long active jobs may run on after SIGTERM before they are handed back to the queue. */
  shutdownTimeoutMs: number;
  logLevel: string;
  /** Where the worker serves /metrics, /healthz and /readyz. */
  http: { port: number; host: string };
  /** The bearer token `GET /metrics` wants (METRICS_TOKEN); none: anyone who reaches it may scrape. */
  metricsToken: string | undefined;
  /** Time between two posts to one Slack channel (all workers together). */
  slackPostIntervalMs: number;
  /** Chat hosts accepted in message links besides `*.slack.com` and each organization's own. */
  allowedChatHosts: readonly string[];
  /** The language model of the optional summary pass (LLM_*); undefined: deterministic text only. */
  languageModel: LanguageModelOptions | undefined;
  /** How long an execution's charts are kept (EXECUTION_RETENTION_SECONDS, as its record). */
  executionRetentionMs: number;
  /** PUBLIC_URL: results' chart links are absolute under it; undefined: they are paths on the API. */
  publicUrl: string | undefined;
  /** Signed links to pages and chart images: undefined unless both LINK_SIGNING_SECRET and PUBLIC_URL are set. */
  links: LinkSettings | undefined;
}

/** Parses the environment once; throws EnvError naming each bad variable. */
export function parseWorkerEnv(source: NodeJS.ProcessEnv = process.env): WorkerEnv {
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
    allowedChatHosts: env.CHAT_ALLOWED_HOSTS,
    executionRetentionMs: env.EXECUTION_RETENTION_SECONDS * 1_000,
    publicUrl: env.PUBLIC_URL,
    links:
      env.LINK_SIGNING_SECRET === undefined || env.PUBLIC_URL === undefined
        ? undefined
        : { secret: env.LINK_SIGNING_SECRET, publicUrl: env.PUBLIC_URL, lifetimeSeconds: env.LINK_LIFETIME_SECONDS },
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
