import { WIRE_VERSION, type ExecutionJob, type ExecutionRequest, type MessageExecutionJob, type MessageExecutionRequest } from "@pes/contracts";
import { jobToAdd, keySpace, startEnqueueSpan, type RedisConnection } from "@pes/jobs";
import { Queue } from "bullmq";
import type { Logger } from "pino";
import { EXECUTE_JOB, EXECUTE_MESSAGE_JOB } from "./execution-jobs.js";

export type ExecutionQueue = Queue<ExecutionJob | MessageExecutionJob, void>;

/** The queues of execution jobs: `execute`, and `execute-message` for an issue that is a chat message. */
export interface ExecutionQueues {
  execute: ExecutionQueue;
  message: ExecutionQueue;
}

/**
 * BullMQ's priority of jobs behind every other caller's work: an async batch's items, and executions
 * admitted over their organization's limit. Any priority puts a job behind every job without one (BullMQ's
 * wait list is drained first); equal priorities keep their order (first in, first out).
 */
const BEHIND_PRIORITY = 1;

/** Opens the execution queues on a producer connection (of BullMQ's scripts: not the records' connection). */
export function openExecutionQueues(connection: RedisConnection, options: { redisUrl: string; prefix: string; logger: Logger }): ExecutionQueues {
  const { bullPrefix } = keySpace(options.prefix, options.redisUrl);
  const open = (name: string): ExecutionQueue => {
    const queue: ExecutionQueue = new Queue(name, { connection, prefix: bullPrefix });
    queue.on("error", (error) => options.logger.warn({ queue: name, err: error.message }, "queue error"));
    return queue;
  };
  return { execute: open(EXECUTE_JOB.queue), message: open(EXECUTE_MESSAGE_JOB.queue) };
}

export function queueOf(request: ExecutionRequest | MessageExecutionRequest, queues: ExecutionQueues): ExecutionQueue {
  return "kind" in request ? queues.message : queues.execute;
}

/**
 * Adds the jobs of executions (their ids are their jobs' ids): one script call for one job, addBulk per
 * queue for many (one MULTI round trip however many jobs). Each job carries its caller (the API instance
 * and the deadline), the options its declaration states, and its producer span's trace context; jobs
 * `behind` carry the priority that puts them behind every other caller's work. Adding a job whose id
 * exists does nothing (BullMQ's), so a retried start adds only what is missing.
 */
export async function enqueueExecutions(
  queues: ExecutionQueues,
  executions: readonly { request: ExecutionRequest | MessageExecutionRequest; executionId: string }[],
  caller: { replyTo: string; deadline: number; behind: boolean },
): Promise<void> {
  const jobs = executions.map(({ request, executionId }) => {
    const declaration = "kind" in request ? EXECUTE_MESSAGE_JOB : EXECUTE_JOB;
    const span = startEnqueueSpan(declaration.queue, executionId, request.requestId);
    const head = {
      v: WIRE_VERSION,
      replyTo: caller.replyTo,
      deadline: caller.deadline,
      ...(span.traceparent === undefined ? {} : { traceparent: span.traceparent }),
    };
    const priority = caller.behind ? { priority: BEHIND_PRIORITY } : {};
    if ("kind" in request) {
      const { kind: _kind, ...payload } = request;
      const job = jobToAdd(EXECUTE_MESSAGE_JOB, { ...head, ...payload }, executionId);
      return { queue: queues.message, span, job: { ...job, opts: { ...job.opts, ...priority } } };
    }
    const job = jobToAdd(EXECUTE_JOB, { ...head, ...request }, executionId);
    return { queue: queues.execute, span, job: { ...job, opts: { ...job.opts, ...priority } } };
  });
  try {
    await Promise.all(
      [queues.execute, queues.message].map(async (queue) => {
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
