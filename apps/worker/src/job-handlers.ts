import type { Engine } from "@pes/engine";
import { BATCH_ITEM_POST_WINDOW_MS, EXECUTE_JOB, EXECUTE_MESSAGE_JOB, POST_BATCH_ITEM_JOB } from "@pes/executions";
import { handleJob, type JobHandlers } from "@pes/jobs";
import { keepCharts } from "./execution-charts.js";
import { executeMessageJob, type MessageExecutionDeps } from "./message-execution.js";
import { deliverResult, postBatchItemReply } from "./result-delivery.js";

/**
 * Every job this worker runs: each declaration (name, payload schema, options; shared with the producers
 * in @pes/executions) with its handler. A handler only calls plain functions; the runtime parses the payload,
 * applies the job's timeout and deadline to its signal, retries as declared and replies to a waiting caller.
 */
export function createJobHandlers(deps: MessageExecutionDeps & { engine: Engine }): JobHandlers {
  return [
    handleJob(EXECUTE_JOB, async (job, { signal, jobId }) => {
      // The job id is the execution id: an evidence bundle and charts kept for it are read back by it.
      const investigation = await deps.engine.investigate(job, signal, jobId);
      const { orgId, requestId, liveRun, attributes, channelId, batch, title } = job;
      const execution = { orgId, executionId: jobId, requestId, deadline: job.deadline };
      const result = await keepCharts(deps.delivery.charts, execution, investigation, deps.delivery.logger);
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
    }),
    handleJob(EXECUTE_MESSAGE_JOB, (job, { signal, jobId }) => executeMessageJob(deps, job, { signal, jobId })),
    handleJob(POST_BATCH_ITEM_JOB, (job, { signal }) => postBatchItemReply(deps.delivery, job, { windowMs: BATCH_ITEM_POST_WINDOW_MS, signal })),
  ];
}
