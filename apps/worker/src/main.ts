import { ConfigError, loadConfig, resolveCatalogSecrets, type Catalog } from "@pes/config";
import type { BatchItemPostJob } from "@pes/contracts";
import { createEngine } from "@pes/engine";
import { createLogger } from "@pes/logger";
import { createWorkerMetrics } from "@pes/metrics";
import { startTracing, TracingConfigError, type Tracing } from "@pes/tracing";
import { EnvError, parseWorkerEnv, type WorkerEnv } from "./env.js";
import { createJobHandlers } from "./job-handlers.js";
import { createWorkerHttpServer, listenWorkerHttp } from "./worker-http-server.js";
import { createChannelPacer } from "@pes/integrations";
import {
  createAuditTrail,
  createBatchStarts,
  createChartStore,
  createEvidenceStore,
  createExecutionWorker,
  createFeedbackStore,
  EXECUTION_JOBS,
  POST_BATCH_ITEM_JOB,
} from "@pes/executions";
import { createJobProducer, createRedisQuerySlots, feedbackIndexKey, handleCatalog, keySpace, RedisRefusedError } from "@pes/jobs";
import { buildIntegrations } from "./organization-integrations.js";
import { auditDestinations } from "./audit/audit-destinations.js";
import { jsonLinesSink } from "./audit/json-lines-sink.js";
import { errorMessage } from "@pes/contracts";
import { confirmationsFrom, createExecutionMemory } from "@pes/memory";

