import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { keySpace, queryMinuteKey, querySlotsKey, type KeySpace } from "./redis-keys.js";
import { createRedisQuerySlots } from "./redis-query-slots.js";

let redis: RedisHandle;
const connections: Redis[] = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  await Promise.all(connections.splice(0).map((connection) => (connection.status === "end" ? undefined : connection.quit())));
});
afterAll(async () => {
  await redis.stop();
});

/** Slots as one worker has them: its own connection, the shared prefix. */
function workerSlots(keys: KeySpace) {
  const connection = new Redis(redis.url);
  connections.push(connection);
  return { connection, slots: createRedisQuerySlots({ redis: connection, keys }) };
}

const LONG = { leaseMs: 60_000 };

describe("createRedisQuerySlots", () => {
  it("gives out at most max slots of a data source across workers, and the next once one is given back", async () => {
    const keys = keySpace(uniquePrefix("slots"), redis.url);
    const first = workerSlots(keys).slots;
    const second = workerSlots(keys).slots;
    const request = { key: "acme/metrics", max: 2, ...LONG };
    const held = [
      await first.acquire({ ...request, signal: new AbortController().signal }),
      await second.acquire({ ...request, signal: new AbortController().signal }),
    ];

    // Full: a third waits, and gives up at its deadline with the deadline's reason.
    await expect(first.acquire({ ...request, signal: AbortSignal.timeout(300) })).rejects.toMatchObject({ name: "TimeoutError" });
    // Another data source, or another organization's, has slots of its own.
    const other = await second.acquire({ ...request, key: "globex/metrics", signal: new AbortController().signal });

    const waiting = second.acquire({ ...request, signal: new AbortController().signal });
    await held[0]?.();
    const next = await waiting;
    const admin = workerSlots(keys).connection;
    expect(await admin.zcard(querySlotsKey(keys, "acme/metrics"))).toBe(2);
    await Promise.all([held[1]?.(), next(), other()]);
    expect(await admin.zcard(querySlotsKey(keys, "acme/metrics"))).toBe(0);
  });

  it("frees the slot of a worker that died holding it once its lease ends", async () => {
    const keys = keySpace(uniquePrefix("slots"), redis.url);
    const dying = workerSlots(keys);
    await dying.slots.acquire({ key: "acme/metrics", max: 1, leaseMs: 500, signal: new AbortController().signal });
    dying.connection.disconnect();

    const survivor = workerSlots(keys);
    const release = await survivor.slots.acquire({ key: "acme/metrics", max: 1, ...LONG, signal: AbortSignal.timeout(10_000) });
    const holders = await survivor.connection.zrange(querySlotsKey(keys, "acme/metrics"), "0", "-1");
    expect(holders).toHaveLength(1);
    await release();
  });

  it("keeps the key no longer than the longest lease in it", async () => {
    const keys = keySpace(uniquePrefix("slots"), redis.url);
    const { slots, connection } = workerSlots(keys);
    await slots.acquire({ key: "acme/metrics", max: 2, leaseMs: 60_000, signal: new AbortController().signal });
    await slots.acquire({ key: "acme/metrics", max: 2, leaseMs: 1_000, signal: new AbortController().signal });
    const ttl = await connection.pttl(querySlotsKey(keys, "acme/metrics"));
    expect(ttl).toBeGreaterThan(2_000);
    expect(ttl).toBeLessThanOrEqual(61_000);
  });

  it("rejects with Redis' error when it cannot ask Redis", async () => {
    const connection = new Redis(redis.url, { lazyConnect: true, enableOfflineQueue: false });
    const slots = createRedisQuerySlots({ redis: connection, keys: keySpace(uniquePrefix("slots"), redis.url) });
    await expect(slots.acquire({ key: "acme/metrics", max: 1, ...LONG, signal: new AbortController().signal })).rejects.toThrow(/Stream isn't writeable/);
    connection.disconnect();
  });
});

describe("the per-minute budget of createRedisQuerySlots", () => {
  it("counts at most max queries of a data source in a minute across workers, refusing the rest without counting them", async () => {
    const keys = keySpace(uniquePrefix("minute"), redis.url);
    const workers = [workerSlots(keys).slots, workerSlots(keys).slots, workerSlots(keys).slots];
    const taken = await Promise.all(Array.from({ length: 40 }, (_, index) => workers[index % 3]?.takeQueryOfMinute({ key: "acme/metrics", max: 7 })));
    expect(taken.filter((ok) => ok === true)).toHaveLength(7);
    expect(taken.filter((ok) => ok === false)).toHaveLength(33);
    // Another organization's data source of the same name has a minute of its own.
    expect(await workers[0]?.takeQueryOfMinute({ key: "globex/metrics", max: 7 })).toBe(true);
    const admin = workerSlots(keys).connection;
    const key = queryMinuteKey(keys, "acme/metrics");
    expect(await admin.zcard(key)).toBe(7);
    const ttl = await admin.pttl(key);
    expect(ttl).toBeGreaterThan(59_000);
    expect(ttl).toBeLessThanOrEqual(61_000);
  });

  it("counts a query again once its minute has passed: a sliding minute", async () => {
    const keys = keySpace(uniquePrefix("minute"), redis.url);
    const { slots, connection } = workerSlots(keys);
    const key = queryMinuteKey(keys, "acme/metrics");
    for (let count = 0; count < 3; count += 1) expect(await slots.takeQueryOfMinute({ key: "acme/metrics", max: 3 })).toBe(true);
    expect(await slots.takeQueryOfMinute({ key: "acme/metrics", max: 3 })).toBe(false);
    // The oldest query's minute ends (its score is when it stops counting): one more may start, not two.
    const [oldest] = await connection.zrange(key, "0", "0");
    await connection.zadd(key, "XX", "1", oldest ?? "");
    expect(await slots.takeQueryOfMinute({ key: "acme/metrics", max: 3 })).toBe(true);
    expect(await slots.takeQueryOfMinute({ key: "acme/metrics", max: 3 })).toBe(false);
  });
});
