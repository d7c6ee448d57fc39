import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startRedis, type RedisHandle, type TestHttpServer } from "@pes/local-services";
import { startHoldingPrometheus } from "../support/holding-prometheus.js";
import { waitForOk } from "../support/processes.js";
import { exampleConfig, startStack, type Stack } from "../support/stack.js";

// checkout-latency has three Prometheus actions: one execution = three queries at the data source.
const ACTIONS = 3;
const testTimeout = { timeout: 120_000 };
// Short locks so that a killed worker's job is detected as stalled within seconds, not the default 30 s.
const fastStalls = { WORKER_LOCK_DURATION_MS: "1500", WORKER_STALLED_INTERVAL_MS: "1000" };

let prometheus: TestHttpServer;
let config: Awaited<ReturnType<typeof exampleConfig>>;
let stack: Stack | undefined;
let redis: RedisHandle | undefined;

beforeEach(async () => {
  prometheus = await startHoldingPrometheus();
  config = await exampleConfig({ metrics: prometheus.url });
});

afterEach(async () => {
  await stack?.stop();
  stack = undefined;
  await redis?.stop();
  redis = undefined;
  await prometheus.close();
  await config.remove();
});

/** `count` distinct issues: each item is an execution of its own. */
function inputList(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    bookName: "checkout-latency",
    attributes: { service: `service-${i}`, env: "production" },
    time: "2026-11-21T13:43:00Z",
  }));
}

interface BatchItem {
  index: number;
  status: string;
  result?: { error?: string; highlights?: string };
}

interface Batch {
  status: string;
  progress: { total: number; done: number; failed: number };
  items: BatchItem[];
}

async function startBatch(target: Stack, count: number): Promise<string> {
  const response = await fetch(`${target.baseUrl}/playbook/execution/batch`, {
    method: "POST",
    headers: { authorization: `Bearer ${target.token()}`, "content-type": "application/json", prefer: "respond-async" },
    body: JSON.stringify({ inputList: inputList(count) }),
  });
  expect(response.status).toBe(202);
  return response.headers.get("location") ?? "";
}

/** Reads the batch (every item) until it completed; a 503 (Redis away) is read again. */
async function untilCompleted(target: Stack, location: string): Promise<Batch> {
  for (;;) {
    const response = await fetch(`${target.baseUrl}${location}?limit=1000`, { headers: { authorization: `Bearer ${target.token()}` } });
    if (response.status === 200) {
      const batch = (await response.json()) as Batch;
      if (batch.status === "completed") return batch;
    } else {
      expect(response.status).toBe(503);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Every item ended in a result or an explicit error, in order. */
function expectEveryItemAnswered(batch: Batch, total: number): void {
  expect(batch.progress.total).toBe(total);
  expect(batch.progress.done).toBe(total);
  expect(batch.items.map((item) => item.index)).toEqual(Array.from({ length: total }, (_, i) => i));
  for (const item of batch.items) {
    expect(["completed", "failed"]).toContain(item.status);
    expect(item.result?.highlights ?? item.result?.error).toEqual(expect.any(String));
  }
}

describe("async batches across processes", () => {
  it("a worker SIGKILLed mid-batch: its items run again elsewhere, and every item ends in a result", testTimeout, async () => {
    const total = 100;
    const concurrency = 10;
    stack = await startStack({ name: "batch-kill", configDir: config.dir, workers: 1, workerEnv: { ...fastStalls, WORKER_CONCURRENCY: String(concurrency), WORKER_BATCH_CONCURRENCY: String(concurrency) } });
    prometheus.hold();
    const location = await startBatch(stack, total);
    // The first worker holds `concurrency` items mid-run.
    await prometheus.waitForRequests(concurrency * ACTIONS);

    const [doomed] = stack.workers;
    await stack.addWorker();
    await doomed?.stop("SIGKILL");
    prometheus.release();

    const batch = await untilCompleted(stack, location);
    expectEveryItemAnswered(batch, total);
    // A worker dying once does not use up an item: each ran again on the other worker.
    expect(batch.progress.failed).toBe(0);
    expect(prometheus.requests.length).toBeGreaterThanOrEqual((total + concurrency) * ACTIONS);
  });

  it("Redis SIGKILLed and restarted from its AOF mid-batch: every item ends in a result or an explicit error", testTimeout, async () => {
    redis = await startRedis({ spawn: true, appendOnly: true });
    const total = 50;
    const concurrency = 5;
    stack = await startStack({ name: "batch-redis-crash", configDir: config.dir, redis, workers: 1, workerEnv: { WORKER_CONCURRENCY: String(concurrency) } });
    prometheus.hold();
    const target = stack;
    const location = await startBatch(target, total);
    await prometheus.waitForRequests(concurrency * ACTIONS);

    await redis.restart({
      crash: true,
      // The running items finish while Redis is away; their replies wait for it.
      whileDown: async () => prometheus.release(),
    });

    await waitForOk(`${stack.baseUrl}/readyz`, 10_000);
    expectEveryItemAnswered(await untilCompleted(stack, location), total);
    expect(stack.api.child.exitCode).toBeNull();
    expect(stack.workers[0]?.child.exitCode).toBeNull();
  });
});