/** Startup problems an operator must fix: printed as they are (no stack), exit code 1. */
function stop(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

function readEnv(): WorkerEnv {
  try {
    return parseWorkerEnv();
  } catch (error) {
    if (error instanceof EnvError) stop(error.message);
    throw error;
  }
}

async function readConfig(dir: string): Promise<Catalog> {
  try {
    return await loadConfig(dir);
  } catch (error) {
    if (error instanceof ConfigError) stop(`Invalid configuration in ${dir}:\n${error.message}`);
    throw error;
  }
}

async function main(): Promise<void> {
  // Before any job runs (see @pes/tracing); nothing of the SDK loads unless OTEL_* asks for it.
  let tracing: Tracing;
  try {
    tracing = await startTracing("pes-worker");
  } catch (error) {
    if (error instanceof TracingConfigError) stop(error.message);
    throw error;
  }
  const env = readEnv();
  const logger = createLogger({ name: "worker", level: env.logLevel });
  const catalog = await readConfig(env.configDir);
  // Resolved once, here: connectors get them from the engine and never read the environment.
  const { secrets, integrations: integrationSecrets, missing } = resolveCatalogSecrets(catalog, { env: process.env });
  if (missing.length > 0) stop(`Missing secrets (set these environment variables or files):\n${missing.map((line) => `  ${line}`).join("\n")}`);

  // Side effects (posts, notes) record themselves in Redis so that a re-run never repeats them, and data
  // sources' query slots and organizations' per-minute budgets on them are shared there by every worker.
  const producer = createJobProducer({ redisUrl: env.redisUrl, prefix: env.queuePrefix, logger });
  const keys = keySpace(env.queuePrefix, env.redisUrl);
  // The evidence bundles of organizations that keep them, under their keys, for their retention.
  const evidence = createEvidenceStore(() => producer.connection, keys);
  const engine = createEngine({
    catalog,
    secrets,
    logger,
    actionTimeoutMs: env.actionTimeoutMs,
    maxConcurrentActions: env.maxConcurrentActions,
    querySlots: createRedisQuerySlots({ redis: producer.connection, keys }),
    ...(env.languageModel === undefined ? {} : { languageModel: env.languageModel }),
    onActionFinished: (report) => metrics.actionFinished(report),
    onBudgetSettled: (orgId, budget) => metrics.budgetSettled(orgId, budget),
    keepEvidence: ({ orgId, bundle, retentionDays, maxBytes }) => evidence.keep(orgId, bundle, { retentionDays, maxBytes }),
  });
  const integrations = buildIntegrations(catalog, integrationSecrets, env.allowedChatHosts);
  const delivery = {
    integrations,
    redis: producer.connection,
    keys,
    pacer: createChannelPacer({ redis: producer.connection, keys, intervalMs: env.slackPostIntervalMs }),
    teamsPacer: createChannelPacer({ redis: producer.connection, keys, intervalMs: env.teamsPostIntervalMs, service: "teams" }),
    enqueueBatchItemPost: (job: BatchItemPostJob, jobId: string) => producer.add(POST_BATCH_ITEM_JOB, job, jobId),
    // The data of executions' charts, under their organization's keys, for as long as their records.
    charts: {
      store: createChartStore(() => producer.connection, keys),
      retentionMs: env.executionRetentionMs,
      ...(env.publicUrl === undefined ? {} : { publicUrl: env.publicUrl }),
      ...(env.linkSigning === undefined ? {} : { signing: env.linkSigning }),
    },
    logger,
  };
  // Past executions' fingerprints, recalled into each new result (history) under their organization's keys.
  // With the causes people confirmed on them (their feedback), shown beside each recalled execution.
  const confirmations = confirmationsFrom(createFeedbackStore(() => producer.connection, keys));
  const memory = {
    memory: createExecutionMemory({
      redis: () => producer.connection,
      keys,
      confirmations,
      confirmedIndex: (orgId) => feedbackIndexKey(keys, orgId),
    }),
    catalog,
    logger,
  };
  // Each execution's audit record, in its organization's stream (and AUDIT_LOG_FILE's lines).
  const audit = {
    trail: createAuditTrail(() => producer.connection, keys),
    retentionDays: env.audit.retentionDays,
    ...(env.audit.logFile === undefined ? {} : { sink: jsonLinesSink(env.audit.logFile) }),
    destinations: (orgId: string) => auditDestinations(catalog.organizations.get(orgId), env.languageModel?.baseUrl),
    catalog,
    logger,
  };
  const batchStarts = createBatchStarts({ redisUrl: env.redisUrl, prefix: env.queuePrefix, logger });
  const metrics = createWorkerMetrics({ jobNames: Object.keys(EXECUTION_JOBS) });
  const worker = createExecutionWorker({
    redisUrl: env.redisUrl,
    prefix: env.queuePrefix,
    logger,
    handlers: handleCatalog(EXECUTION_JOBS, createJobHandlers({ engine, catalog, integrations, delivery, batchStarts, memory, audit })),
    batchStarts,
    concurrency: env.concurrency,
    batchConcurrency: env.batchConcurrency,
    lockDurationMs: env.lockDurationMs,
    stalledIntervalMs: env.stalledIntervalMs,
    onJobFinished: (jobName, outcome, seconds) => metrics.jobFinished(jobName, outcome, seconds),
    onBackgroundSlots: (queue, slots) => metrics.backgroundSlots(queue, slots),
  });

  // Registered before start(): a SIGTERM while waiting for Redis must stop the process too.
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, timeoutMs: env.shutdownTimeoutMs }, "shutting down: finishing active jobs");
    worker
      .close(env.shutdownTimeoutMs)
      .then(() => producer.close())
      // The spans still buffered (the last jobs') are exported before the process goes.
      .then(() => tracing.shutdown())
      .then(
        () => {
          logger.info("worker stopped");
          process.exit(0);
        },
        (error: unknown) => {
          logger.error({ err: error }, "worker did not stop cleanly");
          process.exit(1);
        },
      );
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);

  // Up before the worker connects: /healthz answers (and /readyz says 503) while Redis is awaited.
  const http = createWorkerHttpServer({ metrics, metricsToken: env.metricsToken, isReady: () => !stopping && worker.isReady() });
  let port: number;
  try {
    port = await listenWorkerHttp(http, env.http);
  } catch (error) {
    stop(errorMessage(error));
  }
  logger.info({ host: env.http.host, port }, "worker http listening: /metrics, /healthz, /readyz");

  producer.start();
  try {
    await worker.start();
  } catch (error) {
    if (error instanceof RedisRefusedError) stop(error.message);
    throw error;
  }
  logger.info({ concurrency: env.concurrency, queuePrefix: env.queuePrefix, organizations: catalog.organizations.size }, "worker ready");
}

main().catch((error: unknown) => {
  process.stderr.write(`worker failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
