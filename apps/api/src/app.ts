import type { JsonWebKey } from "node:crypto";
import type { Catalog, OrganizationLimits } from "@pes/config";
import type { Logger } from "@pes/logger";
import type { ExecutionMemory } from "@pes/memory";
import type { ApiMetrics } from "@pes/metrics";
import type { AuditTrail, ChartStore, EvidenceStore, ExecutionClient, FeedbackStore } from "@pes/executions";
import express, { type Express, type RequestHandler } from "express";
import { accessLog } from "./access-log.js";
import { LoadShedder } from "./load-shedder.js";
import type { TokenVerifier } from "./auth/token-verifier.js";
import { errorMiddleware, notFound } from "./errors.js";
import { createExecutions } from "./executions.js";
import { httpMetrics, metricsEndpoint } from "./http-metrics.js";
import { mountMcp } from "./mcp/mcp-endpoint.js";
import { buildOpenApiDocument } from "./openapi.js";
import { auditRoutes } from "./routes/audit-routes.js";
import { documentRoutes } from "./routes/document-routes.js";
import { batchRoutes } from "./routes/batch-routes.js";
import { chartRoutes } from "./routes/chart-routes.js";
import { executionRoutes } from "./routes/execution-routes.js";
import { healthRoutes } from "./routes/health-routes.js";
import { matchRoutes } from "./routes/match-routes.js";
import { playbookRoutes } from "./routes/playbook-routes.js";
import type { Route } from "./routes/route.js";
import { similarRoutes } from "./routes/similar-routes.js";
import { webhookRoutes } from "./routes/webhook-routes.js";
import { createFeedback } from "./feedback/feedback.js";
import type { SignatureLedger } from "./feedback/signature-ledger.js";
import { feedbackPageRoutes } from "./routes/feedback-page-routes.js";
import { feedbackRoutes } from "./routes/feedback-routes.js";
import { slackInteractivityRoutes, type SlackApp } from "./routes/slack-interactivity-routes.js";
import { createSimilarExecutions } from "./similar-executions.js";

export interface AppLimits {
  /** How long an execution may take before the caller gets `200 { error }` (EXECUTION_TIMEOUT_MS). */
  executionTimeoutMs: number;
  /** Longest accepted `inputList` (BATCH_MAX_ITEMS). */
  batchMaxItems: number;
  /** Largest accepted body, e.g. "1mb" (BODY_LIMIT). */
  bodyLimit: string;
  /** Executions this instance lets wait on the queue at once before answering 429 (MAX_IN_FLIGHT). */
  maxInFlight: number;
  /** Longest accepted `inputList` with `Prefer: respond-async` (ASYNC_BATCH_MAX_ITEMS). Default 10,000. */
  asyncBatchMaxItems?: number;
  /** Largest accepted batch body (ASYNC_BATCH_BODY_LIMIT). Default `bodyLimit`. */
  batchBodyLimit?: string;
  /** The limits of an organization that sets none of its own (ORG_EXECUTIONS_IN_FLIGHT, ORG_ITEMS_QUEUED). Default 2,000 and 20,000. */
  organizationLimits?: Required<OrganizationLimits>;
  /** Batch pages this instance reads and sends at once, and how many more may wait their turn. Default 8 and 32. */
  batchPageReads?: { inFlight: number; waiting: number };
  /** How long a client may take no bytes of a batch page before it is disconnected. Default 30 s. */
  batchPageStallTimeoutMs?: number;
}

/** How often a batch's event streams learn its progress, and how long one stays quiet before a keep-alive comment. */
export interface BatchStreamTiming {
  intervalMs?: number;
  keepAliveMs?: number;
}

const DEFAULT_ASYNC_BATCH_MAX_ITEMS = 10_000;
const DEFAULT_ORGANIZATION_LIMITS = { executionsInFlight: 2_000, itemsQueued: 20_000 };
const DEFAULT_BATCH_PAGE_READS = { inFlight: 8, waiting: 32 };

