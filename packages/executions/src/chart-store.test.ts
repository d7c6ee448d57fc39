import type { ChartData } from "@pes/contracts";
import { chartsKey, keySpace } from "@pes/jobs";
import { startRedis, uniquePrefix, type RedisHandle } from "@pes/local-services";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createChartStore } from "./chart-store.js";

let redis: RedisHandle;
let connection: Redis;

beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  await connection?.quit();
});
afterAll(async () => {
  await redis.stop();
});

const ID = "0b6f2c7e-1c1a-4f2e-9a63-2f0d8f1e9a01";
const chart: ChartData = {
  title: "p99 latency",
  kind: "metric",
  unit: "s",
  window: { start: 0, time: 3_600_000, end: 4_500_000 },
  series: [
    {
      name: 'service="checkout"',
      points: [
        [0, 0.4],
        [60_000, null],
        [3_600_000, 1.8],
      ],
    },
  ],
  band: { low: 0.4, high: 0.5, median: 0.44, until: 3_300_000 },
  onset: 3_420_000,
  abnormal: true,
};

describe("createChartStore", () => {
  it("keeps an execution's charts in one key under its organization's, for the given time, and reads them back for that organization only", async () => {
    connection = new Redis(redis.url);
    const keys = keySpace(uniquePrefix("charts"), redis.url);
    const store = createChartStore(() => connection, keys);
    const commands: string[] = [];
    const monitor = await connection.duplicate().monitor();
    const seenAll = new Promise<void>((resolve) =>
      monitor.on("monitor", (_time: string, args: string[]) => {
        commands.push(String(args[0]).toLowerCase());
        if (String(args[0]).toLowerCase() === "echo") resolve();
      }),
    );

    await store.keep("acme", ID, new Map([[2, chart]]), 60_000);

    expect(await store.read("acme", ID)).toEqual(new Map([[2, chart]]));
    expect(await store.read("globex", ID)).toEqual(new Map());
    const ttl = await connection.pttl(chartsKey(keys, "acme", ID));
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    await connection.echo("done");
    await seenAll;
    monitor.disconnect();
    // One SET for the keep; the rest are the reads.
    expect(commands.filter((command) => command === "set")).toHaveLength(1);
  });

  it("writes nothing for an execution without charts, and reads nothing it cannot read", async () => {
    connection = new Redis(redis.url);
    const keys = keySpace(uniquePrefix("charts"), redis.url);
    const store = createChartStore(() => connection, keys);

    await store.keep("acme", ID, new Map(), 60_000);
    expect(await connection.exists(chartsKey(keys, "acme", ID))).toBe(0);

    await connection.set(chartsKey(keys, "acme", ID), JSON.stringify({ v: 1, charts: [{ action: "x" }] }));
    expect(await store.read("acme", ID)).toEqual(new Map());
  });
});
