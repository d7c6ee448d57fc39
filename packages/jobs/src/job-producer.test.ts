import { freePort, startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createJobProducer } from "./job-producer.js";
import type { JobDeclaration } from "./job-declarations.js";
import type { RedisConnection } from "./redis-connections.js";

const Post = z.object({ text: z.string() });
const POST_JOB = {
  name: "post",
  queue: "toy-posts",
  schema: Post,
  options: { attempts: 3, backoff: { type: "fixed", delayMs: 1_000 } },
} satisfies JobDeclaration<z.infer<typeof Post>>;
const logger = pino({ level: "silent" });

let redis: RedisHandle;

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis.stop();
});

describe("createJobProducer", () => {
  it("adds a job with its declared options, once per job id", async () => {
    const prefix = uniquePrefix("producer");
    const producer = createJobProducer({ redisUrl: redis.url, prefix, logger });
    producer.start();
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const queue = new Queue(POST_JOB.queue, { connection, prefix });
    try {
      await waitUntilReady(producer.connection);
      await producer.add(POST_JOB, { text: "a" }, "item.1");
      await producer.add(POST_JOB, { text: "b" }, "item.1");

      const jobs = await queue.getJobs(["waiting"]);
      expect(jobs.map((job) => [job.id, job.name, job.data, job.opts.attempts])).toEqual([["item.1", "post", { text: "a" }, 3]]);
    } finally {
      await queue.close();
      await connection.quit();
      await producer.close();
    }
  });

  it("fails at once, rather than waiting, while Redis cannot be reached", async () => {
    const producer = createJobProducer({ redisUrl: `redis://127.0.0.1:${await freePort()}`, prefix: uniquePrefix("producer"), logger });
    producer.start();
    try {
      await expect(producer.add(POST_JOB, { text: "a" })).rejects.toThrow();
      await expect(producer.connection.get("x")).rejects.toThrow();
    } finally {
      await producer.close();
    }
  });
});

function waitUntilReady(connection: RedisConnection): Promise<void> {
  if (connection.status === "ready") return Promise.resolve();
  return new Promise((resolve) => connection.once("ready", () => resolve()));
}
