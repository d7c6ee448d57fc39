import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Queue } from "bullmq";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { nextBackgroundSlots } from "./background-slots.js";
import type { JobDeclaration } from "./job-declarations.js";
import { handleJob } from "./job-handlers.js";
import { createJobWorker } from "./job-worker.js";

describe("nextBackgroundSlots", () => {
  it("gives every slot back when no foreground job ran, however busy the process", () => {
    expect(nextBackgroundSlots(1, { utilization: 1, foreground: false }, 16)).toBe(16);
  });

  it("halves while foreground jobs run on a busy loop, never below one", () => {
    expect(nextBackgroundSlots(16, { utilization: 0.95, foreground: true }, 16)).toBe(8);
    expect(nextBackgroundSlots(3, { utilization: 0.95, foreground: true }, 16)).toBe(1);
    expect(nextBackgroundSlots(1, { utilization: 0.95, foreground: true }, 16)).toBe(1);
  });

  it("takes one back per interval while the loop is idle, up to the limit, and holds in between", () => {
    expect(nextBackgroundSlots(4, { utilization: 0.2, foreground: true }, 16)).toBe(5);
    expect(nextBackgroundSlots(16, { utilization: 0.2, foreground: true }, 16)).toBe(16);
    expect(nextBackgroundSlots(4, { utilization: 0.5, foreground: true }, 16)).toBe(4);
  });
});

const Empty = z.object({});
const declaration = (queue: string): JobDeclaration<z.infer<typeof Empty>> => ({ name: "work", queue, schema: Empty, options: { attempts: 1 } });
const BACKGROUND = declaration("toy-background");
const FOREGROUND = declaration("toy-foreground");
const LIMIT = 4;

let redis: RedisHandle;

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis.stop();
});

describe("a background queue", () => {
  it("gives its slots up to a foreground job while its jobs keep the CPU busy, and takes them back after", { timeout: 60_000 }, async () => {
    const prefix = uniquePrefix("background");
    // Each background job holds the event loop 40 ms, then waits 5 ms: CPU-bound work, as against an
    // instant data source. Even one at a time keeps the loop busy.
    let running = 0;
    const startsAt: number[] = [];
    const reported: number[] = [];
    let onStart = (): void => {};
    let releaseForeground = (): void => {};
    const foregroundHeld = new Promise<void>((resolve) => {
      releaseForeground = resolve;
    });
    const worker = createJobWorker({
      redisUrl: redis.url,
      prefix,
      logger: pino({ level: "silent" }),
      concurrency: LIMIT,
      queueConcurrency: { [BACKGROUND.queue]: LIMIT },
      backgroundQueues: [BACKGROUND.queue],
      onBackgroundSlots: (queue, slots) => {
        if (queue === BACKGROUND.queue) reported.push(slots);
      },
      handlers: [
        handleJob(BACKGROUND, async () => {
          running += 1;
          startsAt.push(running);
          onStart();
          const until = performance.now() + 40;
          while (performance.now() < until) {}
          await new Promise((resolve) => setTimeout(resolve, 5));
          running -= 1;
        }),
        handleJob(FOREGROUND, () => foregroundHeld),
      ],
    });
    const background = new Queue(BACKGROUND.queue, { connection: { url: redis.url }, prefix });
    const foreground = new Queue(FOREGROUND.queue, { connection: { url: redis.url }, prefix });
    /** Resolves when `count` background jobs in a row start with a number running (themselves included) that `fits`. */
    const startsInARow = (count: number, fits: (running: number) => boolean): Promise<void> =>
      new Promise((resolve) => {
        let row = 0;
        onStart = () => {
          row = fits(running) ? row + 1 : 0;
          if (row === count) resolve();
        };
      });
    try {
      await background.addBulk(Array.from({ length: 2_000 }, () => ({ name: "work", data: {} })));
      const full = startsInARow(1, (alongside) => alongside > 2);
      await worker.start();
      await full;

      await foreground.add("work", {});
      // One at a time, ten in a row: with four slots that does not happen by chance.
      await startsInARow(10, (alongside) => alongside === 1);

      const refilled = startsInARow(1, (alongside) => alongside > 2);
      releaseForeground();
      await refilled;
      expect(Math.max(...startsAt)).toBeLessThanOrEqual(LIMIT);
      // Told at start, then halved down to one while the foreground job ran, then all back.
      expect(reported[0]).toBe(LIMIT);
      expect(reported).toContain(1);
      expect(reported.at(-1)).toBe(LIMIT);
    } finally {
      releaseForeground();
      await worker.close(5_000);
      await background.obliterate({ force: true });
      await Promise.all([background.close(), foreground.close()]);
    }
  });
});
