import { roleOf, shortAnswer, type Finding, type Role } from "@pes/analysis";
import type { Catalog, CatalogSecrets } from "@pes/config";
import {
  compileRedaction,
  connectorRegistry,
  createRedactor,
  DEFAULT_REDACTION_POLICY,
  runAction,
  type AnyActionRequest,
  type CompiledRedaction,
  type ConnectorRegistry,
  type Observed,
} from "@pes/connectors";
import type { AuditQuery, ChartData, ExecutionBudget, ExecutionJob, PlaybookExecutionResult } from "@pes/contracts";
import type { Logger } from "@pes/logger";
import { chartsOf } from "./action-charts.js";
import { createConcurrencyLimit } from "./concurrency-limit.js";
import { budgetLimitsOf, createBudgetMeter } from "./execution-budget.js";
import { judgeRuns } from "./judge.js";
import { keepExecutionEvidence, type KeptEvidence } from "./keep-evidence.js";
import type { LanguageModelOptions } from "./language-model-summary.js";
import { planInvestigation, type Plan } from "./plan.js";
import { bindMitigationLinks, connectDataSources, prepareSteps } from "./prepare.js";
import { createLocalQuerySlots, type QuerySlots } from "./query-slots.js";
import { runPlan, type PlanRunner } from "./run.js";
import { recordingQueries } from "./sent-queries.js";
import type { ActionReport } from "./run-action.js";

export type { KeptEvidence } from "./keep-evidence.js";
export type { ActionOutcome, ActionReport } from "./run-action.js";

export interface EngineDeps {
  catalog: Catalog;
  /**
   * Every data source's secrets, resolved once at start (resolveCatalogSecrets): handed to its connector
   * with each action. A data source without an entry has none.
   */
  secrets: CatalogSecrets;
  logger: Logger;
  /** Each action's own deadline, from the moment it starts. */
  actionTimeoutMs: number;
  /** Actions running at once across all executions of this engine (one engine per worker process). */
  maxConcurrentActions: number;
  /** The connectors the catalog was loaded with (loadConfig's); default: the stock connectors. */
  connectors?: ConnectorRegistry;
  /**
   * Where the query slots of data sources that set `maxConcurrentQueries` are taken: the worker's are
   * shared through Redis by every worker; default: slots within this engine only.
   */
  querySlots?: QuerySlots;
  /** Runs one prepared action; replaced in tests that need an action to misbehave. */
  runAction?: (request: AnyActionRequest) => Promise<Observed>;
  /**
   * Keeps the evidence bundle of an execution of an organization that opts in (`evidence.keep`), given
   * its id: called once its result is known. A failure to keep it is logged; the result stands.
   */
  keepEvidence?: (kept: KeptEvidence) => Promise<void>;
  /**
   * An OpenAI-compatible model for one optional pass over the findings (language-model-summary.ts); none:
   * the deterministic text only, and no `analysis` in the result.
   */
  languageModel?: LanguageModelOptions;
  /** Told of every action as it ends, for metrics: it must be quick and must not throw. */
  onActionFinished?: (report: ActionReport) => void;
  /** Told of every execution's budget (its result's) as it ends, for metrics: it must be quick and must not throw. */
  onBudgetSettled?: (orgId: string, budget: ExecutionBudget) => void;
  now?: () => Date;
}

export interface Engine {
  /**
   * Runs a resolved job: every action of every gadget concurrently (bounded), each with its own deadline,
   * then judges their evidence (the verdict) and words the per-gadget and bottom-line summaries
   * (`@pes/analysis`). A failing action is a finding, never a failed execution; `{ error }` only when the
   * job names a playbook this worker does not know. With the execution's id, the evidence bundle of an
   * organization that keeps them is handed to `keepEvidence`. Beside the result, what its actions' charts
   * are drawn from (`chartOf`: a metric finding's series, a log finding's counts), by the action's index in
   * `actionResults`: made from the points already fetched.
   */
  investigate(job: ExecutionJob, signal?: AbortSignal, executionId?: string): Promise<Investigation>;
  /** Closes the data sources' HTTP clients (their keep-alive connections). */
  close(): Promise<void>;
}

/** An execution's result, and the data of the charts its actions can draw, by action index. */
export interface Investigation {
  result: PlaybookExecutionResult;
  charts: Map<number, ChartData>;
  /**
   * For its audit record: every query it sent (secrets elided, sent-queries.ts), and the sha256 of the
   * canonical JSON of the evidence bundle it kept, if it kept one. Absent when it ran nothing.
   */
  audit?: { queries: AuditQuery[]; evidenceSha256?: string };
}

/**
 * Builds the engine: every data source's HTTP client (its TLS settings and proxy, one keep-alive pool
 * each) and its mitigation links, and every action bound to its connector. Nothing runs until
 * `investigate` is called, which goes through four stages, each a module: plan (plan.ts), run (run.ts),
 * judge (judge.ts), which ends at the redaction boundary (redaction-boundary.ts): everything after it,
 * the result, the charts, the evidence bundle (keep-evidence.ts) and the log lines, reads redacted data.
 * @throws Error naming the organization and data source whose TLS settings are unusable.
 */
