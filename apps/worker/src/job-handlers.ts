import type { ExecutionJob, PlaybookExecutionResult } from "@pes/contracts";
import type { Engine } from "@pes/engine";
import { BATCH_ITEM_POST_WINDOW_MS, type BatchStarts, type ExecutionJobHandlers } from "@pes/executions";
import { auditedExecution, type AuditDeps } from "./audit/audited-execution.js";
import { keepCharts } from "./execution-charts.js";
import { recallAndRemember } from "./execution-memory.js";
import { executeMessageJob, type MessageExecutionDeps } from "./message-execution.js";
import { deliverResult, postBatchItemReply } from "./result-delivery.js";

/**
 * The handler of every job this worker runs, one per job of @pes/executions' EXECUTION_JOBS (the catalog:
 * name, payload schema, queue, batch lane, timeout; shared with the producers): one missing does not
 * compile. A handler only calls plain functions; the runtime (handleCatalog) parses the payload, applies
 * the job's timeout and deadline to its signal, takes it from its queue and its batch lane, retries as
 * declared and replies to a waiting caller.
 */
export function createJobHandlers(
  deps: MessageExecutionDeps & { engine: Pick<Engine, "investigate">; batchStarts: Pick<BatchStarts, "run">; audit?: AuditDeps },
): ExecutionJobHandlers {
  return {
    // Each execution appends its audit record when it finishes (audit/audited-execution.ts).
    execute: (job, context) => auditedExecution(deps.audit, deps.engine, job, context, (engine) => execute(deps, engine, job, context)),
    "execute-message": (job, context) =>
      auditedExecution(deps.audit, deps.engine, job, context, (engine) => executeMessageJob({ ...deps, engine }, job, context)),
    "start-batch": (job, { signal }) => deps.batchStarts.run(job, signal),
    "post-batch-item": (job, { signal }) => postBatchItemReply(deps.delivery, job, { windowMs: BATCH_ITEM_POST_WINDOW_MS, signal }),
  };
}

/** Runs an execution job and delivers its result. */
async function execute(
  deps: MessageExecutionDeps,
  engine: Pick<Engine, "investigate">,
  job: ExecutionJob,
  { signal, jobId }: { signal: AbortSignal; jobId: string },
): Promise<PlaybookExecutionResult> {
  // The job id is the execution id: an evidence bundle and charts kept for it are read back by it.
  const investigation = await engine.investigate(job, signal, jobId);
  const { orgId, requestId, liveRun, attributes, channelId, batch, title } = job;
  const execution = { orgId, executionId: jobId, requestId, deadline: job.deadline };
  const charted = await keepCharts(deps.delivery.charts, execution, investigation, deps.delivery.logger);
  // After the verdict and its page link, before delivery: the posts and the page show the history too.
  const result = await recallAndRemember(
    deps.memory,
    { orgId, executionId: jobId, requestId, bookName: job.bookName, time: job.time, attributes, ...(job.teams === undefined ? {} : { teams: job.teams }) },
    charted,
  );
  return deliverResult(
    deps.delivery,
    {
      jobId,
      orgId,
      requestId,
      liveRun,
      attributes,
      ...(channelId === undefined ? {} : { channelId }),
      ...(batch === undefined ? {} : { batch }),
      ...(title === undefined ? {} : { title }),
      charts: investigation.charts,
    },
    result,
    { deadline: job.deadline, signal },
  );
}
