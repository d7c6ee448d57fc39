import type { ChainableCommander, Result } from "ioredis";
import { defineLimitCommands, settleNow } from "./org-limits.js";
import { executionKey, executionWaitersKey, resultKey, type KeySpace } from "./queue-names.js";
import type { RedisConnection } from "./redis-connections.js";

/**
 * Where an execution stands in its record: `pending` until a reply is stored (queued or running: BullMQ
 * knows which), then `completed` (the worker's result) or `failed` (no result: the job failed for good,
 * its deadline passed, or the worker refused the request).
 */
export type RecordStatus = "pending" | "completed" | "failed";

/** An execution's record as read back: who started it, when, and once finished its reply (as encoded). */
export interface StoredRecord {
  orgId: string;
  status: RecordStatus;
  createdAt: number;
  completedAt?: number;
  /** The reply's text (encodeReply), once finished. */
  reply?: string;
  /** The queue its job went to. */
  queue: string;
}

/**
 * Creates an execution's record, or joins the one that exists: one script, so that of any number of
 * callers arriving with the same id exactly one creates it (and enqueues its job), and a joiner either
 * finds the reply or is registered before it is published (FINISH reads the waiters in the same
 * atomic step that stores the reply).
 * KEYS[1] record, KEYS[2] waiters. ARGV[1] organization, [2] createdAt (ms), [3] queue, [4] coalescing
 * key or '', [5] reuse window (ms), [6] retention (ms), [7] the record's TTL until it finishes (ms),
 * [8] the reply channel of a caller that waits, or ''.
 * Returns {'created'}, {'foreign'} (another organization's id), or {status, reply or ''}.
 */
const CREATE_OR_JOIN = `local found = redis.call('HMGET', KEYS[1], 'org', 'status', 'result')
if found[2] then
  if found[1] ~= ARGV[1] then return {'foreign'} end
  if found[2] == 'pending' and ARGV[8] ~= '' then
    redis.call('SADD', KEYS[2], ARGV[8])
    redis.call('PEXPIRE', KEYS[2], ARGV[7])
  end
  return {found[2], found[3] or ''}
end
redis.call('HSET', KEYS[1], 'org', ARGV[1], 'status', 'pending', 'createdAt', ARGV[2], 'queue', ARGV[3],
  'coalesceKey', ARGV[4], 'reuseMs', ARGV[5], 'retainMs', ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[7])
if ARGV[8] ~= '' then
  redis.call('SADD', KEYS[2], ARGV[8])
  redis.call('PEXPIRE', KEYS[2], ARGV[7])
end
return {'created'}`;

/**
 * Stores an execution's reply and publishes it to every waiting API instance, in one round trip in which
 * the reply crosses the wire once. The first reply wins: a late failure notice or a re-run's reply never
 * replaces it. A job without a record (sent by an API of before records) gets its reply as it always
 * did: under its result key, published to the one instance that sent it.
 * KEYS[1] record, KEYS[2] waiters, KEYS[3] result key. ARGV[1] reply, [2] status, [3] completedAt (ms),
 * [4] result key TTL (ms), [5] the job's reply channel, [6] '1' when the result may serve joiners for the
 * reuse window.
 * Returns {receivers} for a job without a record, {-1} when it had replied already, else {receivers,
 * coalescing key or '', how long that key may still be used (ms; 0: not at all), organization}.
 */
const FINISH = `local record = redis.call('HMGET', KEYS[1], 'status', 'coalesceKey', 'reuseMs', 'retainMs', 'org')
if not record[1] then
  if not redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[4], 'NX') then return {-1} end
  return {redis.call('PUBLISH', ARGV[5], ARGV[1])}
end
if record[1] ~= 'pending' then return {-1} end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'completedAt', ARGV[3], 'result', ARGV[1])
redis.call('PEXPIRE', KEYS[1], record[4])
local channels = redis.call('SMEMBERS', KEYS[2])
redis.call('DEL', KEYS[2])
local receivers = 0
for _, channel in ipairs(channels) do receivers = receivers + redis.call('PUBLISH', channel, ARGV[1]) end
local reuse = 0
if ARGV[6] == '1' then reuse = tonumber(record[3]) end
return {receivers, record[2] or '', reuse, record[5] or ''}`;

/**
 * After an execution finished: its coalescing key serves joiners for the reuse window, or goes at once
 * (a failed execution is tried afresh). Only while it still names this execution.
 * KEYS[1] coalescing key. ARGV[1] execution id, [2] how long it may still be used (ms; 0: delete).
 */