export interface AppDeps {
  catalog: Catalog;
  executionClient: ExecutionClient;
  tokenVerifier: TokenVerifier;
  logger: Logger;
  limits: AppLimits;
  /** Chat hosts accepted in message links besides `*.slack.com` (CHAT_ALLOWED_HOSTS). */
  allowedChatHosts: readonly string[];
  /** The development issuer's JWKS, served at /.well-known/jwks.json; only when AUTH_DEV_ISSUER is on. */
  devJwks?: { keys: JsonWebKey[] };
  /** True once shutdown began: /readyz answers 503 so load balancers stop sending traffic. */
  isShuttingDown?: () => boolean;
  /** The request time (an execution's default issue time). */
  now?: () => Date;
  /** Bull Board at /admin/queues, for admins only (admin/queue-dashboard.ts); absent, a 404, unless ADMIN_DASHBOARD is on. */
  queueDashboard?: RequestHandler;
  /** Prometheus metrics: every request is recorded, and `GET /metrics` serves them. None: neither. */
  metrics?: ApiMetrics;
  /** The bearer token `GET /metrics` wants (METRICS_TOKEN); none: anyone who reaches it may scrape. */
  metricsToken?: string;
  /** Event streams of batches: their defaults (1 s, 15 s) unless given. */
  batchStream?: BatchStreamTiming;
  /** Where executions' evidence bundles are kept (GET /playbook/execution/{id}/evidence); none: every read is a 404. */
  evidence?: Pick<EvidenceStore, "read">;
  /** Where executions' charts are kept (GET /playbook/execution/{id}/charts/{action}, the execution's page); none: every chart is a 404. */
  charts?: Pick<ChartStore, "read">;
  /** Where the workers append executions' audit records (GET /audit); none: every page is empty. */
  audit?: Pick<AuditTrail, "read">;
  /** LINK_SIGNING_SECRET: checks the signed links of executions' pages and chart images; none: they are 404s. */
  linkSigningSecret?: string;
  /** Where answers on executions' verdicts are kept (`/playbook/execution/{id}/feedback`, `/playbook/feedback`); none: no such routes. */
  feedback?: Pick<FeedbackStore, "record" | "read" | "list">;
  /** The memory of past executions (`GET /playbook/execution/{id}/similar`, the MCP tool); none: every organization's reads as off (409). */
  memory?: ExecutionMemory;
  /** The Slack apps whose interactions (feedback buttons) are taken, by organization, and the signatures seen; needs `feedback`. */
  slackInteractivity?: { apps: ReadonlyMap<string, SlackApp>; ledger: SignatureLedger };
}

