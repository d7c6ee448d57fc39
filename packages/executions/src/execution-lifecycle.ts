import { readFileSync } from "node:fs";
import type { JsonText, RequestRefusal } from "@pes/contracts";
import type { Result } from "ioredis";
import {
  batchInvalidKey,
  batchItemsKey,
  batchKey,
  batchLostCheckKey,
  executionKey,
  laneKey,
  organizationKeysLua,
  organizationPrefix,
  type KeySpace,
  type RedisConnection,
} from "@pes/jobs";
import { PACE_WINDOW_MS, SCRIPT_CODES, scriptConstants } from "./script-codes.js";

/**
 * What an execution gave: the result as JSON (a PlaybookExecutionResult, as the worker encoded it), or
 * the worker's refusal of the request (a 400 on what only it could check).
 */
export type ExecutionOutcome = JsonText | RequestRefusal;

/**
 * Which line an execution waits in. Workers take `interactive` executions (a caller's own, synchronous or
 * `respond-async`, and synchronous batches) before any `batch` item (an async batch's): a 10,000-item
 * batch does not make one investigation wait behind it. Each lane is also counted against its own
 * per-organization limit.
 */
export type Lane = "interactive" | "batch";

/**
 * An organization's limit on one lane: at most `max` of its executions in flight there at once. Over it,
 * `refuse` starts nothing (the API answers 429); `behind` starts them anyway, queued behind every
 * other caller's work (an alert webhook, whose sender drops what it is refused).
 */
export interface LaneLimit {
  max: number;
  over?: "refuse" | "behind";
}

/** Where an execution stands in its record: `pending` until its reply is stored. */
export type RecordStatus = "pending" | "completed" | "failed";

/** Over an organization's limit: the API answers 429 with `retryAfterSeconds`. */
export class LimitExceededError extends Error {
  override name = "LimitExceededError";

  constructor(
    readonly lane: Lane,
    readonly retryAfterSeconds: number,
    message: string,
  ) {
    super(message);
  }
}

/** One request to begin: the execution id it proposes, and what identical requests share. */
export interface BeginRequest {
  /** A new UUID, or an id chosen beforehand (an Idempotency-Key's, an alert's, a batch item's). */
  candidateId: string;
  /** Identical requests' fingerprint (executionFingerprint), when they may share one execution. */
  fingerprint?: string;
  /** The queue its job goes to. */
  queue: string;
  /** Its place in the batch of `BeginSettings.batchId`. */
  batchIndex?: number;
  /** The teams it runs for, kept in its record (ExecutionJob's `teams`). */
  teams?: readonly string[];
}

export interface BeginSettings {
  orgId: string;
  lane: Lane;
  limit?: LaneLimit;
  /** When the executions stop counting in the lane, and when nobody waits for them any longer (epoch ms). */
  deadline: number;
  /** How long a record lives until it finishes (its deadline and the retention after). */
  ttlMs: number;
  /** How long a finished record is kept. */
  retainMs: number;
  /** How long a completed result serves identical requests; 0: not at all. */
  reuseMs: number;
  /** The reply channel of the API instance that waits for the replies. */
  waiterChannel?: string;
  /** The async batch the requests are items of. */
  batchId?: string;
  /** The queue executions admitted over a `behind` limit go to, instead of their own. */
  behindQueue?: string;
  /**
   * The requests were admitted beforehand under their candidate ids (acceptBatch): no limit is checked,
   * and a request that joins another execution gives its place back.
   */
  reserved?: boolean;
}

/** What became of one request: the execution it went to, and whether it created it. */
export type Begun = { executionId: string; state: "created" | "pending" } | { executionId: string; state: "completed" | "failed"; reply: string };

export interface BeginAnswer {
  /** Admitted over the organization's limit (`over: "behind"`): enqueue them behind every other caller's work. */
  behind: boolean;
  executions: Begun[];
}

/** A finished execution's reply, as a worker (or the API, for a job it withdrew or found lost) stores it. */
export interface Finish {
  /** The reply as encodeReply wrote it: stored, and published to every waiting API instance. */
  reply: string;
  status: "completed" | "failed";
  /** A result identical requests may still be given for the reuse window (not an error). */
  reusable: boolean;
}

/** An execution's record as read back. */
export interface StoredRecord {
  status: RecordStatus;
  createdAt: number;
  completedAt?: number;
  /** The reply's text (encodeReply), once finished. */
  reply?: string;
  /** The queue its job went to. */
  queue: string;
  /** The teams it runs for; absent: none given (an API before teams). */
  teams?: string[];
}