const RELEASE_COALESCE_KEY = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if tonumber(ARGV[2]) > 0 then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return redis.call('DEL', KEYS[1])`;

declare module "ioredis" {
  interface RedisCommander<Context> {
    /** CREATE_OR_JOIN, defined by defineRecordCommands. */
    createOrJoinExecution(
      record: string,
      waiters: string,
      orgId: string,
      createdAt: number,
      queue: string,
      coalesceKey: string,
      reuseMs: number,
      retainMs: number,
      ttlMs: number,
      waiterChannel: string,
    ): Result<string[], Context>;
    /** FINISH, defined by defineRecordCommands. */
    finishExecution(
      record: string,
      waiters: string,
      result: string,
      reply: string,
      status: RecordStatus,
      completedAt: number,
      resultTtlMs: number,
      channel: string,
      reusable: "1" | "0",
    ): Result<(number | string)[], Context>;
    /** RELEASE_COALESCE_KEY, defined by defineRecordCommands. */
    releaseCoalesceKey(key: string, executionId: string, reuseMs: number): Result<number, Context>;
  }
}

/**
 * Defines the record scripts on a connection. Give it a connection of its own, not BullMQ's: every
 * pipeline on a connection copies the scripts defined on it, and BullMQ defines dozens.
 */
export function defineRecordCommands(redis: RedisConnection): void {
  defineLimitCommands(redis);
  redis.defineCommand("createOrJoinExecution", { numberOfKeys: 2, lua: CREATE_OR_JOIN });
  redis.defineCommand("finishExecution", { numberOfKeys: 3, lua: FINISH });
  redis.defineCommand("releaseCoalesceKey", { numberOfKeys: 1, lua: RELEASE_COALESCE_KEY });
}

/** A new execution's record. */
export interface NewRecord {
  orgId: string;
  createdAt: number;
  queue: string;
  /** Its coalescing key, when identical requests may join it. */
  coalesceKey?: string;
  /** How long its coalescing key serves after it completed. */
  reuseMs: number;
  /** How long the record is kept once it finished. */
  retainMs: number;
  /** How long the record lives until it finishes (its deadline, and the retention after). */
  ttlMs: number;
}

/** What CREATE_OR_JOIN found: a record it created, or the existing one (finished: with its reply). */
export type JoinOutcome = { created: true } | { created: false; status: RecordStatus; reply?: string };

/** Queues CREATE_OR_JOIN on a pipeline; parseJoin reads its answer. */
export function createOrJoin(
  pipeline: ChainableCommander,
  keys: KeySpace,
  executionId: string,
  record: NewRecord,
  waiterChannel: string | undefined,
): void {
  pipeline.createOrJoinExecution(
    executionKey(keys, executionId),
    executionWaitersKey(keys, executionId),
    record.orgId,
    record.createdAt,
    record.queue,
    record.coalesceKey ?? "",
    record.reuseMs,
    record.retainMs,
    Math.ceil(record.ttlMs),
    waiterChannel ?? "",
  );
}

export function parseJoin(answer: unknown, executionId: string): JoinOutcome {
  if (!Array.isArray(answer) || typeof answer[0] !== "string") throw new Error(`unexpected answer of createOrJoinExecution: ${String(answer)}`);
  const [status = "", reply] = answer as string[];
  if (status === "created") return { created: true };
  // Ids are UUIDs this service chose for the organization (or its Idempotency-Key): never another's.
  if (status === "foreign") throw new Error(`execution id ${executionId} belongs to another organization`);
  if (!isRecordStatus(status)) throw new Error(`unexpected record status "${status}"`);
  return { created: false, status, ...(reply === undefined || reply === "" ? {} : { reply }) };
}

/** A finished execution's reply, as a worker (or the API, for a job it withdrew) stores and publishes it. */
export interface Finish {
  reply: string;
  status: Exclude<RecordStatus, "pending">;
  /** A result other callers may still be given for the reuse window (not an error). */
  reusable: boolean;
  /** For a job without a record: its result key's TTL and its sender's reply channel. */
  legacy: { resultTtlMs: number; channel: string };
  /**
   * The execution's organization, when known: it stops counting against its limits before its reply
   * goes out, so that a caller who sends its next request on the answer finds room for it.
   */
  orgId?: string;
}

/**
 * Stores and publishes an execution's reply (the first one only), then releases its coalescing key and
 * takes it out of its organization's lanes (org-limits.ts). Resolves with the number of instances that received it, or -1 when the execution had replied already.
 */
export async function finishExecution(redis: RedisConnection, keys: KeySpace, executionId: string, finish: Finish): Promise<number> {
  // Sent together on one connection, so Redis runs them in this order without a round trip between (on a
  // cluster each goes to its own slot's node, and the organization's lanes may be settled a moment later).
  const [, answer] = await Promise.all([
    finish.orgId === undefined ? undefined : settleNow(redis, keys, finish.orgId, executionId),
    redis.finishExecution(
      executionKey(keys, executionId),
      executionWaitersKey(keys, executionId),
      resultKey(keys, executionId),
      finish.reply,
      finish.status,
      Date.now(),
      Math.ceil(finish.legacy.resultTtlMs),
      finish.legacy.channel,
      finish.reusable ? "1" : "0",
    ),
  ]);
  const [receivers, key, reuseMs, orgId] = answer;
  if (receivers === -1) return -1;
  // Direct commands rather than a pipeline: a pipeline loads a script it has not sent before in a round
  // trip of its own, and a caller may be sending its next request on the reply already.
  await Promise.all([
    typeof key === "string" && key !== "" ? redis.releaseCoalesceKey(key, executionId, Number(reuseMs)) : undefined,
    finish.orgId === undefined && typeof orgId === "string" && orgId !== "" ? settleNow(redis, keys, orgId, executionId) : undefined,
  ]);
  return Number(receivers);
}

/** The fields of a record that readRecord reads, in order. */
const READ_FIELDS = ["org", "status", "createdAt", "completedAt", "result", "queue"] as const;

/** Queues a read of a record on a pipeline; parseRecord reads its answer. */
export function readRecordCommand(pipeline: ChainableCommander, keys: KeySpace, executionId: string): void {
  pipeline.hmget(executionKey(keys, executionId), ...READ_FIELDS);
}

export function parseRecord(answer: unknown): StoredRecord | undefined {
  if (!Array.isArray(answer)) return undefined;
  const [orgId, status, createdAt, completedAt, reply, queue] = answer as (string | null)[];
  if (orgId == null || status == null || !isRecordStatus(status) || createdAt == null || queue == null) return undefined;
  return {
    orgId,
    status,
    createdAt: Number(createdAt),
    queue,
    ...(completedAt == null ? {} : { completedAt: Number(completedAt) }),
    ...(reply == null ? {} : { reply }),
  };
}


function isRecordStatus(value: string): value is RecordStatus {
  return value === "pending" || value === "completed" || value === "failed";
}
