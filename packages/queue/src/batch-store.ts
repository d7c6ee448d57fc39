import { createHash } from "node:crypto";
import { decodeReply, encodeReply, JsonText, WIRE_VERSION } from "@pes/contracts";
import type { ChainableCommander, Result } from "ioredis";
import type { ExecutionOutcome, ExecutionRequest, MessageExecutionRequest, SubmitOptions, SubmittedExecution } from "./execution-client.js";
import { finishExecution } from "./execution-records.js";
import type { LaneLimit } from "./org-limits.js";
import { batchItemsKey, batchKey, executionKey, type KeySpace } from "./queue-names.js";
import { execTogether, type RedisConnection } from "./redis-connections.js";

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
  /** `done`: items finished, with a result or an error; `failed`: those of them that ended in an error. */
  progress: { total: number; done: number; failed: number };
  /** The items of the page asked for, in input order. */
  items: BatchItemView[];
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
   * Throws QueueUnavailableError or LimitExceededError as submit() does, and RangeError when the id is
   * another organization's.
   */
  start(batch: NewBatch): Promise<{ created: boolean }>;
  /** A batch of the organization with the items of `page`, or undefined when it has none of that id (or it expired). */
  read(batchId: string, orgId: string, page: BatchPage): Promise<BatchView | undefined>;
}

/** What a batch store needs of the execution client. */
export interface BatchStoreDeps {
  /** The records' connection (with the record commands defined); throws QueueUnavailableError when Redis is unreachable. */
  records(): RedisConnection;
  keys: KeySpace;
  submit(requests: readonly (ExecutionRequest | MessageExecutionRequest)[], options: SubmitOptions): Promise<SubmittedExecution[]>;
  /** The key of a job's hash in BullMQ's layout, for a queue of the client's. */
  jobKey(queue: string, jobId: string): string | undefined;
  /** How long a batch's items may wait and run (ASYNC_BATCH_TIMEOUT_SECONDS). */
  timeoutMs: number;
  /** How long a batch is kept after its deadline (EXECUTION_RETENTION_SECONDS). */
  retentionMs: number;
}

const LOST_REPLY = (executionId: string) => encodeReply(executionId, { error: "Execution result was lost" }, WIRE_VERSION);

/** A pending item whose job has been gone this long was lost (a Redis restart, an enqueue that failed). */
const LOST_AFTER_MS = 10_000;

/**
 * Stores a batch and its items' execution ids, unless it exists. One script on the batch's own keys.
 * KEYS[1] batch, KEYS[2] items. ARGV[1] organization, [2] createdAt, [3] deadline, [4] TTL (ms), [5…]
 * the items (an execution id, or an invalid input's `{ error }` JSON).
 * Returns {1} when stored, {0, organization} when it existed.
 */
const CREATE_BATCH = `local org = redis.call('HGET', KEYS[1], 'org')
if org then return {0, org} end
redis.call('DEL', KEYS[2])
for i = 5, #ARGV, 1000 do
  redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
redis.call('HSET', KEYS[1], 'org', ARGV[1], 'createdAt', ARGV[2], 'deadline', ARGV[3], 'total', #ARGV - 4)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return {1}`;

declare module "ioredis" {
  interface RedisCommander<Context> {
    /** CREATE_BATCH, defined by defineBatchCommands. */
    createBatch(batch: string, itemList: string, orgId: string, createdAt: number, deadline: number, ttlMs: number, ...items: string[]): Result<(number | string)[], Context>;
  }
}

/** Defines the batch script on the records' connection. */
export function defineBatchCommands(redis: RedisConnection): void {
  redis.defineCommand("createBatch", { numberOfKeys: 2, lua: CREATE_BATCH });
}

/**
 * The execution id of a batch's item: derived from the batch id and the item's place, so that a retry of
 * the batch's start (an Idempotency-Key's) names the same executions and joins them. UUID-shaped (version 8).
 */