/** A batch's record: its size, deadline and progress, counted as its items finish. */
export interface StoredBatch {
  createdAt: number;
  deadline: number;
  total: number;
  /** Items begun (their executions begun, or refused), in input order: the ones after are still to begin. */
  begun: number;
  done: number;
  failed: number;
  /** When an item last finished (or the batch's creation): a batch quiet for long may have lost items. */
  lastDoneAt: number;
  /** The teams it runs for; absent: none given (an API before teams). */
  teams?: string[];
}

/** The longest Retry-After: past it, a client should rather look again than trust an estimate. */
const MAX_RETRY_AFTER_SECONDS = 3_600;

declare module "ioredis" {
  // Each is called with its organization's key prefix (organizationPrefix, its one key), then its arguments.
  interface RedisCommander<Context> {
    /** scripts/begin-executions.lua */
    beginExecutions(prefix: string, ...args: (string | number)[]): Result<(string | number)[], Context>;
    /** scripts/finish-execution.lua */
    finishExecution(prefix: string, executionId: string, reply: string, status: string, now: number, reusable: "1" | "0"): Result<number, Context>;
    /** scripts/accept-batch.lua */
    acceptBatch(prefix: string, ...args: (string | number)[]): Result<(string | number)[], Context>;
    /** scripts/extend-batch.lua */
    extendBatch(prefix: string, batchId: string, from: number, now: number, ttlMs: number, ...entries: string[]): Result<number, Context>;
  }
}

/**
 * A script of scripts/, by name, read once when the commands are defined. Redis runs each script on its
 * own, so what several share is in scripts/includes/ and put in place of their `--- @include "<name>"`
 * lines here (as BullMQ composes its own scripts), after the names of their answers (`CODE`,
 * script-codes.ts) and the functions that name their organization's keys (`KEY`, generated from the key
 * builders of @pes/jobs' redis-keys.ts).
 */
function script(name: string): string {
  const text = readFileSync(new URL(`../scripts/${name}.lua`, import.meta.url), "utf8").replace(/^--- @include "([\w-]+)"$/gm, (_line, include: string) =>
    readFileSync(new URL(`../scripts/includes/${include}.lua`, import.meta.url), "utf8"),
  );
  return scriptConstants() + organizationKeysLua() + text;
}

/**
 * Defines the lifecycle's scripts on a connection. Give it a connection of its own, not BullMQ's: every
 * pipeline on a connection copies the scripts defined on it, and BullMQ defines dozens.
 */
export function defineLifecycleCommands(redis: RedisConnection): void {
  redis.defineCommand("beginExecutions", { numberOfKeys: 1, lua: script("begin-executions") });
  redis.defineCommand("finishExecution", { numberOfKeys: 1, lua: script("finish-execution") });
  redis.defineCommand("acceptBatch", { numberOfKeys: 1, lua: script("accept-batch") });
  redis.defineCommand("extendBatch", { numberOfKeys: 1, lua: script("extend-batch") });
}

/**
 * Begins executions of one organization (scripts/begin-executions.lua): each request joins the execution
 * its fingerprint or id names, else creates one; the ones it creates are admitted against the limit,
 * all or none. Throws LimitExceededError over a `refuse` limit, having changed nothing. The caller then
 * enqueues the jobs of the executions in state `created`, and only those.
 */
export async function beginExecutions(
  redis: RedisConnection,
  keys: KeySpace,
  settings: BeginSettings,
  requests: readonly BeginRequest[],
): Promise<BeginAnswer> {
  const args: (string | number)[] = [
    Date.now(),
    settings.lane,
    settings.limit?.max ?? 0,
    settings.reserved === true ? "reserved" : (settings.limit?.over ?? "refuse"),
    Math.ceil(settings.deadline),
    Math.ceil(settings.ttlMs),
    Math.ceil(settings.retainMs),
    Math.ceil(settings.reuseMs),
    settings.waiterChannel ?? "",
    settings.batchId ?? "",
    settings.behindQueue ?? "",
  ];
  for (const request of requests) {
    args.push(
      request.candidateId,
      request.fingerprint ?? "",
      request.queue,
      request.batchIndex ?? "",
      request.teams === undefined ? "" : JSON.stringify(request.teams),
    );
  }
  return parseBegun(settings, requests, await redis.beginExecutions(organizationPrefix(keys, settings.orgId), ...args));
}

