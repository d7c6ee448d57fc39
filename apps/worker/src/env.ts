import { fileURLToPath } from "node:url";
import { z } from "zod";

/** `<repo>/config/example`, from this file's location (`apps/worker/{src,dist}/`), whatever the working directory. */
const defaultConfigDir = fileURLToPath(new URL("../../../config/example", import.meta.url));

const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** Every environment variable the worker reads, parsed once at start. Empty values count as unset. */
export const WorkerEnvSchema = z.object({
  REDIS_URL: z.url({ protocol: /^rediss?$/, error: "must be a redis:// or rediss:// URL" }).default("redis://127.0.0.1:6379"),
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_-]{1,64}$/, "must be 1-64 letters, digits, ':', '_' or '-'")
    .default("pes"),
  CONFIG_DIR: z.string().min(1).default(defaultConfigDir),
  WORKER_CONCURRENCY: integer(1, 10_000).default(50),
  ACTION_TIMEOUT_MS: integer(1, 3_600_000).default(15_000),
  MAX_CONCURRENT_ACTIONS: integer(1, 10_000).default(32),
  WORKER_LOCK_DURATION_MS: integer(1_000, 3_600_000).default(30_000),
  WORKER_STALLED_INTERVAL_MS: integer(1_000, 3_600_000).default(30_000),
  SHUTDOWN_TIMEOUT_MS: integer(0, 3_600_000).default(25_000),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

export interface WorkerEnv {
  redisUrl: string;
  queuePrefix: string;
  configDir: string;
  /** Jobs one worker process runs at once. */
  concurrency: number;
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
}

/** A bad environment; the message names every offending variable. */
export class EnvError extends Error {
  override name = "EnvError";
}

/** Parses the environment once; throws EnvError naming each bad variable. */
export function parseWorkerEnv(source: NodeJS.ProcessEnv = process.env): WorkerEnv {
  // An empty value (`FOO=` in a compose file) means "not set", so defaults apply.
  const present = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== undefined && value !== ""));
  const parsed = WorkerEnvSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".") || "(environment)"}: ${issue.message}`);
    throw new EnvError(`Invalid environment:\n${lines.join("\n")}`);
  }
  const env = parsed.data;
  return {
    redisUrl: env.REDIS_URL,
    queuePrefix: env.QUEUE_PREFIX,
    configDir: env.CONFIG_DIR,
    concurrency: env.WORKER_CONCURRENCY,
    actionTimeoutMs: env.ACTION_TIMEOUT_MS,
    maxConcurrentActions: env.MAX_CONCURRENT_ACTIONS,
    lockDurationMs: env.WORKER_LOCK_DURATION_MS,
    stalledIntervalMs: env.WORKER_STALLED_INTERVAL_MS,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    logLevel: env.LOG_LEVEL,
  };
}
