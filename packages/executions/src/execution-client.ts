import { randomUUID } from "node:crypto";
import { errorMessage, type ExecutionRequest, type MessageExecutionRequest } from "@pes/contracts";
import { CONNECT_TIMEOUT_MS, describeRedisUrl, jobToAdd, keySpace, replyChannel, withTimeout } from "@pes/jobs";
import type { Queue } from "bullmq";
import { createBatchStore } from "./batch-store.js";
import { connect, disconnect, isConnected, untilReady, type Connected, type ConnectionSetup } from "./client-connections.js";
import { answerAtDeadline, STATE_READ_TIMEOUT_MS } from "./deadline-answer.js";
import { QueueUnavailableError, type ExecutionClient, type ExecutionClientOptions, type ExecutionView, type SubmitOptions } from "./execution-client-types.js";
import type { ExecutionQueues } from "./execution-enqueue.js";
import { executionFingerprint } from "./execution-fingerprint.js";
import { START_BATCH_JOB } from "./execution-jobs.js";
import { errorResult, finishLost, readJobState, readStatus, type StatusReads } from "./execution-status.js";
import { submitExecutions, type SubmissionDeps } from "./execution-submission.js";
import { createIdempotencyKeys } from "./idempotency-keys.js";

export * from "./execution-client-types.js";

const DEFAULT_RETENTION_MS = 3_600_000;
const DEFAULT_SUBMITTED_TIMEOUT_MS = 120_000;
const DEFAULT_BATCH_TIMEOUT_MS = 3_600_000;

/** What the client is made of before it connects. */
interface Setup extends ConnectionSetup {
  options: ExecutionClientOptions;
  retentionMs: number;
}

/**
 * Builds the API side of the execution queue. Every execution has a record in Redis (status, result,
 * the reply channels of the instances waiting for it, the batches counting on it), begun and finished
 * each in one script (execution-lifecycle.ts): identical requests join one execution, the organization's
 * limit admits the new ones, and a finished error is never joined. Each instance listens on its own
 * reply channel (ReplyListener); what state an execution is in is read in one place (statusOf), at a
 * caller's deadline, on a read by id and on a batch's page alike. Nothing connects before start().
 */
export function createExecutionClient(options: ExecutionClientOptions): ExecutionClient {
  const setup = setupOf(options);
  const submittedTimeoutMs = options.submittedTimeoutMs ?? DEFAULT_SUBMITTED_TIMEOUT_MS;
  const batchTimeoutMs = options.batchTimeoutMs ?? DEFAULT_BATCH_TIMEOUT_MS;
  let connected: Connected | undefined;
  let closed = false;
  const readiness = new Set<() => void>();
  const ready = (): Connected | undefined => (closed || connected === undefined || !isConnected(connected) ? undefined : connected);
  const readyRecords = () => ready()?.records ?? unreachable();
  // A key outlives what it names: an execution, or a batch (kept for its deadline and the retention after).
  const idempotencyKeys = createIdempotencyKeys(readyRecords, setup.keys, setup.retentionMs + Math.max(submittedTimeoutMs, batchTimeoutMs));
  const batches = createBatchStore({
    ...batchSettings(setup, batchTimeoutMs),
    records: readyRecords,
    addStart: async (job) => {
      const { name, data, opts } = jobToAdd(START_BATCH_JOB, job, job.batchId);
      if (connected === undefined) throw new QueueUnavailableError("Execution client not started");
      await connected.starts.add(name, data, opts);
    },
    startState: async (batchId) => {
      const state = await connected?.starts.getJobState(batchId);
      return state === "active" ? "active" : state === "waiting" || state === "prioritized" || state === "delayed" ? "waiting" : "gone";
    },
    jobState: (queue, jobId) => readJobState(connected && queueNamed(connected.queues, queue), jobId),
  });
  const unavailable = (error: unknown) =>
    new QueueUnavailableError(closed ? "Service is shutting down" : `Could not enqueue: ${errorMessage(error)}`, { cause: error });

  async function begin(requests: readonly (ExecutionRequest | MessageExecutionRequest)[], timeoutMs: number, settings: SubmitOptions & { wait: boolean }) {
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new RangeError(`timeoutMs must be a positive number, got ${timeoutMs}`);
    if (closed) throw new QueueUnavailableError("Service is shutting down");
    if (connected === undefined) throw new QueueUnavailableError("Execution client not started");
    const target = ready() ?? unreachable();
    return submitExecutions(submissionDeps(setup, target, unavailable), requests, timeoutMs, settings);
  }

  return {
    async start() {
      if (connected !== undefined) throw new Error("execution client already started");
      connected = connect(setup, () => {
        for (const listener of readiness) listener();
      });
      if (!(await untilReady(readiness, () => ready() !== undefined, CONNECT_TIMEOUT_MS * 2))) {
        throw new QueueUnavailableError(`Redis at ${describeRedisUrl(options.redisUrl)} is unreachable; still retrying`);
      }
      setup.logger.info({ channel: setup.channel }, "execution client ready");
    },
    async execute(request, timeoutMs, executeOptions = {}) {
      const { executionId, ...rest } = executeOptions;
      const { submitted, results } = await begin([request], timeoutMs, {
        ...rest,
        ...(executionId === undefined ? {} : { executionIds: [executionId] }),
        wait: true,
      });
      const [started] = submitted;
      const [result] = results;
      if (started === undefined || result === undefined) throw new Error("no execution for one request");
      return { ...started, outcome: await result };
    },
    executeMany: async (requests, timeoutMs, executeOptions = {}) => Promise.all((await begin(requests, timeoutMs, { ...executeOptions, wait: true })).results),
    submit: async (requests, submitOptions = {}) =>
      (await begin(requests, submitOptions.timeoutMs ?? submittedTimeoutMs, { ...submitOptions, wait: false })).submitted,
    read: async (orgId, executionId) => readView(statusReads(setup, ready() ?? unreachable()), orgId, executionId),
    idempotencyKeys,
    batches,
    isReady: async () => {
      const producer = ready()?.producer;
      return (
        producer !== undefined &&
        (await withTimeout(producer.ping(), STATE_READ_TIMEOUT_MS, "PING").then(
          () => true,
          () => false,
        ))
      );
    },
    async close() {
      if (closed) return;
      closed = true;
      if (connected !== undefined) await disconnect(connected, setup.logger);
    },
  };
}

