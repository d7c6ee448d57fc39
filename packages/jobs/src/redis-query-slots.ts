import { randomUUID } from "node:crypto";
import { EventEmitter, once } from "node:events";
import type { RedisConnection } from "./redis-connections.js";
import { queryMinuteKey, querySlotsKey, type KeySpace } from "./redis-keys.js";

/**
 * KEYS[1] the data source's holders: a sorted set of holder ids scored by the end of their lease (ms,
 * Redis' clock, so that workers with skewed clocks agree). ARGV[1] holder id, ARGV[2] max, ARGV[3] lease
 * ms. Expired holders (a worker that died holding a slot) are dropped first; 1 when the slot is taken.
 */
const TAKE_SLOT = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
if redis.call('PTTL', KEYS[1]) < lease then redis.call('PEXPIRE', KEYS[1], lease + 1000) end
return 1`;

/** A waiter tries again after 0.5–1.5× this: about how late it sees a slot given back on another worker. */
const POLL_MS = 100;
/**
 * The per-minute budget's minute (the engine's QUERY_MINUTE_MS): a query counted there is a holder whose
 * lease is a minute, never given back, so that TAKE_SLOT counts the queries of the sliding last minute.
 */
const MINUTE_MS = 60_000;

export interface RedisQuerySlotsOptions {
  /** A command connection (the worker's producer connection): a script and a ZREM per query. */
  redis: RedisConnection;
  /** Where the slots are kept (querySlotsKey). */
  keys: KeySpace;
}

/**
 * Query slots shared by every worker on the Redis (the engine's QuerySlots), and the per-minute budgets
 * of organizations on their data sources, counted by the same script: a data source's slots are a
 * sorted set of holders, each with a lease, taken by one script. A waiter tries again as soon as a slot
 * of the same data source is given back in this process, and every 50–150 ms otherwise (a slot given back
 * by another worker); waiters are not served in order. One key per data source, so that the script stays
 * in one slot of a Redis Cluster.
 */
export function createRedisQuerySlots(options: RedisQuerySlotsOptions) {
  const { redis, keys } = options;
  const givenBack = new EventEmitter();
  // One listener per waiter, as many as queries wait at once.
  givenBack.setMaxListeners(0);
  return {
    async acquire({ key, max, leaseMs, signal }: { key: string; max: number; leaseMs: number; signal: AbortSignal }): Promise<() => Promise<void>> {
      const slotKey = querySlotsKey(keys, key);
      const holder = randomUUID();
      for (;;) {
        signal.throwIfAborted();
        if (Number(await redis.eval(TAKE_SLOT, 1, slotKey, holder, max, Math.ceil(leaseMs))) === 1) {
          return async () => {
            await redis.zrem(slotKey, holder);
            givenBack.emit(key);
          };
        }
        await nextAttempt(givenBack, key, signal);
      }
    },
    /**
     * Counts a query of `key` in its sliding last minute (queryMinuteKey), if fewer than `max` were: one
     * script, atomic across every worker; a refused query is not counted.
     */
    async takeQueryOfMinute({ key, max }: { key: string; max: number }): Promise<boolean> {
      return Number(await redis.eval(TAKE_SLOT, 1, queryMinuteKey(keys, key), randomUUID(), max, MINUTE_MS)) === 1;
    },
  };
}

/** Resolves when a slot of `key` is given back here or after the poll interval (jittered); rejects on abort. */
async function nextAttempt(givenBack: EventEmitter, key: string, signal: AbortSignal): Promise<void> {
  const poll = new AbortController();
  const timer = setTimeout(() => poll.abort(), POLL_MS * (0.5 + Math.random()));
  try {
    await once(givenBack, key, { signal: AbortSignal.any([signal, poll.signal]) });
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (!poll.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
  }
}
