import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runOncePerKey, type AttemptOutcome, type OncePerKeyOptions } from "./once-per-key.js";

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
  key = `${uniquePrefix("once")}:effect`;
});

/** A side effect that records each time it runs; `next` says what the next run reports. */
function effect(next: AttemptOutcome<string>[] = []) {
  const runs: number[] = [];
  const options: OncePerKeyOptions<string> = {
    redis,
    key,
    leaseMs: 60_000,
    retainMs: 60_000,
    encode: (value) => value,
    decode: (text) => text,
    async perform() {
      runs.push(Date.now());
      return next.shift() ?? { done: `value-${runs.length}` };
    },
  };
  return { runs, options };
}

describe("runOncePerKey", () => {
  it("runs the side effect once and hands its value to every later call", async () => {
    const { runs, options } = effect();
    expect(await runOncePerKey(options)).toEqual({ status: "done", value: "value-1", byThisCall: true });
    expect(await runOncePerKey(options)).toEqual({ status: "done", value: "value-1", byThisCall: false });
    expect(runs).toHaveLength(1);
  });

  it("lets one of two concurrent calls run it; the other says it is in progress", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { runs, options } = effect();
    const slow = {
      ...options,
      perform: async () => {
        await gate;
        return options.perform();
      },
    };

    const first = runOncePerKey(slow);
    await expect.poll(() => redis.exists(key)).toBe(1);
    const second = await runOncePerKey(slow);
    release();

    expect(second).toEqual({ status: "failed", reason: "another attempt of the same execution is doing it now" });
    expect(await first).toMatchObject({ status: "done", byThisCall: true });
    expect(runs).toHaveLength(1);
  });

  it("releases the key when nothing happened, so that a retry runs it", async () => {
    const { runs, options } = effect([{ notDone: "refused" }]);
    expect(await runOncePerKey(options)).toEqual({ status: "failed", reason: "refused" });
    expect(await runOncePerKey(options)).toMatchObject({ status: "done", byThisCall: true });
    expect(runs).toHaveLength(2);
  });

  it("after an unsure try, adopts the trace it finds instead of running again", async () => {
    const { runs, options } = effect([{ unsure: "timed out" }]);
    const searched: number[] = [];
    const withFind = {
      ...options,
      find: async (since: number) => {
        searched.push(since);
        return "found-value";
      },
    };

    expect(await runOncePerKey(withFind)).toEqual({ status: "failed", reason: "timed out" });
    expect(await runOncePerKey(withFind)).toEqual({ status: "done", value: "found-value", byThisCall: false });
    expect(await runOncePerKey(withFind)).toEqual({ status: "done", value: "found-value", byThisCall: false });
    expect(runs).toHaveLength(1);
    expect(searched).toHaveLength(1);
    expect(searched[0]).toBeLessThan(runs[0] ?? 0);
  });

  it("after an unsure try that left no trace, runs it again", async () => {
    const { runs, options } = effect([{ unsure: "timed out" }]);
    const withFind = { ...options, find: async () => undefined };
    await runOncePerKey(withFind);
    expect(await runOncePerKey(withFind)).toMatchObject({ status: "done", value: "value-2", byThisCall: true });
    expect(runs).toHaveLength(2);
  });

  it("never repeats an unsure try when it cannot look for its trace", async () => {
    const { runs, options } = effect([{ unsure: "timed out" }]);
    await runOncePerKey(options);
    expect(await runOncePerKey(options)).toEqual({ status: "failed", reason: "an earlier attempt may have done it already; not repeating it" });
    const failingFind = { ...options, find: async () => Promise.reject(new Error("history unavailable")) };
    expect(await runOncePerKey(failingFind)).toMatchObject({ status: "failed", reason: expect.stringMatching(/looking for it failed: history unavailable/) });
    expect(runs).toHaveLength(1);
  });

  it("respects the lease the holding try asked for, not the caller's", async () => {
    // A try with a far deadline (a batch waiting for its posting slots) claimed it ten minutes ago.
    await redis.set(key, JSON.stringify({ s: "pending", token: "batch-worker", at: Date.now() - 600_000, until: Date.now() + 60_000 }), "PX", 60_000);
    const { runs, options } = effect();
    const outcome = await runOncePerKey({ ...options, leaseMs: 1_000, find: async () => undefined });
    expect(outcome).toEqual({ status: "failed", reason: "another attempt of the same execution is doing it now" });
    expect(runs).toHaveLength(0);
  });

  it("treats a claim older than the lease as a crashed try and looks for its trace", async () => {
    // What a worker that died between claiming and recording leaves behind.
    await redis.set(key, JSON.stringify({ s: "pending", token: "dead-worker", at: Date.now() - 120_000, until: Date.now() - 60_000 }), "PX", 60_000);
    const { runs, options } = effect();
    const withFind = { ...options, find: async () => "posted-by-dead-worker" };
    expect(await runOncePerKey(withFind)).toEqual({ status: "done", value: "posted-by-dead-worker", byThisCall: false });
    expect(runs).toHaveLength(0);
  });
});
