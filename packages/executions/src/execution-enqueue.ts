import { WIRE_VERSION, type ExecutionJob, type ExecutionRequest, type MessageExecutionJob, type MessageExecutionRequest } from "@pes/contracts";
import { jobToAdd, keySpace, startEnqueueSpan, type RedisConnection } from "@pes/jobs";
import { Queue } from "bullmq";
import type { Logger } from "pino";
import { BATCH_EXECUTE_JOB, BATCH_EXECUTE_MESSAGE_JOB, EXECUTE_JOB, EXECUTE_MESSAGE_JOB } from "./execution-jobs.js";

export type ExecutionQueue = Queue<ExecutionJob | MessageExecutionJob, void>;

/**
 * The queues of execution jobs: `execute`, `execute-message` for an issue that is a chat message, and
 * both kinds behind every other caller's work (an async batch's items, alerts over their organization's limit).
 */
export interface ExecutionQueues {
  execute: ExecutionQueue;
  message: ExecutionQueue;
  behind: ExecutionQueue;
}

/** Opens the execution queues on a producer connection (of BullMQ's scripts: not the records' connection). */
export function openExecutionQueues(connection: RedisConnection, options: { redisUrl: string; prefix: string; logger: Logger }): ExecutionQueues {
  const { bullPrefix } = keySpace(options.prefix, options.redisUrl);
  const open = (name: string): ExecutionQueue => {
    const queue: ExecutionQueue = new Queue(name, { connection, prefix: bullPrefix });
    queue.on("error", (error) => options.logger.warn({ queue: name, err: error }, "queue error"));
    return queue;
  };
  return { execute: open(EXECUTE_JOB.queue), message: open(EXECUTE_MESSAGE_JOB.queue), behind: open(BATCH_EXECUTE_JOB.queue) };
}

/** The queue of an execution's job: by its kind, or the one behind every other caller's work. */
export function queueOf(request: ExecutionRequest | MessageExecutionRequest, queues: ExecutionQueues, behind = false): ExecutionQueue {
  if (behind) return queues.behind;
  return "kind" in request ? queues.message : queues.execute;
}

/**
 * Adds the jobs of executions (their ids are their jobs' ids): one script call for one job, addBulk per
 * queue for many (one MULTI round trip however many jobs). Each job carries its caller (the API instance
 * and the deadline), the options its declaration states, and its producer span's trace context; jobs
 * `behind` go to the queue behind every other caller's work. Adding a job whose id exists does nothing
 * (BullMQ's), so a retried start adds only what is missing.
 */
export async function enqueueExecutions(
  queues: ExecutionQueues,
  executions: readonly { request: ExecutionRequest | MessageExecutionRequest; executionId: string }[],
  caller: { replyTo: string; deadline: number; behind: boolean },
): Promise<void> {
  const jobs = executions.map(({ request, executionId }) => {
    const queue = queueOf(request, queues, caller.behind);
    const span = startEnqueueSpan(queue.name, executionId, request.requestId);
    const head = {
      v: WIRE_VERSION,
      replyTo: caller.replyTo,
      deadline: caller.deadline,
      ...(span.traceparent === undefined ? {} : { traceparent: span.traceparent }),
    };
    if ("kind" in request) {
      const { kind: _kind, ...payload } = request;
      const declaration = caller.behind ? BATCH_EXECUTE_MESSAGE_JOB : EXECUTE_MESSAGE_JOB;
      return { queue, span, job: jobToAdd(declaration, { ...head, ...payload }, executionId) };
    }
    const declaration = caller.behind ? BATCH_EXECUTE_JOB : EXECUTE_JOB;
    return { queue, span, job: jobToAdd(declaration, { ...head, ...request }, executionId) };
  });
  try {
    await Promise.all(
      [queues.execute, queues.message, queues.behind].map(async (queue) => {
        const own = jobs.filter((entry) => entry.queue === queue).map((entry) => entry.job);
        const [single] = own;
        if (own.length === 1 && single !== undefined) await queue.add(single.name, single.data, single.opts);
        else if (own.length > 1) await queue.addBulk(own);
      }),
    );
  } catch (error) {
    for (const { span } of jobs) span.end(error);
    throw error;
  }
  for (const { span } of jobs) span.end();
}
