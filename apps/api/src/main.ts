import { once } from "node:events";
import { createServer, type Server } from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import { ConfigError, loadConfig, type Catalog } from "@pes/config";
import { devJwks, loadOrCreateDevKey } from "@pes/dev-issuer";
import { createLogger, type Logger } from "@pes/logger";
import { confirmationsFrom, createExecutionMemory } from "@pes/memory";
import { createApiMetrics } from "@pes/metrics";
import {
  BATCH_EXECUTION_QUEUE,
  createExecutionClient,
  EXECUTION_QUEUE,
  openAuditTrail,
  openChartStore,
  openEvidenceStore,
  openFeedbackStore,
  QueueUnavailableError,
  SERVICE_QUEUES,
  type ExecutionClient,
  type OpenedAuditTrail,
  type OpenedChartStore,
  type OpenedEvidenceStore,
  type OpenedFeedbackStore,
} from "@pes/executions";
import { createQueueInspector, feedbackIndexKey, keySpace, openDashboardQueues, settlesWithin, type DashboardQueues, type QueueInspector } from "@pes/jobs";
import type { RequestHandler } from "express";
import { startTracing, TracingConfigError, type Tracing } from "@pes/tracing";
import { createApp } from "./app.js";
import { createSignatureLedger } from "./feedback/signature-ledger.js";
import { slackAppsOf } from "./feedback/slack-apps.js";
import { createTokenVerifier } from "./auth/token-verifier.js";
import { EnvError, parseEnv, type ApiEnv } from "./env.js";

/**
 * Reads the environment and CONFIG_DIR, starts the queue client, listens; one shutdown path on SIGTERM
 * (after the readiness drain) and SIGINT.
 */
