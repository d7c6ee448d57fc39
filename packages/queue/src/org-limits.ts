import type { Result } from "ioredis";
import { orgFinishedKey, orgLaneKey, type KeySpace } from "./queue-names.js";
import type { RedisConnection } from "./redis-connections.js";

/**
 * Which line an execution waits in. Workers take `interactive` executions (a caller's own, synchronous or
 * `respond-async`, and synchronous batches) before any `batch` item (an async batch's): a 10,000-item
 * batch does not make one investigation wait behind it. Each lane is also counted against its own
 * per-organization limit.
 */
export type Lane = "interactive" | "batch";

/** An organization's limit on one lane: at most `max` of its executions in flight there at once. */
export interface LaneLimit {
  orgId: string;
  max: number;
}

/** How far back an organization's finished executions are counted for its pace (Retry-After). */
const PACE_WINDOW_MS = 60_000;
/** The longest Retry-After: past it, a client should rather look again than trust an estimate. */
const MAX_RETRY_AFTER_SECONDS = 3_600;

/**
 * Admits executions into an organization's lane, or says how full it is. Expired members (deadlines
 * passed: their API or worker died before removing them) are dropped first, so nothing leaks.
 * KEYS[1] the lane's sorted set, KEYS[2] the organization's finished executions. ARGV[1] now (ms),
 * [2] the limit, [3] when the new members stop counting (ms), [4…] their execution ids.
 * Returns {1} when admitted, else {0, in flight, finished within the pace window, ms until the earliest
 * member expires}.
 */
const ADMIT = `local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local count = redis.call('ZCARD', KEYS[1])
local adding = #ARGV - 3
if count + adding > tonumber(ARGV[2]) then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - ${PACE_WINDOW_MS})
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  local untilFirst = 0
  if first[2] then untilFirst = tonumber(first[2]) - now end
  return {0, count, redis.call('ZCARD', KEYS[2]), untilFirst}
end
for i = 4, #ARGV, 1000 do
  local args = {}
  for j = i, math.min(i + 999, #ARGV) do
    args[#args + 1] = ARGV[3]
    args[#args + 1] = ARGV[j]
  end
  redis.call('ZADD', KEYS[1], unpack(args))
end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then redis.call('PEXPIREAT', KEYS[1], math.ceil(tonumber(last[2]))) end
return {1}`;

/**
 * An execution of the organization finished: it no longer counts in either lane, and counts in the pace.
 * KEYS[1] interactive lane, KEYS[2] batch lane, KEYS[3] finished. ARGV[1] now (ms), [2] execution id.
 */
const SETTLE = `redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[2])
local now = tonumber(ARGV[1])
redis.call('ZADD', KEYS[3], now, ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - ${PACE_WINDOW_MS})
redis.call('PEXPIRE', KEYS[3], ${PACE_WINDOW_MS})
return 1`;

declare module "ioredis" {
  interface RedisCommander<Context> {
    /** ADMIT, defined by defineLimitCommands. */
    admitExecutions(lane: string, finished: string, now: number, max: number, expiresAt: number, ...ids: string[]): Result<number[], Context>;
    /** SETTLE, defined by defineLimitCommands. */
    settleExecution(interactive: string, batch: string, finished: string, now: number, executionId: string): Result<number, Context>;
  }
}

/** Defines the limit scripts on a connection (the records' connection: see defineRecordCommands). */
export function defineLimitCommands(redis: RedisConnection): void {
  redis.defineCommand("admitExecutions", { numberOfKeys: 2, lua: ADMIT });
  redis.defineCommand("settleExecution", { numberOfKeys: 3, lua: SETTLE });
}

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

/**
 * Counts `executionIds` in flight in the organization's lane until `expiresAt`, or throws
 * LimitExceededError when they do not fit. Retry-After is the backlog over the limit divided by the
 * organization's pace (its executions finished in the last minute); with none finished, the time until
 * its earliest execution in flight stops counting, at most a minute.
 */
export async function admit(redis: RedisConnection, keys: KeySpace, lane: Lane, limit: LaneLimit, executionIds: readonly string[], expiresAt: number): Promise<void> {
  if (executionIds.length === 0) return;
  const now = Date.now();
  const answer = await redis.admitExecutions(
    orgLaneKey(keys, limit.orgId, lane),
    orgFinishedKey(keys, limit.orgId),
    now,
    limit.max,
    Math.ceil(expiresAt),
    ...executionIds,
  );
  const [admitted, inFlight = 0, finishedRecently = 0, untilFirstMs = 0] = answer.map(Number);
  if (admitted === 1) return;
  const excess = inFlight + executionIds.length - limit.max;
  const perSecond = finishedRecently / (PACE_WINDOW_MS / 1_000);
  const seconds = perSecond > 0 ? excess / perSecond : Math.min(PACE_WINDOW_MS, untilFirstMs) / 1_000;
  const retryAfter = Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(seconds)));
  const what = lane === "batch" ? "batch items queued" : "executions in flight";
  throw new LimitExceededError(lane, retryAfter, `Too many ${what} for the organization (limit ${limit.max}); retry after ${retryAfter} s`);
}

/** Takes executions back out of a lane: they were admitted, then joined another or never enqueued. */
export async function unadmit(redis: RedisConnection, keys: KeySpace, lane: Lane, orgId: string, executionIds: readonly string[]): Promise<void> {
  if (executionIds.length > 0) await redis.zrem(orgLaneKey(keys, orgId, lane), ...executionIds);
}

/** Settles a finished execution of `orgId` at once. */
export async function settleNow(redis: RedisConnection, keys: KeySpace, orgId: string, executionId: string): Promise<void> {
  await redis.settleExecution(
    orgLaneKey(keys, orgId, "interactive"),
    orgLaneKey(keys, orgId, "batch"),
    orgFinishedKey(keys, orgId),
    Date.now(),
    executionId,
  );
}
