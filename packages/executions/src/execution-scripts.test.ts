// The lifecycle's scripts on a real Redis, where the keys they touch are named by what they read, in the
// same round trip: a request that joins an execution of an earlier call, a batch that begins counting on an
// execution just before it finishes.
import { batchCountedKey, batchKey, executionBatchesKey, keySpace, type KeySpace } from "@pes/jobs";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { acceptBatch, beginExecutions, defineLifecycleCommands, finishExecution, readBatch, type BeginSettings } from "./execution-lifecycle.js";

let redisHandle: RedisHandle;
let redis: Redis;
let keys: KeySpace;

beforeAll(async () => {
  redisHandle = await startRedis();
  redis = new Redis(redisHandle.url);
  defineLifecycleCommands(redis);
});

afterAll(async () => {
  redis.disconnect();
  await redisHandle.stop();
});

beforeEach(() => {
  keys = keySpace(uniquePrefix("scripts"), redisHandle.url);
});

const settings = (overrides: Partial<BeginSettings> = {}): BeginSettings => ({
  orgId: "acme",
  lane: "interactive",
  deadline: Date.now() + 60_000,
  ttlMs: 120_000,
  retainMs: 60_000,
  reuseMs: 60_000,
  ...overrides,
});

describe("begin-executions", () => {
  it("joins the execution an earlier call created for the same fingerprint", async () => {
    const first = await beginExecutions(redis, keys, settings(), [{ candidateId: "e-1", fingerprint: "f", queue: "q" }]);
    const second = await beginExecutions(redis, keys, settings(), [{ candidateId: "e-2", fingerprint: "f", queue: "q" }]);

    expect(first.executions).toEqual([{ executionId: "e-1", state: "created" }]);
    expect(second.executions).toEqual([{ executionId: "e-1", state: "pending" }]);
    expect(await redis.exists(`${keys.prefix}:org:acme:execution:e-2`)).toBe(0);
  });
});

describe("finish-execution", () => {
  it("counts the execution in a batch that began counting on it just before its finish", async () => {
    await acceptBatch(redis, keys, "acme", { batchId: "b-1", deadline: Date.now() + 60_000, ttlMs: 120_000, total: 1, candidateIds: [], invalid: [] });
    await beginExecutions(redis, keys, settings(), [{ candidateId: "e-1", queue: "q" }]);
    // The batch item joins just before the script runs.
    let joined = false;
    const racing = new Proxy(redis, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (property !== "finishExecution" || typeof value !== "function") return value;
        return async (...args: unknown[]) => {
          if (!joined) {
            joined = true;
            await redis.sadd(executionBatchesKey(keys, "acme", "e-1"), "b-1 0");
          }
          return Reflect.apply(value, target, args);
        };
      },
    });

    const receivers = await finishExecution(racing, keys, "acme", "e-1", { reply: "{}", status: "completed", reusable: true });

    expect(receivers).toBe(0);
    expect(await readBatch(redis, keys, "acme", "b-1")).toMatchObject({ total: 1, done: 1, failed: 0 });
    expect(await redis.smembers(batchCountedKey(keys, "acme", "b-1"))).toEqual(["0"]);
    expect(await redis.exists(batchKey(keys, "acme", "b-1"))).toBe(1);
    expect(await finishExecution(redis, keys, "acme", "e-1", { reply: "{}", status: "failed", reusable: false })).toBe(-1);
  });
});