/** Builds the Express app (no listen): request ids and access logs, the declared routes, 404, errors. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  // ETags would hash every body for nothing: results are never cached.
  app.set("etag", false);
  app.disable("x-powered-by");

  if (deps.metrics !== undefined) app.use(httpMetrics(deps.metrics));
  app.use(accessLog(deps.logger));

  // Executions first: Express tries routes in order, and they are nearly all of the traffic.
  // One per process: MAX_IN_FLIGHT guards this process's sockets and memory, whatever the organizations' limits.
  const loadShedder = new LoadShedder(deps.limits.maxInFlight);
  // A page holds up to 1,000 results in memory until its client took them: a few at a time, the rest
  // wait briefly, then 429 like executions beyond MAX_IN_FLIGHT (one answer to retry for every overload
  // of this instance; docs/decisions/0008-async-batches.md).
  const pageReadLimits = deps.limits.batchPageReads ?? DEFAULT_BATCH_PAGE_READS;
  const pageReads = new LoadShedder(pageReadLimits.inFlight, {
    maxWaiting: pageReadLimits.waiting,
    refusal: "Too many batch pages being read; retry shortly",
  });
  const now = deps.now ?? (() => new Date());
  const asyncBatchMaxItems = deps.limits.asyncBatchMaxItems ?? DEFAULT_ASYNC_BATCH_MAX_ITEMS;
  // One way to executions for every route that starts or reads them.
  const executions = createExecutions({
    client: deps.executionClient,
    loadShedder,
    executionTimeoutMs: deps.limits.executionTimeoutMs,
    organizationLimits: deps.limits.organizationLimits ?? DEFAULT_ORGANIZATION_LIMITS,
    ...(deps.evidence === undefined ? {} : { evidence: deps.evidence }),
    ...(deps.charts === undefined ? {} : { charts: deps.charts }),
  });
  const similar = createSimilarExecutions({ executions, memory: deps.memory, logger: deps.logger });
  const apiRoutes: Route[] = [
    ...executionRoutes({ executions, allowedChatHosts: deps.allowedChatHosts, now }),
    ...similarRoutes({ similar }),
    ...chartRoutes({ executions, catalog: deps.catalog, linkSigningSecret: deps.linkSigningSecret, now }),
    ...batchRoutes({
      executions,
      batchMaxItems: deps.limits.batchMaxItems,
      asyncBatchMaxItems,
      bodyLimit: deps.limits.batchBodyLimit ?? deps.limits.bodyLimit,
      allowedChatHosts: deps.allowedChatHosts,
      now,
      pageReads,
      pageStallTimeoutMs: deps.limits.batchPageStallTimeoutMs,
      streamIntervalMs: deps.batchStream?.intervalMs,
      streamKeepAliveMs: deps.batchStream?.keepAliveMs,
    }),
    ...webhookRoutes({ executions, maxAlerts: deps.limits.batchMaxItems, logger: deps.logger, now }),
    ...matchRoutes({ allowedChatHosts: deps.allowedChatHosts, now }),
    ...healthRoutes({ executionClient: deps.executionClient, isShuttingDown: deps.isShuttingDown ?? (() => false) }),
    ...playbookRoutes(),
    ...auditRoutes(deps.audit === undefined ? {} : { audit: deps.audit }),
  ];
  if (deps.feedback !== undefined) {
    const feedback = createFeedback({ store: deps.feedback, now, ...(deps.metrics === undefined ? {} : { metrics: deps.metrics }) });
    apiRoutes.push(...feedbackRoutes({ feedback }), ...feedbackPageRoutes({ feedback, linkSigningSecret: deps.linkSigningSecret, now }));
    const slack = deps.slackInteractivity;
    if (slack !== undefined) {
      apiRoutes.push(
        ...slackInteractivityRoutes({
          feedback,
          linkSigningSecret: deps.linkSigningSecret,
          slackApps: slack.apps,
          ledger: slack.ledger,
          logger: deps.logger,
          now,
        }),
      );
    }
  }
  const openApiDocument = buildOpenApiDocument(apiRoutes, { batchMaxItems: Math.max(deps.limits.batchMaxItems, asyncBatchMaxItems) });
  const routes = [...apiRoutes, ...documentRoutes({ openApiDocument, devJwks: deps.devJwks })];
  const runtime = { catalog: deps.catalog, verifier: deps.tokenVerifier, bodyLimit: deps.limits.bodyLimit };
  for (const route of routes) app[route.method](route.path, route.toHandler(runtime));
  // JSON-RPC for assistants, left out of the OpenAPI document (docs/mcp.md).
  mountMcp(app, runtime, { executions, similar, allowedChatHosts: deps.allowedChatHosts, now, logger: deps.logger });
  if (deps.queueDashboard !== undefined) app.use(deps.queueDashboard);
  // Not a declared route: its answer is Prometheus text for scrapers, not JSON of the API's document.
  if (deps.metrics !== undefined) app.get("/metrics", metricsEndpoint(deps.metrics, deps.metricsToken));

  app.use(notFound);
  app.use(errorMiddleware(deps.logger));
  return app;
}
