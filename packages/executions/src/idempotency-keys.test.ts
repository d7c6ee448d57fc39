// Idempotency-Keys on a real Redis, with the commands they send watched: the service promises Redis 6.2.
import { keySpace } from "@pes/jobs";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIdempotencyKeys } from "./idempotency-keys.js";

let redisHandle: RedisHandle;
let redis: Redis;

beforeAll(async () => {
  redisHandle = await startRedis();
  redis = new Redis(redisHandle.url);
});

afterAll(async () => {
  redis.disconnect();
  await redisHandle.stop();
});

/** The commands Redis received while `run` ran, each as its arguments, upper-cased. */
async function commandsDuring(run: () => Promise<void>): Promise<string[][]> {
  const monitor = await new Redis(redisHandle.url).monitor();
  const commands: string[][] = [];
  monitor.on("monitor", (_time: string, args: string[]) => commands.push(args.map((arg) => arg.toUpperCase())));
  try {
    await run();
    await redis.ping("end");
    await new Promise<void>((resolve) => {
      const seen = () => (commands.some((args) => args[0] === "PING") ? resolve() : setImmediate(seen));
      seen();
    });
  } finally {
    monitor.disconnect();
  }
  return commands;
}

describe("createIdempotencyKeys", () => {
  it("claims a key once and names the first request's id to its retries, with commands Redis 6.2 has", async () => {
    const idempotency = createIdempotencyKeys(() => redis, keySpace(uniquePrefix("idempotency"), redisHandle.url), 60_000);
    const key = { orgId: "acme", key: "retry-1", requestHash: "h1" };
    const claims: unknown[] = [];

    const commands = await commandsDuring(async () => {
      claims.push(await idempotency.claim(key, "id-1"));
      claims.push(await idempotency.claim(key, "id-2"));
      claims.push(await idempotency.claim({ ...key, requestHash: "h2" }, "id-3"));
    });

    expect(claims).toEqual([{ id: "id-1", first: true }, { id: "id-1", first: false }, { mismatch: true }]);
    // SET's NX and GET together came with Redis 7.0.
    const sets = commands.filter(([name]) => name === "SET");
    expect(sets).toHaveLength(3);
    expect(sets.filter((args) => args.includes("NX") && args.includes("GET"))).toEqual([]);
  });
});
