import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { takeLeaseLock } from "./lease-lock.js";

let redisHandle: RedisHandle;
let redis: Redis;
let key: string;

beforeAll(async () => {
  redisHandle = await startRedis();
  redis = new Redis(redisHandle.url);
});

afterAll(async () => {
  redis.disconnect();
  await redisHandle.stop();
});

beforeEach(() => {
  key = `${uniquePrefix("lease")}:lock`;
});

describe("takeLeaseLock", () => {
  it("takes a free lock once, and frees it on release", async () => {
    const lock = await takeLeaseLock(redis, key, 60_000);
    expect(lock).toBeDefined();
    expect(await takeLeaseLock(redis, key, 60_000)).toBeUndefined();
    expect(await lock?.release()).toBe(true);
    expect(await redis.exists(key)).toBe(0);
  });

  it("leaves the lock of the holder that took it after this one's lease expired", async () => {
    const first = await takeLeaseLock(redis, key, 60_000);
    await redis.del(key); // its lease expires
    const second = await takeLeaseLock(redis, key, 60_000);

    expect(await first?.release()).toBe(false);
    expect(await redis.exists(key)).toBe(1);
    expect(await second?.release()).toBe(true);
  });
});
