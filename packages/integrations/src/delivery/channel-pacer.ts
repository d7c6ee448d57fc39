import { setTimeout as sleep } from "node:timers/promises";
import { channelPaceKey, type KeySpace } from "@pes/jobs";
import type { Cluster, Redis } from "ioredis";

/**
 * Spaces the messages posted to one chat channel, across every worker sharing the Redis: Slack allows
 * about one message per second per channel (docs.slack.dev, "Rate limits": chat.postMessage), Microsoft
 * Graph at most 4 requests per second per app on a channel and 3000 messages a day (Graph throttling
 * limits, Teams), and a batch of 100 results sent as fast as possible would mostly be refused. Each post
 * reserves the channel's next free slot; a 429's `Retry-After` pushes that slot later for everyone.
 */
export interface ChannelPacer {
  /**
   * Waits for the channel's next free slot and takes it; false, without waiting or taking anything, when
   * that slot is later than `deadline` (epoch ms).
   * @throws the signal's reason when it aborts during the wait.
   */
  waitForSlot(channel: string, bounds: { deadline: number; signal?: AbortSignal }): Promise<boolean>;
  /** Moves the channel's next free slot to at least `ms` from now (a 429 with Retry-After). */
  holdOff(channel: string, ms: number): Promise<void>;
}

export interface ChannelPacerOptions {
  /** One Redis or a Redis Cluster: single-key commands and scripts only. */
  redis: Redis | Cluster;
  /** Where the channels' schedules are kept (channelPaceKey). */
  keys: KeySpace;
  /** Whose channels these are: `slack` (the default) or `teams`; each has its own keys. */
  service?: "slack" | "teams";
  /** Time between two posts to one channel. Default 1000 ms, Slack's documented rate (well within Graph's). */
  intervalMs?: number;
}

/**
 * KEYS[1] the channel's next free time (ms, Redis clock); ARGV[1] interval ms; ARGV[2] longest wait ms.
 * Returns the wait before the reserved slot, or -1 when the slot is further away than the longest wait.
 * Redis' own clock, so that workers with skewed clocks still space their posts.
 */
const RESERVE_SLOT = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local free = tonumber(redis.call('GET', KEYS[1]) or '0')
local slot = math.max(now, free)
local wait = slot - now
if wait > tonumber(ARGV[2]) then return -1 end
redis.call('SET', KEYS[1], slot + tonumber(ARGV[1]), 'PX', wait + tonumber(ARGV[1]) + 1000)
return wait`;

/** KEYS[1] as above; ARGV[1] hold-off ms. */
const HOLD_OFF = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local free = tonumber(redis.call('GET', KEYS[1]) or '0')
local until_ms = now + tonumber(ARGV[1])
if until_ms > free then redis.call('SET', KEYS[1], until_ms, 'PX', tonumber(ARGV[1]) + 1000) end
return 1`;

/** A pacer over Redis, shared by every process posting to the same workspace or tenant. */
export function createChannelPacer(options: ChannelPacerOptions): ChannelPacer {
  const { redis, keys } = options;
  const intervalMs = options.intervalMs ?? 1_000;
  const keyOf = (channel: string) => channelPaceKey(keys, options.service ?? "slack", channel);
  return {
    async waitForSlot(channel, { deadline, signal }) {
      const longest = Math.max(0, Math.floor(deadline - Date.now()));
      const wait = Number(await redis.eval(RESERVE_SLOT, 1, keyOf(channel), intervalMs, longest));
      if (wait < 0) return false;
      if (wait > 0) await sleep(wait, undefined, signal === undefined ? {} : { signal });
      return true;
    },
    async holdOff(channel, ms) {
      await redis.eval(HOLD_OFF, 1, keyOf(channel), Math.ceil(ms));
    },
  };
}
