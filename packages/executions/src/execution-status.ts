import { decodeReply, encodeReply, JsonText, type PlaybookExecutionResult } from "@pes/contracts";
import type { KeySpace, RedisConnection } from "@pes/jobs";
import type { Queue, JobState as QueueJobState } from "bullmq";
import { finishExecution, readRecords, type ExecutionOutcome, type StoredRecord } from "./execution-lifecycle.js";

/**
 * A pending execution whose job has been gone this long was lost: its enqueue failed after its record was
 * created, or a Redis restart lost the job. Sooner, its job may just not have been added yet.
 */
export const LOST_AFTER_MS = 10_000;

/**
 * Where BullMQ holds an execution's job: one of its states, `queued` for a job no worker has taken yet
 * (waiting, delayed or prioritized), or `unknown` when it holds none; and why it failed when it did.
 */
export interface JobState {
  state: QueueJobState | "queued" | "unknown";
  failedReason?: string;
}

/**
 * What state an execution is in: finished (its record holds its outcome), or as its job stands while the
 * record is pending. `lost`: pending, with a job gone too long ago to reply; whoever finds it so finishes it
 * (finishLost), so that it stops counting and nobody joins it any longer.
 */
export type ExecutionStatus = { status: "queued" | "running" | "lost" } | { status: "completed" | "failed"; outcome: ExecutionOutcome; completedAt?: number };

/**
 * The one reading of an execution's state, for a caller at its deadline, for a read by id and for a batch's
 * items. `jobState` is its job's, read while the record was pending (none read: BullMQ holds none).
 */
export function statusOf(record: StoredRecord, jobState: JobState = { state: "unknown" }, now = Date.now()): ExecutionStatus {
  if (record.status !== "pending") {
    const outcome = record.reply === undefined ? undefined : decodeReply(record.reply)?.result;
    return {
      status: record.status,
      outcome: outcome ?? errorResult("Execution result was unreadable"),
      ...(record.completedAt === undefined ? {} : { completedAt: record.completedAt }),
    };
  }
  switch (jobState.state) {
    case "active":
      return { status: "running" };
    case "failed":
      return { status: "failed", outcome: errorResult(`Execution failed: ${jobState.failedReason ?? "unknown reason"}`) };
    case "completed":
    case "unknown":
      // Gone without a reply in the record (a worker stores it before its job completes).
      return now - record.createdAt < LOST_AFTER_MS ? { status: "queued" } : { status: "lost" };
    default:
      return { status: "queued" };
  }
}

/**
 * A job's state through BullMQ: its hash (Queue.getJob), then, for a job a worker has taken, Job.getState.
 * A job no worker has taken yet is queued from its hash alone: Job.getState would look for it along the
 * wait list, in time linear in the list's length, for each item of a batch's page.
 */
export async function readJobState(queue: Queue | undefined, jobId: string): Promise<JobState> {
  const job = await queue?.getJob(jobId);
  if (job === undefined) return { state: "unknown" };
  if (job.processedOn === undefined) return { state: "queued" };
  const state = await job.getState();
  return state === "failed" && job.failedReason !== undefined ? { state, failedReason: job.failedReason } : { state };
}

/** What the status of one execution is read with. */
export interface StatusReads {
  records: RedisConnection;
  keys: KeySpace;
  /** The client's queue of that name, if it is one of its own. */
  queueNamed(name: string): Queue | undefined;
}

/**
 * An execution's record and status (statusOf), or undefined when its organization has none of that id.
 * Reads the record, then its job while it is pending, then the record again when the job is gone: its
 * reply may have been stored (and its job removed) between the two reads.
 */
export async function readStatus(
  reads: StatusReads,
  orgId: string,
  executionId: string,
): Promise<{ record: StoredRecord; status: ExecutionStatus } | undefined> {
  const [record] = await readRecords(reads.records, reads.keys, orgId, [executionId]);
  if (record === undefined || record.status !== "pending") return record && { record, status: statusOf(record) };
  const jobState = await readJobState(reads.queueNamed(record.queue), executionId);
  if (jobState.state !== "completed" && jobState.state !== "unknown") return { record, status: statusOf(record, jobState) };
  const [again] = await readRecords(reads.records, reads.keys, orgId, [executionId]);
  return again && { record: again, status: statusOf(again, jobState) };
}

/**
 * Finishes a lost execution (status `lost`) through the lifecycle with an explicit error: its joiners are
 * told, its coalescing key goes, and a batch counts it. A reply stored since wins: -1, nothing changed.
 */
export function finishLost(records: RedisConnection, keys: KeySpace, orgId: string, executionId: string): Promise<number> {
  return finishExecution(records, keys, orgId, executionId, { reply: encodeReply(executionId, LOST), status: "failed", reusable: false });
}

const LOST: PlaybookExecutionResult = { error: "Execution result was lost" };

/** A result that is only `{ error }`, as the caller receives it. */
export function errorResult(message: string): JsonText {
  return JsonText.of({ error: message } satisfies PlaybookExecutionResult);
}