async function main(): Promise<void> {
  // Before anything serves or sends (see @pes/tracing); nothing of the SDK loads unless OTEL_* asks for it.
  let tracing: Tracing;
  try {
    tracing = await startTracing("pes-api");
  } catch (error) {
    if (!(error instanceof TracingConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  let env: ApiEnv;
  try {
    env = parseEnv();
  } catch (error) {
    if (!(error instanceof EnvError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  const logger = createLogger({ name: "api", level: env.logLevel });

  let catalog: Catalog;
  try {
    catalog = await loadConfig(env.configDir);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`Configuration in ${env.configDir} is invalid:\n${error.message}\n`);
    process.exit(1);
  }
  logger.info({ configDir: env.configDir, organizations: catalog.organizations.size }, "configuration loaded");

  let jwks: ReturnType<typeof devJwks> | undefined;
  if (env.auth.devIssuer) {
    jwks = devJwks(await loadOrCreateDevKey(env.auth.devKeyDir));
    logger.warn(
      { jwksUrl: env.auth.jwksUrl, issuer: env.auth.issuer },
      "AUTH_DEV_ISSUER is on: tokens from `npm run token` are accepted. Never enable it in production.",
    );
  }

  // Queue depth is read here, on a scrape, so that one process reads it rather than every worker.
  const queueInspector = createQueueInspector({ redisUrl: env.redisUrl, prefix: env.queuePrefix, logger, queues: [EXECUTION_QUEUE, BATCH_EXECUTION_QUEUE] });
  const metrics = createApiMetrics({
    readQueues: () => queueInspector.read(),
    queueCacheMs: env.metricsQueueCacheMs,
    onQueueReadError: (error) => logger.debug({ err: error }, "could not read the queues for /metrics"),
  });
  const executionClient = createExecutionClient({
    redisUrl: env.redisUrl,
    prefix: env.queuePrefix,
    logger,
    retentionMs: env.executionRetentionMs,
    ...(env.coalescing === undefined ? {} : { coalescing: env.coalescing }),
    submittedTimeoutMs: env.executionTimeoutMs,
    batchTimeoutMs: env.asyncBatch.timeoutMs,
    onReplyTimeout: (jobState) => metrics.countReplyTimeout(jobState),
    onJoined: () => metrics.countCoalesced(),
  });
  // Executions' evidence bundles, read back by id (organizations that keep them).
  const evidence = openEvidenceStore({ redisUrl: env.redisUrl, prefix: env.queuePrefix, logger });
  // Executions' chart data, drawn on request and on their pages.
  const charts = openChartStore({ redisUrl: env.redisUrl, prefix: env.queuePrefix, logger });
  // Answers on executions' verdicts, and the Slack requests carrying them (signatures seen on the same connection).
  const feedback = openFeedbackStore({ redisUrl: env.redisUrl, prefix: env.queuePrefix, logger });
  const slackApps = await slackAppsOf(catalog, process.env);
  // The organizations' audit trails, which the workers append to (GET /audit, for admins).
  const audit = openAuditTrail({ redisUrl: env.redisUrl, prefix: env.queuePrefix, logger });
  const tokenVerifier = createTokenVerifier({
    jwksUrl: env.auth.jwksUrl,
    jwksBasicAuth: env.auth.jwksBasicAuth,
    issuer: env.auth.issuer,
    audience: env.auth.audience,
    orgClaim: env.auth.orgClaim,
    teamsClaim: env.auth.teamsClaim,
    orgAdminScope: env.auth.orgAdminScope,
    jwksTimeoutMs: env.auth.jwksTimeoutMs,
    onJwksProblem: (problem) => logger.warn({ jwksUrl: env.auth.jwksUrl, problem }, "identity provider's JWKS misbehaves; the callers concerned get 503"),
  });
  // Only when switched on: Bull Board is loaded, and its queues hold a Redis connection of their own.
  let dashboardQueues: DashboardQueues | undefined;
  let queueDashboardRouter: RequestHandler | undefined;
  if (env.adminDashboard !== undefined) {
    const { queueDashboard } = await import("./admin/queue-dashboard.js");
    dashboardQueues = openDashboardQueues({ redisUrl: env.redisUrl, prefix: env.queuePrefix, logger, queues: SERVICE_QUEUES });
    queueDashboardRouter = queueDashboard({ queues: dashboardQueues.queues, settings: env.adminDashboard, verifier: tokenVerifier });
    const { readOnly, scope, basic } = env.adminDashboard;
    logger.info({ readOnly, scope, basicAuth: basic !== undefined }, "queue dashboard at /admin/queues");
  }
  let shuttingDown = false;
  const keys = keySpace(env.queuePrefix, env.redisUrl);
  const app = createApp({
    catalog,
    executionClient,
    tokenVerifier,
    logger,
    limits: {
      executionTimeoutMs: env.executionTimeoutMs,
      batchMaxItems: env.batchMaxItems,
      bodyLimit: env.bodyLimit,
      maxInFlight: env.maxInFlight,
      asyncBatchMaxItems: env.asyncBatch.maxItems,
      batchBodyLimit: env.asyncBatch.bodyLimit,
      organizationLimits: env.organizationLimits,
    },
    allowedChatHosts: env.allowedChatHosts,
    devJwks: jwks,
    isShuttingDown: () => shuttingDown,
    queueDashboard: queueDashboardRouter,
    metrics,
    metricsToken: env.metricsToken,
    evidence,
    charts,
    audit,
    ...(env.linkSigningSecret === undefined ? {} : { linkSigningSecret: env.linkSigningSecret }),
    feedback,
    // The memory's reads are few and small: on the feedback store's connection, which its confirmations come from.
    memory: createExecutionMemory({
      redis: () => feedback.connection,
      keys,
      confirmations: confirmationsFrom(feedback),
      confirmedIndex: (orgId) => feedbackIndexKey(keys, orgId),
    }),
    slackInteractivity: { apps: slackApps, ledger: createSignatureLedger(() => feedback.connection, keys) },
  });

  try {
    evidence.start();
    charts.start();
    feedback.start();
    audit.start();
    await executionClient.start();
  } catch (error) {
    if (!(error instanceof QueueUnavailableError)) throw error;
    // Serve anyway: /readyz says 503 and executions get 503 until Redis answers; the client keeps retrying.
    logger.warn({ err: error }, "job queue unreachable at start; listening anyway");
  }

  const server = createServer(
    {
      // A client that sends its headers or body too slowly gets a 408 and loses its socket, so that slow
      // (or slow-loris) sockets cannot pile up. Waiting for the response is not counted.
      headersTimeout: env.http.headersTimeoutMs,
      requestTimeout: env.http.requestTimeoutMs,
      // Longer than the usual load balancer idle timeout (60 s), so the balancer closes idle sockets first.
      keepAliveTimeout: env.http.keepAliveTimeoutMs,
      // How often Node checks the two timeouts above (default 30 s, which a slow client would get on top).
      connectionsCheckingInterval: 1_000,
    },
    app,
  ).listen(env.port, env.host);
  await once(server, "listening");
  logger.info({ host: env.host, port: env.port }, "listening");

  const shutdown = async (signal: NodeJS.Signals) => {
    if (shuttingDown) {
      logger.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    shuttingDown = true;
    // SIGTERM comes from an orchestrator: keep serving, /readyz saying 503, until load balancers have seen
    // it and sent their last requests elsewhere. SIGINT is someone's Ctrl-C: stop at once.
    if (signal === "SIGTERM" && env.shutdownDrainMs > 0) {
      logger.info({ signal, drainMs: env.shutdownDrainMs }, "draining: /readyz answers 503, requests are still served");
      await delay(env.shutdownDrainMs);
    }
    await stop({
      server,
      executionClient,
      queueInspector,
      dashboardQueues,
      evidence,
      charts,
      feedback,
      audit,
      logger,
      signal,
      timeoutMs: env.shutdownTimeoutMs,
    });
    // The spans still buffered (the last requests') are exported before the process goes.
    await tracing.shutdown();
    process.exit(0);
  };
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, (name) => void shutdown(name));
}

/**
 * Stop accepting connections, let in-flight requests finish up to `timeoutMs`, then close the execution
 * client (any caller still waiting gets `{ error: "Service is shutting down" }`), the dashboard's queues
 * and the last sockets.
 */
async function stop(options: {
  server: Server;
  executionClient: ExecutionClient;
  dashboardQueues: DashboardQueues | undefined;
  queueInspector: QueueInspector;
  evidence: OpenedEvidenceStore;
  charts: OpenedChartStore;
  feedback: OpenedFeedbackStore;
  audit: OpenedAuditTrail;
  logger: Logger;
  signal: string;
  timeoutMs: number;
}): Promise<void> {
  const { server, executionClient, queueInspector, dashboardQueues, evidence, charts, feedback, audit, logger } = options;
  logger.info({ signal: options.signal, timeoutMs: options.timeoutMs }, "shutting down: no longer accepting connections");
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  const finished = await settlesWithin(closed, options.timeoutMs);
  logger.info(finished ? "in-flight requests finished" : "shutdown deadline reached with requests in flight");

  await Promise.all([
    executionClient.close(),
    queueInspector.close(),
    dashboardQueues?.close(),
    evidence.close(),
    charts.close(),
    feedback.close(),
    audit.close(),
  ]);
  logger.info("execution client closed");
  if (!(await settlesWithin(closed, 1_000))) server.closeAllConnections();
  logger.info("shutdown complete");
}

main().catch((error: unknown) => {
  process.stderr.write(`api failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
