import { encodeReply, RequestRefusal } from "@pes/contracts";
import {
  closeConnection,
  createJobWorker,
  handleJob,
  createWorkerConnection,
  keySpace,
  untilConnected,
  type JobReplies,
  type JobWorker,
  type JobWorkerOptions,
  type RedisConnection,
} from "@pes/jobs";
import type { Logger } from "pino";
import { createBatchStarts } from "./batch-starts.js";
import { START_BATCH_JOB } from "./execution-jobs.js";
import { defineLifecycleCommands, finishExecution } from "./execution-lifecycle.js";

/**
 * How a worker answers the callers of executions: it finishes each execution (finish-execution.lua)
 * with the job's reply, on a connection of its own (BullMQ defines its scripts on the connection it is
 * given, and every pipeline or command on that connection carries them along).
 */
export function createExecutionReplies(options: { redisUrl: string; prefix: string; logger: Logger }): JobReplies {
  const keys = keySpace(options.prefix, options.redisUrl);
  let connection: RedisConnection | undefined;
  return {
    async start() {
      connection = createWorkerConnection(options.redisUrl, options.logger);
      defineLifecycleCommands(connection);
      await untilConnected(connection, options.redisUrl);
    },
    isReady: () => connection?.status === "ready",
    async reply(job, result, status) {
      if (connection === undefined) throw new Error("execution replies not started");
      const orgId = organizationOf(job.data);
      if (orgId === undefined) throw new Error(`job ${job.id} names no organization: its execution cannot be finished`);
      const refused = result instanceof RequestRefusal;
      // Encoded once, and stored before it is published so that a caller who misses the message finds it in the record.
      await finishExecution(connection, keys, orgId, job.id, {
        reply: encodeReply(job.id, result),
        status: refused ? "failed" : status,
        // Only a complete result serves identical requests for the reuse window: after an error they start afresh.
        reusable: status === "completed" && !refused && !("error" in result && typeof result.error === "string"),
      });
    },
    async close(now = false) {
      if (connection === undefined) return;
      if (now) connection.disconnect();
      else await closeConnection(connection);
    },
  };
}

/**
 * A worker that runs a catalog of execution jobs: it answers their callers (createExecutionReplies) and
 * starts the async batches the API accepted (START_BATCH_JOB, createBatchStarts) besides the catalog.
 */
export function createExecutionWorker(options: Omit<JobWorkerOptions, "replies">): JobWorker {
  const starts = createBatchStarts(options);
  const worker = createJobWorker({
    ...options,
    catalog: [...options.catalog, handleJob(START_BATCH_JOB, (job, { signal }) => starts.run(job, signal))],
    replies: createExecutionReplies(options),
  });
  return {
    async start() {
      await starts.start();
      await worker.start();
    },
    isReady: () => worker.isReady(),
    async close(timeoutMs) {
      await worker.close(timeoutMs);
      await starts.close();
    },
  };
}

/** An execution job's organization, read without its schema, so that even a malformed job's caller is answered. */
function organizationOf(data: unknown): string | undefined {
  return typeof data === "object" && data !== null && "orgId" in data && typeof data.orgId === "string" ? data.orgId : undefined;
}