export function createEngine(deps: EngineDeps): Engine {
  const now = deps.now ?? (() => new Date());
  const { logger } = deps;
  const connectors = deps.connectors ?? connectorRegistry;
  const connections = connectDataSources(deps.catalog, deps.secrets);
  const steps = prepareSteps(deps.catalog, connections, connectors, logger);
  const mitigationLinks = bindMitigationLinks(deps.catalog, connectors);
  const redactions = compileRedactions(deps.catalog);
  const runner: PlanRunner = {
    limit: createConcurrencyLimit(deps.maxConcurrentActions),
    run: deps.runAction ?? runAction,
    querySlots: deps.querySlots ?? createLocalQuerySlots(),
    logger,
    actionTimeoutMs: deps.actionTimeoutMs,
    ...(deps.onActionFinished === undefined ? {} : { onActionFinished: deps.onActionFinished }),
  };

  return {
    async close() {
      await Promise.all([...connections.values()].flatMap((byName) => [...byName.values()].map((connection) => connection.http.close())));
    },
    async investigate(job, signal, executionId) {
      const org = deps.catalog.organizations.get(job.orgId);
      const playbook = org?.playbooks.get(job.bookName);
      const playbookSteps = steps.get(job.orgId)?.get(job.bookName);
      if (org === undefined || playbook === undefined || playbookSteps === undefined) {
        // The API validated the name against its own catalog: this is configuration drift between the two.
        logger.warn({ orgId: job.orgId, requestId: job.requestId, bookName: job.bookName }, "job names an unknown playbook");
        return { result: { error: `Unknown playbook "${job.bookName}" for this organization` }, charts: new Map() };
      }
      const startedAt = performance.now();
      const plan = planInvestigation(job, playbook, playbookSteps, now());
      if ("error" in plan) return { result: { error: plan.error }, charts: new Map() };
      // Its budget runs from here: its signal aborts at its wall-time limit, when it has one.
      const budget = createBudgetMeter(budgetLimitsOf(org.budget, playbook.budget), signal);
      const queries: AuditQuery[] = [];
      const runs = await runPlan(recordingQueries(runner, plan, queries), plan, job, budget.signal, budget);
      const judged = await judgeRuns(plan, runs, job, {
        playbook,
        mitigationLinks: (name) => mitigationLinks.get(org.id)?.get(name),
        redactor: createRedactor(redactions.get(org.id) ?? compileRedaction(DEFAULT_REDACTION_POLICY)),
        ...(deps.languageModel === undefined ? {} : { languageModel: deps.languageModel }),
        logger,
        ...(budget.signal === undefined ? {} : { signal: budget.signal }),
        modelTokens: budget,
      });
      const spent = budget.settle();
      deps.onBudgetSettled?.(job.orgId, spent);
      logInvestigation(logger, job, plan, judged.findings, startedAt);
      let evidenceSha256: string | undefined;
      if (executionId !== undefined && org.evidence?.keep === true && deps.keepEvidence !== undefined) {
        const evidence = { executionId, job, plan, runs: judged.runs, judged, settings: org.evidence, recordedAt: now() };
        evidenceSha256 = await keepExecutionEvidence(evidence, deps.keepEvidence, logger);
      }
      return {
        result: { ...judged.result, budget: spent },
        charts: chartsOf(plan.actions, judged.runs, logger.child({ requestId: job.requestId })),
        audit: { queries, ...(evidenceSha256 === undefined ? {} : { evidenceSha256 }) },
      };
    },
  };
}

/** Each organization's redaction policy, compiled once into its combined pattern. */
function compileRedactions(catalog: Catalog): Map<string, CompiledRedaction> {
  return new Map([...catalog.organizations.values()].map((org) => [org.id, compileRedaction(org.redaction ?? DEFAULT_REDACTION_POLICY)]));
}

/**
 * What each action found (a line per finding), for an operator tracing one execution (LOG_LEVEL=debug),
 * then how the execution ended. The findings are past the redaction boundary (redaction-boundary.ts).
 */
function logInvestigation(logger: Logger, job: ExecutionJob, plan: Plan, findings: readonly Finding[], startedAt: number): void {
  if (logger.isLevelEnabled("debug")) {
    for (const { gadget, evidence } of findings) {
      logger.debug(
        { requestId: job.requestId, gadget, action: evidence.action, kind: evidence.kind, shortAnswer: shortAnswer(evidence, plan.time) },
        "action finding",
      );
    }
  }
  logger.info(
    {
      orgId: job.orgId,
      requestId: job.requestId,
      bookName: job.bookName,
      actions: plan.actions.length,
      ...countByRole(findings),
      durationMs: Math.round(performance.now() - startedAt),
    },
    "execution finished",
  );
}

/** How many actions found what: symptoms, changes, normal, answers, no data, failed, skipped. */
function countByRole(findings: readonly Finding[]): Record<Role, number> {
  const counts: Record<Role, number> = { symptom: 0, change: 0, normal: 0, answer: 0, "no-data": 0, failed: 0, skipped: 0 };
  for (const { evidence } of findings) counts[roleOf(evidence)] += 1;
  return counts;
}
