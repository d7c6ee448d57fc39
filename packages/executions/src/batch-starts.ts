import type { StartBatchJob } from "@pes/contracts";
import { closeConnection, createProducerConnection, createWorkerConnection, keySpace, untilConnected, withTimeout, type RedisConnection } from "@pes/jobs";
import type { Logger } from "pino";
import { enqueueExecutions, openExecutionQueues, queueOf, type ExecutionQueues } from "./execution-enqueue.js";
import { beginExecutions, defineLifecycleCommands, extendBatch, readBatch } from "./execution-lifecycle.js";

/** Items begun in one script call and enqueued in one addBulk: no step holds Redis for long. */
const CHUNK = 500;

/** What a worker needs to run `start-batch` jobs (START_BATCH_JOB). */
export interface BatchStarts {
  start(): Promise<void>;
  /** Begins and enqueues a batch's items from where it stopped, a chunk at a time, in the batch lane. */
  run(job: StartBatchJob, signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/**
 * Runs the starts of async batches in a worker: each chunk of items is begun in one script
 * (begin-executions.lua: their places under the limit were taken when the API accepted the batch),
 * the jobs of the executions it created are added, then the chunk is recorded in the batch's item list
 * (extend-batch.lua). A retried start resumes at the first chunk not recorded; its executions exist
 * already (begin joins them) and adding their jobs again does nothing while they exist.
 */
export function createBatchStarts(options: { redisUrl: string; prefix: string; logger: Logger }): BatchStarts {
  const keys = keySpace(options.prefix, options.redisUrl);
  const logger = options.logger.child({ component: "batch-starts" });
  let records: RedisConnection | undefined;
  let producer: RedisConnection | undefined;
  let queues: ExecutionQueues | undefined;

  return {
    async start() {
      records = createWorkerConnection(options.redisUrl, logger);
      defineLifecycleCommands(records);
      producer = createProducerConnection(options.redisUrl, logger);
      queues = openExecutionQueues(producer, options);
      await Promise.all([untilConnected(records, options.redisUrl), untilConnected(producer, options.redisUrl)]);
    },

    async run(job, signal) {
      if (records === undefined || queues === undefined) throw new Error("batch starts not started");
      const target = queues;
      const batch = await readBatch(records, keys, job.orgId, job.batchId);
      // Gone past its retention, or never accepted: nothing to begin.
      if (batch === undefined) return;
      for (let from = batch.begun; from < job.items.length; from += CHUNK) {
        signal.throwIfAborted();
        const part = job.items.slice(from, from + CHUNK);
        const valid = part.flatMap((item) => ("request" in item ? [item] : []));
        const begun = await beginExecutions(
          records,
          keys,
          {
            orgId: job.orgId,
            lane: "batch",
            reserved: true,
            deadline: job.deadline,
            ttlMs: job.ttlMs,
            retainMs: job.retainMs,
            reuseMs: job.reuseMs,
            batchId: job.batchId,
          },
          valid.map((item) => ({
            candidateId: item.candidateId,
            queue: queueOf(item.request, target, true).name,
            batchIndex: item.index,
            ...(item.fingerprint === undefined ? {} : { fingerprint: item.fingerprint }),
            ...(item.request.teams === undefined ? {} : { teams: item.request.teams }),
          })),
        );
        // Its own executions still pending: created now, or by an attempt that stopped before their jobs were added.
        const own = valid.flatMap((item, k) => {
          const execution = begun.executions[k];
          const pending = execution?.state === "created" || execution?.state === "pending";
          return pending && execution?.executionId === item.candidateId ? [{ request: item.request, executionId: item.candidateId }] : [];
        });
        await enqueueExecutions(target, own, { replyTo: job.replyTo, deadline: job.deadline, behind: true });
        let k = 0;
        const entries = part.map((item) => ("invalid" in item ? item.invalid : (begun.executions[k++]?.executionId ?? item.candidateId)));
        await extendBatch(records, keys, job.orgId, { batchId: job.batchId, from, ttlMs: job.ttlMs, entries });
      }
    },

    async close() {
      if (queues !== undefined) {
        const { execute, message, behind } = queues;
        await withTimeout(Promise.all([execute.close(), message.close(), behind.close()]), 2_000, "closing the queues").catch(() => undefined);
      }
      await Promise.all([records, producer].map((connection) => connection && closeConnection(connection)));
    },
  };
}
