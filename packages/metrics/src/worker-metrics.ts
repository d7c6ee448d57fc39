import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { createProcessRegistry } from "./process-registry.js";

/**
 * How a job's run ended: a `result` (for an execution, one without `error`), an `error` (a result
 * carrying one, a failed or malformed job), a `timeout` (its caller's deadline or its attempt's
 * timeout), or `interrupted` by shutdown and handed back to the queue.
 */
export const JOB_OUTCOMES = ["result", "error", "timeout", "interrupted"] as const;
export type JobOutcomeLabel = (typeof JOB_OUTCOMES)[number];

/**
 * How a data-source action ended; `skipped` when the issue lacks an attribute its query needs, `budget`
 * when a budget stopped it before it started or cut its wait.
 */
export const ACTION_OUTCOMES = ["ok", "failed", "timeout", "cancelled", "skipped", "budget"] as const;
export type ActionOutcomeLabel = (typeof ACTION_OUTCOMES)[number];

/** One finished action, named by configuration only: never a URL, a query, a secret or an attribute value. */
export interface ActionObservation {
  orgId: string;
  /** The connector type (`prometheus`, `http`…). */
  connector: string;
  /** The data source's name in the organization's configuration. */
  dataSource: string;
  outcome: ActionOutcomeLabel;
  /** How long it ran; absent when it never ran (skipped, or cancelled before it started). */
  seconds?: number;
}

/** What an execution spent of its budget, as its result's `budget` says (ExecutionBudget of the contracts). */
export interface BudgetObservation {
  spent: { queries: number; bytes: number; wallTimeMs: number; modelTokens: number };
  /** The limit that stopped work, if one did. */
  exhausted?: string;
  /** Queries the organization's per-minute budget refused, by data source name. */
  refused?: Readonly<Record<string, number>>;
}

/** A worker's metrics: its registry and what the worker records into it. */
export interface WorkerMetrics {
  readonly registry: Registry;
  /** One run of a job of the worker's catalog finished. */
  jobFinished(jobName: string, outcome: JobOutcomeLabel, seconds: number): void;
  actionFinished(observation: ActionObservation): void;
  /** The jobs of a background queue the worker now runs at most at once (the job runtime's background slots). */
  backgroundSlots(queue: string, slots: number): void;
  /** One execution of an organization ended, having spent this of its budget. */
  budgetSettled(orgId: string, budget: BudgetObservation): void;
}

/** Jobs run for up to their caller's deadline (EXECUTION_TIMEOUT_MS, 120 s by default). */
const JOB_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Actions run for up to ACTION_TIMEOUT_MS (15 s by default). */
const ACTION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60];

/**
 * The worker's registry: process metrics, jobs by name and outcome with their durations, data-source
 * actions by organization, connector type, data source name and outcome, with their durations, the
 * slots of its background queues, and executions' budgets: spent and exhausted by organization and kind,
 * per-minute refusals by organization and data source.
 * `jobNames` (the catalog's) start at zero, so that rates and ratios exist before the first job.
 */
export function createWorkerMetrics(options: { jobNames: readonly string[] }): WorkerMetrics {
  const registry = createProcessRegistry();
  const jobs = new Counter({
    name: "pes_jobs_total",
    help: "Job runs finished by this worker, by job name (execute: a playbook execution) and outcome",
    labelNames: ["job_name", "outcome"],
    registers: [registry],
  });
  const jobDuration = new Histogram({
    name: "pes_job_duration_seconds",
    help: "How long each job run took in this worker, whatever its outcome",
    labelNames: ["job_name"],
    buckets: JOB_BUCKETS,
    registers: [registry],
  });
  const actions = new Counter({
    name: "pes_actions_total",
    help: "Data-source actions finished, by organization, connector type, data source name and outcome",
    labelNames: ["org", "connector", "data_source", "outcome"],
    registers: [registry],
  });
  const actionDuration = new Histogram({
    name: "pes_action_duration_seconds",
    help: "How long each data-source action that ran took, by organization, connector type and data source name",
    labelNames: ["org", "connector", "data_source"],
    buckets: ACTION_BUCKETS,
    registers: [registry],
  });
  const backgroundSlots = new Gauge({
    name: "pes_worker_background_slots",
    help: "Jobs of a background queue (the batch lane) this worker runs at most at once: its concurrency, fewer while interactive executions need the CPU",
    labelNames: ["queue"],
    registers: [registry],
  });
  const budgetSpent = new Counter({
    name: "pes_budget_spent_total",
    help: "What executions spent of their budgets, by organization and kind: queries started, bytes read from data sources, wall-time in seconds, model tokens",
    labelNames: ["org", "kind"],
    registers: [registry],
  });
  const budgetExhausted = new Counter({
    name: "pes_budget_exhausted_total",
    help: "Executions a budget limit stopped (actions not run or not waited for, or the model pass not asked), by organization and the limit's kind",
    labelNames: ["org", "kind"],
    registers: [registry],
  });
  const budgetRefusals = new Counter({
    name: "pes_budget_refusals_total",
    help: "Queries refused because their organization's queries per minute on the data source were spent, by organization and data source name",
    labelNames: ["org", "data_source"],
    registers: [registry],
  });
  for (const jobName of options.jobNames) {
    jobDuration.zero({ job_name: jobName });
    for (const outcome of JOB_OUTCOMES) jobs.labels(jobName, outcome).inc(0);
  }

  return {
    registry,
    jobFinished(jobName, outcome, seconds) {
      jobs.labels(jobName, outcome).inc();
      jobDuration.labels(jobName).observe(seconds);
    },
    actionFinished({ orgId, connector, dataSource, outcome, seconds }) {
      actions.labels(orgId, connector, dataSource, outcome).inc();
      if (seconds !== undefined) actionDuration.labels(orgId, connector, dataSource).observe(seconds);
    },
    backgroundSlots(queue, slots) {
      backgroundSlots.labels(queue).set(slots);
    },
    budgetSettled(orgId, { spent, exhausted, refused }) {
      budgetSpent.labels(orgId, "queries").inc(spent.queries);
      budgetSpent.labels(orgId, "bytes").inc(spent.bytes);
      budgetSpent.labels(orgId, "wall-time").inc(spent.wallTimeMs / 1_000);
      budgetSpent.labels(orgId, "model-tokens").inc(spent.modelTokens);
      if (exhausted !== undefined) budgetExhausted.labels(orgId, exhausted).inc();
      if (refused !== undefined) for (const [dataSource, count] of Object.entries(refused)) budgetRefusals.labels(orgId, dataSource).inc(count);
    },
  };
}
