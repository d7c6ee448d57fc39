import { createHash } from "node:crypto";
import { JsonText, WIRE_VERSION, type ExecutionRequest, type MessageExecutionRequest, type StartBatchJob } from "@pes/contracts";
import type { ExecutionOutcome } from "./execution-lifecycle.js";
import {
  acceptBatch,
  claimLostCheck,
  extendBatch,
  readBatch,
  readBatchItems,
  readInvalidItems,
  readRecords,
  releaseBatchPlaces,
  type LaneLimit,
  type StoredBatch,
  type StoredRecord,
} from "./execution-lifecycle.js";
import type { KeySpace, RedisConnection } from "@pes/jobs";
import { finishLost, LOST_AFTER_MS, statusOf, type JobState } from "./execution-status.js";

/** One input of a batch: a request to execute, or the `{ error }` it gets at once (an invalid input). */
export type BatchItem = { request: ExecutionRequest | MessageExecutionRequest } | { invalid: JsonText };

/** An async batch to start: its id (chosen beforehand: an Idempotency-Key's), organization and items in input order. */
export interface NewBatch {
  batchId: string;
  orgId: string;
  items: readonly BatchItem[];
  /** False: its items neither join identical executions nor are joinable (`Cache-Control: no-cache`). */
  coalesce?: boolean;
  /** The organization's limit on queued batch items. */
  limit?: LaneLimit;
  /** The teams it runs for (who may read it), kept in its record. */
  teams?: readonly string[];
}

/** Where one item of a batch stands: as an execution read back (ExecutionView), by its place in the batch. */
export interface BatchItemView {
  index: number;
  /** Its execution; none for an input refused at once. */
  executionId?: string;
  status: "queued" | "running" | "completed" | "failed";
  /** Once finished: its result (for `failed`, `{ error }`), or the worker's refusal of the request. */
  outcome?: ExecutionOutcome;
}

/** A batch as its organization reads it back: `GET /playbook/execution/batch/{id}`. */
export interface BatchView {
  id: string;
  /** `completed` once every item finished (with a result or an error). */
  status: "running" | "completed";
  createdAt: Date;
  /**
   * `done`: items finished, with a result or an error; `failed`: those of them that ended in an error.
   * Counted as items finish (O(1) to read), each item once: they never go backwards.
   */
  progress: { total: number; done: number; failed: number };
  /** The items of the page asked for, in input order. */
  items: BatchItemView[];
  /** The teams it runs for; absent: none given. */
  teams?: string[];
}

/** Which items a read returns: `[offset, offset + limit)`. */
export interface BatchPage {
  offset: number;
  limit: number;
}

/** Async batches: bulk-enqueued items with a parent record that lists their executions in order. */
export interface Batches {
  /**
   * Enqueues the batch's valid items in bulk, in the batch lane, then stores the batch. Idempotent per
   * batch id: a batch that exists is left as it is (`created: false`), and a retry of a start that failed
   * midway joins the executions the first attempt enqueued (item ids derive from the batch id).
   * Throws QueueUnavailableError or LimitExceededError as submit() does. Batch ids are per organization.
   */
  start(batch: NewBatch): Promise<{ created: boolean }>;
  /**
   * A batch of the organization with the items of `page`, or undefined when it has none of that id (or it
   * expired). Its progress costs one read whatever its size; the page, a read per item in it.
   */
  read(orgId: string, batchId: string, page: BatchPage): Promise<BatchView | undefined>;
}

/** What a batch store needs of the execution client. */
export interface BatchStoreDeps {
  /** The records' connection (with the lifecycle's commands defined); throws QueueUnavailableError when Redis is unreachable. */
  records(): RedisConnection;
  keys: KeySpace;
  /** The API instance that accepts batches: every execution job names one. */
  replyTo: string;
  /** Identical requests' fingerprint, when coalescing is on (executionFingerprint). */
  fingerprint(request: ExecutionRequest | MessageExecutionRequest): string | undefined;
  /** How long a completed item's result serves identical requests (ms); 0 without coalescing. */
  reuseMs: number;
  /** Adds a batch's start-batch job (its id is the batch's: adding it again does nothing while it exists). */
  addStart(job: StartBatchJob): Promise<void>;
  /** The state of a batch's start-batch job: `waiting` or `active` while it may still begin items. */
  startState(batchId: string): Promise<"waiting" | "active" | "gone">;
  /** The state of a job in a queue of the client's (BullMQ's Queue.getJobState); `unknown` in any other. */
  jobState(queue: string, jobId: string): Promise<JobState>;
  /** How long a batch's items may wait and run (ASYNC_BATCH_TIMEOUT_SECONDS). */
  timeoutMs: number;
  /** How long a batch is kept after its deadline (EXECUTION_RETENTION_SECONDS). */
  retentionMs: number;
}

/** A batch none of whose items finished for this long (LOST_AFTER_MS) is looked through for lost items, by one reader. */
/** Items whose records are read in one round trip when a quiet batch is looked through. */
const LOST_CHECK_CHUNK = 1_000;

