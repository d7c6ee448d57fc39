import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
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
function workerSlots(keyPrefix: string) {
  const connection = new Redis(redis.url);
  connections.push(connection);
  return { connection, slots: createRedisQuerySlots({ redis: connection, keyPrefix }) };
}

const LONG = { leaseMs: 60_000 };

describe("createRedisQuerySlots", () => {
  it("gives out at most max slots of a data source across workers, and the next once one is given back", async () => {
    const keyPrefix = `${uniquePrefix("slots")}:`;
    const first = workerSlots(keyPrefix).slots;
    const second = workerSlots(keyPrefix).slots;
    const request = { key: "acme/metrics", max: 2, ...LONG };
    const held = [await first.acquire({ ...request, signal: new AbortController().signal }), await second.acquire({ ...request, signal: new AbortController().signal })];

    // Full: a third waits, and gives up at its deadline with the deadline's reason.
    await expect(first.acquire({ ...request, signal: AbortSignal.timeout(300) })).rejects.toMatchObject({ name: "TimeoutError" });
    // Another data source, or another organization's, has slots of its own.
    const other = await second.acquire({ ...request, key: "globex/metrics", signal: new AbortController().signal });

    const waiting = second.acquire({ ...request, signal: new AbortController().signal });
    await held[0]?.();
    const next = await waiting;
    const admin = workerSlots(keyPrefix).connection;
    expect(await admin.zcard(`${keyPrefix}query-slots:acme/metrics`)).toBe(2);
    await Promise.all([held[1]?.(), next(), other()]);
    expect(await admin.zcard(`${keyPrefix}query-slots:acme/metrics`)).toBe(0);
  });

  it("frees the slot of a worker that died holding it once its lease ends", async () => {
    const keyPrefix = `${uniquePrefix("slots")}:`;
    const dying = workerSlots(keyPrefix);
    await dying.slots.acquire({ key: "acme/metrics", max: 1, leaseMs: 500, signal: new AbortController().signal });
    dying.connection.disconnect();

    const survivor = workerSlots(keyPrefix);
    const release = await survivor.slots.acquire({ key: "acme/metrics", max: 1, ...LONG, signal: AbortSignal.timeout(10_000) });
    const holders = await survivor.connection.zrange(`${keyPrefix}query-slots:acme/metrics`, "0", "-1");
    expect(holders).toHaveLength(1);
    await release();
  });

  it("keeps the key no longer than the longest lease in it", async () => {
    const keyPrefix = `${uniquePrefix("slots")}:`;
    const { slots, connection } = workerSlots(keyPrefix);
    await slots.acquire({ key: "acme/metrics", max: 2, leaseMs: 60_000, signal: new AbortController().signal });
    await slots.acquire({ key: "acme/metrics", max: 2, leaseMs: 1_000, signal: new AbortController().signal });
    const ttl = await connection.pttl(`${keyPrefix}query-slots:acme/metrics`);
    expect(ttl).toBeGreaterThan(2_000);
    expect(ttl).toBeLessThanOrEqual(61_000);
  });

  it("rejects with Redis' error when it cannot ask Redis", async () => {
    const connection = new Redis(redis.url, { lazyConnect: true, enableOfflineQueue: false });
    const slots = createRedisQuerySlots({ redis: connection, keyPrefix: `${uniquePrefix("slots")}:` });
    await expect(slots.acquire({ key: "acme/metrics", max: 1, ...LONG, signal: new AbortController().signal })).rejects.toThrow(/Stream isn't writeable/);
    connection.disconnect();
  });
});