export function batchItemId(batchId: string, index: number): string {
  const hex = createHash("sha256").update(`${batchId}\n${index}`).digest("hex");
  const variant = ((Number.parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Batches over the execution records: a batch is a record (organization, creation, deadline, size) and
 * the list of its items' execution ids; its items are ordinary executions, enqueued in bulk (BullMQ's
 * addBulk, in the batch lane) and coalesced like any other. Progress is read from the items' records,
 * which workers write: nothing to keep in step, and a worker that dies mid-item leaves that item to
 * BullMQ's stalled checker (re-run, then failed with a reply). A pending item whose job is gone (a Redis
 * restart that lost it) is failed on read, so that every item ends in a result or an explicit error.
 */
export function createBatchStore(deps: BatchStoreDeps): Batches {
  const { keys } = deps;

  async function start(batch: NewBatch): Promise<{ created: boolean }> {
    const redis = deps.records();
    const existing = await redis.hget(batchKey(keys, batch.batchId), "org");
    if (existing !== null) return { created: owned(existing, batch) };
    const now = Date.now();
    const positions: number[] = [];
    const requests: (ExecutionRequest | MessageExecutionRequest)[] = [];
    batch.items.forEach((item, index) => {
      if ("request" in item) {
        positions.push(index);
        requests.push(item.request);
      }
    });
    const submitted = await deps.submit(requests, {
      lane: "batch",
      timeoutMs: deps.timeoutMs,
      executionIds: positions.map((index) => batchItemId(batch.batchId, index)),
      ...(batch.coalesce === undefined ? {} : { coalesce: batch.coalesce }),
      ...(batch.limit === undefined ? {} : { limit: batch.limit }),
    });
    const entries = batch.items.map((item) => ("invalid" in item ? item.invalid.text : ""));
    submitted.forEach((execution, k) => {
      const index = positions[k];
      if (index !== undefined) entries[index] = execution.executionId;
    });
    const [stored, owner] = await redis.createBatch(
      batchKey(keys, batch.batchId),
      batchItemsKey(keys, batch.batchId),
      batch.orgId,
      now,
      now + deps.timeoutMs,
      deps.timeoutMs + deps.retentionMs,
      ...entries,
    );
    return { created: Number(stored) === 1 || owned(String(owner), batch) };
  }

  async function read(batchId: string, orgId: string, page: BatchPage): Promise<BatchView | undefined> {
    const redis = deps.records();
    const [head, list] = answersOf(
      await redis.pipeline().hmget(batchKey(keys, batchId), "org", "createdAt", "total").lrange(batchItemsKey(keys, batchId), 0, -1).exec(),
    );
    const [org, createdAt] = (head ?? []) as (string | null)[];
    if (org !== orgId || createdAt == null || !Array.isArray(list)) return undefined;
    const entries = list as string[];
    const inPage = (index: number) => index >= page.offset && index < page.offset + page.limit;

    // Every item's status (its record's); the page's results with them. Records of many executions: one
    // pipeline on one Redis, one per record on a cluster (execTogether).
    const reads = entries.flatMap((entry, index) => {
      if (isInvalid(entry)) return [];
      const fields = ["status", "queue", "createdAt", ...(inPage(index) ? ["result"] : [])];
      return [(pipeline: ChainableCommander) => pipeline.hmget(executionKey(keys, entry), ...fields)];
    });
    const records = answersOf(await execTogether(redis, reads)) as (string | null)[][];
    let cursor = 0;
    const items: { entry: string; record?: (string | null)[] }[] = entries.map((entry) => {
      if (isInvalid(entry)) return { entry };
      const record = records[cursor];
      cursor += 1;
      return { entry, ...(record === undefined ? {} : { record }) };
    });

    // A pending item: queued or running as its job's hash says, or lost when its job is gone.
    const pending = items.flatMap((item, index) => {
      const [status, queue, created] = item.record ?? [];
      if (status !== "pending" || queue == null) return [];
      const key = deps.jobKey(queue, item.entry);
      return key === undefined ? [] : [{ index, key, createdAt: Number(created) }];
    });
    const jobs = new Map<number, "queued" | "running" | "gone">();
    if (pending.length > 0) {
      // Jobs' hashes are BullMQ's, under its prefix: in one slot on a cluster too (keySpace).
      const lookups = redis.pipeline();
      for (const { key } of pending) lookups.hmget(key, "timestamp", "processedOn");
      (answersOf(await lookups.exec()) as (string | null)[][]).forEach(([timestamp, processedOn], k) => {
        const item = pending[k];
        if (item === undefined) return;
        jobs.set(item.index, timestamp == null ? "gone" : processedOn == null ? "queued" : "running");
      });
      const lost = pending.filter(({ index, createdAt: created }) => jobs.get(index) === "gone" && Date.now() - created > LOST_AFTER_MS);
      // Its record may have been finished since it was read (and its job removed): the first reply wins,
      // and the next read shows it.
      for (const { index } of lost) {
        const item = items[index];
        if (item === undefined) continue;
        await markLost(redis, item.entry, orgId);
        item.record = ["failed", null, null, LOST_REPLY(item.entry)];
      }
    }

    let done = 0;
    let failed = 0;
    const views: BatchItemView[] = [];
    items.forEach((item, index) => {
      const view = itemView(item, index, jobs.get(index));
      if (view.status === "completed" || view.status === "failed") done += 1;
      if (view.status === "failed") failed += 1;
      if (inPage(index)) views.push(view);
    });
    return {
      id: batchId,
      status: done === entries.length ? "completed" : "running",
      createdAt: new Date(Number(createdAt)),
      progress: { total: entries.length, done, failed },
      items: views,
    };
  }

  async function markLost(redis: RedisConnection, executionId: string, orgId: string): Promise<void> {
    await finishExecution(redis, keys, executionId, {
      orgId,
      reply: LOST_REPLY(executionId),
      status: "failed",
      reusable: false,
      legacy: { resultTtlMs: 1, channel: "" },
    });
  }

  return { start, read };
}

/** True when the batch exists for the organization; throws when another organization's id was reused. */
function owned(owner: string, batch: NewBatch): boolean {
  if (owner !== batch.orgId) throw new RangeError(`batch id ${batch.batchId} belongs to another organization`);
  return false;
}

function isInvalid(entry: string): boolean {
  return entry.startsWith("{");
}

function itemView(item: { entry: string; record?: (string | null)[] }, index: number, job: "queued" | "running" | "gone" | undefined): BatchItemView {
  if (isInvalid(item.entry)) return { index, status: "failed", outcome: new JsonText(item.entry) };
  const executionId = item.entry;
  const [status, , , reply] = item.record ?? [];
  if (status == null) return { index, executionId, status: "failed", outcome: JsonText.of({ error: "Execution record expired or was lost" }) };
  if (status === "pending") return { index, executionId, status: job === "running" ? "running" : "queued" };
  const finished = status === "completed" ? "completed" : "failed";
  if (reply === undefined) return { index, executionId, status: finished };
  const decoded = reply === null ? undefined : decodeReply(reply);
  return { index, executionId, status: finished, outcome: decoded?.result ?? JsonText.of({ error: "Execution result was unreadable" }) };
}

function answersOf(answers: [Error | null, unknown][] | null): unknown[] {
  if (answers === null) throw new Error("pipeline aborted");
  return answers.map(([error, value]) => {
    if (error !== null) throw error;
    return value;
  });
}
