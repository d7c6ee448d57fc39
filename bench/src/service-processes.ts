import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "@pes/local-services";
import { EXECUTION_QUEUE } from "@pes/executions";
import { Queue } from "bullmq";
import { spawnChild, type ChildHandle } from "./child-processes.js";
import { waitUntil } from "./wait-until.js";

export interface ServiceContext {
  repoRoot: string;
  /** Where the children's logs go. */
  logDir: string;
  redisUrl: string;
  queuePrefix: string;
  configDir: string;
  devIssuerDir: string;
  /** Node flags for API and workers after the image's (bench:compare's `--node-args`, one side only). */
  nodeArgs?: readonly string[];
}

export const API_ENTRY = "apps/api/dist/main.js";
export const WORKER_ENTRY = "apps/worker/dist/main.js";

/** True when both service entry points are built (`npm run bench` builds them first). */
export function serviceIsBuilt(repoRoot: string): boolean {
  return [API_ENTRY, WORKER_ENTRY].every((entry) => existsSync(join(repoRoot, entry)));
}

/**
 * The Node flags the Docker image runs both processes with (its `ENV NODE_OPTIONS=…` line): the benchmark
 * measures what ships, from the one place it is written.
 */
export function shippedNodeOptions(repoRoot: string): string[] {
  const dockerfile = readFileSync(join(repoRoot, "Dockerfile"), "utf8");
  const line = /^\s*NODE_OPTIONS="?([^"\\\n]*)"?/m.exec(dockerfile);
  return splitNodeArgs(line?.[1]);
}

/** Space-separated node flags (NODE_OPTIONS, bench:compare's --node-args) as a list. */
export function splitNodeArgs(text: string | undefined): string[] {
  return (text ?? "").split(/\s+/).filter((arg) => arg !== "");
}

/** Node flags for the API and workers: the image's NODE_OPTIONS, then the context's own. */
function nodeArgs(context: ServiceContext): string[] {
  return [...shippedNodeOptions(context.repoRoot), ...(context.nodeArgs ?? [])];
}

function commonEnv(context: ServiceContext): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: "production",
    REDIS_URL: context.redisUrl,
    QUEUE_PREFIX: context.queuePrefix,
    CONFIG_DIR: context.configDir,
    // warn keeps the access log off the hot path; errors are still logged.
    LOG_LEVEL: "warn",
    // Idle at the end of a run: a short graceful shutdown keeps cleanup bounded.
    SHUTDOWN_TIMEOUT_MS: "5000",
  };
}

export interface ApiOptions {
  port: number;
  executionTimeoutMs: number;
  batchMaxItems: number;
  /**
   * COALESCE_BUCKET_SECONDS; 0 unless stated. Scenarios 1-4 and the async batch send identical
   * requests: shared, they would measure one execution and many joins. The storm and the webhook
   * intake measure the sharing, on an API of their own with it on.
   */
  coalesceBucketSeconds?: number;
  /** Names its log, when several run. */
  name?: string;
}

/** Starts `node apps/api/dist/main.js` and resolves once `GET /readyz` answers 200. */
export async function startApi(context: ServiceContext, options: ApiOptions): Promise<ChildHandle> {
  const name = options.name ?? "api";
  const logPath = join(context.logDir, `${name}.log`);
  const child = spawnChild({
    name,
    command: process.execPath,
    args: [...nodeArgs(context), join(context.repoRoot, API_ENTRY)],
    cwd: context.repoRoot,
    env: {
      ...commonEnv(context),
      PORT: String(options.port),
      HOST: "127.0.0.1",
      AUTH_DEV_ISSUER: "true",
      DEV_ISSUER_DIR: context.devIssuerDir,
      // Nothing balances load in front of it: a readiness drain would only make every stop 5 s longer.
      SHUTDOWN_DRAIN_MS: "0",
      EXECUTION_TIMEOUT_MS: String(options.executionTimeoutMs),
      BATCH_MAX_ITEMS: String(options.batchMaxItems),
      // Neither load shedding nor the organization limits may shape the benchmark: it measures the plumbing, not the limiters.
      MAX_IN_FLIGHT: "100000",
      ORG_EXECUTIONS_IN_FLIGHT: "1000000",
      ORG_ITEMS_QUEUED: "1000000",
      COALESCE_BUCKET_SECONDS: String(options.coalesceBucketSeconds ?? 0),
      // The harness scrapes its APIs' /metrics without a token (storm, async batch): none inherited.
      METRICS_TOKEN: undefined,
    },
    logPath,
  });
  await waitUntil("api /readyz", async () => (await fetch(`http://127.0.0.1:${options.port}/readyz`, { signal: AbortSignal.timeout(1_000) })).status === 200, {
    timeoutMs: 30_000,
    intervalMs: 100,
    child,
    logPath,
  });
  return child;
}

export interface WorkerOptions {
  index: number;
  concurrency: number;
  maxConcurrentActions: number;
}

/** A worker process, and where its `/metrics` (which counts the executions it ran) is served. */
export interface WorkerHandle extends ChildHandle {
  metricsUrl: string;
}

/**
 * Starts `node apps/worker/dist/main.js` and resolves once it has taken its place on the execution
 * queue: BullMQ names each worker's blocking connection, so Redis's client list shows `index` workers.
 * (Its "worker ready" log line is info level, which the benchmark's LOG_LEVEL=warn hides.)
 */
export async function startWorker(context: ServiceContext, options: WorkerOptions): Promise<WorkerHandle> {
  const httpPort = await freePort();
  const logPath = join(context.logDir, `worker-${options.index}.log`);
  const child = spawnChild({
    name: `worker-${options.index}`,
    command: process.execPath,
    args: [...nodeArgs(context), join(context.repoRoot, WORKER_ENTRY)],
    cwd: context.repoRoot,
    env: {
      ...commonEnv(context),
      WORKER_CONCURRENCY: String(options.concurrency),
      MAX_CONCURRENT_ACTIONS: String(options.maxConcurrentActions),
      // Each worker's own HTTP listener (/metrics, /healthz, /readyz) on a port of its own: several run at once.
      WORKER_HTTP_PORT: String(httpPort),
      WORKER_HTTP_HOST: "127.0.0.1",
    },
    logPath,
  });
  const queue = new Queue(EXECUTION_QUEUE, {
    connection: { url: context.redisUrl, maxRetriesPerRequest: null },
    prefix: context.queuePrefix,
  });
  queue.on("error", () => undefined);
  try {
    await waitUntil(`worker-${options.index} on queue ${EXECUTION_QUEUE}`, async () => (await queue.getWorkersCount()) >= options.index, {
      timeoutMs: 30_000,
      intervalMs: 100,
      child,
      logPath,
    });
  } finally {
    await queue.close();
  }
  return { ...child, metricsUrl: `http://127.0.0.1:${httpPort}/metrics` };
}