function setupOf(options: ExecutionClientOptions): Setup {
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  if (options.coalescing !== undefined && options.coalescing.reuseMs > retentionMs) throw new RangeError("coalescing.reuseMs must not exceed retentionMs");
  const keys = keySpace(options.prefix, options.redisUrl);
  const instanceId = options.instanceId ?? randomUUID();
  const logger = options.logger.child({ component: "execution-client", instanceId });
  return { options, redisUrl: options.redisUrl, prefix: options.prefix, keys, instanceId, channel: replyChannel(keys, instanceId), logger, retentionMs };
}

function unreachable(): never {
  throw new QueueUnavailableError("Redis is unreachable");
}

function queueNamed(queues: ExecutionQueues, name: string): Queue | undefined {
  return [queues.execute, queues.message, queues.behind].find((queue) => queue.name === name);
}

function statusReads(setup: Setup, connected: Connected): StatusReads {
  return { records: connected.records, keys: setup.keys, queueNamed: (name) => queueNamed(connected.queues, name) };
}

function submissionDeps(setup: Setup, connected: Connected, unavailable: (error: unknown) => Error): SubmissionDeps {
  const { options, keys, instanceId, channel, retentionMs, logger } = setup;
  const deadlineDeps = {
    ...statusReads(setup, connected),
    logger,
    ...(options.onReplyTimeout === undefined ? {} : { onReplyTimeout: options.onReplyTimeout }),
  };
  return {
    records: connected.records,
    queues: connected.queues,
    keys,
    instanceId,
    channel,
    retentionMs,
    ...(options.coalescing === undefined ? {} : { coalescing: options.coalescing }),
    ...(options.onJoined === undefined ? {} : { onJoined: options.onJoined }),
    unavailable,
    waitFor: (orgId, executionId, created, timeoutMs) =>
      connected.listener.waitFor(orgId, executionId, timeoutMs, () => answerAtDeadline(deadlineDeps, { executionId, orgId, created, timeoutMs })),
  };
}

function batchSettings(setup: Setup, timeoutMs: number) {
  const { coalescing } = setup.options;
  return {
    keys: setup.keys,
    replyTo: setup.instanceId,
    fingerprint: (request: ExecutionRequest | MessageExecutionRequest) =>
      coalescing === undefined ? undefined : executionFingerprint(request, coalescing.bucketMs, Date.now()),
    reuseMs: coalescing?.reuseMs ?? 0,
    timeoutMs,
    retentionMs: setup.retentionMs,
  };
}

/**
 * An execution as a caller reads it back (GET): its status, and once finished its outcome. One found lost
 * is finished first, so that nobody joins it any longer; it reads as its record then says (the loss, or a
 * reply stored just before).
 */
async function readView(reads: StatusReads, orgId: string, executionId: string): Promise<ExecutionView | undefined> {
  let read = await readStatus(reads, orgId, executionId);
  if (read?.status.status === "lost") {
    await finishLost(reads.records, reads.keys, orgId, executionId);
    read = await readStatus(reads, orgId, executionId);
  }
  if (read === undefined) return undefined;
  const { record, status } = read;
  const base = { id: executionId, createdAt: new Date(record.createdAt), ...(record.teams === undefined ? {} : { teams: record.teams }) };
  switch (status.status) {
    case "queued":
    case "running":
      return { ...base, status: status.status };
    case "lost":
      return { ...base, status: "failed", outcome: errorResult("Execution result was lost") };
    default:
      return {
        ...base,
        status: status.status,
        ...(status.completedAt === undefined ? {} : { completedAt: new Date(status.completedAt) }),
        outcome: status.outcome,
      };
  }
}
