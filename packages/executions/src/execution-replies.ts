import { encodeReply, RequestRefusal } from "@pes/contracts";
import {
  closeConnection,
  createJobWorker,
  createWorkerConnection,
  keySpace,
  untilConnected,
  type JobReplies,
  type JobWorker,
  type JobWorkerOptions,
  type RedisConnection,
} from "@pes/jobs";
import type { Logger } from "pino";
import type { BatchStarts } from "./batch-starts.js";
import { BATCH_LANES } from "./execution-jobs.js";
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
 * A worker that runs the handlers of execution jobs (handleCatalog of EXECUTION_JOBS) and answers their
 * callers (createExecutionReplies). An execution handler also runs from its batch lane
 * (BATCH_EXECUTION_QUEUE: async batch items, alerts over their organization's limit), at most
 * `batchConcurrency` of those at once (default a quarter of `concurrency`) so that interactive executions
 * always find room, and fewer while the process is short of CPU so that they find the CPU too. That lane,
 * the batches' starts and the chat posts of batch items are background queues of the job runtime
 * (governBackgroundSlots): they give way to interactive executions and do not count as interactive work
 * themselves. `batchStarts`, which the start-batch handler runs, starts and closes with the worker.
 */
export function createExecutionWorker(
  options: Omit<JobWorkerOptions, "replies" | "queueConcurrency" | "backgroundQueues"> & { batchConcurrency?: number; batchStarts?: BatchStarts },
): JobWorker {
  const { batchStarts } = options;
  const batchConcurrency = options.batchConcurrency ?? Math.ceil(options.concurrency / 4);
  const worker = createJobWorker({
    ...options,
    queueConcurrency: Object.fromEntries(BATCH_LANES.map((queue) => [queue, batchConcurrency])),
    replies: createExecutionReplies(options),
  });
  let closed = false;
  return {
    async start() {
      if (batchStarts !== undefined) await batchStarts.start();
      // Closed while the batch starts waited for Redis: the worker never starts.
      if (closed) throw new Error("closed before Redis was reachable");
      await worker.start();
    },
    isReady: () => worker.isReady(),
    async close(timeoutMs) {
      closed = true;
      await worker.close(timeoutMs);
      await batchStarts?.close();
    },
  };
}

/** An execution job's organization, read without its schema, so that even a malformed job's caller is answered. */
function organizationOf(data: unknown): string | undefined {
  return typeof data === "object" && data !== null && "orgId" in data && typeof data.orgId === "string" ? data.orgId : undefined;
}