function parseBegun(settings: BeginSettings, requests: readonly BeginRequest[], answer: (string | number)[]): BeginAnswer {
  if (answer[0] === SCRIPT_CODES.overLimit) throw limitExceeded(settings.lane, settings.limit?.max ?? 0, answer.slice(1).map(Number), requests.length);
  const executions: Begun[] = [];
  for (let i = 1; i + 2 < answer.length; i += 3) {
    const executionId = String(answer[i]);
    const state = String(answer[i + 1]);
    if (state === "created" || state === "pending") executions.push({ executionId, state });
    else if (state === "completed" || state === "failed") executions.push({ executionId, state, reply: String(answer[i + 2]) });
    else throw new Error(`unexpected execution state "${state}" from begin-executions`);
  }
  if (executions.length !== requests.length) throw new Error(`begin-executions answered ${executions.length} executions for ${requests.length} requests`);
  return { behind: answer[0] === "1", executions };
}

/**
 * Retry-After is the backlog over the limit divided by the organization's pace (its executions finished
 * in the last minute); with none finished, the time until its earliest execution in flight stops
 * counting, at most a minute.
 */
function limitExceeded(lane: Lane, max: number, [inFlight = 0, finishedRecently = 0, untilFirstMs = 0]: number[], adding: number): LimitExceededError {
  const excess = inFlight + adding - max;
  const perSecond = finishedRecently / (PACE_WINDOW_MS / 1_000);
  const seconds = perSecond > 0 ? excess / perSecond : Math.min(PACE_WINDOW_MS, untilFirstMs) / 1_000;
  const retryAfter = Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(seconds)));
  const what = lane === "batch" ? "batch items queued" : "executions in flight";
  return new LimitExceededError(lane, retryAfter, `Too many ${what} for the organization (limit ${max}); retry after ${retryAfter} s`);
}

/**
 * Finishes an execution (scripts/finish-execution.lua): stores and publishes its reply (the first one
 * only), releases its coalescing key, settles its organization's lanes and counts it in its batches, in
 * one round trip. Resolves with the number of API instances that received it, or -1 when it had finished.
 */
export async function finishExecution(redis: RedisConnection, keys: KeySpace, orgId: string, executionId: string, finish: Finish): Promise<number> {
  const answer = await redis.finishExecution(
    organizationPrefix(keys, orgId),
    executionId,
    finish.reply,
    finish.status,
    Date.now(),
    finish.reusable ? "1" : "0",
  );
  return answer === SCRIPT_CODES.finishedAlready ? -1 : answer;
}

/**
 * Accepts an async batch (scripts/accept-batch.lua): its record, and its valid items' places in the
 * organization's batch lane under the ids their executions will have, all or none. False when it existed;
 * throws LimitExceededError over `limitMax`, having changed nothing.
 */
export async function acceptBatch(
  redis: RedisConnection,
  keys: KeySpace,
  orgId: string,
  batch: {
    batchId: string;
    deadline: number;
    ttlMs: number;
    total: number;
    limitMax?: number;
    candidateIds: readonly string[];
    invalid: readonly { index: number; entry: string }[];
    /** The teams it runs for, kept in its record. */
    teams?: readonly string[];
  },
): Promise<boolean> {
  const answer = await redis.acceptBatch(
    organizationPrefix(keys, orgId),
    batch.batchId,
    Date.now(),
    Math.ceil(batch.deadline),
    Math.ceil(batch.ttlMs),
    batch.total,
    batch.limitMax ?? 0,
    batch.candidateIds.length,
    batch.teams === undefined ? "" : JSON.stringify(batch.teams),
    ...batch.candidateIds,
    ...batch.invalid.flatMap(({ index, entry }) => [index, entry]),
  );
  if (answer[0] === SCRIPT_CODES.overLimit) throw limitExceeded("batch", batch.limitMax ?? 0, answer.slice(1).map(Number), batch.candidateIds.length);
  return Number(answer[0]) === SCRIPT_CODES.accepted;
}

/**
 * Records a chunk of a batch's items as begun from index `from` (scripts/extend-batch.lua): their
 * entries, in order, once. Resolves with how many items the batch has begun, or -1 for a chunk recorded already.
 */
export async function extendBatch(
  redis: RedisConnection,
  keys: KeySpace,
  orgId: string,
  chunk: { batchId: string; from: number; ttlMs: number; entries: readonly string[] },
): Promise<number> {
  const begun = await redis.extendBatch(organizationPrefix(keys, orgId), chunk.batchId, chunk.from, Date.now(), Math.ceil(chunk.ttlMs), ...chunk.entries);
  return begun === SCRIPT_CODES.recordedAlready ? -1 : begun;
}