/**
 * The execution ids of a batch's items, by place: derived from the batch id and the item's place, so that
 * a retry of the batch's start (an Idempotency-Key's) names the same executions and joins them. The batch
 * id is hashed once (SHA-256); each place is XORed into the last 32 bits, so that the ids of one batch
 * differ and those of two batches share the first 96 bits only by chance. UUID-shaped (version 8).
 */
export function batchItemIds(batchId: string): (index: number) => string {
  const hex = createHash("sha256").update(batchId).digest("hex");
  const variant = ((Number.parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  const head = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 24)}`;
  const tail = Number.parseInt(hex.slice(24, 32), 16);
  return (index) => `${head}${((tail ^ index) >>> 0).toString(16).padStart(8, "0")}`;
}

/**
 * Batches over the execution records: a batch is a record (size, creation, deadline, progress counters)
 * and the list of its items' execution ids; its items are ordinary executions, begun in chunks in the
 * batch lane and coalesced like any other, each counted in the batch's progress once, when it finishes
 * (finish-execution.lua) or when it joins one that had. A worker that dies mid-item leaves that item to
 * BullMQ's stalled checker (re-run, then failed with a reply). A pending item whose job is gone (a Redis
 * restart that lost it) is failed when a reader finds its batch quiet, so that every item ends in a
 * result or an explicit error.
 */
export function createBatchStore(deps: BatchStoreDeps): Batches {
  return { start: (batch) => startBatch(deps, batch), read: (orgId, batchId, page) => readBatchView(deps, orgId, batchId, page) };
}

/**
 * Accepts the batch (its record, and its items' places under the organization's limit), then adds the
 * job with which a worker begins its items: two round trips however many items, so the API answers at
 * once. A retry adds the job again, which does nothing while it exists, and begins nothing twice after.
 */
async function startBatch(deps: BatchStoreDeps, batch: NewBatch): Promise<{ created: boolean }> {
  const redis = deps.records();
  const now = Date.now();
  const deadline = now + deps.timeoutMs;
  const coalesce = batch.coalesce !== false;
  const itemId = batchItemIds(batch.batchId);
  const items: StartBatchJob["items"] = batch.items.map((item, index) => {
    if ("invalid" in item) return { index, invalid: item.invalid.text };
    const fingerprint = coalesce ? deps.fingerprint(item.request) : undefined;
    return { index, candidateId: itemId(index), request: item.request, ...(fingerprint === undefined ? {} : { fingerprint }) };
  });
  const created = await acceptBatch(redis, deps.keys, batch.orgId, {
    batchId: batch.batchId,
    deadline,
    ttlMs: deps.timeoutMs + deps.retentionMs,
    total: items.length,
    ...(batch.limit === undefined ? {} : { limitMax: batch.limit.max }),
    candidateIds: items.flatMap((item) => ("candidateId" in item ? [item.candidateId] : [])),
    invalid: items.flatMap((item) => ("invalid" in item ? [{ index: item.index, entry: item.invalid }] : [])),
    ...(batch.teams === undefined ? {} : { teams: batch.teams }),
  });
  await deps.addStart({
    v: WIRE_VERSION,
    orgId: batch.orgId,
    batchId: batch.batchId,
    replyTo: deps.replyTo,
    deadline,
    ttlMs: deps.timeoutMs + deps.retentionMs,
    // A batch item outlives its batch's record (kept for its deadline and the retention after).
    retainMs: deps.timeoutMs + deps.retentionMs,
    reuseMs: coalesce ? deps.reuseMs : 0,
    items,
  });
  return { created };
}

async function readBatchView(deps: BatchStoreDeps, orgId: string, batchId: string, page: BatchPage): Promise<BatchView | undefined> {
  const redis = deps.records();
  let stored = await readBatch(redis, deps.keys, orgId, batchId);
  if (stored === undefined) return undefined;
  if (quiet(stored) && (await claimLostCheck(redis, deps.keys, orgId, batchId, LOST_AFTER_MS))) {
    if (stored.begun < stored.total && (await deps.startState(batchId)) === "gone") await failUnbegun(deps, redis, orgId, batchId, stored);
    await failLostItems(deps, redis, orgId, batchId, stored.begun);
    stored = (await readBatch(redis, deps.keys, orgId, batchId)) ?? stored;
  }
  const items = page.limit === 0 || page.offset >= stored.total ? [] : await pageItems(deps, redis, orgId, batchId, page, stored.total);
  return {
    id: batchId,
    status: stored.done >= stored.total ? "completed" : "running",
    createdAt: new Date(stored.createdAt),
    progress: { total: stored.total, done: Math.min(stored.done, stored.total), failed: Math.min(stored.failed, stored.total) },
    items,
    ...(stored.teams === undefined ? {} : { teams: stored.teams }),
  };
}

/** The items of a page, each as its record and (while pending) its job say. */
async function pageItems(
  deps: BatchStoreDeps,
  redis: RedisConnection,
  orgId: string,
  batchId: string,
  page: BatchPage,
  total: number,
): Promise<BatchItemView[]> {
  const entries = await readBatchItems(redis, deps.keys, orgId, batchId, page.offset, page.offset + page.limit - 1);
  // Items a worker has not begun yet wait in the queue like any other.
  const notBegun = Math.max(0, Math.min(total, page.offset + page.limit) - page.offset - entries.length);
  const executionIds = entries.filter((entry) => !isInvalid(entry));
  const stored = await readRecords(redis, deps.keys, orgId, executionIds);
  const records = new Map(executionIds.map((id, k) => [id, stored[k]]));
  const jobs = await jobStates(
    deps,
    executionIds.flatMap((id) => {
      const record = records.get(id);
      return record?.status === "pending" ? [{ id, queue: record.queue }] : [];
    }),
  );
  const begun = entries.map((entry, k) => itemView(entry, page.offset + k, records.get(entry), jobs.get(entry)));
  const later = Array.from({ length: notBegun }, (_, k) => page.offset + entries.length + k);
  const invalid = await readInvalidItems(redis, deps.keys, orgId, batchId, later);
  return [
    ...begun,
    ...later.map((index, k): BatchItemView => {
      const entry = invalid[k];
      return entry == null ? { index, status: "queued" } : itemView(entry, index, undefined, undefined);
    }),
  ];
}

/** The states of pending items' jobs, through BullMQ (all sent at once: one connection pipelines them). */
async function jobStates(deps: BatchStoreDeps, pending: readonly { id: string; queue: string }[]): Promise<Map<string, JobState>> {
  const states = await Promise.all(pending.map(({ id, queue }) => deps.jobState(queue, id)));
  return new Map(pending.map(({ id }, k) => [id, states[k] ?? { state: "unknown" }]));
}

/**
 * Fails the pending items of a quiet batch whose jobs are gone and can no longer reply: their job left
 * the queue without a reply in their record, long enough ago. A reply that comes after all loses to the
 * failure (the first reply wins), so the batch's progress never goes back.
 */
async function failLostItems(deps: BatchStoreDeps, redis: RedisConnection, orgId: string, batchId: string, total: number): Promise<void> {
  for (let from = 0; from < total; from += LOST_CHECK_CHUNK) {
    const entries = (await readBatchItems(redis, deps.keys, orgId, batchId, from, from + LOST_CHECK_CHUNK - 1)).filter((entry) => !isInvalid(entry));
    const records = await readRecords(redis, deps.keys, orgId, entries);
    // Only those that would be lost if their job were gone are worth a look at their job.
    const suspects = entries.flatMap((id, k) => {
      const record = records[k];
      return record !== undefined && statusOf(record).status === "lost" ? [{ id, record }] : [];
    });
    const jobs = await jobStates(
      deps,
      suspects.map(({ id, record }) => ({ id, queue: record.queue })),
    );
    const lost = suspects.filter(({ id, record }) => statusOf(record, jobs.get(id)).status === "lost");
    // Its record is read again by the finish: a reply stored since wins, and nothing is counted twice.
    await Promise.all(lost.map(({ id }) => finishLost(redis, deps.keys, orgId, id)));
  }
}

/**
 * Ends the items of a batch whose start is gone (failed for good, or lost with Redis' data) before it
 * began them: each in an explicit error, and their places under the limit given back.
 */
async function failUnbegun(deps: BatchStoreDeps, redis: RedisConnection, orgId: string, batchId: string, stored: StoredBatch): Promise<void> {
  const count = stored.total - stored.begun;
  const entry = JsonText.of({ error: "Batch item was not started: the batch's start failed" }).text;
  await extendBatch(redis, deps.keys, orgId, {
    batchId,
    from: stored.begun,
    ttlMs: Math.max(1, stored.deadline - Date.now()) + deps.retentionMs,
    entries: Array(count).fill(entry),
  });
  const itemId = batchItemIds(batchId);
  await releaseBatchPlaces(
    redis,
    deps.keys,
    orgId,
    Array.from({ length: count }, (_, k) => itemId(stored.begun + k)),
  );
}

/** No item of the batch finished for a while, though some are still to: some may be lost. */
function quiet(batch: StoredBatch): boolean {
  return batch.done < batch.total && Date.now() - batch.lastDoneAt > LOST_AFTER_MS;
}

function isInvalid(entry: string): boolean {
  return entry.startsWith("{");
}

function itemView(entry: string, index: number, record: StoredRecord | undefined, jobState: JobState | undefined): BatchItemView {
  if (isInvalid(entry)) return { index, status: "failed", outcome: new JsonText(entry) };
  const executionId = entry;
  if (record === undefined) return { index, executionId, status: "failed", outcome: JsonText.of({ error: "Execution record expired or was lost" }) };
  const status = statusOf(record, jobState);
  switch (status.status) {
    case "completed":
    case "failed":
      return { index, executionId, status: status.status, outcome: status.outcome };
    case "lost":
      // Shown queued until its batch's look for lost items finishes it.
      return { index, executionId, status: "queued" };
    default:
      return { index, executionId, status: status.status };
  }
}