/** Gives back the batch lane places of items that will never begin (their batch's start was lost). */
export async function releaseBatchPlaces(redis: RedisConnection, keys: KeySpace, orgId: string, candidateIds: readonly string[]): Promise<void> {
  if (candidateIds.length > 0) await redis.zrem(laneKey(keys, orgId, "batch"), ...candidateIds);
}

/** The fields of a record that readRecord reads, in order. */
const RECORD_FIELDS = ["status", "createdAt", "completedAt", "result", "queue", "teams"] as const;

/** Execution records of one organization, in one round trip. */
export async function readRecords(
  redis: RedisConnection,
  keys: KeySpace,
  orgId: string,
  executionIds: readonly string[],
): Promise<(StoredRecord | undefined)[]> {
  if (executionIds.length === 0) return [];
  const pipeline = redis.pipeline();
  for (const executionId of executionIds) pipeline.hmget(executionKey(keys, orgId, executionId), ...RECORD_FIELDS);
  return answersOf(await pipeline.exec()).map(parseRecord);
}

function parseRecord(answer: unknown): StoredRecord | undefined {
  if (!Array.isArray(answer)) return undefined;
  const [status, createdAt, completedAt, reply, queue, teams] = answer as (string | null)[];
  if (status == null || !isRecordStatus(status) || createdAt == null || queue == null) return undefined;
  return {
    status,
    createdAt: Number(createdAt),
    queue,
    ...(teams == null ? {} : { teams: parseTeams(teams) }),
    ...(completedAt == null ? {} : { completedAt: Number(completedAt) }),
    ...(reply == null ? {} : { reply }),
  };
}

/** A batch's record, or undefined when the organization has none of that id (or it expired). O(1). */
export async function readBatch(redis: RedisConnection, keys: KeySpace, orgId: string, batchId: string): Promise<StoredBatch | undefined> {
  const [createdAt, deadline, total, begun, done, failed, lastDoneAt, teams] = await redis.hmget(
    batchKey(keys, orgId, batchId),
    "createdAt",
    "deadline",
    "total",
    "begun",
    "done",
    "failed",
    "lastDoneAt",
    "teams",
  );
  if (createdAt == null || total == null) return undefined;
  return {
    createdAt: Number(createdAt),
    deadline: Number(deadline),
    total: Number(total),
    begun: Number(begun ?? 0),
    done: Number(done ?? 0),
    failed: Number(failed ?? 0),
    lastDoneAt: Math.max(Number(createdAt), Number(lastDoneAt ?? 0)),
    ...(teams == null ? {} : { teams: parseTeams(teams) }),
  };
}

/** The `{ error }` JSON of a batch's invalid inputs at `indexes`, as accepted (before a worker records them in order). */
export async function readInvalidItems(
  redis: RedisConnection,
  keys: KeySpace,
  orgId: string,
  batchId: string,
  indexes: readonly number[],
): Promise<(string | null)[]> {
  return indexes.length === 0 ? [] : redis.hmget(batchInvalidKey(keys, orgId, batchId), ...indexes.map(String));
}

/** A range of a batch's items: each an execution id, or an invalid input's `{ error }` JSON. */
export async function readBatchItems(redis: RedisConnection, keys: KeySpace, orgId: string, batchId: string, from: number, to: number): Promise<string[]> {
  return redis.lrange(batchItemsKey(keys, orgId, batchId), from, to);
}

/**
 * Claims the look for lost items of a quiet batch for `ms`: true for the one reader (of any API
 * instance) that should look now.
 */
export async function claimLostCheck(redis: RedisConnection, keys: KeySpace, orgId: string, batchId: string, ms: number): Promise<boolean> {
  return (await redis.set(batchLostCheckKey(keys, orgId, batchId), "1", "PX", ms, "NX")) === "OK";
}

function answersOf(answers: [Error | null, unknown][] | null): unknown[] {
  if (answers === null) throw new Error("pipeline aborted");
  return answers.map(([error, value]) => {
    if (error !== null) throw error;
    return value;
  });
}

/** The teams a record or a batch keeps (a JSON array of names); anything else reads as none. */
function parseTeams(text: string): string[] {
  const parsed: unknown = JSON.parse(text);
  return Array.isArray(parsed) ? parsed.filter((team): team is string => typeof team === "string") : [];
}

function isRecordStatus(value: string): value is RecordStatus {
  return value === "pending" || value === "completed" || value === "failed";
}
